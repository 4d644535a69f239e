package server_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/servertest"
)

func benchNode(b *testing.B) *servertest.Node {
	cfg := servertest.Config(b)
	cfg.Logger = servertest.Logger(b)
	return servertest.Start(b, cfg)
}

// do runs one request through the fiber handler with a reused RequestCtx.
func do(h fasthttp.RequestHandler, ctx *fasthttp.RequestCtx, method, uri, ua string, body string) int {
	ctx.Request.Reset()
	ctx.Response.Reset()
	ctx.Request.Header.SetMethod(method)
	ctx.Request.SetRequestURI(uri)
	if ua != "" {
		ctx.Request.Header.SetUserAgent(ua)
	}
	if body != "" {
		ctx.Request.Header.SetContentType("application/x-www-form-urlencoded")
		ctx.Request.SetBodyString(body)
	}
	h(ctx)
	return ctx.Response.StatusCode()
}

func BenchmarkRegisterEphemeral(b *testing.B) {
	n := benchNode(b)
	h := n.Handler()
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := &fasthttp.RequestCtx{}
		for pb.Next() {
			i := seq.Add(1)
			uri := fmt.Sprintf("/nacos/v1/ns/instance?serviceName=DEFAULT_GROUP@@svc-%d&ip=10.%d.%d.%d&port=8080&metadata=%%7B%%22k%%22%%3A%%22v%%22%%7D", i%1000, i>>16&255, i>>8&255, i&255)
			if st := do(h, ctx, "POST", uri, "Nacos-Java-Client:v1.4.8", ""); st != 200 {
				b.Fatalf("status %d: %s", st, ctx.Response.Body())
			}
		}
	})
}

func populate(b *testing.B, reg *naming.Registry, services, perService int) {
	b.Helper()
	for s := 0; s < services; s++ {
		for i := 0; i < perService; i++ {
			in := naming.Instance{IP: "10.0." + strconv.Itoa(i>>8) + "." + strconv.Itoa(i&255), Port: 8080, Weight: 1, Healthy: true, Enabled: true,
				Ephemeral: true, ClusterName: "DEFAULT", Metadata: map[string]string{"version": "1.0.0", "zone": "a"}}
			if err := reg.Register(context.Background(), naming.InstanceForm{NamespaceID: "public", ServiceName: "DEFAULT_GROUP@@svc-" + strconv.Itoa(s), Instance: in}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkBeat(b *testing.B) {
	n := benchNode(b)
	populate(b, n.Registry(), 100, 100)
	h := n.Handler()
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := &fasthttp.RequestCtx{}
		for pb.Next() {
			i := seq.Add(1)
			uri := fmt.Sprintf("/nacos/v1/ns/instance/beat?serviceName=DEFAULT_GROUP@@svc-%d&ip=10.0.0.%d&port=8080&clusterName=DEFAULT", i%100, i%100)
			if st := do(h, ctx, "PUT", uri, "Nacos-Java-Client:v1.4.8", ""); st != 200 || !strings.Contains(string(ctx.Response.Body()), "10200") {
				b.Fatalf("status %d: %s", st, ctx.Response.Body())
			}
		}
	})
}

func BenchmarkInstanceList(b *testing.B) {
	for _, size := range []int{10, 100} {
		b.Run("hosts="+strconv.Itoa(size), func(b *testing.B) {
			n := benchNode(b)
			populate(b, n.Registry(), 10, size)
			h := n.Handler()
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := &fasthttp.RequestCtx{}
				i := 0
				for pb.Next() {
					i++
					uri := "/nacos/v1/ns/instance/list?serviceName=DEFAULT_GROUP@@svc-" + strconv.Itoa(i%10) + "&clusters=&healthyOnly=false"
					if st := do(h, ctx, "GET", uri, "Nacos-Java-Client:v1.4.8", ""); st != 200 {
						b.Fatalf("status %d", st)
					}
				}
			})
		})
	}
}

// BenchmarkMemory100kInstances registers 100 000 ephemeral instances (1000
// services × 100, two metadata entries each) in a fresh server and reports
// the heap they add and the process RSS afterwards.
func BenchmarkMemory100kInstances(b *testing.B) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		n := benchNode(b)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		populate(b, n.Registry(), 1000, 100)
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/(1<<20), "MiB-heap/100k")
		b.ReportMetric(float64(rssKiB())/1024, "MiB-rss")
		_ = n.Close()
		runtime.KeepAlive(n)
	}
}

func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}
