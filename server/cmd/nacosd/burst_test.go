package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// burst runs n calls of f, at most par at a time, and returns the failures.
func burst(n, par int, f func(i int) error) []error {
	var mu sync.Mutex
	var errs []error
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := f(i); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}

// TestBurstsToOneKeyAllSucceed is a deployment of many replicas of one
// service: 800 persistent registers to one service, 16 at a time, and 400
// publishes of one config, 16 at a time, against the real binary. Java
// accepts them all; before the per-key queue 179 registers answered 500
// "too many concurrent writes" and ~11 % of the publishes failed. Every one
// must succeed, every instance must be listed, and the config must hold
// one of the published contents (last writer wins).
func TestBurstsToOneKeyAllSucceed(t *testing.T) {
	nacosdBinary(t)
	dir := t.TempDir()
	port := freePort(t)
	n := startNode(t, dir, port)

	const svc, instances = "DEFAULT_GROUP@@burst", 800
	errs := burst(instances, 16, func(i int) error {
		code, body, err := n.try(http.MethodPost, "/v1/ns/instance", url.Values{"serviceName": {svc},
			"ip": {fmt.Sprintf("10.2.%d.%d", i/250, i%250+1)}, "port": {"8080"}, "ephemeral": {"false"}})
		if err != nil || code != 200 || body != "ok" {
			return fmt.Errorf("register %d: %d %s %v", i, code, body, err)
		}
		return nil
	})
	if len(errs) > 0 {
		t.Errorf("%d of %d persistent registers failed; first: %v", len(errs), instances, errs[0])
	}
	code, body := n.do(http.MethodGet, "/v1/ns/instance/list", url.Values{"serviceName": {svc}})
	var list struct {
		Hosts []struct {
			IP string `json:"ip"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil {
		t.Fatalf("list: %d %v %.200s", code, err, body)
	}
	if len(list.Hosts) != instances {
		t.Errorf("listed %d instances, want %d", len(list.Hosts), instances)
	}

	const publishes = 400
	contents := map[string]bool{}
	for i := range publishes {
		contents["content-"+strconv.Itoa(i)] = true
	}
	errs = burst(publishes, 16, func(i int) error {
		code, body, err := n.try(http.MethodPost, "/v1/cs/configs", url.Values{"dataId": {"burst"}, "group": {"G"},
			"content": {"content-" + strconv.Itoa(i)}})
		if err != nil || code != 200 || body != "true" {
			return fmt.Errorf("publish %d: %d %s %v", i, code, body, err)
		}
		return nil
	})
	if len(errs) > 0 {
		t.Errorf("%d of %d publishes of one config failed; first: %v", len(errs), publishes, errs[0])
	}
	code, body = n.do(http.MethodGet, "/v1/cs/configs", url.Values{"dataId": {"burst"}, "group": {"G"}})
	if code != 200 || !contents[body] {
		t.Errorf("config after the burst: %d %q", code, body)
	}
	// history has one row per publish
	code, body = n.do(http.MethodGet, "/v1/cs/history", url.Values{"search": {"accurate"}, "dataId": {"burst"}, "group": {"G"},
		"pageNo": {"1"}, "pageSize": {"1"}})
	var hist struct {
		TotalCount int `json:"totalCount"`
	}
	if err := json.Unmarshal([]byte(body), &hist); code != 200 || err != nil || hist.TotalCount != publishes {
		t.Errorf("history: %d rows (%v), want %d: %.200s", hist.TotalCount, err, publishes, body)
	}
	n.stop()
}

// TestStopWithASilentConnection: a client's spare connection that never
// sent a request (Go's Transport and pooled Java clients open them) must
// not make a SIGTERM end in "http shutdown: context deadline exceeded" and
// exit 1. fasthttp would wait 5 s for such a connection, as long as the
// shutdown's own timeout, and lost that race about every other stop; the
// listener now closes never-used connections as it closes.
func TestStopWithASilentConnection(t *testing.T) {
	nacosdBinary(t)
	port := freePort(t)
	n := startNode(t, t.TempDir(), port)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	// one kept-alive connection that served a request and is idle now
	used, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer used.Close()
	if _, err := fmt.Fprintf(used, "GET /nacos/v1/ns/operator/metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	if k, err := used.Read(buf); err != nil || !strings.HasPrefix(string(buf[:k]), "HTTP/1.1 200") {
		t.Fatalf("request on the kept-alive connection: %q %v", buf[:k], err)
	}
	n.stop() // fails on a non-zero exit
	if strings.Contains(n.log.String(), "deadline exceeded") {
		t.Fatalf("the stop timed out:\n%s", n.log.String())
	}
}
