package server_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/server/config"
	"github.com/nacosd/nacosd/server/naming"
)

// The hot-handler benchmarks send the requests of the wrk scripts behind
// docs/benchmarks.md (server/tools/nacosd-load/wrk) through the whole fiber
// handler of a real node (every middleware included) with a reused
// RequestCtx and pre-built requests, so allocs/op is the server's own cost
// of one request: `go test -run '^$' -bench Hot -benchmem ./server/`.

// hotReq is a pre-built request.
type hotReq struct {
	method, uri, ctype, body string
}

func (r hotReq) run(b *testing.B, h fasthttp.RequestHandler, ctx *fasthttp.RequestCtx) {
	ctx.Request.Reset()
	ctx.Response.Reset()
	ctx.Request.Header.SetMethod(r.method)
	ctx.Request.SetRequestURI(r.uri)
	ctx.Request.Header.SetUserAgent("Nacos-Java-Client:v1.4.8")
	if r.body != "" {
		ctx.Request.Header.SetContentType(r.ctype)
		ctx.Request.SetBodyString(r.body)
	}
	h(ctx)
	if st := ctx.Response.StatusCode(); st != 200 {
		b.Fatalf("%s %s: status %d: %s", r.method, r.uri, st, ctx.Response.Body())
	}
}

func hotIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255) }

// registerReqs are register.lua's requests: 10 000 instances over 100
// services, parameters in the query as the Java client sends them.
func registerReqs() []hotReq {
	rs := make([]hotReq, 10000)
	for i := range rs {
		rs[i] = hotReq{method: "POST", uri: fmt.Sprintf("/nacos/v1/ns/instance?serviceName=wrk.svc.%d&ip=%s&port=8080&ephemeral=true", i%100, hotIP(i))}
	}
	return rs
}

// beatReqs are beat.lua's: the full beat JSON of the Java client.
func beatReqs() []hotReq {
	rs := make([]hotReq, 10000)
	for i := range rs {
		svc := fmt.Sprintf("wrk.svc.%d", i%100)
		beat := fmt.Sprintf(`{"cluster":"DEFAULT","ip":"%s","metadata":{},"period":5000,"port":8080,"scheduled":false,"serviceName":"DEFAULT_GROUP@@%s","stopped":false,"weight":1.0}`, hotIP(i), svc)
		rs[i] = hotReq{method: "PUT", uri: "/nacos/v1/ns/instance/beat?serviceName=" + svc + "&beat=" + url.QueryEscape(beat)}
	}
	return rs
}

func hotLoop(b *testing.B, h fasthttp.RequestHandler, rs []hotReq) {
	b.ReportAllocs()
	b.ResetTimer()
	ctx := &fasthttp.RequestCtx{}
	i := 0
	for b.Loop() {
		rs[i%len(rs)].run(b, h, ctx)
		i++
	}
}

func BenchmarkHotRegister(b *testing.B) {
	n := benchNode(b)
	h := n.Handler()
	rs := registerReqs()
	ctx := &fasthttp.RequestCtx{}
	for _, r := range rs { // re-registering known instances, as wrk does after its first pass
		r.run(b, h, ctx)
	}
	hotLoop(b, h, rs)
}

func BenchmarkHotBeat(b *testing.B) {
	n := benchNode(b)
	h := n.Handler()
	ctx := &fasthttp.RequestCtx{}
	for _, r := range registerReqs() {
		r.run(b, h, ctx)
	}
	hotLoop(b, h, beatReqs())
}

func BenchmarkHotInstanceList(b *testing.B) {
	n := benchNode(b)
	h := n.Handler()
	ctx := &fasthttp.RequestCtx{}
	for _, r := range registerReqs() {
		r.run(b, h, ctx)
	}
	rs := make([]hotReq, 100)
	for i := range rs {
		rs[i] = hotReq{method: "GET", uri: fmt.Sprintf("/nacos/v1/ns/instance/list?serviceName=wrk.svc.%d&healthyOnly=false", i)}
	}
	hotLoop(b, h, rs)
}

func publishHot(b *testing.B, n interface {
	Handler() fasthttp.RequestHandler
}) {
	ctx := &fasthttp.RequestCtx{}
	for i := range 100 {
		body := url.Values{"dataId": {fmt.Sprintf("wrk-%d.yaml", i)}, "group": {"WRK"}, "content": {fmt.Sprintf("k: %d\npad: %s", i, strings.Repeat("x", 1000))}}.Encode()
		hotReq{method: "POST", uri: "/nacos/v1/cs/configs", ctype: "application/x-www-form-urlencoded", body: body}.run(b, n.Handler(), ctx)
	}
}

func BenchmarkHotConfigGet(b *testing.B) {
	n := benchNode(b)
	publishHot(b, n)
	rs := make([]hotReq, 100)
	for i := range rs {
		rs[i] = hotReq{method: "GET", uri: fmt.Sprintf("/nacos/v1/cs/configs?dataId=wrk-%d.yaml&group=WRK", i)}
	}
	hotLoop(b, n.Handler(), rs)
}

// BenchmarkHotListenerCheck is a client's listener request for 10 keys
// whose MD5s are current, with Long-Pulling-Timeout-No-Hangup (answered at
// once, empty): the check every long poll starts with.
func BenchmarkHotListenerCheck(b *testing.B) {
	n := benchNode(b)
	publishHot(b, n)
	var sb strings.Builder
	for i := range 10 {
		sb.WriteString(fmt.Sprintf("wrk-%d.yaml\x02WRK\x02%s\x01", i, config.MD5Hex(fmt.Sprintf("k: %d\npad: %s", i, strings.Repeat("x", 1000)))))
	}
	body := url.Values{"Listening-Configs": {sb.String()}}.Encode()
	h := n.Handler()
	ctx := &fasthttp.RequestCtx{}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		ctx.Request.Reset()
		ctx.Response.Reset()
		ctx.Request.Header.SetMethod("POST")
		ctx.Request.SetRequestURI("/nacos/v1/cs/configs/listener")
		ctx.Request.Header.SetUserAgent("Nacos-Java-Client:v1.4.8")
		ctx.Request.Header.Set("Long-Pulling-Timeout", "30000")
		ctx.Request.Header.Set("Long-Pulling-Timeout-No-Hangup", "true")
		ctx.Request.Header.SetContentType("application/x-www-form-urlencoded")
		ctx.Request.SetBodyString(body)
		h(ctx)
		if st := ctx.Response.StatusCode(); st != 200 || len(ctx.Response.Body()) != 0 {
			b.Fatalf("status %d: %q", st, ctx.Response.Body())
		}
	}
}

var _ = naming.DefaultGroup
var _ = context.Background
