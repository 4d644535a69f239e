package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

// TestGRPCRegistrationVisibleOnEveryMember: a 2.x instance registered and
// then deregistered through any member, for services owned by each
// member, is listed by every member's 1.x API within a second of the
// answer, and gone from every member within a second of the
// deregistration's answer (the conformance suite's 2.x kits on a cluster
// read the 1.x API of another member, and wait 5 s for the push without
// a deregistered instance).
func TestGRPCRegistrationVisibleOnEveryMember(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 3)
	for i := range cfgs { // the defaults, as the conformance suite's cluster runs
		cfgs[i].ClusterTimings = server.ClusterTimings{}
		cfgs[i].RaftTimeout = 0
	}
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	dial := func(n *servertest.Node) *remoteclient.Client {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := remoteclient.Dial(ctx, n.GRPCAddr(), namingOpts())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for via := range nodes {
		c := dial(nodes[via])
		sub := dial(nodes[(via+1)%len(nodes)]) // a subscriber on another member
		for s := range 6 {
			svc := fmt.Sprintf("vis%d-%d", via, s)
			port := 7100 + via*10 + s
			want := fmt.Sprintf(`"port":%d`, port)
			do := func(op string) {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				req := gRegister("public", "G", svc, gInstance("10.9.0.1", port, "DEFAULT", 1, nil))
				req.Op = op
				if _, d, err := c.Do(ctx, req); err != nil || !d.Success() {
					t.Fatalf("%s %s via %d: %v %+v", op, svc, via, err, d)
				}
			}
			each := func(listed bool) {
				servertest.Eventually(t, time.Second, func() error {
					for i, n := range nodes {
						body := n.Do("GET", "/nacos/v1/ns/instance/list", map[string][]string{"serviceName": {"G@@" + svc}}, nil, nil).Body
						if strings.Contains(body, want) != listed {
							return fmt.Errorf("%s registered via member %d: member %d lists %s (want listed %v)", svc, via, i, body, listed)
						}
					}
					return nil
				})
			}
			if d := rdo(t, sub, &remote.SubscribeServiceRequest{NamingKey: remote.NamingKey{Namespace: "public", ServiceName: svc, GroupName: "G"},
				Subscribe: true}); !d.Success() {
				t.Fatalf("subscribe: %+v", d)
			}
			do(remote.RegisterInstance)
			each(true)
			waitNotify(t, sub, fmt.Sprintf("10.9.0.1:%d/DEFAULT/1/true/", port), 2*time.Second)
			do(remote.DeregisterInstance)
			each(false)
			waitNotify(t, sub, "", 2*time.Second)
		}
		c.Close()
		sub.Close()
	}
}

// TestGRPCDeregisterRightAfterRegister: a 2.x client that deregisters right
// after its registration was answered, through a member that does not own
// the service (its copy of the owner's list not there yet), has its
// instance gone from every member: the deregistration is not skipped for a
// service the member has no view of while the connection holds an
// instance there (the instance stayed, kept alive by the holder's beats,
// until the connection closed).
func TestGRPCDeregisterRightAfterRegister(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].ClusterTimings.SyncDelay = 300 * time.Millisecond // the owner's copy arrives later than the client's next call
	}
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	for via := range nodes {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := remoteclient.Dial(ctx, nodes[via].GRPCAddr(), namingOpts())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for s := range 4 {
			svc := fmt.Sprintf("quick%d-%d", via, s)
			port := 7200 + via*10 + s
			for _, op := range []string{remote.RegisterInstance, remote.DeregisterInstance} {
				req := gRegister("public", "G", svc, gInstance("10.9.0.2", port, "DEFAULT", 1, nil))
				req.Op = op
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, d, err := c.Do(ctx, req)
				cancel()
				if err != nil || !d.Success() {
					t.Fatalf("%s %s via %d: %v %+v", op, svc, via, err, d)
				}
			}
			want := fmt.Sprintf(`"port":%d`, port)
			servertest.Eventually(t, 3*time.Second, func() error {
				for i, n := range nodes {
					if body := n.Do("GET", "/nacos/v1/ns/instance/list", map[string][]string{"serviceName": {"G@@" + svc}}, nil, nil).Body; strings.Contains(body, want) {
						return fmt.Errorf("%s deregistered via member %d right after its registration: member %d lists %s", svc, via, i, body)
					}
				}
				return nil
			})
		}
		c.Close()
	}
}
