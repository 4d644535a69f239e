package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/servertest"
)

const (
	clusterSecret   = "Y2x1c3Rlci1hdXRoLXRlc3Qtc2VjcmV0LTAxMjM0NTY3ODk="
	clusterIdentKey = "X-Cluster-Identity"
	clusterIdentVal = "c0ffee-cluster-identity-4f1d9a"
)

func authCluster(t *testing.T) []*servertest.Node {
	t.Helper()
	cfgs := servertest.ClusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].Auth = server.AuthConfig{Enabled: true, SecretKey: clusterSecret, TokenExpire: time.Hour,
			ServerIdentityKey: clusterIdentKey, ServerIdentityValue: clusterIdentVal}
	}
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	return nodes
}

func clusterLogin(t *testing.T, n *servertest.Node, user, pass string) (string, error) {
	t.Helper()
	r := n.Do("POST", "/nacos/v1/auth/users/login", nil, url.Values{"username": {user}, "password": {pass}}, nil)
	var body struct{ AccessToken string }
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &body) != nil || body.AccessToken == "" {
		return "", fmt.Errorf("login %s on %s: %d %s", user, n.HTTPAddr(), r.Status, r.Body)
	}
	return body.AccessToken, nil
}

// TestClusterAuth runs three real nodes with auth on: the built-in user
// exists on every node, a token of one node works on the others, client
// writes that are proxied to the Distro owner or forwarded to the raft
// leader pass (the nodes add the server identity), member reports and
// Distro sync keep working, a user created on a follower logs in on another
// node; node-to-node endpoints refuse calls without the identity, with a
// wrong one, with a client token and with Java's Nacos-Server User-Agent.
func TestClusterAuth(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	nodes := authCluster(t)

	// the built-in user, written once by whichever node led raft at start
	tokens := make([]string, len(nodes))
	for i, n := range nodes {
		servertest.Eventually(t, 15*time.Second, func() error {
			tok, err := clusterLogin(t, n, "nacos", "nacos")
			tokens[i] = tok
			return err
		})
	}
	admin := tokens[0]
	for i, n := range nodes { // a token is valid cluster-wide
		r := n.Do("GET", "/nacos/v1/auth/users", url.Values{"pageNo": {"1"}, "pageSize": {"10"}, "accessToken": {admin}}, nil, nil)
		if r.Status != 200 || !strings.Contains(r.Body, `"username":"nacos"`) {
			t.Fatalf("node %d: users with node 0's token: %d %s", i, r.Status, r.Body)
		}
	}

	// a user created through a raft follower (forwarded to the leader)
	var follower, leader *servertest.Node
	servertest.Eventually(t, 15*time.Second, func() error { // a loaded machine may be between leaders
		follower, leader = nil, nil
		for _, n := range nodes {
			if n.IsRaftLeader() {
				leader = n
			} else if follower == nil {
				follower = n
			}
		}
		if leader == nil || follower == nil {
			return fmt.Errorf("no raft leader or follower")
		}
		return nil
	})
	aq := url.Values{"accessToken": {admin}}
	for _, w := range []struct {
		path string
		form url.Values
	}{
		{"/nacos/v1/auth/users", url.Values{"username": {"app"}, "password": {"app-password"}}},
		{"/nacos/v1/auth/roles", url.Values{"username": {"app"}, "role": {"apps"}}},
		{"/nacos/v1/auth/permissions", url.Values{"role": {"apps"}, "resource": {":*:*"}, "action": {"rw"}}},
	} {
		if r := follower.Do("POST", w.path, aq, w.form, nil); r.Status != 200 {
			t.Fatalf("POST %s on a follower: %d %s", w.path, r.Status, r.Body)
		}
	}
	var appTok string
	servertest.Eventually(t, 10*time.Second, func() error {
		tok, err := clusterLogin(t, leader, "app", "app-password")
		appTok = tok
		return err
	})
	uq := func(kv ...string) url.Values {
		v := url.Values{"accessToken": {appTok}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}

	// an ephemeral register on a node that does not own the service: the
	// DistroFilter proxies it to the owner with the identity header
	svc := "auth.cluster.svc"
	owner, other := ownerOf(t, nodes, svc)
	if r := nodes[other].Do("POST", "/nacos/v1/ns/instance", uq("serviceName", svc, "ip", "10.2.0.1", "port", "8080"), nil,
		map[string]string{"User-Agent": javaUA}); r.Status != 200 || r.Body != "ok" {
		t.Fatalf("register on a non-owner: %d %s", r.Status, r.Body)
	}
	if !nodes[owner].Registry().HasInstance("public", "DEFAULT_GROUP@@"+svc, "DEFAULT", "10.2.0.1", 8080) {
		t.Fatal("the owner does not hold the proxied instance")
	}
	// a client cannot pass for a node that already ran DistroFilter: the
	// forged header is dropped and the write still goes to the owner
	if r := nodes[other].Do("POST", "/nacos/v1/ns/instance", uq("serviceName", svc, "ip", "10.2.0.3", "port", "8080"), nil,
		map[string]string{"User-Agent": javaUA, httpapi.HeaderForwarded: nodes[owner].Self().Address()}); r.Status != 200 {
		t.Fatalf("register with a forged forwarded header: %d %s", r.Status, r.Body)
	}
	if !nodes[owner].Registry().HasInstance("public", "DEFAULT_GROUP@@"+svc, "DEFAULT", "10.2.0.3", 8080) {
		t.Fatal("a forged forwarded header kept the write on a non-owner")
	}
	// Distro sync (identity on /v1/ns/distro/datum) brings it to every node
	for i, n := range nodes {
		servertest.Eventually(t, 10*time.Second, func() error {
			if !n.Registry().HasInstance("public", "DEFAULT_GROUP@@"+svc, "DEFAULT", "10.2.0.1", 8080) {
				return fmt.Errorf("node %d does not hold the instance", i)
			}
			return nil
		})
	}
	// a persistent register and a config publish on a follower: forwarded
	if r := follower.Do("POST", "/nacos/v1/ns/instance", uq("serviceName", "auth.cluster.persistent", "ip", "10.2.0.2", "port", "9090",
		"ephemeral", "false"), nil, map[string]string{"User-Agent": javaUA}); r.Status != 200 || r.Body != "ok" {
		t.Fatalf("persistent register on a follower: %d %s", r.Status, r.Body)
	}
	if r := follower.Do("POST", "/nacos/v1/cs/configs", uq(), url.Values{"dataId": {"auth.cluster.cfg"}, "group": {"G"}, "content": {"v1"}},
		nil); r.Status != 200 || r.Body != "true" {
		t.Fatalf("publish on a follower: %d %s", r.Status, r.Body)
	}
	for i, n := range nodes {
		servertest.Eventually(t, 10*time.Second, func() error {
			r := n.Do("GET", "/nacos/v1/cs/configs", uq("dataId", "auth.cluster.cfg", "group", "G"), nil, nil)
			if r.Status != 200 || r.Body != "v1" {
				return fmt.Errorf("node %d: config %d %s", i, r.Status, r.Body)
			}
			if !n.Registry().HasInstance("public", "DEFAULT_GROUP@@auth.cluster.persistent", "DEFAULT", "10.2.0.2", 9090) {
				return fmt.Errorf("node %d: no persistent instance", i)
			}
			return nil
		})
	}
	// without a token nothing is written, on any node
	for i, n := range nodes {
		if r := n.Do("POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {svc}, "ip": {"6.6.6.6"}, "port": {"66"}}, nil,
			map[string]string{"User-Agent": "Nacos-Server:1.4.8"}); r.Status != 403 {
			t.Errorf("node %d: register without a token: %d %s", i, r.Status, r.Body)
		}
	}

	// node-to-node endpoints: refused without the identity (also with a
	// client token, a wrong value, or the server User-Agent), served with it
	self := nodes[1].Self().Address()
	nodeCalls := []struct {
		method, path string
		query        url.Values
		form         string
		ctype        string
	}{
		{"GET", "/nacos/v1/ns/distro/datum", url.Values{"keys": {"com.alibaba.nacos.naming.iplist.ephemeral.public##DEFAULT_GROUP@@" + svc}}, "", ""},
		{"GET", "/nacos/v1/ns/distro/datums", nil, "", ""},
		{"PUT", "/nacos/v1/ns/distro/checksum", url.Values{"source": {self}}, "{}", "application/json"},
		{"PUT", "/nacos/v1/ns/distro/datum", nil, "{}", "application/json"},
		{"POST", "/nacos/v1/ns/service/status", nil, "statuses=" + url.QueryEscape(`{"data":{},"serverIP":"`+self+`"}`) + "&serverIP=" + self, "application/x-www-form-urlencoded"},
		{"GET", "/nacos/v1/ns/instance/statuses", url.Values{"key": {"com.alibaba.nacos.naming.iplist.ephemeral.public##DEFAULT_GROUP@@" + svc}}, "", ""},
		{"POST", "/nacos/v1/core/cluster/report", nil, `{"ip":"127.0.0.1","port":1,"state":"UP","extendInfo":{},"address":"127.0.0.1:1"}`, "application/json"},
		{"GET", "/nacos/v1/cs/communication/dataChange", url.Values{"dataId": {"auth.cluster.cfg"}, "group": {"G"}}, "", ""},
	}
	target := nodes[2]
	for _, c := range nodeCalls {
		send := func(hdr map[string]string, withToken bool) servertest.Response {
			q := url.Values{}
			for k, v := range c.query {
				q[k] = v
			}
			if withToken {
				q.Set("accessToken", appTok)
			}
			u := target.URL(c.path)
			if len(q) > 0 {
				u += "?" + q.Encode()
			}
			h := map[string]string{}
			for k, v := range hdr {
				h[k] = v
			}
			if c.ctype != "" {
				h["Content-Type"] = c.ctype
			}
			return doRaw(t, c.method, u, c.form, h)
		}
		name := c.method + " " + c.path
		for what, r := range map[string]servertest.Response{
			"no identity":       send(nil, false),
			"client token":      send(nil, true),
			"wrong identity":    send(map[string]string{clusterIdentKey: clusterIdentVal + "x"}, false),
			"server User-Agent": send(map[string]string{"User-Agent": "Nacos-Server:1.4.8", "Client-Version": "1.4.8"}, false),
		} {
			if r.Status != 403 {
				t.Errorf("%s with %s: %d %.200s, want 403", name, what, r.Status, r.Body)
			}
		}
		if r := send(map[string]string{clusterIdentKey: clusterIdentVal, "User-Agent": "Nacos-Server:1.4.8"}, false); r.Status == 403 || r.Status == 401 {
			t.Errorf("%s with the identity: %d %.200s", name, r.Status, r.Body)
		}
	}
	// a password change on a follower ends the user's tokens on every node
	// (the token epoch is in the raft store; issue 26 item 10)
	if r := follower.Do("PUT", "/nacos/v1/auth/users", aq, url.Values{"username": {"app"}, "newPassword": {"app-password-2"}}, nil); r.Status != 200 || !strings.Contains(r.Body, "update user ok!") {
		t.Fatalf("password change on a follower: %d %s", r.Status, r.Body)
	}
	for i, n := range nodes {
		servertest.Eventually(t, 10*time.Second, func() error {
			r := n.Do("GET", "/nacos/v1/cs/configs", uq("dataId", "auth.cluster.cfg", "group", "G"), nil, nil)
			if r.Status != 403 || !strings.Contains(r.Body, "token invalid!") {
				return fmt.Errorf("node %d: the token of before the password change: %d %s", i, r.Status, r.Body)
			}
			return nil
		})
	}
	newTok, err := clusterLogin(t, nodes[2], "app", "app-password-2")
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		if r := n.Do("GET", "/nacos/v1/cs/configs", url.Values{"accessToken": {newTok}, "dataId": {"auth.cluster.cfg"}, "group": {"G"}}, nil, nil); r.Status != 200 {
			t.Errorf("node %d: the new token: %d %s", i, r.Status, r.Body)
		}
	}

	// members still UP (reports carry the identity) and Distro still in
	// step after all of it
	time.Sleep(500 * time.Millisecond)
	for i, n := range nodes {
		for _, m := range n.Members() {
			if m.State != "UP" {
				t.Errorf("node %d sees %s %s", i, m.Address(), m.State)
			}
		}
	}
}

// doRaw sends a request with a raw body.
func doRaw(t *testing.T, method, u, body string, hdr map[string]string) servertest.Response {
	t.Helper()
	return servertest.DoURL(t, method, u, body, hdr)
}

// TestClusterAuthStaggeredStart starts one member alone (it finds no
// quorum and serves without one), then the other two: the built-in user is
// written by whichever node leads raft once there is a quorum, so nacos can
// log in on every node — also when the leader is the node that tried (and
// failed, as a follower) to write it at its own start.
func TestClusterAuthStaggeredStart(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].Auth = server.AuthConfig{Enabled: true, SecretKey: clusterSecret, TokenExpire: time.Hour,
			ServerIdentityKey: clusterIdentKey, ServerIdentityValue: clusterIdentVal}
	}
	first := servertest.StartCluster(t, cfgs[:1])
	rest := servertest.StartCluster(t, cfgs[1:])
	nodes := append(first, rest...)
	for i, n := range nodes {
		servertest.Eventually(t, 20*time.Second, func() error {
			_, err := clusterLogin(t, n, "nacos", "nacos")
			if err != nil {
				return fmt.Errorf("node %d (leader %v): %w", i, n.IsRaftLeader(), err)
			}
			return nil
		})
	}
}
