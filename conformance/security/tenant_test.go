package security

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// Issue 26 items 3 and 5: a user who may read only namespace team_a lists
// namespace team-a's configs through the LIKE wildcard '_' of the tenant:
// in nacosd's console search (nacosd only) and in the blur search (Java
// too). The tenant is matched exactly; '*' in dataId and group still works
// within the namespace.
func TestTenantWildcardEscape(t *testing.T) {
	for _, tg := range targets(t) {
		admin := tg.login(t, "nacos", "nacos")
		aq := url.Values{"accessToken": {admin}}
		sfx := itoa(time.Now().UnixNano() % 1e6)
		nsA, nsB := "team_a"+sfx, "team-a"+sfx
		for _, ns := range []string{nsA, nsB} {
			tg.do(t, "POST", "/v1/console/namespaces", aq, url.Values{"customNamespaceId": {ns}, "namespaceName": {ns}}, nil)
			tg.do(t, "POST", "/v1/cs/configs", aq, url.Values{"dataId": {"db.properties"}, "group": {"g"}, "content": {"pw=" + ns}, "tenant": {ns}}, nil)
		}
		user := "teama" + sfx
		tg.do(t, "POST", "/v1/auth/users", aq, url.Values{"username": {user}, "password": {"teama-pw"}}, nil)
		tg.do(t, "POST", "/v1/auth/roles", aq, url.Values{"username": {user}, "role": {"teamA" + sfx}}, nil)
		tg.do(t, "POST", "/v1/auth/permissions", aq, url.Values{"role": {"teamA" + sfx}, "resource": {nsA + ":*:*"}, "action": {"r"}}, nil)
		tok := tg.loginEventually(t, user, "teama-pw")
		type req struct {
			name, path string
			q          url.Values
		}
		reqs := []req{
			{"blur search", "/v1/cs/configs", url.Values{"search": {"blur"}, "dataId": {"*"}, "group": {""}, "tenant": {nsA}, "pageNo": {"1"}, "pageSize": {"50"}}},
			{"blur search by group", "/v1/cs/configs", url.Values{"search": {"blur"}, "dataId": {""}, "group": {"g*"}, "tenant": {nsA}, "pageNo": {"1"}, "pageSize": {"50"}}},
		}
		if !tg.java {
			reqs = append(reqs, req{"console search", "/v1/console/configs", url.Values{"tenant": {nsA}, "pageNo": {"1"}, "pageSize": {"50"}}},
				req{"console search by dataId", "/v1/console/configs", url.Values{"tenant": {nsA}, "dataId": {"db*"}, "pageNo": {"1"}, "pageSize": {"50"}}})
		}
		for _, r := range reqs {
			r.q.Set("accessToken", tok)
			var st int
			var body string
			for i := 0; i < 50; i++ { // Java lists from its database at once; retry for its dump anyway
				st, body = tg.do(t, "GET", r.path, r.q, nil, nil)
				if strings.Contains(body, "db.properties") {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if st == 200 && strings.Contains(body, nsB) {
				st = 200 // the escape
			} else if st == 200 {
				st = 404 // answered, nothing of team-a
			}
			refused(t, tg, "tenant wildcard: "+r.name+" of "+nsA+" lists "+nsB, st, body)
			// control: its own namespace is listed
			if !strings.Contains(body, nsA) && !tg.java {
				t.Errorf("nacosd: %s: %s's own config missing: %.300s", r.name, nsA, body)
			}
		}
	}
}

// Issue 26 item 6: permission resources are literal names with * as the
// only wildcard: r on config/app.yaml must not read config/app-yaml (Java
// compiles the resource as a regular expression: '.' matches '-').
func TestPermissionResourceRegex(t *testing.T) {
	for _, tg := range targets(t) {
		admin := tg.login(t, "nacos", "nacos")
		aq := url.Values{"accessToken": {admin}}
		sfx := itoa(time.Now().UnixNano() % 1e6)
		for _, d := range []string{"app.yaml", "app-yaml", "appXyaml"} {
			tg.do(t, "POST", "/v1/cs/configs", aq, url.Values{"dataId": {d + sfx}, "group": {"G"}, "content": {"secret of " + d}}, nil)
		}
		user, role := "rx"+sfx, "rx"+sfx
		tg.do(t, "POST", "/v1/auth/users", aq, url.Values{"username": {user}, "password": {"rx-pw"}}, nil)
		tg.do(t, "POST", "/v1/auth/roles", aq, url.Values{"username": {user}, "role": {role}}, nil)
		tg.do(t, "POST", "/v1/auth/permissions", aq, url.Values{"role": {role}, "resource": {":G:config/app.yaml" + sfx}, "action": {"r"}}, nil)
		tok := tg.loginEventually(t, user, "rx-pw")
		get := func(d string) (int, string) {
			var st int
			var body string
			for i := 0; i < 50; i++ { // Java serves reads from its dump
				st, body = tg.do(t, "GET", "/v1/cs/configs", url.Values{"dataId": {d + sfx}, "group": {"G"}, "accessToken": {tok}}, nil, nil)
				if st != 404 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			return st, body
		}
		if st, body := get("app.yaml"); st != 200 && !tg.java {
			t.Errorf("nacosd: the permitted config: %d %s", st, body)
		}
		for _, d := range []string{"app-yaml", "appXyaml"} {
			st, body := get(d)
			refused(t, tg, "permission resource as a regex: r on config/app.yaml reads config/"+d, st, body)
		}
	}
}
