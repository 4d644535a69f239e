package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

func dial(t *testing.T, n *servertest.Node, opt remoteclient.Options) *remoteclient.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := remoteclient.Dial(ctx, n.GRPCAddr(), opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func rdo(t *testing.T, c *remoteclient.Client, r remote.Requester) *remote.DecodedResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, d, err := c.Do(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func gpublish(dataID, content string, add map[string]string) *remote.ConfigPublishRequest {
	return &remote.ConfigPublishRequest{ConfigKey: remote.ConfigKey{DataID: dataID, Group: "G"}, Content: content, AdditionMap: add}
}

// waitPush returns the next ConfigChangeNotifyRequest a client was sent.
func waitPush(t *testing.T, c *remoteclient.Client, d time.Duration) (map[string]string, bool) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case p := <-c.Pushes():
			if p.Metadata.Type != remote.TypeConfigChangeNotifyRequest {
				continue
			}
			var m map[string]string
			json.Unmarshal(p.Body, &m)
			return m, true
		case <-timer.C:
			return nil, false
		}
	}
}

// TestGRPCConnection: the connection id as Java forms it, the SetupAck with
// the server's abilities, the connection registered while the client is
// there and gone (with its listeners) when it closes.
func TestGRPCConnection(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	c := dial(t, n, remoteclient.Options{})
	if !regexp.MustCompile(`^\d{13}_127\.0\.0\.1_\d+$`).MatchString(c.ConnID) {
		t.Fatalf("connection id %q", c.ConnID)
	}
	if !c.ServerAbilities["supportPersistentInstanceByGrpc"] {
		t.Fatalf("server abilities %v", c.ServerAbilities)
	}
	cn := n.Connections().Get(c.ConnID)
	if cn == nil || cn.Version != "Nacos-Java-Client:v2.5.1" || cn.ClientIP != "127.0.0.1" || cn.Labels["module"] != "config" {
		t.Fatalf("registered connection %+v", cn)
	}
	if d := rdo(t, c, &remote.HealthCheckRequest{}); !d.Success() || d.Type != remote.TypeHealthCheckResponse {
		t.Fatalf("health check %+v", d)
	}
	rdo(t, c, &remote.ConfigBatchListenRequest{Listen: true, Contexts: []remote.ConfigListenContext{{DataID: "d", Group: "G"}}})
	if got := n.ConfigListeners(); got != 1 {
		t.Fatalf("%d listeners", got)
	}
	c.Close()
	servertest.Eventually(t, 5*time.Second, func() error {
		if n.Connections().Count() != 0 || n.ConfigListeners() != 0 {
			return fmt.Errorf("%d connections, %d listeners after the client left", n.Connections().Count(), n.ConfigListeners())
		}
		return nil
	})
	// a channel that never set up its stream is not registered
	bare := dial(t, n, remoteclient.Options{NoStream: true})
	if d := rdo(t, bare, &remote.HealthCheckRequest{}); d.ErrorCode != remote.ErrUnregister || d.Message != "Connection is unregistered." {
		t.Fatalf("unregistered connection answered %+v", d)
	}
}

// TestGRPCConfigPushBothWays: a 2.x listener is pushed a change published
// over gRPC and one published over the 1.x HTTP API; a 1.x long poll wakes
// on a 2.x publish.
func TestGRPCConfigPushBothWays(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	listener := dial(t, n, remoteclient.Options{})
	writer := dial(t, n, remoteclient.Options{})
	if d := rdo(t, writer, gpublish("d1", "v1", nil)); !d.Success() {
		t.Fatalf("publish %+v", d)
	}
	q := rdo(t, listener, &remote.ConfigQueryRequest{ConfigKey: remote.ConfigKey{DataID: "d1", Group: "G"}})
	if q.Str("content") != "v1" || q.Str("md5") == "" {
		t.Fatalf("query %+v %s", q, q.Str("content"))
	}
	l := rdo(t, listener, &remote.ConfigBatchListenRequest{Listen: true,
		Contexts: []remote.ConfigListenContext{{DataID: "d1", Group: "G", MD5: q.Str("md5")}}})
	if len(l.Objects("changedConfigs")) != 0 {
		t.Fatalf("up-to-date listen answered changes: %v", l.Objects("changedConfigs"))
	}

	rdo(t, writer, gpublish("d1", "v2", nil))
	if m, ok := waitPush(t, listener, 5*time.Second); !ok || m["dataId"] != "d1" || m["group"] != "G" {
		t.Fatalf("push after a gRPC publish: %v %v", m, ok)
	}
	r := n.Do("POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": {"d1"}, "group": {"G"}, "content": {"v3"}}, nil)
	if r.Status != 200 {
		t.Fatalf("v1 publish %d %s", r.Status, r.Body)
	}
	if m, ok := waitPush(t, listener, 5*time.Second); !ok || m["dataId"] != "d1" {
		t.Fatalf("push after a v1 publish: %v %v", m, ok)
	}

	// a 1.x long poll on d1 (its current MD5) wakes on a gRPC publish
	cur := rdo(t, listener, &remote.ConfigQueryRequest{ConfigKey: remote.ConfigKey{DataID: "d1", Group: "G"}}).Str("md5")
	done := make(chan servertest.Response, 1)
	go func() {
		done <- n.Do("POST", "/nacos/v1/cs/configs/listener", nil,
			url.Values{"Listening-Configs": {"d1\x02G\x02" + cur + "\x01"}}, map[string]string{"Long-Pulling-Timeout": "30000"})
	}()
	time.Sleep(200 * time.Millisecond) // let the poll be held
	start := time.Now()
	rdo(t, writer, gpublish("d1", "v4", nil))
	select {
	case r := <-done:
		if r.Status != 200 || !strings.Contains(r.Body, "d1") {
			t.Fatalf("long poll answered %d %q", r.Status, r.Body)
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("long poll woke after %s", time.Since(start))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the 1.x long poll did not wake on a 2.x publish")
	}
	if _, ok := waitPush(t, listener, 5*time.Second); !ok { // the 2.x listener heard it too
		t.Fatal("no push for the publish that woke the long poll")
	}

	// a removal is pushed too, and the read answers not found
	rdo(t, writer, &remote.ConfigRemoveRequest{ConfigKey: remote.ConfigKey{DataID: "d1", Group: "G"}})
	if _, ok := waitPush(t, listener, 5*time.Second); !ok {
		t.Fatal("no push after a removal")
	}
	if d := rdo(t, listener, &remote.ConfigQueryRequest{ConfigKey: remote.ConfigKey{DataID: "d1", Group: "G"}}); d.ErrorCode != 300 {
		t.Fatalf("query after remove %+v", d)
	}
	// an unlistened config is not pushed
	rdo(t, listener, &remote.ConfigBatchListenRequest{Listen: false, Contexts: []remote.ConfigListenContext{{DataID: "d1", Group: "G"}}})
	rdo(t, writer, gpublish("d1", "v5", nil))
	if m, ok := waitPush(t, listener, 500*time.Millisecond); ok {
		t.Fatalf("pushed after unlisten: %v", m)
	}
}

// TestGRPCConfigCas: a conditional publish succeeds with the stored MD5,
// fails with another, and creates an absent config.
func TestGRPCConfigCas(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	c := dial(t, n, remoteclient.Options{})
	p := gpublish("cas", "a", nil)
	p.CasMD5 = "whatever"
	if d := rdo(t, c, p); !d.Success() {
		t.Fatalf("cas on an absent config: %+v", d)
	}
	p = gpublish("cas", "b", nil)
	p.CasMD5 = "0123"
	if d := rdo(t, c, p); d.Success() || d.Message != "Cas publish fail, server md5 may have changed." {
		t.Fatalf("cas with a wrong md5: %+v", d)
	}
	md5 := rdo(t, c, &remote.ConfigQueryRequest{ConfigKey: remote.ConfigKey{DataID: "cas", Group: "G"}}).Str("md5")
	p.CasMD5 = md5
	if d := rdo(t, c, p); !d.Success() {
		t.Fatalf("cas with the right md5: %+v", d)
	}
	if got := rdo(t, c, &remote.ConfigQueryRequest{ConfigKey: remote.ConfigKey{DataID: "cas", Group: "G"}}).Str("content"); got != "b" {
		t.Fatalf("content %q", got)
	}
	// a beta variant's cas compares the beta's md5
	b := gpublish("cas", "beta1", map[string]string{"betaIps": "127.0.0.1"})
	rdo(t, c, b)
	b.Content, b.CasMD5 = "beta2", md5
	if d := rdo(t, c, b); d.Success() || d.Message != "Cas publish gray config fail, server md5 may have changed." {
		t.Fatalf("beta cas with the main md5: %+v", d)
	}
}

// TestGRPCConnectionLimit: past MaxConnections a client's stream is closed
// and its connection not registered.
func TestGRPCConnectionLimit(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.GRPC.MaxConnections = 1
	n := servertest.Start(t, cfg)
	dial(t, n, remoteclient.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c, err := remoteclient.Dial(ctx, n.GRPCAddr(), remoteclient.Options{SetupTimeout: time.Second}); err == nil {
		c.Close()
		t.Fatal("a second connection was accepted past the limit")
	}
	if got := n.Connections().Count(); got != 1 {
		t.Fatalf("%d connections", got)
	}
}

// TestGRPCSilentClientEjected is the real-time test of the keep-alive
// ejection: a client that stops answering is probed after the keep-alive
// and dropped when the probe times out; one that answers stays.
func TestGRPCSilentClientEjected(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.GRPC = server.GRPCConfig{KeepAlive: 300 * time.Millisecond, CheckInterval: 100 * time.Millisecond, DetectTimeout: 300 * time.Millisecond}
	n := servertest.Start(t, cfg)
	mute := dial(t, n, remoteclient.Options{OnRequest: func(*remote.Payload, remote.Requester) remote.Responder { return nil }})
	live := dial(t, n, remoteclient.Options{})
	servertest.Eventually(t, 10*time.Second, func() error {
		if n.Connections().Get(mute.ConnID) != nil {
			return fmt.Errorf("the silent client is still registered")
		}
		return nil
	})
	if n.Connections().Get(live.ConnID) == nil {
		t.Fatal("a client that answered the detection was dropped")
	}
	select {
	case <-mute.Done(): // the server closed its connection
	case <-time.After(5 * time.Second):
		t.Fatal("the dropped client's stream is still open")
	}
}

// TestGRPCPushRetryDropsConnection: a client that never acks its config
// pushes is retried and, after MaxPushRetry attempts, dropped.
func TestGRPCPushRetryDropsConnection(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.GRPC.MaxPushRetry = 2
	n := servertest.Start(t, cfg)
	mute := dial(t, n, remoteclient.Options{OnRequest: func(*remote.Payload, remote.Requester) remote.Responder { return nil }})
	rdo(t, mute, &remote.ConfigBatchListenRequest{Listen: true, Contexts: []remote.ConfigListenContext{{DataID: "r", Group: "G"}}})
	w := dial(t, n, remoteclient.Options{})
	start := time.Now()
	rdo(t, w, gpublish("r", "x", nil))
	// attempt 1 times out after 3 s, attempt 2 comes 2 s later and times out after 3 s
	servertest.Eventually(t, 20*time.Second, func() error {
		if n.Connections().Get(mute.ConnID) != nil {
			return fmt.Errorf("still registered after %s", time.Since(start))
		}
		return nil
	})
	if el := time.Since(start); el < 7*time.Second {
		t.Fatalf("dropped after %s: fewer retries than configured", el)
	}
}

// TestGRPCAuth: with auth on, the accessToken header is checked against
// the same users and permissions as HTTP, refusals as Java 2.5.1 answers.
func TestGRPCAuth(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.Auth = server.AuthConfig{Enabled: true, SecretKey: clusterSecret, TokenExpire: time.Hour, Caching: true,
		ServerIdentityKey: clusterIdentKey, ServerIdentityValue: clusterIdentVal}
	n := servertest.Start(t, cfg)
	var admin string
	servertest.Eventually(t, 10*time.Second, func() error {
		var err error
		admin, err = clusterLogin(t, n, "nacos", "nacos")
		return err
	})
	q := func(c *remoteclient.Client, dataID string) *remote.DecodedResponse {
		return rdo(t, c, &remote.ConfigQueryRequest{ConfigKey: remote.ConfigKey{DataID: dataID, Group: "G"}})
	}
	anon := dial(t, n, remoteclient.Options{})
	if d := q(anon, "a"); d.Type != remote.TypeConfigQueryResponse || d.ErrorCode != 403 || d.Message != "user not found!" {
		t.Fatalf("anonymous read: %s %+v", d.Type, d)
	}
	if d := rdo(t, anon, &remote.HealthCheckRequest{}); !d.Success() {
		t.Fatalf("health checks are not secured: %+v", d)
	}
	bad := dial(t, n, remoteclient.Options{Headers: map[string]string{"accessToken": "nope"}})
	if d := q(bad, "a"); d.ErrorCode != 403 || d.Message != "token invalid!" {
		t.Fatalf("bad token: %+v", d)
	}
	root := dial(t, n, remoteclient.Options{Headers: map[string]string{"accessToken": admin}})
	if d := rdo(t, root, gpublish("a", "x", nil)); !d.Success() {
		t.Fatalf("admin publish: %+v", d)
	}
	// a user with read rights on group G only
	tok := map[string][]string{"accessToken": {admin}}
	for _, step := range []struct{ path, form string }{
		{"/nacos/v1/auth/users", "username=reader&password=reader1"},
		{"/nacos/v1/auth/roles", "role=readers&username=reader"},
		{"/nacos/v1/auth/permissions", "role=readers&resource=:G:*&action=r"},
	} {
		form, _ := url.ParseQuery(step.form)
		if r := n.Do("POST", step.path, tok, form, nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", step.path, r.Status, r.Body)
		}
	}
	rt, err := clusterLogin(t, n, "reader", "reader1")
	if err != nil {
		t.Fatal(err)
	}
	reader := dial(t, n, remoteclient.Options{Headers: map[string]string{"accessToken": rt}})
	if d := q(reader, "a"); !d.Success() {
		t.Fatalf("reader read: %+v", d)
	}
	if d := rdo(t, reader, gpublish("a", "y", nil)); d.Type != remote.TypeConfigPublishResponse || d.ErrorCode != 403 || d.Message != "authorization failed!" {
		t.Fatalf("reader write: %s %+v", d.Type, d)
	}
	if d := rdo(t, reader, &remote.ConfigQueryRequest{ConfigKey: remote.ConfigKey{DataID: "a", Group: "OTHER"}}); d.ErrorCode != 403 {
		t.Fatalf("reader read of another group: %+v", d)
	}
}

// TestGRPCClusterWriteOnFollower: a 2.x client on a raft follower
// publishes and removes configs (forwarded to the leader over gRPC), reads
// its own write on its node at once, and a 2.x listener on another member
// and a 1.x read on every member see the write.
func TestGRPCClusterWriteOnFollower(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	nodes := servertest.StartCluster(t, servertest.ClusterConfigs(t, 3))
	servertest.WaitMembersUp(t, nodes)
	var follower, other *servertest.Node
	servertest.Eventually(t, 15*time.Second, func() error {
		follower, other = nil, nil
		for _, n := range nodes {
			if n.IsRaftLeader() {
				continue
			}
			if follower == nil {
				follower = n
			} else {
				other = n
			}
		}
		if follower == nil || other == nil {
			return fmt.Errorf("no two followers yet")
		}
		return nil
	})
	w := dial(t, follower, remoteclient.Options{})
	l := dial(t, other, remoteclient.Options{})
	rdo(t, l, &remote.ConfigBatchListenRequest{Listen: true, Contexts: []remote.ConfigListenContext{{DataID: "cf", Group: "G"}}})
	p := gpublish("cf", "from-follower", map[string]string{"appName": "app1"})
	if d := rdo(t, w, p); !d.Success() {
		t.Fatalf("publish on a follower: %+v", d)
	}
	// read-your-write on the follower's node
	if got := rdo(t, w, &remote.ConfigQueryRequest{ConfigKey: remote.ConfigKey{DataID: "cf", Group: "G"}}).Str("content"); got != "from-follower" {
		t.Fatalf("read on the follower after its write: %q", got)
	}
	if m, ok := waitPush(t, l, 10*time.Second); !ok || m["dataId"] != "cf" {
		t.Fatalf("listener on another member: %v %v", m, ok)
	}
	for i, n := range nodes {
		servertest.Eventually(t, 10*time.Second, func() error {
			r := n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"cf"}, "group": {"G"}, "show": {"all"}}, nil, nil)
			if r.Status != 200 || !strings.Contains(r.Body, `"content":"from-follower"`) || !strings.Contains(r.Body, `"appName":"app1"`) ||
				!strings.Contains(r.Body, `"createIp":"127.0.0.1"`) {
				return fmt.Errorf("node %d: %d %s", i, r.Status, r.Body)
			}
			return nil
		})
	}
	// a cas failure on the leader comes back as the leader answered it
	p = gpublish("cf", "x", nil)
	p.CasMD5 = "0000"
	if d := rdo(t, w, p); d.Success() || d.Message != "Cas publish fail, server md5 may have changed." {
		t.Fatalf("cas through the follower: %+v", d)
	}
	if d := rdo(t, w, &remote.ConfigRemoveRequest{ConfigKey: remote.ConfigKey{DataID: "cf", Group: "G"}}); !d.Success() {
		t.Fatalf("remove on a follower: %+v", d)
	}
	if d := rdo(t, w, &remote.ConfigQueryRequest{ConfigKey: remote.ConfigKey{DataID: "cf", Group: "G"}}); d.ErrorCode != 300 {
		t.Fatalf("read after the remove: %+v", d)
	}
}

// TestGRPCPortOffset: with a fixed HTTP port the gRPC port is that port +
// the offset (Java's 1000 by default), where 2.x clients look for it.
func TestGRPCPortOffset(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.Port = servertest.FreePortPair(t, "127.0.0.1")
	n := servertest.Start(t, cfg)
	_, port, _ := strings.Cut(n.GRPCAddr(), ":")
	if port != fmt.Sprint(cfg.Port+1000) {
		t.Fatalf("gRPC on %s with HTTP on %d", n.GRPCAddr(), cfg.Port)
	}
	dial(t, n, remoteclient.Options{})
}
