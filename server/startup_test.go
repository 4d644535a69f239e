package server

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/leakcheck"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/distro"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/internal/testlog"
	"github.com/nacosd/nacosd/server/cluster"
)

// TestStartupResponder: while a member starts, its socket records and
// answers reports (with its raft address, so that a member probing before
// its raft bootstrap learns it is a nacosd node instead of waiting out the
// probe), answers the Distro load "starting" and everything else 503;
// after the hand-over the API gets every new connection, and Close ends
// the early connections too.
func TestStartupResponder(t *testing.T) {
	defer leakcheck.VerifyNone(t, leakOptions(leakcheck.IgnoreCurrent())...)
	log := testlog.New(t)
	cfg := testConfig(t)
	cfg.ContextPath = "/nacos"
	s := &Server{cfg: cfg, log: log}
	peer := "127.0.0.1:9"
	m, err := cluster.New(cluster.Config{Self: "127.0.0.1:1", RaftAddr: "127.0.0.1:2", Fixed: []string{"127.0.0.1:1", peer},
		Peers: cluster.NewPeers(cluster.PeersConfig{ContextPath: "/nacos"}), Clock: clock.Real{}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := newHandoff(ln, s.startupResponder(m))
	defer h.Close()
	base := "http://" + ln.Addr().String() + "/nacos"
	client := &http.Client{Timeout: 5 * time.Second} // keep-alive: every early answer must still close its connection
	defer client.CloseIdleConnections()
	handedOver := false
	do := func(method, path, body string, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if !resp.Close && !handedOver {
			t.Fatalf("%s %s: early answer keeps its connection open", method, path)
		}
		return resp, string(b)
	}

	report := `{"ip":"127.0.0.1","port":9,"state":"UP","extendInfo":{},"address":"127.0.0.1:9"}`
	resp, body := do("POST", "/v1/core/cluster/report", report, map[string]string{"Content-Type": "application/json", cluster.HeaderRaft: "127.0.0.1:8"})
	if resp.StatusCode != 200 || !strings.Contains(body, `"data":"true"`) || resp.Header.Get(cluster.HeaderRaft) != "127.0.0.1:2" {
		t.Fatalf("report: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	if k, raft := m.Kind(peer); k != cluster.KindNacosd || raft != "127.0.0.1:8" {
		t.Fatalf("reporter recorded as %v %q", k, raft)
	}
	if resp, body := do("POST", "/v1/core/cluster/report", "{", nil); resp.StatusCode != 400 {
		t.Fatalf("bad report: %d %s", resp.StatusCode, body)
	}
	resp, _ = do("GET", "/v1/ns/distro/datums", "", nil)
	if resp.StatusCode != 503 || resp.Header.Get(distro.HeaderStarting) == "" {
		t.Fatalf("datums while starting: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _ := do("GET", "/v1/ns/instance/list?serviceName=a", "", nil); resp.StatusCode != 503 {
		t.Fatalf("API while starting: %d", resp.StatusCode)
	}
	idle, err := net.Dial("tcp", ln.Addr().String()) // an early connection that never sends
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) { // accepted as an early one
		h.mu.Lock()
		n := len(h.conns)
		h.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d early connections", n)
		}
	}

	h.handOver()
	handedOver = true
	api := &fasthttp.Server{ReadTimeout: 5 * time.Second, Handler: func(c *fasthttp.RequestCtx) { c.SetBodyString("api") }}
	served := make(chan error, 1)
	go func() { served <- api.Serve(lateListener{h}) }()
	if resp, body := do("GET", "/v1/ns/instance/list?serviceName=a", "", nil); resp.StatusCode != 200 || body != "api" {
		t.Fatalf("after the hand-over: %d %s", resp.StatusCode, body)
	}
	if err := api.Shutdown(); err != nil { // closes lateListener: the socket and the idle early connection
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("socket still accepts after Close")
	}
}
