package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server/servertest"
)

// startAuthNode starts nacosd with nacos.core.auth.enabled=true; the admin
// is nacos/nacos.
func startAuthNode(t *testing.T) *servertest.Node {
	cfg := servertest.Config(t)
	cfg.Naming.BeatCheckInterval = time.Hour
	cfg.Naming.EmptyServiceCleanInitial = time.Hour
	servertest.AuthOn(&cfg)
	return servertest.Start(t, cfg)
}

// streamStatus opens the event stream and returns the status without
// waiting for the (endless) body.
func streamStatus(t *testing.T, n *servertest.Node, q url.Values) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", n.URL("/nacos/v1/console/events?"+q.Encode()), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestConsoleExtensionsSecured: with auth on, the /v1/console extensions
// are checked like the 1.x endpoints they extend, namespace by namespace.
func TestConsoleExtensionsSecured(t *testing.T) {
	n := startAuthNode(t)
	admin := n.Login("nacos", "nacos")
	tok := url.Values{"accessToken": {admin}}
	mustOK(t, n.Do("POST", "/nacos/v1/console/namespaces", tok, url.Values{"customNamespaceId": {"dev"}, "namespaceName": {"dev"}}, nil), "namespace")
	for _, f := range []url.Values{
		{"username": {"alice"}, "password": {"alice-pass"}},
	} {
		mustOK(t, n.Do("POST", "/nacos/v1/auth/users", tok, f, nil), "user")
	}
	mustOK(t, n.Do("POST", "/nacos/v1/auth/roles", tok, url.Values{"role": {"devs"}, "username": {"alice"}}, nil), "role")
	mustOK(t, n.Do("POST", "/nacos/v1/auth/permissions", tok, url.Values{"role": {"devs"}, "resource": {"dev:*:*"}, "action": {"rw"}}, nil), "permission")
	for _, tenant := range []string{"", "dev"} {
		mustOK(t, n.Do("POST", "/nacos/v1/cs/configs", tok, url.Values{"dataId": {"secret.properties"}, "group": {"G"}, "tenant": {tenant}, "content": {"password=hunter2"}}, nil), "publish")
	}
	alice := n.Login("alice", "alice-pass")

	// ui/info is open and tells the console to ask for a login
	if r := n.Do("GET", "/nacos/v1/console/ui/info", nil, nil, nil); !strings.Contains(r.Body, `"authEnabled":true`) {
		t.Fatalf("info: %d %s", r.Status, r.Body)
	}
	if r := n.Do("GET", "/nacos/", nil, nil, nil); r.Status != 200 || !strings.Contains(r.Body, `id="nacosd-info">{"version":"1.4.8","authEnabled":true,`) {
		t.Fatalf("page: %d %s", r.Status, r.Body)
	}
	search := func(token, tenant string) servertest.Response {
		return n.Do("GET", "/nacos/v1/console/configs", url.Values{"accessToken": {token}, "tenant": {tenant}, "content": {"hunter2"},
			"pageNo": {"1"}, "pageSize": {"10"}}, nil, nil)
	}
	if r := search("", ""); r.Status != 403 {
		t.Fatalf("content search without a token: %d %s", r.Status, r.Body)
	}
	if r := search(alice, ""); r.Status != 403 {
		t.Fatalf("alice searched public: %d %s", r.Status, r.Body)
	}
	if r := search(alice, "dev"); r.Status != 200 || !strings.Contains(r.Body, `"totalCount":1`) {
		t.Fatalf("alice in dev: %d %s", r.Status, r.Body)
	}
	if r := search(admin, ""); r.Status != 200 || !strings.Contains(r.Body, `"totalCount":1`) {
		t.Fatalf("admin in public: %d %s", r.Status, r.Body)
	}

	post := func(token, tenant, body string) int {
		req, _ := http.NewRequest("POST", n.URL("/nacos/v1/console/configs/md5?"+url.Values{"accessToken": {token}, "tenant": {tenant}}.Encode()), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	devKey := `[{"groupKey":"secret.properties+G+dev","ip":"10.0.0.1"}]`
	pubKey := `[{"groupKey":"secret.properties+G","ip":"10.0.0.1"}]`
	if st := post("", "dev", devKey); st != 403 {
		t.Fatalf("md5 without a token: %d", st)
	}
	if st := post(alice, "dev", devKey); st != 200 {
		t.Fatalf("alice md5 of a dev key: %d", st)
	}
	if st := post(alice, "dev", pubKey); st != 403 {
		t.Fatalf("alice read a public key through the dev namespace: %d", st)
	}
	if st := post(admin, "", pubKey); st != 200 {
		t.Fatalf("admin md5: %d", st)
	}

	if st := streamStatus(t, n, url.Values{"namespaceId": {"dev"}}); st != 403 {
		t.Fatalf("events without a token: %d", st)
	}
	if st := streamStatus(t, n, url.Values{"namespaceId": {"public"}, "accessToken": {alice}}); st != 403 {
		t.Fatalf("alice watched public: %d", st)
	}
	if st := streamStatus(t, n, url.Values{"namespaceId": {"dev"}, "accessToken": {alice}}); st != 200 {
		t.Fatalf("alice watching dev: %d", st)
	}
	// the member list is open, as /v1/core/cluster/nodes is
	if r := n.Do("GET", "/nacos/v1/console/cluster/nodes", nil, nil, nil); r.Status != 200 {
		t.Fatalf("cluster nodes: %d %s", r.Status, r.Body)
	}
}
