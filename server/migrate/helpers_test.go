package migrate

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// api is a test client of one Nacos-speaking server.
type api struct {
	t     testing.TB
	name  string
	base  string // http://host:port/nacos
	token string
}

func (a *api) do(method, path string, q, form url.Values) (int, string) {
	a.t.Helper()
	return a.doH(method, path, q, form, nil)
}

func (a *api) doH(method, path string, q, form url.Values, hdr map[string]string) (int, string) {
	a.t.Helper()
	if q == nil {
		q = url.Values{}
	}
	if a.token != "" {
		q = cloneValues(q)
		q.Set("accessToken", a.token)
	}
	u := a.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		a.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded;charset=UTF-8")
	}
	for k, val := range hdr {
		req.Header.Set(k, val)
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		a.t.Fatalf("%s: %s %s: %v", a.name, method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// must sends a request that has to answer 200 with one of the bodies ok
// (any body when ok is empty).
func (a *api) must(method, path string, q, form url.Values, ok ...string) string {
	a.t.Helper()
	st, body := a.do(method, path, q, form)
	if st != 200 {
		a.t.Fatalf("%s: %s %s %v: %d %s", a.name, method, path, q, st, body)
	}
	if len(ok) > 0 {
		for _, o := range ok {
			if body == o || strings.Contains(body, o) {
				return body
			}
		}
		a.t.Fatalf("%s: %s %s %v: %s, want %v", a.name, method, path, q, body, ok)
	}
	return body
}

func (a *api) login(user, password string) {
	a.t.Helper()
	// a login carrying a token is judged by the token (NacosAuthManager:
	// the bearer first), and a password change ended the old one
	a.token = ""
	body := a.must("POST", "/v1/auth/users/login", url.Values{"username": {user}, "password": {password}}, nil)
	var res struct {
		AccessToken string `json:"accessToken"`
	}
	if err := json.Unmarshal([]byte(body), &res); err != nil || res.AccessToken == "" {
		a.t.Fatalf("%s: login %s: %s", a.name, user, body)
	}
	a.token = res.AccessToken
}

func (a *api) getJSON(path string, q url.Values) any {
	a.t.Helper()
	body := a.must("GET", path, q, nil)
	var v any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		a.t.Fatalf("%s: GET %s %v: not JSON: %s", a.name, path, q, body)
	}
	return v
}

func v(kv ...string) url.Values {
	out := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// fill writes the test data set through the Nacos API (works on Java Nacos
// and nacosd). Naming parameters travel in the query string (Java drops a
// naming form body); config contents in the form body.
func fill(a *api, withTag, withUsers bool) {
	t := a.t
	t.Helper()
	a.must("POST", "/v1/console/namespaces", v("customNamespaceId", "ns-dev", "namespaceName", "Dev", "namespaceDesc", "development"), nil, "true")
	a.must("POST", "/v1/console/namespaces", v("customNamespaceId", "ns-prod", "namespaceName", "Prod"), nil, "true")
	pub := func(form url.Values) { a.must("POST", "/v1/cs/configs", nil, form, "true") }
	pub(v("dataId", "app.properties", "group", "DEFAULT_GROUP", "content", "a=1\nb=2", "type", "properties", "appName", "shop",
		"desc", "main config", "config_tags", "beta-tag,alpha-tag", "use", "orders", "effect", "all"))
	pub(v("dataId", "app.properties", "group", "DEFAULT_GROUP", "content", "a=1\nb=3", "type", "properties"))
	pub(v("dataId", "db.yaml", "group", "G1", "tenant", "ns-dev", "content", "名字: 测试 ✓\nurl: \"jdbc:x?y=1&z=2\"\n", "type", "yaml"))
	pub(v("dataId", "big.json", "group", "G1", "tenant", "ns-dev", "content", `{"k":"`+strings.Repeat("0123456789", 20000)+`"}`, "type", "json"))
	pub(v("dataId", "gray.txt", "group", "G2", "tenant", "ns-prod", "content", "stable"))
	st, body := a.doH("POST", "/v1/cs/configs", nil, v("dataId", "gray.txt", "group", "G2", "tenant", "ns-prod", "content", "gray"),
		map[string]string{"betaIps": "10.1.1.1,10.1.1.2"})
	if st != 200 || body != "true" {
		t.Fatalf("%s: beta publish: %d %s", a.name, st, body)
	}
	if withTag {
		pub(v("dataId", "gray.txt", "group", "G2", "tenant", "ns-prod", "content", "canary build", "tag", "canary"))
	}
	pub(v("dataId", "deleted.cfg", "group", "G3", "content", "soon gone"))
	a.must("DELETE", "/v1/cs/configs", v("dataId", "deleted.cfg", "group", "G3"), nil, "true")
	pub(v("dataId", "a-b_c.d:e", "group", "G3", "content", "quotes \" ' \\ and tabs\t"))

	if withUsers {
		fillUsers(a)
	}
	fillNaming(a)
}

func fillUsers(a *api) {
	a.t.Helper()
	a.must("POST", "/v1/auth/users", v("username", "alice", "password", "alice-pw-1"), nil)
	a.must("POST", "/v1/auth/users", v("username", "bob", "password", "bob pw"), nil)
	a.must("POST", "/v1/auth/roles", v("role", "DEV_ROLE", "username", "alice"), nil)
	a.must("POST", "/v1/auth/roles", v("role", "DEV_ROLE", "username", "bob"), nil)
	a.must("POST", "/v1/auth/roles", v("role", "OPS", "username", "bob"), nil)
	a.must("POST", "/v1/auth/permissions", v("role", "DEV_ROLE", "resource", "ns-dev:*:*", "action", "rw"), nil)
	a.must("POST", "/v1/auth/permissions", v("role", "OPS", "resource", "ns-prod:*:*", "action", "r"), nil)
}

func fillNaming(a *api) {
	a.t.Helper()

	a.must("POST", "/v1/ns/service", v("serviceName", "orders", "groupName", "DEFAULT_GROUP", "protectThreshold", "0.3", "metadata", `{"team":"a"}`), nil, "ok")
	a.must("POST", "/v1/ns/instance", v("serviceName", "orders", "ip", "127.0.0.11", "port", "8080", "weight", "2", "ephemeral", "false",
		"metadata", `{"zone":"z1"}`), nil, "ok")
	a.must("POST", "/v1/ns/instance", v("serviceName", "orders", "ip", "127.0.0.12", "port", "8080", "ephemeral", "false", "enabled", "false"), nil, "ok")
	a.must("PUT", "/v1/ns/cluster", v("serviceName", "DEFAULT_GROUP@@orders", "clusterName", "DEFAULT", "checkPort", "9090",
		"useInstancePort4Check", "false", "healthChecker", `{"type":"TCP"}`, "metadata", `{"k":"v"}`), nil, "ok")
	a.must("POST", "/v1/ns/service", v("serviceName", "payments", "groupName", "GRP", "namespaceId", "ns-dev",
		"selector", `{"type":"label","expression":"CONSUMER.label.zone = PROVIDER.label.zone"}`), nil, "ok")
	a.must("POST", "/v1/ns/instance", v("serviceName", "payments", "groupName", "GRP", "namespaceId", "ns-dev", "ip", "127.0.0.21",
		"port", "9000", "clusterName", "c1", "ephemeral", "false", "weight", "0.5"), nil, "ok")
	a.must("PUT", "/v1/ns/cluster", v("serviceName", "GRP@@payments", "namespaceId", "ns-dev", "clusterName", "c1", "checkPort", "80",
		"useInstancePort4Check", "true", "healthChecker", `{"type":"HTTP","path":"/health","headers":""}`), nil, "ok")
}

// namespaces the data set uses, config (tenant) and naming spelling.
var (
	testTenants      = []string{"", "ns-dev", "ns-prod"}
	testNamingSpaces = []string{"public", "ns-dev"}
)

// compareOptions say which differences between the servers are expected.
type compareOptions struct {
	users   bool // users, roles and permissions were copied
	tags    bool // tag variants were copied
	nids    bool // history nids are the source's
	deleted bool // the history of the deleted config was copied
}

// compare checks, entry by entry through both servers' APIs, that dst
// holds what src holds.
func compare(t *testing.T, src, dst *api, o compareOptions) {
	t.Helper()
	for _, ns := range testTenants[1:] {
		same(t, "namespace "+ns, src.getJSON("/v1/console/namespaces", v("show", "all", "namespaceId", ns)),
			dst.getJSON("/v1/console/namespaces", v("show", "all", "namespaceId", ns)))
	}
	for _, ns := range testTenants {
		list := src.getJSON("/v1/cs/configs", v("search", "blur", "dataId", "", "group", "", "tenant", ns, "pageNo", "1", "pageSize", "100"))
		same(t, "config list of "+ns, list, dst.getJSON("/v1/cs/configs", v("search", "blur", "dataId", "", "group", "", "tenant", ns, "pageNo", "1", "pageSize", "100")))
		items, _ := list.(map[string]any)["pageItems"].([]any)
		if len(items) == 0 {
			t.Errorf("source has no configs in namespace %q", ns)
		}
		for _, it := range items {
			m := it.(map[string]any)
			key := v("dataId", m["dataId"].(string), "group", m["group"].(string), "tenant", ns)
			what := fmt.Sprintf("config %s/%s/%s", ns, m["group"], m["dataId"])
			all := cloneValues(key)
			all.Set("show", "all")
			same(t, what, src.getJSON("/v1/cs/configs", all), dst.getJSON("/v1/cs/configs", all))
			beta := cloneValues(key)
			beta.Set("beta", "true")
			same(t, what+" beta", src.getJSON("/v1/cs/configs", beta), dst.getJSON("/v1/cs/configs", beta))
			compareHistory(t, what, src, dst, key, o)
		}
	}
	if o.tags {
		key := v("dataId", "gray.txt", "group", "G2", "tenant", "ns-prod", "tag", "canary")
		a, b := src.must("GET", "/v1/cs/configs", key, nil), dst.must("GET", "/v1/cs/configs", key, nil)
		if a != b || a != "canary build" {
			t.Errorf("tag variant: source %q, nacosd %q", a, b)
		}
	}
	if o.deleted {
		compareHistory(t, "deleted config", src, dst, v("dataId", "deleted.cfg", "group", "G3", "tenant", ""), o)
	}
	names := func(a *api, path, field string) []string {
		var out []string
		for _, it := range a.getJSON(path, v("pageNo", "1", "pageSize", "100")).(map[string]any)["pageItems"].([]any) {
			m := it.(map[string]any)
			var parts []string
			for _, f := range strings.Split(field, ",") {
				parts = append(parts, fmt.Sprint(m[f]))
			}
			out = append(out, strings.Join(parts, " "))
		}
		sort.Strings(out)
		return out
	}
	for _, c := range []struct{ path, fields string }{
		{"/v1/auth/users", "username"}, {"/v1/auth/roles", "role,username"}, {"/v1/auth/permissions", "role,resource,action"},
	} {
		if !o.users {
			break
		}
		if a, b := names(src, c.path, c.fields), names(dst, c.path, c.fields); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: source %v, nacosd %v", c.path, a, b)
		}
	}
	for _, ns := range testNamingSpaces {
		for _, it := range src.getJSON("/v1/ns/catalog/services", v("pageNo", "1", "pageSize", "100", "namespaceId", ns)).(map[string]any)["serviceList"].([]any) {
			m := it.(map[string]any)
			q := v("serviceName", m["name"].(string), "groupName", m["groupName"].(string), "namespaceId", ns)
			what := fmt.Sprintf("service %s/%s@@%s", ns, m["groupName"], m["name"])
			detail := src.getJSON("/v1/ns/catalog/service", q)
			same(t, what, detail, dst.getJSON("/v1/ns/catalog/service", q))
			for _, cl := range detail.(map[string]any)["clusters"].([]any) {
				qc := cloneValues(q)
				qc.Set("clusterName", cl.(map[string]any)["name"].(string))
				qc.Set("pageNo", "1")
				qc.Set("pageSize", "100")
				same(t, what+" instances", persistent(src.getJSON("/v1/ns/catalog/instances", qc)), persistent(dst.getJSON("/v1/ns/catalog/instances", qc)))
			}
		}
	}
}

// compareHistory compares a config's history list and each row's detail.
// Known differences: Java on MySQL trims op_type (CHAR(10)) where Derby and
// nacosd pad it, and fills gmt_create where Derby and nacosd show the
// column default.
func compareHistory(t *testing.T, what string, src, dst *api, key url.Values, o compareOptions) {
	t.Helper()
	q := cloneValues(key)
	q.Set("search", "accurate")
	q.Set("pageNo", "1")
	q.Set("pageSize", "100")
	norm := func(x any) any {
		m := x.(map[string]any)
		items, _ := m["pageItems"].([]any)
		for _, it := range items {
			h := it.(map[string]any)
			h["opType"] = strings.TrimSpace(fmt.Sprint(h["opType"]))
			delete(h, "createdTime")
			if !o.nids {
				delete(h, "id")
			}
		}
		return m
	}
	a, b := src.getJSON("/v1/cs/history", q), dst.getJSON("/v1/cs/history", q)
	nids := func(x any) []any {
		var out []any
		items, _ := x.(map[string]any)["pageItems"].([]any)
		for _, it := range items {
			out = append(out, it.(map[string]any)["id"])
		}
		return out
	}
	srcItems, dstItems := nids(a), nids(b)
	same(t, what+" history", norm(a), norm(b))
	if len(srcItems) == 0 {
		t.Errorf("%s: source has no history", what)
	}
	for i := range srcItems {
		if i >= len(dstItems) {
			break
		}
		detail := func(x *api, nid any) any {
			qd := cloneValues(key)
			qd.Set("nid", fmt.Sprint(nid))
			d := x.getJSON("/v1/cs/history", qd).(map[string]any)
			d["opType"] = strings.TrimSpace(fmt.Sprint(d["opType"]))
			delete(d, "createdTime")
			if !o.nids {
				delete(d, "id")
			}
			return d
		}
		same(t, fmt.Sprintf("%s history row %d", what, i), detail(src, srcItems[i]), detail(dst, dstItems[i]))
	}
}

// persistent keeps the persistent instances of a catalog/instances answer,
// without the probe state and beat time.
func persistent(x any) any {
	var out []any
	for _, it := range x.(map[string]any)["list"].([]any) {
		m := it.(map[string]any)
		if m["ephemeral"] == true {
			continue
		}
		delete(m, "lastBeat")
		delete(m, "healthy")
		out = append(out, m)
	}
	return out
}

func same(t *testing.T, what string, a, b any) {
	t.Helper()
	if !reflect.DeepEqual(a, b) {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		t.Errorf("%s differs:\n source: %s\n nacosd: %s", what, truncate(string(ja), 1500), truncate(string(jb), 1500))
	}
}
