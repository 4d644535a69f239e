package server_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/servertest"
)

// TestRestartedMemberHoldsReadsUntilCaughtUp (issue 23, found by the fault
// checker: monotonic reads): a member that restarts while no leader can
// reach it has only its older snapshot applied. Its reads of configs wait
// and then answer 503 (Nacos clients try the next server) instead of
// serving state older than it served before it stopped, it reports itself
// not ready, and once a leader is back it serves the newest state again.
func TestRestartedMemberHoldsReadsUntilCaughtUp(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 3)
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	form := url.Values{"dataId": {"catchup"}, "group": {"DEFAULT_GROUP"}, "content": {"v1"}}
	if r := nodes[0].Do("POST", "/nacos/v1/cs/configs", nil, form, nil); r.Status != 200 || r.Body != "true" {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	get := func(n *servertest.Node) servertest.Response {
		return n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"catchup"}, "group": {"DEFAULT_GROUP"}}, nil, nil)
	}
	servertest.Eventually(t, 10*time.Second, func() error {
		if r := get(nodes[2]); r.Body != "v1" {
			return fmt.Errorf("node 2 reads %d %q", r.Status, r.Body)
		}
		return nil
	})
	for _, n := range nodes {
		_ = n.Close()
	}

	alone := servertest.Start(t, cfgs[2])
	t0 := time.Now()
	r := get(alone)
	if r.Status != 503 || !strings.Contains(r.Body, "STARTING") {
		t.Fatalf("a read on the restarted member without a leader: %d %q (want 503, not older state)", r.Status, r.Body)
	}
	if waited := time.Since(t0); waited < time.Second {
		t.Errorf("the read was refused after %v; it should wait for the member to catch up", waited)
	}
	if rd := alone.Do("GET", "/nacos/v1/console/health/readiness", nil, nil, nil); rd.Status == 200 {
		t.Errorf("readiness of a member catching up: %d %s", rd.Status, rd.Body)
	}
	if h := alone.Do("GET", "/nacos/v1/console/health/liveness", nil, nil, nil); h.Status != 200 {
		t.Errorf("liveness: %d %s", h.Status, h.Body)
	}
	// a 2.x client is refused as by a Java server that is starting, and
	// connects to another member
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_, err := remoteclient.Dial(ctx, alone.GRPCAddr(), remoteclient.Options{})
	cancel()
	if err == nil || !strings.Contains(err.Error(), "Server is starting,please try later.") {
		t.Errorf("a gRPC connection to the member catching up: %v", err)
	}

	servertest.StartCluster(t, cfgs[:2])
	servertest.Eventually(t, 20*time.Second, func() error {
		if r := get(alone); r.Status != 200 || r.Body != "v1" {
			return fmt.Errorf("after the leader is back: %d %q", r.Status, r.Body)
		}
		return nil
	})
}
