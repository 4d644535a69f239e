package security

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// from is an HTTP client whose connections come from the loopback address
// ip (127.0.0.0/8 is all local on Linux): a second "host" for the tests.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
	}}
}

func loginFrom(t *testing.T, c *http.Client, tg target, user, pass string) (int, string) {
	t.Helper()
	resp, err := c.PostForm(tg.base+"/v1/auth/users/login", url.Values{"username": {user}, "password": {pass}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Issue 26 item 2: a guesser sending 33 wrong passwords in 25 s from one
// address must not lock the user out of an address that has not failed
// (nacosd's per-user lock did, 429 for every fresh address; Java has no
// throttle at all). The guesser's own address is slowed.
func TestLoginLockoutAsWeapon(t *testing.T) {
	for _, tg := range targets(t) {
		admin := tg.login(t, "nacos", "nacos")
		victim := "victim" + itoa(time.Now().UnixNano()%1e6)
		tg.do(t, "POST", "/v1/auth/users", url.Values{"accessToken": {admin}}, url.Values{"username": {victim}, "password": {"victim-pw"}}, nil)
		tg.loginEventually(t, victim, "victim-pw")
		guesser, fresh := from("127.0.0.2"), from("127.0.0.3")
		throttled := 0
		start := time.Now()
		for i := 0; i < 33; i++ {
			st, _ := loginFrom(t, guesser, tg, victim, "guess"+itoa(int64(i)))
			if st == 429 {
				throttled++
			}
			time.Sleep(time.Until(start.Add(time.Duration(i+1) * 25 * time.Second / 33 / 8))) // 33 guesses in ~3 s
		}
		st, body := loginFrom(t, fresh, tg, victim, "victim-pw")
		var r struct{ AccessToken string }
		_ = json.Unmarshal([]byte(body), &r)
		ok := st == 200 && r.AccessToken != ""
		if tg.java {
			t.Logf("java: login lockout as a weapon: the user from a fresh address after 33 guesses elsewhere: %d %.80s (guesses throttled: %d)", st, body, throttled)
			continue
		}
		if !ok {
			t.Errorf("nacosd: the user is locked out of a fresh address by a guesser elsewhere: %d %.200s", st, body)
		}
		if throttled == 0 {
			t.Errorf("nacosd: the guesser was never throttled")
		}
		if st, body := loginFrom(t, guesser, tg, victim, "victim-pw"); st != 429 || !strings.Contains(body, "too many failed login attempts") {
			t.Errorf("nacosd: the guesser's address after 33 guesses: %d %.200s, want 429", st, body)
		}
	}
}
