package conformance

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nacosd/nacosd/server/auth"
)

// The permission matrix: every user of authUsers against the naming and
// config endpoints of public, nsA and nsB (and a few console endpoints and
// ways of presenting credentials). Each answer is judged against Java
// 1.4.8's rule (NacosRoleServiceImpl.hasPermission on the resource its
// @Secured parser builds: allowed, or 403 with Java's message), and
// nacosd's answer is compared with the reference's: the status always, the
// normalised body for refusals and for endpoints whose body holds no
// server state. One scenario per endpoint ("auth/matrix.<endpoint>"); its
// detail names the first cases that failed.

// mxCase is one request of the matrix.
type mxCase struct {
	group        string // scenario "auth/matrix.<group>"
	user, ns     string
	method, path string
	q, form      url.Values
	hdr          map[string]string
	// cred: "" (accessToken parameter), "bearer", "password", "none",
	// "badtoken", "badpassword".
	cred string
	// resource and action Java's @Secured checks.
	resource, action string
	// keys: further resources read (listened keys), which nacosd checks
	// too; a case where that changes the answer is in group "strict.*".
	keys []string
	// body: compare the normalised bodies also when the call is allowed.
	body bool
}

// mxResult is a case's outcome on one target.
type mxResult struct {
	resp authResp
	why  string // "" when the answer meets the expectation
}

// mxRule is nacosd's permission decision for a user of authUsers: Java's
// (NacosRoleServiceImpl.hasPermission) except that a stored resource is a
// literal name with * as the only wildcard (auth.MatchResource), where Java
// compiles it as a regex with only * rewritten. A case where the two differ
// is in group "strict.*" (Java's answer is its defect).
func (a *authRun) mxRule(user, resource, action string) bool {
	return a.rule(user, resource, action, auth.MatchResource)
}

// mxRuleJava is Java's decision: the stored resource as a regex.
func (a *authRun) mxRuleJava(user, resource, action string) bool {
	return a.rule(user, resource, action, func(stored, res string) bool {
		re, err := regexp.Compile("^(?:" + strings.ReplaceAll(stored, "*", ".*") + ")$")
		return err == nil && re.MatchString(res)
	})
}

func (a *authRun) rule(user, resource, action string, match func(stored, resource string) bool) bool {
	if user == "nacos" {
		return true
	}
	if strings.HasPrefix(resource, "console/") {
		return false
	}
	for _, u := range a.authUsers() {
		if u.name != user {
			continue
		}
		for _, grants := range u.roles {
			for _, g := range grants {
				if strings.Contains(g.action, action) && match(g.resource, resource) {
					return true
				}
			}
		}
	}
	return false
}

// expect returns whether c is allowed, and the 403 message when it is not.
func (a *authRun) expect(c mxCase) (bool, string) {
	switch c.cred {
	case "none", "badpassword":
		return false, "unknown user!"
	case "badtoken":
		return false, "token invalid!"
	}
	ok := a.mxRule(c.user, c.resource, c.action)
	if strings.HasPrefix(c.group, "strict.") {
		for _, k := range c.keys {
			ok = ok && a.mxRule(c.user, k, "r")
		}
	}
	if !ok {
		return false, "authorization failed!"
	}
	return true, ""
}

func springMessage(body string) string {
	var e struct {
		Status  int    `json:"status"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(body), &e) != nil {
		return "<not Spring's error JSON: " + short(body) + ">"
	}
	return e.Message
}

// judge checks a response against the expectation of c.
func (a *authRun) judge(c mxCase, r authResp) string {
	allow, msg := a.expect(c)
	switch {
	case r.Status < 0:
		return r.Body
	case allow && (r.Status == 403 || r.Status == 401 || r.Status == 429):
		return fmt.Sprintf("refused, %s allows it: %d %s", c.resource, r.Status, short(r.Body))
	case !allow && r.Status != 403:
		return fmt.Sprintf("answered %d %s, want 403 %q", r.Status, short(r.Body), msg)
	case !allow && springMessage(r.Body) != msg:
		return fmt.Sprintf("refused with %q, want %q", springMessage(r.Body), msg)
	}
	return ""
}

// cases builds the matrix.
func (a *authRun) cases() []mxCase {
	n := a.ns()
	var out []mxCase
	users := []string{"nacos"}
	for _, u := range a.authUsers() {
		if strings.HasPrefix(u.name, "mx-") {
			users = append(users, u.name)
		}
	}
	for ui, user := range users {
		for _, ns := range []string{"", n.A, n.B} {
			tq := func(kv ...string) url.Values {
				v := url.Values{}
				if ns != "" {
					v.Set("tenant", ns)
				}
				for i := 0; i+1 < len(kv); i += 2 {
					v.Set(kv[i], kv[i+1])
				}
				return v
			}
			nq := func(kv ...string) url.Values {
				v := url.Values{}
				if ns != "" {
					v.Set("namespaceId", ns)
				}
				for i := 0; i+1 < len(kv); i += 2 {
					v.Set(kv[i], kv[i+1])
				}
				return v
			}
			cres := func(group, dataID string) string { return ns + ":" + group + ":config/" + dataID }
			nres := func(group, svc string) string { return ns + ":" + group + ":naming/" + svc }
			key := "cfg1\x02G1\x02" + strings.Repeat("0", 32)
			if ns != "" {
				key += "\x02" + ns
			}
			key += "\x01"
			listenHdr := map[string]string{"Long-Pulling-Timeout": "30000", "Long-Pulling-Timeout-No-Hangup": "true"}
			ip := "10.9." + strconv.Itoa(ui) + ".1"
			mk := func(c mxCase) {
				c.user, c.ns = user, ns
				if !strings.HasPrefix(c.group, "strict.") && c.cred == "" && a.mxRule(user, c.resource, c.action) != a.mxRuleJava(user, c.resource, c.action) {
					c.group = "strict." + c.group // Java's regex grants what nacosd's literal name does not
				}
				out = append(out, c)
			}
			mk(mxCase{group: "config.get", method: "GET", path: "/v1/cs/configs", q: tq("dataId", "cfg1", "group", "G1"), resource: cres("G1", "cfg1"), action: "r", body: true})
			mk(mxCase{group: "config.get.group", method: "GET", path: "/v1/cs/configs", q: tq("dataId", "cfg1", "group", "G2"), resource: cres("G2", "cfg1"), action: "r", body: true})
			// Java reads a stored resource as a regex with only * rewritten, so
			// "cfg.1" also grants "cfgx1"; nacosd reads it literally (strict.*)
			mk(mxCase{group: "config.get.regex", method: "GET", path: "/v1/cs/configs", q: tq("dataId", "cfgx1", "group", "G1"), resource: cres("G1", "cfgx1"), action: "r", body: true})
			mk(mxCase{group: "config.publish", method: "POST", path: "/v1/cs/configs", form: tq("dataId", "mxw", "group", "G1", "content", "by "+user), resource: cres("G1", "mxw"), action: "w", body: true})
			mk(mxCase{group: "config.delete", method: "DELETE", path: "/v1/cs/configs", q: tq("dataId", "mxdel", "group", "G1"), resource: cres("G1", "mxdel"), action: "w", body: true})
			mk(mxCase{group: "config.search", method: "GET", path: "/v1/cs/configs", q: tq("search", "accurate", "dataId", "", "group", "", "pageNo", "1", "pageSize", "100"), resource: ns + ":*:config/*", action: "r"})
			mk(mxCase{group: "config.history", method: "GET", path: "/v1/cs/history", q: tq("search", "accurate", "dataId", "cfg1", "group", "G1", "pageNo", "1", "pageSize", "10"), resource: cres("G1", "cfg1"), action: "r"})
			// the listener as clients send it: the namespace in tenant
			listen := mxCase{group: "config.listener", method: "POST", path: "/v1/cs/configs/listener", form: tq("Listening-Configs", key), hdr: listenHdr,
				resource: ns + ":*:config/*", action: "r", keys: []string{cres("G1", "cfg1")}, body: true}
			// without tenant Java checks public's rights whatever the keys
			bare := mxCase{group: "config.listener.notenant", method: "POST", path: "/v1/cs/configs/listener", form: url.Values{"Listening-Configs": {key}}, hdr: listenHdr,
				resource: ":*:config/*", action: "r", keys: []string{cres("G1", "cfg1")}, body: true}
			for _, c := range []mxCase{listen, bare} {
				c.user = user
				if java, _ := a.expect(c); java && !a.mxRule(user, c.keys[0], "r") {
					c.group = "strict." + c.group // Java answers keys the user cannot read
				}
				mk(c)
			}
			mk(mxCase{group: "naming.register", method: "POST", path: "/v1/ns/instance", q: nq("serviceName", "svc1", "groupName", "G1", "ip", ip, "port", "80", "ephemeral", "false"), resource: nres("G1", "svc1"), action: "w", body: true})
			mk(mxCase{group: "naming.list", method: "GET", path: "/v1/ns/instance/list", q: nq("serviceName", "G1@@svc1"), resource: nres("G1", "svc1"), action: "r"})
			mk(mxCase{group: "naming.deregister", method: "DELETE", path: "/v1/ns/instance", q: nq("serviceName", "svc1", "groupName", "G1", "ip", ip, "port", "80", "ephemeral", "false"), resource: nres("G1", "svc1"), action: "w", body: true})
			mk(mxCase{group: "naming.beat", method: "PUT", path: "/v1/ns/instance/beat", q: nq("serviceName", "G1@@svc1", "beat", `{"ip":"10.9.9.9","port":9,"cluster":"DEFAULT","serviceName":"G1@@svc1"}`), resource: nres("G1", "svc1"), action: "w"})
			mk(mxCase{group: "naming.service.create", method: "POST", path: "/v1/ns/service", q: nq("serviceName", "mxs-"+user, "groupName", "G1"), resource: nres("G1", "mxs-"+user), action: "w", body: true})
			mk(mxCase{group: "naming.service.get", method: "GET", path: "/v1/ns/service", q: nq("serviceName", "svc1", "groupName", "G1"), resource: nres("G1", "svc1"), action: "r"})
			mk(mxCase{group: "naming.service.list", method: "GET", path: "/v1/ns/service/list", q: nq("pageNo", "1", "pageSize", "10"), resource: ns + ":*:naming/*", action: "r"})
			mk(mxCase{group: "naming.catalog", method: "GET", path: "/v1/ns/catalog/services", q: nq("pageNo", "1", "pageSize", "10"), resource: ns + ":*:naming/*", action: "r"})
		}
		mk := func(c mxCase) { c.user = user; out = append(out, c) }
		mk(mxCase{group: "console.namespace.create", method: "POST", path: "/v1/console/namespaces",
			form: url.Values{"customNamespaceId": {"mxk-" + user + "-" + a.env.RunID}, "namespaceName": {"x"}}, resource: "console/namespaces", action: "w", body: true})
		mk(mxCase{group: "console.users", method: "GET", path: "/v1/auth/users", q: url.Values{"pageNo": {"1"}, "pageSize": {"10"}}, resource: "console/users", action: "r"})
	}
	// ways of presenting credentials, on a read mx-rw may do
	for _, cred := range []string{"bearer", "password", "none", "badtoken", "badpassword"} {
		out = append(out, mxCase{group: "credentials." + cred, user: "mx-rw", ns: n.A, method: "GET", path: "/v1/cs/configs",
			q: url.Values{"dataId": {"cfg1"}, "group": {"G1"}, "tenant": {n.A}}, cred: cred, resource: n.A + ":G1:config/cfg1", action: "r", body: true})
	}
	return out
}

// mxTokens hands out tokens, logging in again before one gets old (the
// matrix takes longer than AuthTokenTTL on a loaded reference).
type mxTokens struct {
	a   *authRun
	s   *Server
	tok map[string]string
	at  map[string]time.Time
}

func (t *mxTokens) get(user string) (string, error) {
	if time.Since(t.at[user]) < AuthTokenTTL*time.Second/2 {
		return t.tok[user], nil
	}
	tok, _, err := t.a.login(t.s, user)
	if err != nil {
		return "", err
	}
	t.tok[user], t.at[user] = tok, time.Now()
	return tok, nil
}

// send runs c on s with the credentials it names.
func (a *authRun) send(s *Server, c mxCase, toks *mxTokens) authResp {
	q, form := url.Values{}, url.Values(nil)
	for k, v := range c.q {
		q[k] = v
	}
	if c.form != nil {
		form = url.Values{}
		for k, v := range c.form {
			form[k] = v
		}
	}
	hdr := map[string]string{}
	for k, v := range c.hdr {
		hdr[k] = v
	}
	switch c.cred {
	case "", "bearer":
		tok, err := toks.get(c.user)
		if err != nil {
			return authResp{Status: -1, Body: err.Error()}
		}
		if c.cred == "bearer" {
			hdr["Authorization"] = "Bearer " + tok
		} else {
			q.Set("accessToken", tok)
		}
	case "password":
		q.Set("username", c.user)
		q.Set("password", a.users[c.user])
	case "badtoken":
		q.Set("accessToken", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJteC1ydyIsImV4cCI6NDEwMjQ0NDgwMH0.bm90LWEtc2lnbmF0dXJl")
	case "badpassword":
		q.Set("username", c.user)
		q.Set("password", "not-"+a.users[c.user])
	}
	return a.do(s, c.method, c.path, q, form, hdr)
}

// runMatrix sends every case to every server (in the same order, so both
// hold the same state) and records one result per group and server.
func (a *authRun) runMatrix() {
	cases := a.cases()
	got := make([][]mxResult, len(a.servers))
	var wg sync.WaitGroup
	for si, s := range a.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			toks := &mxTokens{a: a, s: s, tok: map[string]string{}, at: map[string]time.Time{}}
			res := make([]mxResult, len(cases))
			for i, c := range cases {
				r := a.send(s, c, toks)
				res[i] = mxResult{resp: r, why: a.judge(c, r)}
			}
			got[si] = res
		}()
	}
	wg.Wait()
	start := time.Now()
	type agg struct {
		n, allowed int
		fails      []string
		diffs      []string
	}
	per := make([]map[string]*agg, len(a.servers))
	var order []string
	seen := map[string]bool{}
	for si := range a.servers {
		per[si] = map[string]*agg{}
		for i, c := range cases {
			g := per[si][c.group]
			if g == nil {
				g = &agg{}
				per[si][c.group] = g
			}
			if !seen[c.group] {
				seen[c.group] = true
				order = append(order, c.group)
			}
			g.n++
			if ok, _ := a.expect(c); ok {
				g.allowed++
			}
			if w := got[si][i].why; w != "" {
				g.fails = append(g.fails, fmt.Sprintf("%s ns=%q %s", c.user, c.ns, w))
			}
		}
	}
	// differential: nacosd against the reference
	ni, ri := -1, -1
	for si, s := range a.servers {
		switch s.Name {
		case TargetNacosd:
			ni = si
		case TargetReference:
			ri = si
		}
	}
	if ni >= 0 && ri >= 0 {
		for i, c := range cases {
			if strings.HasPrefix(c.group, "strict.") {
				continue // nacosd refuses what Java answers, on purpose
			}
			n, r := got[ni][i].resp, got[ri][i].resp
			var diff string
			switch {
			case n.Status != r.Status:
				diff = fmt.Sprintf("status %d vs java %d (%s vs %s)", n.Status, r.Status, short(n.Body), short(r.Body))
			case (c.body || n.Status == 403) && Normalise(n.Body, a.env.RunID) != Normalise(r.Body, a.env.RunID):
				diff = "body " + bodyDiff(Normalise(r.Body, a.env.RunID), Normalise(n.Body, a.env.RunID))
			case n.Status == 403 && n.CType != r.CType:
				diff = fmt.Sprintf("content type %q vs java %q", n.CType, r.CType)
			}
			if diff != "" {
				g := per[ni][c.group]
				g.diffs = append(g.diffs, fmt.Sprintf("%s ns=%q %s", c.user, c.ns, diff))
			}
		}
	}
	for _, grp := range order {
		for si, s := range a.servers {
			g := per[si][grp]
			detail := fmt.Sprintf("%d cases: %d allowed, %d refused as Java's rule says", g.n, g.allowed, g.n-g.allowed)
			var err error
			if len(g.fails) > 0 || len(g.diffs) > 0 {
				all := append(append([]string{}, g.fails...), prefixEach("differs from java-nacos: ", g.diffs)...)
				more := ""
				if len(all) > 3 {
					more = fmt.Sprintf(" (+%d more)", len(all)-3)
					all = all[:3]
				}
				err = fmt.Errorf("%d of %d cases failed: %s%s", len(g.fails)+len(g.diffs), g.n, strings.Join(all, "; "), more)
			}
			a.add(s, "matrix."+grp, -1, detail, err)
		}
	}
	a.env.Logger.Info("auth matrix judged", "cases", len(cases), "took", time.Since(start))
}

func prefixEach(p string, l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = p + s
	}
	return out
}
