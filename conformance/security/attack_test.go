// Package security is the attack suite (`make security`): each known attack
// on Nacos 1.4.x against nacosd with auth enabled, and, when
// NACOSD_SECURITY_JAVA=host:port names a Java Nacos 1.4.8 started with
// -Dnacos.core.auth.enabled=true (identity serverIdentity/security, the
// shipped default secret), against it too, to show the attack works there.
// Results are recorded in docs/security.md.
package security

import (
	"archive/zip"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/servertest"
)

const (
	secret   = "dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI="
	identity = "9f2c4e1a7b3d4c5e8f60"
)

type target struct {
	name string
	base string // http://host:port/nacos
	java bool
}

func (tg target) do(t *testing.T, method, path string, q url.Values, form url.Values, hdr map[string]string) (int, string) {
	t.Helper()
	u := tg.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// doBody sends a raw body with its content type.
func (tg target) doBody(t *testing.T, method, path string, q url.Values, body []byte, ctype string) (int, string) {
	t.Helper()
	u := tg.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// importZip is a config import upload holding one entry.
func importZip(t *testing.T, name, content string) (string, []byte) {
	t.Helper()
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, content)
	zw.Close()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "import.zip")
	fw.Write(zb.Bytes())
	mw.Close()
	return mw.FormDataContentType(), body.Bytes()
}

// loginEventually logs in once the user can (a Java referee with its user
// cache on sees a new user up to 15 s late).
func (tg target) loginEventually(t *testing.T, user, pass string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, body := tg.do(t, "POST", "/v1/auth/users/login", nil, url.Values{"username": {user}, "password": {pass}}, nil)
		var r struct{ AccessToken string }
		if st == 200 && json.Unmarshal([]byte(body), &r) == nil && r.AccessToken != "" {
			return r.AccessToken
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s login %s: %d %s", tg.name, user, st, body)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (tg target) login(t *testing.T, user, pass string) string {
	t.Helper()
	st, body := tg.do(t, "POST", "/v1/auth/users/login", nil, url.Values{"username": {user}, "password": {pass}}, nil)
	var r struct{ AccessToken string }
	if st != 200 || json.Unmarshal([]byte(body), &r) != nil {
		t.Fatalf("%s login %s: %d %s", tg.name, user, st, body)
	}
	return r.AccessToken
}

func startNacosd(t *testing.T) target {
	cfg := servertest.Config(t)
	cfg.Auth = server.AuthConfig{Enabled: true, SecretKey: secret, ServerIdentityKey: "serverIdentity", ServerIdentityValue: identity,
		TokenExpire: 18000 * time.Second}
	n := servertest.Start(t, cfg)
	return target{name: "nacosd", base: "http://" + n.HTTPAddr() + "/nacos"}
}

// targets: nacosd always, Java when given.
func targets(t *testing.T) []target {
	out := []target{startNacosd(t)}
	if addr := os.Getenv("NACOSD_SECURITY_JAVA"); addr != "" {
		out = append(out, target{name: "java", base: "http://" + addr + "/nacos", java: true})
	}
	return out
}

// refused asserts nacosd refuses; on Java it only logs what happened.
func refused(t *testing.T, tg target, what string, st int, body string) {
	t.Helper()
	ok := st == 401 || st == 403 || st == 404 || st == 400 || st == 405 || st == 429 || st == 501 || st == 503 || st == 500 && !strings.Contains(body, "true")
	if tg.java {
		verdict := "REFUSED"
		if !ok {
			verdict = "WORKS (attack succeeds)"
		}
		t.Logf("java: %s: %s (%d %.120s)", what, verdict, st, body)
		return
	}
	if !ok {
		t.Errorf("nacosd: %s was not refused: %d %.200s", what, st, body)
	}
}

var writes = []struct{ method, path string }{
	{"POST", "/v1/cs/configs"}, {"DELETE", "/v1/cs/configs"}, {"POST", "/v1/ns/instance"}, {"DELETE", "/v1/ns/instance"},
	{"PUT", "/v1/ns/instance"}, {"PATCH", "/v1/ns/instance"}, {"PUT", "/v1/ns/instance/beat"}, {"POST", "/v1/ns/service"},
	{"PUT", "/v1/ns/service"}, {"DELETE", "/v1/ns/service"}, {"PUT", "/v1/ns/cluster"}, {"PUT", "/v1/ns/operator/switches"},
	{"POST", "/v1/auth/users"}, {"POST", "/v1/auth/roles"}, {"POST", "/v1/auth/permissions"}, {"POST", "/v1/console/namespaces"},
	{"PUT", "/v1/ns/instance/metadata/batch"},
}

func writeParams() url.Values {
	return url.Values{"dataId": {"pwn"}, "group": {"g"}, "content": {"x"}, "serviceName": {"pwn"}, "ip": {"6.6.6.6"}, "port": {"66"},
		"username": {"evil"}, "password": {"evil-pw"}, "role": {"ROLE_X"}, "resource": {"*:*:*"}, "action": {"rw"},
		"customNamespaceId": {"pwn"}, "namespaceName": {"pwn"}, "entry": {"distroThreshold"}, "value": {"0.1"},
		"beat": {`{"ip":"6.6.6.6","port":66}`}, "instances": {`[]`}, "metadata": {`{"a":"b"}`}, "clusterName": {"DEFAULT"},
		"checkPort": {"80"}, "useInstancePort4Check": {"true"}, "healthChecker": {`{"type":"TCP"}`}}
}

// CVE-2021-29441: User-Agent: Nacos-Server on every write endpoint (the
// list above, sent to Java too), and on nacosd on every route of its
// @Secured table, reads included: each answers 403.
func TestUserAgentBypass(t *testing.T) {
	uas := []map[string]string{{"User-Agent": "Nacos-Server"}, {"User-Agent": "Nacos-Server:1.4.8"}, {"User-Agent": "", "Client-Version": "Nacos-Server:1.4.8"}}
	for _, tg := range targets(t) {
		for _, w := range writes {
			for _, ua := range uas {
				st, body := tg.do(t, w.method, w.path, writeParams(), nil, ua)
				refused(t, tg, "UA bypass "+w.method+" "+w.path, st, body)
			}
		}
		if tg.java {
			continue
		}
		table, err := server.RouteTable()
		if err != nil {
			t.Fatal(err)
		}
		keys := make([]string, 0)
		for k := range table.SecuredRoutes() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			method, path, _ := strings.Cut(k, " ")
			path = strings.TrimSuffix(path, "*")
			if strings.HasSuffix(path, "/") {
				path += "datum"
			}
			for _, ua := range uas {
				// 429: writeParams carries username/password, which the
				// login throttle counts as guesses
				if st, body := tg.do(t, method, path, writeParams(), nil, ua); st != 403 && st != 429 {
					t.Errorf("nacosd: UA bypass %s %s: %d %.200s, want 403", method, path, st, body)
				}
			}
		}
	}
}

func forge(key []byte, header, payload string) string {
	b := base64.RawURLEncoding
	u := b.EncodeToString([]byte(header)) + "." + b.EncodeToString([]byte(payload))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(u))
	return u + "." + b.EncodeToString(m.Sum(nil))
}

// Forged and broken tokens: the published default secret, alg none,
// algorithm confusion, expired, tampered.
func TestForgedTokens(t *testing.T) {
	defKey, _ := auth.DecodeSecret(auth.DefaultTokenSecret)
	exp := time.Now().Add(time.Hour).Unix()
	future := `{"sub":"nacos","exp":` + itoa(exp) + `}`
	b := base64.RawURLEncoding
	for _, tg := range targets(t) {
		good := tg.login(t, "nacos", "nacos")
		tokens := map[string]string{
			"default secret": forge(defKey, `{"alg":"HS256"}`, future),
			"alg none":       b.EncodeToString([]byte(`{"alg":"none"}`)) + "." + b.EncodeToString([]byte(future)) + ".",
			"HS512 header":   forge(defKey, `{"alg":"HS512"}`, future),
			"RS256 header":   forge(defKey, `{"alg":"RS256"}`, future),
			"expired":        forge(defKey, `{"alg":"HS256"}`, `{"sub":"nacos","exp":1000}`),
			"tampered":       good[:strings.Index(good, ".")+1] + b.EncodeToString([]byte(`{"sub":"admin","exp":`+itoa(exp)+`}`)) + good[strings.LastIndex(good, "."):],
			"empty":          "",
			"garbage":        strings.Repeat("A", 8000),
		}
		for name, tok := range tokens {
			st, body := tg.do(t, "GET", "/v1/auth/users", url.Values{"pageNo": {"1"}, "pageSize": {"10"}, "accessToken": {tok}}, nil, nil)
			refused(t, tg, "token "+name, st, body)
			st, body = tg.do(t, "POST", "/v1/cs/configs", nil, url.Values{"dataId": {"x"}, "group": {"g"}, "content": {"c"}}, map[string]string{"Authorization": "Bearer " + tok})
			refused(t, tg, "bearer token "+name, st, body)
		}
		if st, _ := tg.do(t, "GET", "/v1/auth/users", url.Values{"pageNo": {"1"}, "pageSize": {"10"}, "accessToken": {good}}, nil, nil); st != 200 {
			t.Fatalf("%s: control request with a real token: %d", tg.name, st)
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Path tricks around the @Secured table and the ignore list.
func TestPathTricks(t *testing.T) {
	for _, tg := range targets(t) {
		host := strings.TrimSuffix(tg.base, "/nacos")
		q := "?dataId=pwn&group=g&content=x"
		for _, p := range []string{
			"//nacos/v1/cs/configs", "/nacos//v1/cs/configs", "/nacos/v1/cs/configs/", "/nacos/v1/cs/configs;jsessionid=x",
			"/nacos/v1/cs/configs;", "/nacos/v1/cs/%63onfigs", "/nacos/v1/auth/../cs/configs", "/nacos/v1/auth/%2e%2e/cs/configs",
			"/nacos/V1/cs/configs", "/nacos/v1/CS/configs", "/nacos/v1/auth/users/..;/../cs/configs", "/nacos/./v1/cs/configs",
			"/nacos/v1/cs%2Fconfigs", "/nacos/v1/cs/%2e/configs", "/nacos/v1/cs/configs/.", "/nacos/v1/cs//configs",
			"/nacos/v1/auth/%252e%252e/cs/configs", "/nacos/v1/console/health/../../cs/configs", "/nacos/v1/cs/configs%00",
			"/nacos/v1/cs/configs%20", "/nacos/v1/cs/configs?", "/nacos/v1/cs/configs#x", "/nacos/v1/cs/configs.json",
			"/nacos/index.html/../v1/cs/configs", "/nacos/v1/cs/configs;.css", "/nacos/v1/cs/configs/x.js",
		} {
			req, _ := http.NewRequest("POST", host+p+q, nil)
			req.URL.Opaque = p // send the path as written
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			refused(t, tg, "path "+p, resp.StatusCode, string(body))
		}
		// HEAD is served by the GET handler; Java's table has no HEAD key:
		// on an existing config the answer's status, Content-MD5 and
		// length leak it
		admin := tg.login(t, "nacos", "nacos")
		tg.do(t, "POST", "/v1/cs/configs", url.Values{"accessToken": {admin}}, url.Values{"dataId": {"head.secret"}, "group": {"g"}, "content": {"pw=1"}}, nil)
		var st int
		for i := 0; i < 50; i++ { // Java serves reads from its dump
			st, _ = tg.do(t, "GET", "/v1/cs/configs", url.Values{"dataId": {"head.secret"}, "group": {"g"}, "accessToken": {admin}}, nil, nil)
			if st == 200 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		st, body := tg.do(t, "HEAD", "/v1/cs/configs", url.Values{"dataId": {"head.secret"}, "group": {"g"}}, nil, nil)
		refused(t, tg, "HEAD /v1/cs/configs of an existing config", st, body)
	}
}

// The Derby ops endpoint (CVE-2021-29442) and the unauthenticated cluster
// and ops endpoints.
func TestOpsEndpoints(t *testing.T) {
	for _, tg := range targets(t) {
		st, body := tg.do(t, "GET", "/v1/cs/ops/derby", url.Values{"sql": {"select * from users"}}, nil, nil)
		refused(t, tg, "derby sql", st, body)
		if !tg.java && strings.Contains(body, "$2a$") {
			t.Errorf("derby leaked hashes: %s", body)
		}
		// a forged member report (Java: open; its member list takes it)
		st, body = tg.doBody(t, "POST", "/v1/core/cluster/report", nil,
			[]byte(`{"ip":"127.0.0.1","port":1,"state":"UP","extendInfo":{},"address":"127.0.0.1:1","failAccessCnt":0}`), "application/json")
		refused(t, tg, "cluster report without identity", st, body)
		st, body = tg.do(t, "GET", "/v1/cs/communication/dataChange", url.Values{"dataId": {"x"}, "group": {"g"}}, nil, nil)
		refused(t, tg, "dataChange without identity", st, body)
		// the identity header is the node-to-node credential
		if !tg.java {
			st, body = tg.do(t, "GET", "/v1/cs/communication/dataChange", url.Values{"dataId": {"x"}, "group": {"g"}}, nil, map[string]string{"serverIdentity": identity})
			if st != 200 {
				t.Errorf("dataChange with identity: %d %s", st, body)
			}
		}
	}
}

// A non-admin user granting itself a role or permission, or reading users.
func TestPrivilegeEscalation(t *testing.T) {
	for _, tg := range targets(t) {
		admin := tg.login(t, "nacos", "nacos")
		aq := url.Values{"accessToken": {admin}}
		tg.do(t, "POST", "/v1/auth/users", aq, url.Values{"username": {"mallory"}, "password": {"mallory-pw"}}, nil)
		tg.do(t, "POST", "/v1/auth/roles", aq, url.Values{"username": {"mallory"}, "role": {"dev"}}, nil)
		tg.do(t, "POST", "/v1/auth/permissions", aq, url.Values{"role": {"dev"}, "resource": {"nsA:*:*"}, "action": {"rw"}}, nil)
		tok := tg.loginEventually(t, "mallory", "mallory-pw") // Java: until its user cache has the user
		q := url.Values{"accessToken": {tok}}
		for _, c := range []struct {
			m, p string
			f    url.Values
		}{
			{"POST", "/v1/auth/roles", url.Values{"username": {"mallory"}, "role": {"ROLE_ADMIN"}}},
			{"POST", "/v1/auth/roles", url.Values{"username": {"mallory"}, "role": {"ops"}}},
			{"POST", "/v1/auth/permissions", url.Values{"role": {"dev"}, "resource": {"*:*:*"}, "action": {"rw"}}},
			{"POST", "/v1/auth/users", url.Values{"username": {"m2"}, "password": {"x"}}},
			{"PUT", "/v1/auth/users", url.Values{"username": {"nacos"}, "newPassword": {"owned"}}},
			{"GET", "/v1/auth/users?pageNo=1&pageSize=10", nil},
			{"GET", "/v1/auth/roles?pageNo=1&pageSize=10", nil},
			{"GET", "/v1/auth/permissions?pageNo=1&pageSize=10", nil},
			{"DELETE", "/v1/auth/users?username=nacos", nil},
		} {
			path, rawq, _ := strings.Cut(c.p, "?")
			qq := url.Values{}
			for k, v := range q {
				qq[k] = v
			}
			extra, _ := url.ParseQuery(rawq)
			for k, v := range extra {
				qq[k] = v
			}
			st, body := tg.do(t, c.m, path, qq, c.f, nil)
			if st == 200 && strings.Contains(body, `"code":403`) {
				st = 403 // PUT users answers RestResult 403 with HTTP 200
			}
			refused(t, tg, "escalation "+c.m+" "+c.p, st, body)
		}
	}
}

// Namespace escape: a user with rw on nsA reaching nsB.
func TestNamespaceEscape(t *testing.T) {
	for _, tg := range targets(t) {
		admin := tg.login(t, "nacos", "nacos")
		aq := url.Values{"accessToken": {admin}}
		for _, ns := range []string{"nsA", "nsB"} {
			tg.do(t, "POST", "/v1/console/namespaces", aq, url.Values{"customNamespaceId": {ns}, "namespaceName": {ns}}, nil)
			tg.do(t, "POST", "/v1/cs/configs", aq, url.Values{"dataId": {"secret.properties"}, "group": {"g"}, "content": {"pw=" + ns}, "tenant": {ns}}, nil)
		}
		alice := "alice" + itoa(time.Now().UnixNano()%1e6) // a Java referee keeps users between runs
		tg.do(t, "POST", "/v1/auth/users", aq, url.Values{"username": {alice}, "password": {"alice-pw"}}, nil)
		tg.do(t, "POST", "/v1/auth/roles", aq, url.Values{"username": {alice}, "role": {"teamA"}}, nil)
		tg.do(t, "POST", "/v1/auth/permissions", aq, url.Values{"role": {"teamA"}, "resource": {"nsA:*:*"}, "action": {"rw"}}, nil)
		tg.do(t, "POST", "/v1/ns/instance", url.Values{"accessToken": {admin}, "namespaceId": {"nsB"}, "serviceName": {"s"}, "ip": {"10.6.6.6"},
			"port": {"6"}, "ephemeral": {"false"}}, nil, nil)
		tok := tg.loginEventually(t, alice, "alice-pw")
		// ids of nsB's config and one of its history rows
		_, page := tg.do(t, "GET", "/v1/cs/configs", url.Values{"accessToken": {admin}, "search": {"accurate"}, "dataId": {"secret.properties"}, "group": {"g"}, "tenant": {"nsB"}, "pageNo": {"1"}, "pageSize": {"10"}}, nil, nil)
		var pg struct{ PageItems []struct{ ID string } }
		_ = json.Unmarshal([]byte(page), &pg)
		if len(pg.PageItems) == 0 {
			t.Fatalf("%s: no nsB config: %s", tg.name, page)
		}
		idB := pg.PageItems[0].ID
		_, pageA := tg.do(t, "GET", "/v1/cs/configs", url.Values{"accessToken": {admin}, "search": {"accurate"}, "dataId": {"secret.properties"}, "group": {"g"}, "tenant": {"nsA"}, "pageNo": {"1"}, "pageSize": {"10"}}, nil, nil)
		var pgA struct{ PageItems []struct{ ID string } }
		_ = json.Unmarshal([]byte(pageA), &pgA)
		idA := ""
		if len(pgA.PageItems) > 0 {
			idA = pgA.PageItems[0].ID
		}
		_, hist := tg.do(t, "GET", "/v1/cs/history", url.Values{"accessToken": {admin}, "search": {"accurate"}, "dataId": {"secret.properties"}, "group": {"g"}, "tenant": {"nsB"}, "pageNo": {"1"}, "pageSize": {"10"}}, nil, nil)
		var hp struct{ PageItems []struct{ ID string } }
		_ = json.Unmarshal([]byte(hist), &hp)
		nidB := ""
		if len(hp.PageItems) > 0 {
			nidB = hp.PageItems[0].ID
		}
		q := func(kv ...string) url.Values {
			v := url.Values{"accessToken": {tok}}
			for i := 0; i+1 < len(kv); i += 2 {
				v.Set(kv[i], kv[i+1])
			}
			return v
		}
		leaks := func(body string) bool { return strings.Contains(body, "pw=nsB") }
		for _, c := range []struct {
			name, m, p string
			q          url.Values
			f          url.Values
		}{
			{"get B", "GET", "/v1/cs/configs", q("dataId", "secret.properties", "group", "g", "tenant", "nsB"), nil},
			{"search B", "GET", "/v1/cs/configs", q("search", "blur", "dataId", "*", "group", "", "tenant", "nsB", "pageNo", "1", "pageSize", "10"), nil},
			{"export ids of B", "GET", "/v1/cs/configs", q("export", "true", "tenant", "nsA", "group", "", "ids", idB), nil},
			{"history nid of B", "GET", "/v1/cs/history", q("dataId", "secret.properties", "group", "g", "tenant", "nsA", "nid", nidB), nil},
			{"history previous of B", "GET", "/v1/cs/history/previous", q("dataId", "secret.properties", "group", "g", "tenant", "nsA", "id", idB), nil},
			{"delete ids of B", "DELETE", "/v1/cs/configs", q("delType", "ids", "tenant", "nsA", "ids", idB), nil},
			{"listen B", "POST", "/v1/cs/configs/listener", q("tenant", "nsA"), url.Values{"Listening-Configs": {"secret.properties\x02g\x02x\x02nsB\x01"}}},
			{"catalog B", "GET", "/v1/ns/catalog/services", q("namespaceId", "nsB", "pageNo", "1", "pageSize", "10"), nil},
			{"service list B", "GET", "/v1/ns/service/list", q("namespaceId", "nsB", "pageNo", "1", "pageSize", "10"), nil},
			{"register in B", "POST", "/v1/ns/instance", q("namespaceId", "nsB", "serviceName", "s", "ip", "1.2.3.4", "port", "1"), nil},
			{"accurate search B", "GET", "/v1/cs/configs", q("search", "accurate", "dataId", "", "group", "", "tenant", "nsB", "pageNo", "1", "pageSize", "10"), nil},
			{"history list B", "GET", "/v1/cs/history", q("search", "accurate", "dataId", "secret.properties", "group", "g", "tenant", "nsB", "pageNo", "1", "pageSize", "10"), nil},
			{"export tenant B", "GET", "/v1/cs/configs", q("export", "true", "tenant", "nsB", "group", "", "dataId", ""), nil},
			{"exportV2 ids of B", "GET", "/v1/cs/configs", q("exportV2", "true", "tenant", "nsA", "group", "", "ids", idB), nil},
			{"config detail B", "GET", "/v1/cs/configs/catalog", q("dataId", "secret.properties", "group", "g", "tenant", "nsB"), nil},
			{"listener query B", "GET", "/v1/cs/configs/listener", q("dataId", "secret.properties", "group", "g", "tenant", "nsB"), nil},
			{"listen B, no tenant", "POST", "/v1/cs/configs/listener", q(), url.Values{"Listening-Configs": {"secret.properties\x02g\x02x\x02nsB\x01"}}},
			{"catalog instances B", "GET", "/v1/ns/catalog/instances", q("namespaceId", "nsB", "serviceName", "s", "clusterName", "DEFAULT", "pageNo", "1", "pageSize", "10"), nil},
			{"catalog service B", "GET", "/v1/ns/catalog/service", q("namespaceId", "nsB", "serviceName", "s"), nil},
			{"instance list B", "GET", "/v1/ns/instance/list", q("namespaceId", "nsB", "serviceName", "s"), nil},
			{"instance detail B", "GET", "/v1/ns/instance", q("namespaceId", "nsB", "serviceName", "s", "ip", "10.6.6.6", "port", "6"), nil},
			{"service detail B", "GET", "/v1/ns/service", q("namespaceId", "nsB", "serviceName", "s"), nil},
			{"service names B", "GET", "/v1/ns/service/names", q("namespaceId", "nsB"), nil},
			{"subscribers B", "GET", "/v1/ns/service/subscribers", q("namespaceId", "nsB", "serviceName", "s"), nil},
			{"deregister in B", "DELETE", "/v1/ns/instance", q("namespaceId", "nsB", "serviceName", "s", "ip", "10.6.6.6", "port", "6", "ephemeral", "false"), nil},
			{"beat in B", "PUT", "/v1/ns/instance/beat", q("namespaceId", "nsB", "serviceName", "DEFAULT_GROUP@@s", "beat", `{"ip":"10.6.6.7","port":7,"cluster":"DEFAULT","serviceName":"DEFAULT_GROUP@@s"}`), nil},
			{"metadata batch in B", "PUT", "/v1/ns/instance/metadata/batch", q("namespaceId", "nsB", "serviceName", "s", "consistencyType", "persist", "instances", `[{"ip":"10.6.6.6","port":"6"}]`, "metadata", `{"k":"v"}`), nil},
			{"service update in B", "PUT", "/v1/ns/service", q("namespaceId", "nsB", "serviceName", "s", "protectThreshold", "0.5"), nil},
			{"service delete in B", "DELETE", "/v1/ns/service", q("namespaceId", "nsB", "serviceName", "s"), nil},
			{"cluster update in B", "PUT", "/v1/ns/cluster", q("namespaceId", "nsB", "serviceName", "s", "clusterName", "DEFAULT", "checkPort", "1", "useInstancePort4Check", "true", "healthChecker", `{"type":"NONE"}`), nil},
			{"publish in B", "POST", "/v1/cs/configs", q(), url.Values{"dataId": {"secret.properties"}, "group": {"g"}, "content": {"owned"}, "tenant": {"nsB"}}},
			{"delete in B", "DELETE", "/v1/cs/configs", q("dataId", "secret.properties", "group", "g", "tenant", "nsB"), nil},
		} {
			st, body := tg.do(t, c.m, c.p, c.q, c.f, map[string]string{"Long-Pulling-Timeout": "500", "Long-Pulling-Timeout-No-Hangup": "true"})
			if leaks(body) {
				st = 200
			}
			if c.name != "listen B" && st == 200 && body == "" {
				st = 404 // answered, but nothing of nsB in it
			}
			refused(t, tg, "namespace escape: "+c.name, st, body)
		}
		// clone and import carry their targets and sources in the body
		for _, c := range []struct {
			name  string
			q     url.Values
			ctype string
			body  []byte
		}{
			{"clone B's config into A", q("clone", "true", "tenant", "nsA", "policy", "OVERWRITE"), "application/json", []byte(`[{"cfgId":` + idB + `,"dataId":"stolen","group":"g"}]`)},
			{"clone A's config into B", q("clone", "true", "tenant", "nsB", "policy", "OVERWRITE"), "application/json", []byte(`[{"cfgId":` + idA + `,"dataId":"planted","group":"g"}]`)},
		} {
			st, body := tg.doBody(t, "POST", "/v1/cs/configs", c.q, c.body, c.ctype)
			if st == 200 && !regexp.MustCompile(`"succCount":[1-9]`).MatchString(body) {
				st = 404 // answered, nothing cloned
			}
			refused(t, tg, "namespace escape: "+c.name, st, body)
		}
		ict, imp := importZip(t, "g/planted", "owned")
		st, body := tg.doBody(t, "POST", "/v1/cs/configs", q("import", "true", "namespace", "nsB", "policy", "OVERWRITE"), imp, ict)
		if st == 200 && !regexp.MustCompile(`"succCount":[1-9]`).MatchString(body) {
			st = 404 // answered, nothing imported
		}
		refused(t, tg, "namespace escape: import into B", st, body)
		// nothing of nsB changed
		if st, body := tg.do(t, "GET", "/v1/cs/configs", url.Values{"accessToken": {admin}, "dataId": {"secret.properties"}, "group": {"g"}, "tenant": {"nsB"}}, nil, nil); !tg.java && (st != 200 || body != "pw=nsB") {
			t.Errorf("nacosd: nsB's config after the attempts: %d %s", st, body)
		}
		if st, body := tg.do(t, "GET", "/v1/cs/configs", url.Values{"accessToken": {admin}, "dataId": {"planted"}, "group": {"g"}, "tenant": {"nsB"}}, nil, nil); !tg.java && st != 404 {
			t.Errorf("nacosd: a config planted in nsB: %d %s", st, body)
		}
		// control: alice works in nsA
		if st, body := tg.do(t, "GET", "/v1/cs/configs", q("dataId", "secret.properties", "group", "g", "tenant", "nsA"), nil, nil); st != 200 || body != "pw=nsA" {
			t.Errorf("%s: alice in nsA: %d %s", tg.name, st, body)
		}
	}
}

// Oversized and malformed inputs on the auth endpoints: a clear error,
// never a crash or a large allocation.
func TestMalformedAuthInputs(t *testing.T) {
	for _, tg := range targets(t) {
		malformedAuthInputs(t, tg)
	}
}

func malformedAuthInputs(t *testing.T, tg target) {
	admin := tg.login(t, "nacos", "nacos")
	big := strings.Repeat("x", 100_000)
	for _, c := range []struct {
		m, p string
		f    url.Values
	}{
		{"POST", "/v1/auth/users/login", url.Values{"username": {big}, "password": {"x"}}},
		{"POST", "/v1/auth/users/login", url.Values{"username": {"nacos"}, "password": {big}}},
		{"POST", "/v1/auth/users", url.Values{"username": {big}, "password": {"x"}, "accessToken": {admin}}},
		{"POST", "/v1/auth/users", url.Values{"username": {"u"}, "password": {big}, "accessToken": {admin}}},
		{"POST", "/v1/auth/roles", url.Values{"username": {"nacos"}, "role": {big}, "accessToken": {admin}}},
		{"POST", "/v1/auth/permissions", url.Values{"role": {"ROLE_ADMIN"}, "resource": {big}, "action": {"rw"}, "accessToken": {admin}}},
		{"POST", "/v1/auth/permissions", url.Values{"role": {"ROLE_ADMIN"}, "resource": {"x"}, "action": {big}, "accessToken": {admin}}},
		{"GET", "/v1/auth/users", url.Values{"pageNo": {"99999999999"}, "pageSize": {"1"}, "accessToken": {admin}}},
		{"GET", "/v1/auth/users", url.Values{"pageNo": {"1"}, "pageSize": {"2147483647"}, "accessToken": {admin}}},
		{"GET", "/v1/auth/users", url.Values{"pageNo": {"abc"}, "pageSize": {"-1"}, "accessToken": {admin}}},
		{"GET", "/v1/auth/users/search", url.Values{"username": {big}, "accessToken": {admin}}},
		{"GET", "/v1/auth/roles", url.Values{"pageNo": {"-5"}, "pageSize": {"x"}, "accessToken": {admin}}},
		{"GET", "/v1/auth/roles/search", url.Values{"role": {big}, "accessToken": {admin}}},
		{"GET", "/v1/auth/permissions", url.Values{"role": {big}, "pageNo": {"1"}, "pageSize": {"99999999999999999999"}, "accessToken": {admin}}},
		{"PUT", "/v1/auth/users", url.Values{"username": {"nacos"}, "newPassword": {big}, "accessToken": {admin}}},
		{"PUT", "/v1/auth/users", url.Values{"username": {big}, "newPassword": {"x"}, "accessToken": {admin}}},
		{"DELETE", "/v1/auth/users", url.Values{"username": {big}, "accessToken": {admin}}},
		{"DELETE", "/v1/auth/roles", url.Values{"username": {big}, "role": {big}, "accessToken": {admin}}},
		{"DELETE", "/v1/auth/permissions", url.Values{"role": {big}, "resource": {big}, "action": {big}, "accessToken": {admin}}},
		// NUL separates the columns of role and permission keys: refused
		{"POST", "/v1/auth/users", url.Values{"username": {"evil\x00ROLE_ADMIN"}, "password": {"x"}, "accessToken": {admin}}},
		{"POST", "/v1/auth/roles", url.Values{"username": {"nacos"}, "role": {"ROLE_ADMIN\x00mallory"}, "accessToken": {admin}}},
		{"POST", "/v1/auth/permissions", url.Values{"role": {"r\x00x"}, "resource": {"*:*:*"}, "action": {"rw"}, "accessToken": {admin}}},
		{"POST", "/v1/auth/users/login", url.Values{"username": {"nacos\x00"}, "password": {"nacos"}}},
		{"POST", "/v1/auth/users/login", url.Values{"username": {"nacos"}}},
		{"POST", "/v1/auth/users/login", url.Values{"password": {"nacos"}}},
		{"POST", "/v1/auth/users/login", url.Values{"username": {"\xff\xfe"}, "password": {"\xff"}}},
	} {
		st, body := tg.do(t, c.m, c.p, nil, c.f, nil)
		// a delete of a row that does not exist answers ok, as in Java
		deleted := c.m == "DELETE" && strings.Contains(body, "ok!")
		if tg.java {
			t.Logf("java: malformed %s %s %.60s: %d %.160s", c.m, c.p, c.f.Encode(), st, body)
			continue
		}
		if st == 200 && c.m != "GET" && !deleted || st >= 500 && !strings.HasPrefix(body, "caused:") {
			t.Errorf("%s %s: %d %.200s", c.m, c.p, st, body)
		}
	}
}

// Issue 26 item 4: nacosd refuses to start with any secret that decodes to
// a published one (anyone could sign admin tokens with it) and with the
// identity values of the documentation. Java starts with all of them.
func TestPublishedSecretsRefused(t *testing.T) {
	for _, c := range []struct{ name, secret, idValue string }{
		{"default", auth.DefaultTokenSecret, identity},
		{"default in Base64 (2.2.x)", "U2VjcmV0S2V5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5", identity},
		{"nacos.io guide example", "VGhpc0lzTXlDdXN0b21TZWNyZXRLZXkwMTIzNDU2Nzg=", identity},
		{"guide example with a line break", "VGhpc0lzTXlDdXN0b21T\nZWNyZXRLZXkwMTIzNDU2Nzg=", identity},
		{"default with line breaks", "SecretKey012345678901234567890123\n45678901234567890123456789012345678\n9", identity},
		{"identity serverIdentity/security", secret, "security"},
		{"identity example", secret, "example"},
	} {
		cfg := servertest.Config(t)
		cfg.Auth = server.AuthConfig{Enabled: true, SecretKey: c.secret, ServerIdentityKey: "serverIdentity", ServerIdentityValue: c.idValue}
		if _, err := server.New(cfg); err == nil {
			t.Errorf("nacosd: starts with the published %s", c.name)
		}
	}
}
