# nacosd in an empty image. Build the static binary first (no Go image is
# needed, so this works without a registry):
#   CGO_ENABLED=0 go build -trimpath -o bin/nacosd ./server/cmd/nacosd
#   docker build -t nacosd .
#   docker run --network host -v nacosd-data:/data nacosd -port 8848
FROM scratch
COPY bin/nacosd /nacosd
VOLUME /data
EXPOSE 8848 7848
ENTRYPOINT ["/nacosd", "-data-dir", "/data"]
