package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/servertest"
)

// cpCase is one write through a raft follower: the request, the answer
// it must get, and a read that must show the write at once on the
// follower that answered (read-your-writes) and on the leader.
type cpCase struct {
	name         string
	method, path string // the route of the table it covers
	query, form  url.Values
	header       map[string]string
	body         string // a raw body (JSON routes); form then unused
	want         string // the answer's body ("" = any 200)
	read         func(n *servertest.Node) error
}

// TestEveryCPRouteThroughAFollower is rqlite's request-forwarding test for
// nacosd (issue 23): every route the table declares CP, mixed or
// per-request (the persistent variant), sent to a raft follower of a
// three-node cluster, is applied by the leader and read back on the
// follower right after its answer. The route table decides which routes
// must be here: a CP route without a case fails the test, and so does a
// write of a route the table does not declare CP (the gate counts it).
func TestEveryCPRouteThroughAFollower(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	nodes := servertest.StartCluster(t, servertest.ClusterConfigs(t, 3))
	servertest.WaitMembersUp(t, nodes)
	var leader, follower *servertest.Node
	for _, n := range nodes {
		if n.IsRaftLeader() {
			leader = n
		} else if follower == nil {
			follower = n
		}
	}
	if leader == nil || follower == nil {
		t.Fatal("no leader/follower")
	}
	token := loginToken(t, leader)
	cases := cpCases(token)

	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.method+" "+c.path] = true
	}
	for _, r := range follower.Routes().Routes() {
		if r.Method == httpapi.MethodAll || r.Method == fiber.MethodHead || r.Unserved {
			continue
		}
		if r.Class == httpapi.CP || r.Class == httpapi.Mixed || r.ClassOf != nil {
			if !covered[r.Method+" "+r.Path] {
				t.Errorf("route %s %s (%s) has no case here", r.Method, r.Path, r.Class)
			}
		}
	}

	for _, c := range cases {
		// a follower now: under load an election can move the leadership
		// between cases
		for _, n := range nodes {
			if !n.IsRaftLeader() {
				follower = n
				break
			}
		}
		before := follower.GateStats().Forwarded.Load()
		u := follower.URL("/nacos" + c.path)
		if len(c.query) > 0 {
			u += "?" + c.query.Encode()
		}
		var resp servertest.Response
		if c.body != "" {
			h := map[string]string{"Content-Type": "application/json"}
			for k, v := range c.header {
				h[k] = v
			}
			resp = servertest.DoURL(t, c.method, u, c.body, h)
		} else {
			resp = follower.Do(c.method, "/nacos"+c.path, c.query, c.form, c.header)
		}
		if resp.Status != 200 || c.want != "" && resp.Body != c.want {
			t.Errorf("%s (%s %s) on a follower: %d %s", c.name, c.method, c.path, resp.Status, resp.Body)
			continue
		}
		if follower.GateStats().Forwarded.Load() == before && !follower.IsRaftLeader() {
			t.Errorf("%s: the follower did not forward the write", c.name)
		}
		if c.read == nil {
			continue
		}
		// no waiting: the follower answered after applying the write
		if err := c.read(follower); err != nil {
			t.Errorf("%s: read on the follower right after its answer: %v", c.name, err)
		}
		// the leader answered after applying it: at once on the node that
		// leads now (under load an election can move it during the test,
		// and a new leader applies everything committed before it writes)
		for _, n := range nodes {
			if n.IsRaftLeader() {
				leader = n
			}
		}
		if err := c.read(leader); err != nil {
			servertest.Eventually(t, 5*time.Second, func() error { return c.read(leader) })
			t.Logf("%s: read on %s needed a moment (the leadership moved: %v)", c.name, leader.HTTPAddr(), err)
		}
	}
	for i, n := range nodes {
		if u := n.GateStats().Undeclared.Load(); u != 0 {
			t.Errorf("node %d: %d writes of routes not declared CP", i, u)
		}
	}
}

func loginToken(t *testing.T, n *servertest.Node) string {
	t.Helper()
	var token string
	servertest.Eventually(t, 10*time.Second, func() error { // the built-in user is written once a leader exists
		r := n.Do("POST", "/nacos/v1/auth/users/login", nil, url.Values{"username": {"nacos"}, "password": {"nacos"}}, nil)
		var body struct {
			AccessToken string `json:"accessToken"`
		}
		if err := json.Unmarshal([]byte(r.Body), &body); err != nil || body.AccessToken == "" {
			return fmt.Errorf("login: %d %s", r.Status, r.Body)
		}
		token = body.AccessToken
		return nil
	})
	return token
}

func vals(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// get reads a path and checks the answer contains (or, with !, lacks)
// each string.
func get(path string, q url.Values, want ...string) func(n *servertest.Node) error {
	return func(n *servertest.Node) error {
		r := n.Do("GET", "/nacos"+path, q, nil, nil)
		for _, w := range want {
			if not, ok := strings.CutPrefix(w, "!"); ok {
				if strings.Contains(r.Body, not) {
					return fmt.Errorf("GET %s: %d %s still has %q", path, r.Status, r.Body, not)
				}
				continue
			}
			if !strings.Contains(r.Body, w) {
				return fmt.Errorf("GET %s: %d %s lacks %q", path, r.Status, r.Body, w)
			}
		}
		return nil
	}
}

func status(path string, q url.Values, want int) func(n *servertest.Node) error {
	return func(n *servertest.Node) error {
		if r := n.Do("GET", "/nacos"+path, q, nil, nil); r.Status != want {
			return fmt.Errorf("GET %s: %d %s, want %d", path, r.Status, r.Body, want)
		}
		return nil
	}
}

func cpCases(token string) []cpCase {
	cfg := vals("dataId", "fw.cfg", "group", "FW")
	inst := func(base string, kv ...string) url.Values {
		return vals(append([]string{"serviceName", "fw.persistent" + base, "ip", "10.9.0.1", "port", "80", "ephemeral", "false"}, kv...)...)
	}
	list := func(base string, want ...string) func(*servertest.Node) error {
		return get("/v1/ns/instance/list", vals("serviceName", "fw.persistent"+base, "healthyOnly", "false"), want...)
	}
	admin := func(kv ...string) url.Values { return vals(append([]string{"accessToken", token}, kv...)...) }
	users := func(base string) []cpCase {
		u := "fw-user" + strings.ReplaceAll(base, "/", "-")
		listed := func(want string) func(*servertest.Node) error {
			return get(base, admin("pageNo", "1", "pageSize", "100"), want)
		}
		return []cpCase{
			{name: "create user " + base, method: "POST", path: base, query: admin("username", u, "password", "pw-1"),
				read: listed(`"username":"` + u + `"`)},
			{name: "change password " + base, method: "PUT", path: base, query: admin("username", u, "newPassword", "pw-2"),
				read: func(n *servertest.Node) error {
					r := n.Do("POST", "/nacos/v1/auth/users/login", nil, vals("username", u, "password", "pw-2"), nil)
					if r.Status != 200 {
						return fmt.Errorf("login with the new password: %d %s", r.Status, r.Body)
					}
					return nil
				}},
			{name: "delete user " + base, method: "DELETE", path: base, query: admin("username", u),
				read: listed(`!"username":"` + u + `"`)},
		}
	}
	var cs []cpCase
	cs = append(cs,
		// configs
		cpCase{name: "publish", method: "POST", path: "/v1/cs/configs", form: vals("dataId", "fw.cfg", "group", "FW", "content", "v1"), want: "true",
			read: get("/v1/cs/configs", cfg, "v1")},
		cpCase{name: "publish beta", method: "POST", path: "/v1/cs/configs", form: vals("dataId", "fw.cfg", "group", "FW", "content", "beta-v"),
			header: map[string]string{"betaIps": "10.0.0.9"}, want: "true",
			read: get("/v1/cs/configs", vals("dataId", "fw.cfg", "group", "FW", "beta", "true"), "beta-v")},
		cpCase{name: "stop beta", method: "DELETE", path: "/v1/cs/configs", query: vals("dataId", "fw.cfg", "group", "FW", "beta", "true"),
			want: `{"code":200,"message":"stop beta ok","data":true}`,
			read: get("/v1/cs/configs", vals("dataId", "fw.cfg", "group", "FW", "beta", "true"), "!beta-v")},
		cpCase{name: "clone", method: "POST", path: "/v1/cs/configs", query: vals("clone", "true", "tenant", "", "policy", "OVERWRITE"),
			body: `[{"cfgId":0,"dataId":"fw.clone","group":"FW"}]`},
		cpCase{name: "delete config", method: "DELETE", path: "/v1/cs/configs", query: cfg, want: "true",
			read: status("/v1/cs/configs", cfg, 404)},
		// namespaces
		cpCase{name: "create namespace", method: "POST", path: "/v1/console/namespaces",
			form: vals("customNamespaceId", "fw-ns", "namespaceName", "FW", "namespaceDesc", "d"), want: "true",
			read: get("/v1/console/namespaces", nil, `"namespace":"fw-ns"`)},
		cpCase{name: "rename namespace", method: "PUT", path: "/v1/console/namespaces",
			form: vals("namespace", "fw-ns", "namespaceShowName", "FW2", "namespaceDesc", "d"), want: "true",
			read: get("/v1/console/namespaces", nil, `"namespaceShowName":"FW2"`)},
		cpCase{name: "delete namespace", method: "DELETE", path: "/v1/console/namespaces", form: vals("namespaceId", "fw-ns"), want: "true",
			read: get("/v1/console/namespaces", nil, `!"namespace":"fw-ns"`)},
	)
	cs = append(cs, users("/v1/auth")...)
	cs = append(cs, users("/v1/auth/users")...)
	cs = append(cs,
		cpCase{name: "add role", method: "POST", path: "/v1/auth/roles", query: admin("role", "FW_ROLE", "username", "nacos"),
			read: get("/v1/auth/roles", admin("pageNo", "1", "pageSize", "100"), `"role":"FW_ROLE"`)},
		cpCase{name: "add permission", method: "POST", path: "/v1/auth/permissions", query: admin("role", "FW_ROLE", "resource", "fw:*:*", "action", "r"),
			read: get("/v1/auth/permissions", admin("pageNo", "1", "pageSize", "100", "role", "FW_ROLE"), `"resource":"fw:*:*"`)},
		cpCase{name: "delete permission", method: "DELETE", path: "/v1/auth/permissions", query: admin("role", "FW_ROLE", "resource", "fw:*:*", "action", "r"),
			read: get("/v1/auth/permissions", admin("pageNo", "1", "pageSize", "100", "role", "FW_ROLE"), `!"resource":"fw:*:*"`)},
		cpCase{name: "delete role", method: "DELETE", path: "/v1/auth/roles", query: admin("role", "FW_ROLE", "username", "nacos"),
			read: get("/v1/auth/roles", admin("pageNo", "1", "pageSize", "100"), `!"role":"FW_ROLE"`)},
		// services, clusters, switches
		cpCase{name: "create service", method: "POST", path: "/v1/ns/service", query: vals("serviceName", "fw.svc", "protectThreshold", "0.2"), want: "ok",
			read: get("/v1/ns/service", vals("serviceName", "fw.svc"), `"protectThreshold":0.2`)},
		cpCase{name: "update service", method: "PUT", path: "/v1/ns/service", query: vals("serviceName", "fw.svc", "protectThreshold", "0.7"), want: "ok",
			read: get("/v1/ns/service", vals("serviceName", "fw.svc"), `"protectThreshold":0.7`)},
		cpCase{name: "update cluster", method: "PUT", path: "/v1/ns/cluster", query: vals("serviceName", "fw.svc", "clusterName", "DEFAULT",
			"checkPort", "9090", "useInstancePort4Check", "false", "healthChecker", `{"type":"TCP"}`), want: "ok",
			read: get("/v1/ns/service", vals("serviceName", "fw.svc"), `"healthChecker":{"type":"TCP"}`)},
		cpCase{name: "delete service", method: "DELETE", path: "/v1/ns/service", query: vals("serviceName", "fw.svc"), want: "ok",
			read: get("/v1/ns/service/list", vals("pageNo", "1", "pageSize", "100"), `!"fw.svc"`)},
		cpCase{name: "switch (operator)", method: "PUT", path: "/v1/ns/operator/switches", query: vals("entry", "pushCacheMillis", "value", "12345"), want: "ok",
			read: get("/v1/ns/operator/switches", nil, `"defaultPushCacheMillis":12345`)},
		cpCase{name: "switch (ops)", method: "PUT", path: "/v1/ns/ops/switches", query: vals("entry", "pushCacheMillis", "value", "23456"), want: "ok",
			read: get("/v1/ns/ops/switches", nil, `"defaultPushCacheMillis":23456`)},
		// migration
		cpCase{name: "migrate config", method: "POST", path: "/v1/nacosd/migrate/config", query: admin(),
			body: `{"sets":[{"info":{"id":0,"dataId":"fw.migrated","group":"FW","content":"m","md5":"6f8f57715090da2632453988d9a1501b","created":1,"modified":1}}]}`,
			read: get("/v1/cs/configs", vals("dataId", "fw.migrated", "group", "FW"), "m")},
		cpCase{name: "migrate user", method: "POST", path: "/v1/nacosd/migrate/user", query: admin(),
			body: `{"username":"fw-migrated","password":"$2a$10$EuWPZHzz32dJN7jexM34MOeYirDdFAZm2kuWj7VEOJhhZkDrxfvUu"}`,
			read: get("/v1/auth/users", admin("pageNo", "1", "pageSize", "100"), `"username":"fw-migrated"`)},
		cpCase{name: "migrate role", method: "POST", path: "/v1/nacosd/migrate/role", query: admin(),
			body: `{"role":"FW_MIGRATED","username":"fw-migrated"}`,
			read: get("/v1/auth/roles", admin("pageNo", "1", "pageSize", "100"), `"role":"FW_MIGRATED"`)},
	)
	// persistent instances, through both of Java's paths
	for _, base := range []string{"/v1/ns/instance", "/v1/ns/api"} {
		b := strings.ReplaceAll(base, "/", ".")
		cs = append(cs,
			cpCase{name: "register " + base, method: "POST", path: base, query: inst(b), want: "ok", read: list(b, `"ip":"10.9.0.1"`)},
			cpCase{name: "update " + base, method: "PUT", path: base, query: inst(b, "weight", "3"), want: "ok", read: list(b, `"weight":3.0`)},
			cpCase{name: "patch " + base, method: "PATCH", path: base, query: inst(b, "metadata", `{"p":"1"}`), want: "ok", read: list(b, `"p":"1"`)},
			cpCase{name: "metadata batch " + base, method: "PUT", path: base + "/metadata/batch",
				query: vals("serviceName", "fw.persistent"+b, "metadata", `{"m":"2"}`, "consistencyType", "persist"),
				want:  `{"updated":["10.9.0.1:80:unknown:DEFAULT:persist"]}`, read: list(b, `"m":"2"`)},
			cpCase{name: "metadata batch delete " + base, method: "DELETE", path: base + "/metadata/batch",
				query: vals("serviceName", "fw.persistent"+b, "metadata", `{"m":""}`, "instances", `[{"ip":"10.9.0.1","port":80,"ephemeral":false}]`),
				want:  `{"updated":["10.9.0.1:80:unknown:DEFAULT:persist"]}`, read: list(b, `!"m":"2"`)},
			cpCase{name: "deregister " + base, method: "DELETE", path: base, query: inst(b), want: "ok", read: list(b, `!"ip":"10.9.0.1"`)},
		)
	}
	// the Open API v2
	okResult := `{"code":0,"message":"success","data":"ok"}`
	v2inst := vals("serviceName", "fw.v2", "groupName", "FW", "ip", "10.9.0.2", "port", "81", "ephemeral", "false")
	v2list := func(want string) func(*servertest.Node) error {
		return get("/v2/ns/instance/list", vals("serviceName", "fw.v2", "groupName", "FW"), want)
	}
	cs = append(cs,
		cpCase{name: "v2 publish", method: "POST", path: "/v2/cs/config", query: vals("dataId", "fw.v2cfg", "group", "FW", "content", "v2c"),
			want: `{"code":0,"message":"success","data":true}`, read: get("/v2/cs/config", vals("dataId", "fw.v2cfg", "group", "FW"), `"data":"v2c"`)},
		cpCase{name: "v2 delete config", method: "DELETE", path: "/v2/cs/config", query: vals("dataId", "fw.v2cfg", "group", "FW"),
			want: `{"code":0,"message":"success","data":true}`, read: status("/v2/cs/config", vals("dataId", "fw.v2cfg", "group", "FW"), 404)},
		cpCase{name: "v2 register persistent", method: "POST", path: "/v2/ns/instance", query: v2inst, want: okResult, read: v2list(`"ip":"10.9.0.2"`)},
		cpCase{name: "v2 update persistent", method: "PUT", path: "/v2/ns/instance", query: vals(append(flat(v2inst), "weight", "4")...),
			want: okResult, read: v2list(`"weight":4.0`)},
		cpCase{name: "v2 deregister persistent", method: "DELETE", path: "/v2/ns/instance", query: v2inst, want: okResult, read: v2list(`!"ip":"10.9.0.2"`)},
		cpCase{name: "v2 create service", method: "POST", path: "/v2/ns/service", query: vals("serviceName", "fw.v2svc", "groupName", "FW", "protectThreshold", "0.3"),
			want: okResult, read: get("/v2/ns/service", vals("serviceName", "fw.v2svc", "groupName", "FW"), `"protectThreshold":0.3`)},
		cpCase{name: "v2 update service", method: "PUT", path: "/v2/ns/service", query: vals("serviceName", "fw.v2svc", "groupName", "FW", "protectThreshold", "0.6"),
			want: okResult, read: get("/v2/ns/service", vals("serviceName", "fw.v2svc", "groupName", "FW"), `"protectThreshold":0.6`)},
		cpCase{name: "v2 delete service", method: "DELETE", path: "/v2/ns/service", query: vals("serviceName", "fw.v2svc", "groupName", "FW"),
			want: okResult, read: status("/v2/ns/service", vals("serviceName", "fw.v2svc", "groupName", "FW"), 400)},
	)
	return cs
}

// flat is the key-value list of v (one value each).
func flat(v url.Values) []string {
	var out []string
	for k := range v {
		out = append(out, k, v.Get(k))
	}
	return out
}
