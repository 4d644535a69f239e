package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server/servertest"
)

// dialPartial opens a connection and sends an incomplete request head.
func dialPartial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, "GET /nacos/v1/ns/instance/list?serviceName=x HTTP/1.1\r\nHost: a\r\nX-Slow: "); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSlowHeadersDropped: connections whose request head never completes
// are closed after HeaderTimeout (Tomcat: 20 s), including ones that send
// nothing at all.
func TestSlowHeadersDropped(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.HeaderTimeout = time.Second
	n := servertest.Start(t, cfg)
	var conns []net.Conn
	for i := 0; i < 50; i++ {
		conns = append(conns, dialPartial(t, n.HTTPAddr()))
	}
	silent, err := net.Dial("tcp", n.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	conns = append(conns, silent)
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.ReadAll(c) // returns when the server closes
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("connection %d still open after 5 s", i)
		}
		c.Close()
	}
}

// TestLongPollOutlivesHeaderTimeout: a config listener held longer than
// HeaderTimeout is answered normally (its request was read in time).
func TestLongPollOutlivesHeaderTimeout(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.HeaderTimeout = time.Second
	n := servertest.Start(t, cfg)
	form := url.Values{"Listening-Configs": {"d\x02g\x02\x01"}}
	req, _ := http.NewRequest("POST", n.URL("/nacos/v1/cs/configs/listener"), strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Long-Pulling-Timeout", "10000")
	start := time.Now()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("long poll after %v: %v", time.Since(start), err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || time.Since(start) < 9*time.Second {
		t.Fatalf("long poll: %d after %v", resp.StatusCode, time.Since(start))
	}
}

// TestConnectionReserve: past the soft limit ordinary requests get 503
// while health checks still answer; past the hard limit fasthttp refuses.
func TestConnectionReserve(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.MaxConns = 40 // soft limit 24
	n := servertest.Start(t, cfg)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < 30; i++ {
		conns = append(conns, dialPartial(t, n.HTTPAddr()))
	}
	time.Sleep(200 * time.Millisecond) // accepted
	get := func(path string) (int, string) {
		c, err := net.Dial("tcp", n.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if st, body := get("/nacos/v1/ns/instance/list?serviceName=x"); st != 503 || !strings.Contains(body, "overloaded") {
		t.Fatalf("over the soft limit: %d %s", st, body)
	}
	if st, body := get("/nacos/v1/console/health/liveness"); st != 200 {
		t.Fatalf("health in the reserve: %d %s", st, body)
	}
	for i := 0; i < 15; i++ {
		conns = append(conns, dialPartial(t, n.HTTPAddr()))
	}
	// the server accepts them when it gets to them (later on a loaded machine)
	servertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := get("/nacos/v1/console/health/liveness"); st != 503 {
			return fmt.Errorf("over the hard limit: %d", st)
		}
		return nil
	})
}
