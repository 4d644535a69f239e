package security

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

// Issue 26 item 13: connections that never send a byte kept config reads
// at 503 (19 400 against nacosd's limit). Scaled down here: a table of 300
// (soft limit 284), 300 silent connections from eight addresses. Ordinary
// requests must get through within a few seconds (before the 20 s header
// timeout that alone closed them); one address may not hold more than a
// quarter of the table. nacosd only (Java is not started with a small
// table).
func TestIdleConnectionFlood(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.MaxConns = 300
	cfg.Auth = server.AuthConfig{Enabled: true, SecretKey: secret, ServerIdentityKey: "serverIdentity", ServerIdentityValue: identity,
		TokenExpire: 18000 * time.Second}
	n := servertest.Start(t, cfg)
	addr := n.HTTPAddr()
	var silent []net.Conn
	defer func() {
		for _, c := range silent {
			c.Close()
		}
	}()
	dial := func(ip string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for i := 0; i < 300; i++ {
		silent = append(silent, dial("127.0.0."+itoa(int64(2+i%8))))
	}
	get := func() (int, string) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			return 0, err.Error()
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET /nacos/v1/cs/configs?dataId=d&group=g&username=nacos&password=nacos HTTP/1.1\r\nHost: a\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return 0, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	start := time.Now()
	var st int
	var body string
	for time.Since(start) < 8*time.Second {
		if st, body = get(); st == 404 { // served: the config does not exist
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if st != 404 {
		t.Fatalf("nacosd: a config read while 300 silent connections are held: %d %.200s after %v", st, body, time.Since(start))
	}
	t.Logf("nacosd: a config read was served %v after the flood", time.Since(start).Round(100*time.Millisecond))

	// per source: one address gets at most a quarter of the table (75)
	refused := 0
	var flood []net.Conn
	for i := 0; i < 100; i++ {
		c := dial("127.0.0.20")
		flood = append(flood, c)
	}
	for _, c := range flood {
		_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		b := make([]byte, 512)
		if k, _ := c.Read(b); strings.Contains(string(b[:k]), "too many connections from this address") {
			refused++
		}
		c.Close()
	}
	if refused < 25 {
		t.Errorf("nacosd: %d of 100 connections from one address refused, want at least 25", refused)
	}
}
