package server_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

// auditLines reads every line of the audit files in dir.
func auditLines(t *testing.T, dir string) []map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "audit.*.log"))
	var out []map[string]any
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s: not JSON: %q", f, sc.Text())
			}
			out = append(out, m)
		}
		fh.Close()
	}
	return out
}

// TestAuditTrail: with auth on, a real node records who changed what, from
// where and with what result: config publish and delete, a beta stop,
// registration and deregistration (not the beats), user, role and
// permission changes, and a refused publish; never a password.
func TestAuditTrail(t *testing.T) {
	dir := t.TempDir()
	cfg := servertest.Config(t)
	cfg.Ops.AuditDir = dir
	cfg.Auth = server.AuthConfig{Enabled: true, SystemType: "nacos", SecretKey: base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 32))),
		TokenExpire: time.Hour, ServerIdentityKey: "audit-test", ServerIdentityValue: "0123456789abcdef0123"}
	n := servertest.Start(t, cfg)
	login := n.Do("POST", "/nacos/v1/auth/users/login", nil, url.Values{"username": {"nacos"}, "password": {"nacos"}}, nil)
	var tok struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal([]byte(login.Body), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("login: %+v", login)
	}
	auth := map[string]string{"Authorization": "Bearer " + tok.AccessToken}
	do := func(method, path string, q url.Values, want int) {
		t.Helper()
		if r := n.Do(method, "/nacos"+path, q, nil, auth); r.Status != want {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
	}
	v := func(kv ...string) url.Values {
		q := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			q.Set(kv[i], kv[i+1])
		}
		return q
	}
	do("POST", "/v1/cs/configs", v("dataId", "app.yaml", "group", "G", "content", "a: 1"), 200)
	do("POST", "/v1/cs/configs", v("dataId", "app.yaml", "group", "G", "content", "a: 2", "betaIps", "10.0.0.9"), 200)
	do("DELETE", "/v1/cs/configs", v("dataId", "app.yaml", "group", "G", "beta", "true"), 200)
	do("DELETE", "/v1/cs/configs", v("dataId", "app.yaml", "group", "G"), 200)
	inst := v("serviceName", "svc", "ip", "10.1.2.3", "port", "8080")
	do("POST", "/v1/ns/instance", inst, 200)
	for i := 0; i < 3; i++ {
		do("PUT", "/v1/ns/instance/beat", v("serviceName", "svc", "beat", `{"ip":"10.1.2.3","port":8080,"serviceName":"DEFAULT_GROUP@@svc","cluster":"DEFAULT"}`), 200)
	}
	do("DELETE", "/v1/ns/instance", inst, 200)
	do("POST", "/v1/auth/users", v("username", "alice", "password", "Secret-pw-1"), 200)
	do("POST", "/v1/auth/roles", v("role", "dev", "username", "alice"), 200)
	do("POST", "/v1/auth/permissions", v("role", "dev", "resource", "public:*:*", "action", "r"), 200)
	do("DELETE", "/v1/auth/users", v("username", "alice"), 200)
	// a publish without a token is refused, and recorded as such
	if r := n.Do("POST", "/nacos/v1/cs/configs", v("dataId", "x", "group", "G", "content", "x"), nil, map[string]string{"X-Forwarded-For": "203.0.113.5"}); r.Status != 403 {
		t.Fatalf("anonymous publish: %d %s", r.Status, r.Body)
	}
	want := []string{
		"config.publish nacos ok 200 dataId=app.yaml group=G",
		"config.publish nacos ok 200 betaIps=10.0.0.9 dataId=app.yaml group=G",
		"config.beta.stop nacos ok 200 dataId=app.yaml group=G",
		"config.delete nacos ok 200 dataId=app.yaml group=G",
		"instance.register nacos ok 200 ip=10.1.2.3 port=8080 serviceName=svc",
		"instance.deregister nacos ok 200 ip=10.1.2.3 port=8080 serviceName=svc",
		"user.create nacos ok 200 username=alice",
		"role.add nacos ok 200 role=dev username=alice",
		"permission.add nacos ok 200 action=r resource=public:*:* role=dev",
		"user.delete nacos ok 200 username=alice",
		"config.publish  denied 403 dataId=x group=G",
	}
	var got []string
	servertest.Eventually(t, 10*time.Second, func() error {
		got = got[:0]
		for _, m := range auditLines(t, dir) {
			var target []string
			if tg, ok := m["target"].(map[string]any); ok {
				for k, val := range tg {
					target = append(target, fmt.Sprintf("%s=%v", k, val))
				}
			}
			sortStrings(target)
			got = append(got, strings.TrimSpace(fmt.Sprintf("%v %v %v %v %s", m["action"], m["user"], m["result"], m["status"], strings.Join(target, " "))))
			if m["ip"] == nil || m["time"] == nil || m["path"] == nil || m["method"] == nil {
				return fmt.Errorf("line lacks a field: %v", m)
			}
		}
		if len(got) != len(want) {
			return fmt.Errorf("%d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
		}
		return nil
	})
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	lines := auditLines(t, dir)
	if last := lines[len(lines)-1]; last["ip"] != "203.0.113.5" || last["remote"] != "127.0.0.1" {
		t.Errorf("refused publish: ip %v remote %v", last["ip"], last["remote"])
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "audit."+time.Now().Format("2006-01-02")+".log"))
	if strings.Contains(string(raw), "Secret-pw-1") || strings.Contains(string(raw), tok.AccessToken) {
		t.Error("the audit trail holds a password or token")
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
