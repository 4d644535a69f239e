package server_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/server/servertest"
)

// fuzzServer starts a server for a fuzz target; F's methods may not be
// called while fuzzing, so its logs go nowhere.
func fuzzServer(f *testing.F) fasthttp.RequestHandler {
	cfg := servertest.Config(f)
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return servertest.Start(f, cfg).Handler()
}

// fuzzDo sends one form request through h and returns status and body.
func fuzzDo(h fasthttp.RequestHandler, method, path, query, body string, header map[string]string) (int, string) {
	ctx := &fasthttp.RequestCtx{}
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(path + "?" + query)
	ctx.Request.Header.SetContentType("application/x-www-form-urlencoded")
	for k, v := range header {
		ctx.Request.Header.Set(k, v)
	}
	ctx.Request.SetBodyString(body)
	h(ctx)
	return ctx.Response.StatusCode(), string(ctx.Response.Body())
}

// FuzzNamingParams sends arbitrary query strings and form bodies to the
// naming write and read endpoints: never a panic, never an unexpected
// status, and error bodies always in Java's "caused: ...;" form.
func FuzzNamingParams(f *testing.F) {
	seeds := []struct{ method, path, query, body string }{
		{"POST", "/nacos/v1/ns/instance", "serviceName=DEFAULT_GROUP@@a&ip=1.1.1.1&port=80&weight=1.0&metadata=%7B%22k%22%3A%22v%22%7D", ""},
		{"POST", "/nacos/v1/ns/instance", "serviceName=a&ip=1.1.1.1&port=8x", ""},
		{"PUT", "/nacos/v1/ns/instance/beat", "serviceName=DEFAULT_GROUP@@a", `beat={"ip":"1.1.1.1","port":80,"cluster":"DEFAULT"}`},
		{"PUT", "/nacos/v1/ns/instance/beat", "serviceName=a&ip=1.1.1.1&port=80", "beat=%7Bbad"},
		{"GET", "/nacos/v1/ns/instance/list", "serviceName=a&udpPort=70000&clientIP=127.0.0.1&healthyOnly=TRUE&clusters=,,a", ""},
		{"PUT", "/nacos/v1/ns/instance", "serviceName=@@&ip=&port=", "enable=y&weight=NaN"},
		{"PATCH", "/nacos/v1/ns/instance", "serviceName=a@@b@@c&ip=1&port=-1", "metadata=a=b,c"},
		{"DELETE", "/nacos/v1/ns/instance", "serviceName=a&ip=1&port=1&clusterName=x_y", ""},
		{"POST", "/nacos/v1/ns/service", "serviceName=s&protectThreshold=abc&selector=%7B%22type%22%3A%22label%22%7D", ""},
		{"PUT", "/nacos/v1/ns/operator/switches", "entry=batch&value=%7B%7D", ""},
		{"PUT", "/nacos/v1/ns/cluster", "serviceName=s&clusterName=c&checkPort=x&useInstancePort4Check=t&healthChecker=%7B%22type%22%3A%22HTTP%22%7D", ""},
		{"PUT", "/nacos/v1/ns/instance/metadata/batch", "serviceName=DEFAULT_GROUP@@a&metadata=k=v&instances=%5B%7B%22ip%22%3A1%7D%5D", ""},
		{"GET", "/nacos/v1/ns/catalog/services", "pageNo=1&pageSize=x&serviceNameParam=(", ""},
		{"GET", "/nacos/v1/ns/service/names", "expr=[", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.body)
	}
	h := fuzzServer(f)
	f.Fuzz(func(t *testing.T, method, path, query, body string) {
		switch method {
		case "GET", "POST", "PUT", "PATCH", "DELETE":
		default:
			return
		}
		if !strings.HasPrefix(path, "/nacos/v1/ns/") || strings.ContainsAny(path, "?# \x00") {
			return
		}
		st, b := fuzzDo(h, method, path, query, body, nil)
		switch st {
		case 200, 404, 405, 501:
		case 400:
			if !strings.HasPrefix(b, "caused: ") || !strings.HasSuffix(b, ";") {
				t.Fatalf("%s %s?%s: 400 body %q", method, path, query, b)
			}
		case 500:
			if b != "" && !strings.HasPrefix(b, "caused: ") {
				t.Fatalf("%s %s?%s: 500 body %q", method, path, query, b)
			}
		default:
			t.Fatalf("%s %s?%s: unexpected status %d %q", method, path, query, st, b)
		}
	})
}

// FuzzConfigParams does the same for the config and namespace endpoints
// (long polls are asked not to hang, so every request answers at once).
func FuzzConfigParams(f *testing.F) {
	seeds := []struct{ method, path, query, body string }{
		{"POST", "/nacos/v1/cs/configs", "", "dataId=a.yaml&group=DEFAULT_GROUP&content=k%3A+v&type=yaml&config_tags=x,y"},
		{"GET", "/nacos/v1/cs/configs", "dataId=a.yaml&group=DEFAULT_GROUP&tenant=&show=all", ""},
		{"GET", "/nacos/v1/cs/configs", "search=blur&dataId=*&group=&pageNo=1&pageSize=x", ""},
		{"DELETE", "/nacos/v1/cs/configs", "delType=ids&ids=1,x,", ""},
		{"POST", "/nacos/v1/cs/configs/listener", "", "Listening-Configs=a.yaml%02DEFAULT_GROUP%02%01"},
		{"POST", "/nacos/v1/cs/configs/listener", "", "Listening-Configs=%ZZ%02"},
		{"GET", "/nacos/v1/cs/history", "search=accurate&dataId=a&group=g&pageNo=0&pageSize=-1", ""},
		{"GET", "/nacos/v1/cs/history/previous", "id=abc", ""},
		{"POST", "/nacos/v1/cs/configs", "beta=true", "dataId=b&group=g&content=c"},
		{"GET", "/nacos/v1/cs/configs", "export=true&group=&ids=", ""},
		{"POST", "/nacos/v1/console/namespaces", "", "customNamespaceId=ns%20x&namespaceName=n&namespaceDesc=d"},
		{"DELETE", "/nacos/v1/console/namespaces", "namespaceId=", ""},
		{"GET", "/nacos/v1/console/namespaces", "show=all&namespaceId=zzz", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.body)
	}
	h := fuzzServer(f)
	noHangup := map[string]string{"Long-Pulling-Timeout": "30000", "Long-Pulling-Timeout-No-Hangup": "true"}
	f.Fuzz(func(t *testing.T, method, path, query, body string) {
		switch method {
		case "GET", "POST", "PUT", "DELETE", "HEAD":
		default:
			return
		}
		if !(strings.HasPrefix(path, "/nacos/v1/cs/") || strings.HasPrefix(path, "/nacos/v1/console/")) || strings.ContainsAny(path, "?# \x00") {
			return
		}
		switch st, b := fuzzDo(h, method, path, query, body, noHangup); st {
		case 200, 400, 403, 404, 405, 500, 501:
		default:
			t.Fatalf("%s %s?%s: unexpected status %d %q", method, path, query, st, b)
		}
	})
}
