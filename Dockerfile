# nacosd as a drop-in for the nacos/nacos-server:v1.4.x image: swapping the
# image name in a compose file or Kubernetes manifest is the whole change.
#
#   - the same environment variables: MODE (default cluster, as the Java
#     image), NACOS_SERVERS, NACOS_SERVER_IP, PREFER_HOST_MODE,
#     NACOS_APPLICATION_PORT, NACOS_AUTH_*, TOMCAT_ACCESSLOG_ENABLED,
#     SPRING_DATASOURCE_PLATFORM and MYSQL_* (warned: nacosd keeps its data
#     in /home/nacos/data; `nacosd migrate -from-home` reads them), JVM_*
#     (ignored, said once), JAVA_OPT_EXT's -D options;
#   - the same ports: 8848 HTTP, 7848 raft (port - 1000);
#   - the same paths: /home/nacos/conf (application.properties with the
#     image's placeholders, cluster.conf), /home/nacos/data,
#     /home/nacos/logs (the access log), /home/nacos/init.d/custom.properties
#     (read as the v1.4.0-v1.4.4 images read it);
#   - the same time zone, Asia/Shanghai (TZ=... to change it).
#
# The image holds only the static binary and the conf, so it builds without
# a registry; build the binary first:
#   make docker            # CGO_ENABLED=0 go build, then docker build -t nacosd:local .
# Compose examples: docker/compose/ (docs/deployment.md).
FROM scratch
COPY bin/nacosd /home/nacos/bin/nacosd
COPY docker/nacosd/conf/application.properties /home/nacos/conf/application.properties
ENV NACOS_HOME=/home/nacos \
    MODE=cluster \
    PREFER_HOST_MODE=ip \
    FUNCTION_MODE=all \
    TOMCAT_ACCESSLOG_ENABLED=false \
    TZ=Asia/Shanghai
WORKDIR /home/nacos
EXPOSE 8848 7848
ENTRYPOINT ["/home/nacos/bin/nacosd", "--spring.config.additional-location=file:/home/nacos/init.d/custom.properties,file:/home/nacos/conf/application.properties"]
