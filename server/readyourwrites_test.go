package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/servertest"
)

// TestClusterReadsItsOwnProxiedEphemeralWrite: a client that registers,
// updates and deregisters an ephemeral instance through a node that does not
// own the service reads each write back at once on that node: the node takes
// the owner's list before it relays the owner's answer. Nacos 1.4.8's own
// CPInstancesAPI_ITCase.registerInstance_api and registerInstance_query
// register over HTTP and list right away on the node they wrote to; against
// a cluster member they failed whenever another member owned their service
// (the list arrived with the owner's sync, after SyncDelay and BatchDelay).
func TestClusterReadsItsOwnProxiedEphemeralWrite(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	nodes := servertest.StartCluster(t, servertest.ClusterConfigs(t, 3))
	servertest.WaitMembersUp(t, nodes)
	ua := map[string]string{"User-Agent": javaUA}
	hosts := func(n *servertest.Node, ns, svc string) []string {
		t.Helper()
		r := n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {svc}, "namespaceId": {ns}}, nil, ua)
		if r.Status != 200 {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		var body struct {
			Hosts []struct {
				IP       string            `json:"ip"`
				Port     int               `json:"port"`
				Metadata map[string]string `json:"metadata"`
			} `json:"hosts"`
		}
		if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range body.Hosts {
			out = append(out, fmt.Sprintf("%s:%d%v", h.IP, h.Port, h.Metadata))
		}
		return out
	}
	for i := range 6 {
		svc := fmt.Sprintf("ryw.svc%d", i)
		ns := "public"
		if i%2 == 1 {
			ns = "ryw-ns"
		}
		_, other := ownerOf(t, nodes, svc)
		n := nodes[other]
		q := url.Values{"serviceName": {svc}, "namespaceId": {ns}, "ip": {"10.2.0.1"}, "port": {"8080"}, "ephemeral": {"true"}}
		if r := n.Do("POST", "/nacos/v1/ns/instance", q, nil, ua); r.Status != 200 || r.Body != "ok" {
			t.Fatalf("%s: register on a non-owner: %d %s", svc, r.Status, r.Body)
		}
		if got := hosts(n, ns, svc); len(got) != 1 || got[0] != "10.2.0.1:8080map[]" {
			t.Fatalf("%s: the node the client registered through lists %v right after its answer", svc, got)
		}
		q.Set("metadata", `{"v":"2"}`)
		if r := n.Do("PUT", "/nacos/v1/ns/instance", q, nil, ua); r.Status != 200 || r.Body != "ok" {
			t.Fatalf("%s: update on a non-owner: %d %s", svc, r.Status, r.Body)
		}
		if got := hosts(n, ns, svc); len(got) != 1 || !strings.Contains(got[0], "v:2") {
			t.Fatalf("%s: the node the client updated through lists %v right after its answer", svc, got)
		}
		q.Del("metadata")
		if r := n.Do("DELETE", "/nacos/v1/ns/instance", q, nil, ua); r.Status != 200 || r.Body != "ok" {
			t.Fatalf("%s: deregister on a non-owner: %d %s", svc, r.Status, r.Body)
		}
		if got := hosts(n, ns, svc); len(got) != 0 {
			t.Fatalf("%s: the node the client deregistered through lists %v right after its answer", svc, got)
		}
	}
}
