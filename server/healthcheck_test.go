package server_test

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server/servertest"
)

// TestHealthCheckPersistentInstances probes real listeners on 127.0.0.1:
// TCP refused → unhealthy at once; listening again → healthy after
// checkTimes (3) good probes; HTTP checker with 503 → unhealthy after 3.
func TestHealthCheckPersistentInstances(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.Naming.DisableHealthCheck = false
	cfg.Naming.HealthCheckInterval = 50 * time.Millisecond
	n := servertest.Start(t, cfg)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // refused from now on
	reg := func(svc string, port int) {
		r := n.Do("POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {svc}, "ip": {"127.0.0.1"}, "port": {strconv.Itoa(port)}, "ephemeral": {"false"}}, nil, nil)
		if r.Body != "ok" {
			t.Fatal(r.Body)
		}
	}
	statuses := func(svc string) string {
		return n.Do("GET", "/nacos/v1/ns/instance/statuses", url.Values{"key": {"public##" + svc}}, nil, nil).Body
	}
	want := func(svc, body string) {
		t.Helper()
		servertest.Eventually(t, 10*time.Second, func() error {
			if got := statuses(svc); got != body {
				return fmt.Errorf("statuses %s, want %s", got, body)
			}
			return nil
		})
	}
	reg("DEFAULT_GROUP@@tcp", port)
	want("DEFAULT_GROUP@@tcp", `{"ips":["127.0.0.1:`+strconv.Itoa(port)+`_false"]}`)
	ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Skipf("port %d taken again: %v", port, err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	want("DEFAULT_GROUP@@tcp", `{"ips":["127.0.0.1:`+strconv.Itoa(port)+`_true"]}`)

	// HTTP checker: 200 keeps it healthy, 503 makes it unhealthy
	status := make(chan int, 1)
	status <- 200
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := <-status
		status <- code
		if r.Header.Get("User-Agent") != "VIPServer" || r.URL.Path != "/health" {
			code = 404
		}
		w.WriteHeader(code)
	})}
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(hl)
	defer hs.Close()
	hport := hl.Addr().(*net.TCPAddr).Port
	reg("DEFAULT_GROUP@@http", hport)
	r := n.Do("PUT", "/nacos/v1/ns/cluster", url.Values{"serviceName": {"DEFAULT_GROUP@@http"}, "clusterName": {"DEFAULT"}, "checkPort": {"80"},
		"useInstancePort4Check": {"true"}, "healthChecker": {`{"type":"HTTP","path":"/health","headers":""}`}}, nil, nil)
	if r.Body != "ok" {
		t.Fatal(r.Body)
	}
	want("DEFAULT_GROUP@@http", `{"ips":["127.0.0.1:`+strconv.Itoa(hport)+`_true"]}`)
	<-status
	status <- 503
	want("DEFAULT_GROUP@@http", `{"ips":["127.0.0.1:`+strconv.Itoa(hport)+`_false"]}`)
}
