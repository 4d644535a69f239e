package migrate

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a reverse proxy in front of a real server that keeps every
// request line and body, as an access log (and a body-logging proxy) would.
type recorder struct {
	mu    sync.Mutex
	lines []string // METHOD URL
	forms []string // login bodies
	auth  []string // Authorization headers
	srv   *http.Server
	base  string
}

func newRecorder(t *testing.T, target string) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{base: "http://" + ln.Addr().String() + u.Path}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	r.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		r.mu.Lock()
		r.lines = append(r.lines, req.Method+" "+req.URL.String())
		if strings.HasSuffix(req.URL.Path, "/v1/auth/users/login") {
			r.forms = append(r.forms, req.Header.Get("Content-Type")+" "+string(body))
		}
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	})}
	go func() { _ = r.srv.Serve(ln) }()
	t.Cleanup(func() { _ = r.srv.Close() })
	return r
}

// TestCredentialsNeverInURL: a migration between two nacosd with auth on,
// each behind a recording proxy. The passwords travel only in the login's
// form body, the tokens only in the Authorization header: no request line
// (what Java's stock access log keeps) holds either.
func TestCredentialsNeverInURL(t *testing.T) {
	_, src := authNode(t)
	fill(src, false, false)
	_, dst := authNode(t)
	rs, rd := newRecorder(t, src.base), newRecorder(t, dst.base)
	const fromPw, toPw = "nacos", "nacos"
	sum, err := Run(context.Background(), Options{From: rs.base, FromUser: "nacos", FromPassword: fromPw,
		To: rd.base, ToUser: "nacos", ToPassword: toPw, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts(KindConfigs).Created == 0 {
		t.Fatalf("no config copied: %+v", sum.Counts(KindConfigs))
	}
	for _, r := range []*recorder{rs, rd} {
		r.mu.Lock()
		if len(r.lines) < 3 {
			t.Errorf("%s: only %d requests", r.base, len(r.lines))
		}
		for _, l := range r.lines {
			if strings.Contains(l, "password") || strings.Contains(l, "accessToken") || strings.Contains(l, "username") {
				t.Errorf("%s: a credential in a request line: %s", r.base, l)
			}
		}
		if len(r.forms) != 1 || !strings.HasPrefix(r.forms[0], "application/x-www-form-urlencoded password=nacos&username=nacos") {
			t.Errorf("%s: login bodies %q", r.base, r.forms)
		}
		bearer := 0
		for _, a := range r.auth {
			if strings.HasPrefix(a, "Bearer ") && len(a) > 20 {
				bearer++
			}
		}
		if bearer < len(r.lines)-1 {
			t.Errorf("%s: %d of %d requests after the login carried the token", r.base, bearer, len(r.lines)-1)
		}
		r.mu.Unlock()
	}
}

// TestUnreachableServerHidesCredentials: when a server cannot be reached
// (or refuses the login) the message names the server, never the password,
// even one given in the URL.
func TestUnreachableServerHidesCredentials(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now
	const secret = "s3cret-Pa55"
	for _, o := range []Options{
		{From: "http://" + dead + "/nacos", FromUser: "nacos", FromPassword: secret, To: "http://" + dead + "/nacos", ToUser: "nacos", ToPassword: secret},
		{From: "http://nacos:" + secret + "@" + dead + "/nacos", To: "http://admin:" + secret + "@" + dead + "/nacos", ToUser: "nacos", ToPassword: secret},
		{FromMySQL: "nacos:" + secret + "@tcp(" + dead + ")/", To: "http://" + dead + "/nacos", ToUser: "nacos", ToPassword: secret},
	} {
		o.Timeout = 2 * time.Second
		_, err := Run(context.Background(), o)
		if err == nil {
			t.Fatalf("%+v: no error", o)
		}
		msg := err.Error()
		if strings.Contains(msg, secret) || !strings.Contains(msg, dead) {
			t.Errorf("message shows the password or not the server: %s", msg)
		}
	}
	if msg := redactDSN("nacos:" + secret + "@tcp(db:3306)/"); strings.Contains(msg, secret) {
		t.Errorf("redactDSN: %s", msg)
	}
	if msg := redactDSN("jdbc:mysql://db:3306/nacos?user=nacos&password=" + secret); strings.Contains(msg, secret) {
		t.Errorf("redactDSN: %s", msg)
	}
}
