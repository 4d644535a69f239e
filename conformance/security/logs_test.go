package security

import (
	"bytes"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

// lockedBuffer is a log sink shared by the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Tokens, passwords, the server identity and the token secret never reach
// the log, at debug level, whatever the requests carrying them do: logins
// that work and fail, tokens in the parameter and the header, valid,
// tampered and expired, username/password on ordinary requests, node
// calls with and without the identity, failing and malformed requests.
func TestSecretsNeverLogged(t *testing.T) {
	logs := &lockedBuffer{}
	cfg := servertest.Config(t)
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Auth = server.AuthConfig{Enabled: true, SecretKey: secret, ServerIdentityKey: "serverIdentity", ServerIdentityValue: identity,
		TokenExpire: 18000 * time.Second}
	n := servertest.Start(t, cfg)
	tg := target{name: "nacosd", base: "http://" + n.HTTPAddr() + "/nacos"}

	admin := tg.login(t, "nacos", "nacos")
	const userPW = "Pw-unique-4e1f9c-never-logged"
	aq := url.Values{"accessToken": {admin}}
	tg.do(t, "POST", "/v1/auth/users", aq, url.Values{"username": {"logged"}, "password": {userPW}}, nil)
	tok := tg.login(t, "logged", userPW)
	tampered := tok[:len(tok)-4] + "AAAA"
	for _, c := range []struct {
		m, p string
		q, f url.Values
		h    map[string]string
	}{
		{"POST", "/v1/auth/users/login", nil, url.Values{"username": {"logged"}, "password": {userPW + "-wrong"}}, nil},
		{"POST", "/v1/auth/users/login", nil, url.Values{"username": {"ghost"}, "password": {userPW}}, nil},
		{"GET", "/v1/cs/configs", url.Values{"dataId": {"d"}, "group": {"g"}, "accessToken": {tok}}, nil, nil},
		{"GET", "/v1/cs/configs", url.Values{"dataId": {"d"}, "group": {"g"}, "accessToken": {tampered}}, nil, nil},
		{"GET", "/v1/cs/configs", url.Values{"dataId": {"d"}, "group": {"g"}}, nil, map[string]string{"Authorization": "Bearer " + tok}},
		{"GET", "/v1/cs/configs", url.Values{"dataId": {"d"}, "group": {"g"}, "username": {"logged"}, "password": {userPW}}, nil, nil},
		{"POST", "/v1/cs/configs", url.Values{"accessToken": {tok}}, url.Values{"dataId": {"d"}, "group": {"g"}, "content": {"x"}}, nil},
		{"POST", "/v1/cs/configs", url.Values{"accessToken": {admin}}, url.Values{"dataId": {"bad id!"}, "group": {"g"}, "content": {"x"}}, nil},
		{"POST", "/v1/ns/instance", url.Values{"accessToken": {admin}, "serviceName": {"s"}, "ip": {"1.2.3.4"}, "port": {"x"}}, nil, nil},
		{"PUT", "/v1/ns/instance/beat", url.Values{"accessToken": {admin}, "serviceName": {"s"}, "beat": {"{not json"}}, nil, nil},
		{"POST", "/v1/core/cluster/report", nil, nil, map[string]string{"serverIdentity": identity, "Content-Type": "application/json"}},
		{"POST", "/v1/core/cluster/report", nil, nil, map[string]string{"serverIdentity": identity + "-wrong", "Content-Type": "application/json"}},
		{"GET", "/v1/ns/distro/datums", nil, nil, map[string]string{"serverIdentity": identity}},
		{"PUT", "/v1/auth/users", url.Values{"accessToken": {tok}}, url.Values{"username": {"logged"}, "newPassword": {userPW + "-new"}}, nil},
		{"DELETE", "/v1/auth/users", url.Values{"accessToken": {admin}, "username": {"logged"}}, nil, nil},
		{"GET", "/v1/cs/configs", url.Values{"dataId": {"d"}, "group": {"g"}, "accessToken": {tok}}, nil, nil}, // deleted user's token
	} {
		tg.do(t, c.m, c.p, c.q, c.f, c.h)
	}
	time.Sleep(200 * time.Millisecond) // asynchronous loggers settle
	out := logs.String()
	if len(out) == 0 {
		t.Fatal("nothing logged: the test would prove nothing")
	}
	for name, s := range map[string]string{"admin token": admin, "user token": tok, "token payload": tok[strings.Index(tok, ".")+1 : strings.LastIndex(tok, ".")],
		"tampered token": tampered, "password": userPW, "nacos password param": "password=nacos", "identity": identity, "secret": secret} {
		if strings.Contains(out, s) {
			i := strings.Index(out, s)
			t.Errorf("the log holds the %s: …%s…", name, out[max(0, i-200):min(len(out), i+len(s)+50)])
		}
	}
}

// Issue 26 item 12: a fresh install with auth on logs in with nacos/nacos
// (Java too; nacosd keeps it for the apps configured with it, warns, shows
// the console a banner and exports nacosd_auth_default_admin_password).
// Started with nacosd.auth.admin-password, nacos/nacos is refused from the
// first request, the configured password works, and it never reaches the
// log.
func TestAdminPasswordAtFirstStart(t *testing.T) {
	logs := &lockedBuffer{}
	const adminPW = "Admin-pw-7d21c9-never-logged"
	cfg := servertest.Config(t)
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Auth = server.AuthConfig{Enabled: true, SecretKey: secret, ServerIdentityKey: "serverIdentity", ServerIdentityValue: identity,
		TokenExpire: 18000 * time.Second, AdminPassword: adminPW}
	n := servertest.Start(t, cfg)
	tg := target{name: "nacosd", base: "http://" + n.HTTPAddr() + "/nacos"}
	st, body := tg.do(t, "POST", "/v1/auth/users/login", nil, url.Values{"username": {"nacos"}, "password": {"nacos"}}, nil)
	refused(t, tg, "nacos/nacos on a node started with nacosd.auth.admin-password", st, body)
	tg.login(t, "nacos", adminPW)
	if st, body := tg.do(t, "GET", "/v1/console/ui/info", nil, nil, nil); st != 200 || !strings.Contains(body, `"defaultAdminPassword":false`) {
		t.Errorf("ui/info: %d %s", st, body)
	}
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(logs.String(), adminPW) {
		t.Error("the log holds the admin password")
	}
}
