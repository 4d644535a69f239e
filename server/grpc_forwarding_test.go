package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/grpcapi"
	"github.com/nacosd/nacosd/server/servertest"
)

// grpcCPCase is one CP request through a raft follower over gRPC: the
// request, and a read on the same connection that must show the write
// right after the answer.
type grpcCPCase struct {
	name string
	req  remote.Requester
	read func(c *remoteclient.Client) error
}

// TestEveryCPRequestThroughAFollower is TestEveryCPRouteThroughAFollower
// for the gRPC edge: every request type the request table declares CP
// and the server answers, sent to a raft follower of a three-node cluster,
// is forwarded before its handler runs, applied by the leader, and read
// back on the follower right after the answer. A CP type without a case
// fails the test.
func TestEveryCPRequestThroughAFollower(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	nodes := servertest.StartCluster(t, servertest.ClusterConfigs(t, 3))
	servertest.WaitMembersUp(t, nodes)
	cases := grpcCPCases(t)
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.req.Type()] = true
	}
	for _, typ := range nodes[0].GRPCRoutes() {
		if grpcapi.ClassOf(typ) == grpcapi.CP && !covered[typ] {
			t.Errorf("CP request type %s has no case here", typ)
		}
	}
	clients := map[*servertest.Node]*remoteclient.Client{}
	for _, n := range nodes {
		clients[n] = dial(t, n, remoteclient.Options{Labels: map[string]string{"source": "sdk", "module": "naming"}})
	}
	for _, c := range cases {
		var follower *servertest.Node // a follower now: an election can move the leadership
		for _, n := range nodes {
			if !n.IsRaftLeader() {
				follower = n
				break
			}
		}
		cl := clients[follower]
		before := follower.GRPCForwarded()
		if d := rdo(t, cl, c.req); !d.Success() {
			t.Errorf("%s on a follower: %+v", c.name, d)
			continue
		}
		if follower.GRPCForwarded() == before && !follower.IsRaftLeader() {
			t.Errorf("%s: the follower did not forward the request", c.name)
		}
		// no waiting: the follower answered after applying the write
		if err := c.read(cl); err != nil {
			t.Errorf("%s: read on the follower right after its answer: %v", c.name, err)
		}
		for _, n := range nodes {
			if n.IsRaftLeader() {
				if err := c.read(clients[n]); err != nil {
					servertest.Eventually(t, 5*time.Second, func() error { return c.read(clients[n]) })
				}
			}
		}
	}
}

func grpcCPCases(t *testing.T) []grpcCPCase {
	key := remote.ConfigKey{DataID: "fwd.cfg", Group: "G"}
	query := func(want string) func(c *remoteclient.Client) error {
		return func(c *remoteclient.Client) error {
			d := rdo(t, c, &remote.ConfigQueryRequest{ConfigKey: key})
			if got := d.Str("content"); got != want || want == "" && d.ErrorCode != 300 {
				return fmt.Errorf("config %q (error %d), want %q", got, d.ErrorCode, want)
			}
			return nil
		}
	}
	nk := remote.NamingKey{Namespace: "public", ServiceName: "fwd.svc", GroupName: "G", HasNamespace: true, HasService: true, HasGroup: true}
	instances := func(want string) func(c *remoteclient.Client) error {
		return func(c *remoteclient.Client) error {
			raw, d, err := c.Do(context.Background(), &remote.ServiceQueryRequest{NamingKey: nk})
			if err != nil || !d.Success() {
				return fmt.Errorf("query: %v %+v", err, d)
			}
			si, err := remote.ParseServiceInfo(raw.Body)
			if err != nil {
				return err
			}
			if got := infoHosts(si); got != want {
				return fmt.Errorf("instances %q, want %q", got, want)
			}
			return nil
		}
	}
	pin := gInstance("10.5.0.1", 7000, "DEFAULT", 1, map[string]string{"p": "1"})
	pin.Ephemeral = false
	return []grpcCPCase{
		{"persistent register", &remote.PersistentInstanceRequest{InstanceRequest: remote.InstanceRequest{NamingKey: nk,
			Op: remote.RegisterInstance, HasOp: true, Instance: pin}}, instances("10.5.0.1:7000/DEFAULT/1/true/p=1")},
		{"persistent deregister", &remote.PersistentInstanceRequest{InstanceRequest: remote.InstanceRequest{NamingKey: nk,
			Op: remote.DeregisterInstance, HasOp: true, Instance: pin}}, instances("")},
		{"config publish", &remote.ConfigPublishRequest{ConfigKey: key, Content: "v1"}, query("v1")},
		{"config publish again", &remote.ConfigPublishRequest{ConfigKey: key, Content: "v2"}, query("v2")},
		{"config remove", &remote.ConfigRemoveRequest{ConfigKey: key}, query("")},
	}
}
