package server_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/distro"
	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/servertest"
)

// listHosts returns ip:port of the hosts GET /instance/list answers on n.
func listHosts(t *testing.T, n *servertest.Node, svc string) ([]string, error) {
	r := n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {svc}}, nil, map[string]string{"User-Agent": javaUA})
	if r.Status != 200 {
		return nil, fmt.Errorf("list on %s: %d %s", n.HTTPAddr(), r.Status, r.Body)
	}
	var body struct {
		Hosts []struct {
			IP      string `json:"ip"`
			Port    int    `json:"port"`
			Healthy bool   `json:"healthy"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
		return nil, err
	}
	var out []string
	for _, h := range body.Hosts {
		out = append(out, fmt.Sprintf("%s:%d", h.IP, h.Port))
	}
	return out, nil
}

func register(t *testing.T, n *servertest.Node, svc, ip string, port int, ephemeral bool) servertest.Response {
	q := url.Values{"serviceName": {svc}, "ip": {ip}, "port": {fmt.Sprint(port)}, "ephemeral": {fmt.Sprint(ephemeral)}}
	return n.Do("POST", "/nacos/v1/ns/instance", q, nil, map[string]string{"User-Agent": javaUA})
}

// ownerOf returns the index of the node owning a service and one that
// does not.
func ownerOf(t *testing.T, nodes []*servertest.Node, svc string) (owner, other int) {
	t.Helper()
	d := distro.Hash("DEFAULT_GROUP@@" + svc)
	var addrs []string
	for _, n := range nodes {
		addrs = append(addrs, n.Self().Address())
	}
	sorted := append([]string(nil), addrs...)
	for i := range sorted {
		for j := i + 1; j < len(sorted); j++ {
			if sorted[j] < sorted[i] {
				sorted[i], sorted[j] = sorted[j], sorted[i]
			}
		}
	}
	want := sorted[d%len(sorted)]
	for i, a := range addrs {
		if a == want {
			owner = i
		}
	}
	return owner, (owner + 1) % len(nodes)
}

// TestClusterThreeNodes runs three real nodes in one process: members see
// each other UP; an ephemeral instance registered on a node that does not
// own the service is proxied to the owner and appears on every node; a
// persistent instance registered on a follower is forwarded to the raft
// leader and listed everywhere; a config published on one node is read on
// the others; deregistration reaches every node.
func TestClusterThreeNodes(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	nodes := servertest.StartCluster(t, servertest.ClusterConfigs(t, 3))
	servertest.WaitMembersUp(t, nodes)

	svc := "cluster.svc"
	owner, other := ownerOf(t, nodes, svc)
	// Java's DistroFilter relays the owner's answer as application/json;charset=UTF-8
	// (compat/testdata/distro/java148/instance-post-proxied)
	if r := register(t, nodes[other], svc, "10.1.0.1", 8080, true); r.Status != 200 || r.Body != "ok" ||
		r.Header.Get("Content-Type") != "application/json;charset=UTF-8" {
		t.Fatalf("register on a non-owner: %d %s %q", r.Status, r.Body, r.Header.Get("Content-Type"))
	}
	for i, n := range nodes {
		servertest.Eventually(t, 10*time.Second, func() error {
			hosts, err := listHosts(t, n, svc)
			if err != nil {
				return err
			}
			if len(hosts) != 1 || hosts[0] != "10.1.0.1:8080" {
				return fmt.Errorf("node %d lists %v", i, hosts)
			}
			return nil
		})
	}
	if !nodes[owner].Registry().HasInstance("public", "DEFAULT_GROUP@@"+svc, "DEFAULT", "10.1.0.1", 8080) {
		t.Fatal("the owner does not hold the instance")
	}

	// persistent instance through a raft follower
	var follower *servertest.Node
	for _, n := range nodes {
		if !n.IsRaftLeader() {
			follower = n
			break
		}
	}
	if r := register(t, follower, "cluster.persistent", "10.1.0.2", 9090, false); r.Status != 200 || r.Body != "ok" {
		t.Fatalf("persistent register on a follower: %d %s", r.Status, r.Body)
	}
	for i, n := range nodes {
		servertest.Eventually(t, 10*time.Second, func() error {
			hosts, err := listHosts(t, n, "cluster.persistent")
			if err != nil {
				return err
			}
			if len(hosts) != 1 {
				return fmt.Errorf("node %d lists %v", i, hosts)
			}
			return nil
		})
	}

	// a config published on one node, read on each
	pub := nodes[2].Do("POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": {"cluster.cfg"}, "group": {"G"}, "content": {"hello"}}, nil)
	if pub.Status != 200 || pub.Body != "true" {
		t.Fatalf("publish: %d %s", pub.Status, pub.Body)
	}
	for i, n := range nodes {
		r := n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"cluster.cfg"}, "group": {"G"}}, nil, nil)
		if i == 2 && (r.Status != 200 || r.Body != "hello") {
			t.Fatalf("read-your-write on the publishing node: %d %q", r.Status, r.Body)
		}
		servertest.Eventually(t, 5*time.Second, func() error {
			r := n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"cluster.cfg"}, "group": {"G"}}, nil, nil)
			if r.Status != 200 || r.Body != "hello" {
				return fmt.Errorf("node %d: %d %q", i, r.Status, r.Body)
			}
			return nil
		})
	}

	// deregister on another non-owner
	q := url.Values{"serviceName": {svc}, "ip": {"10.1.0.1"}, "port": {"8080"}, "ephemeral": {"true"}}
	third := 3 - owner - other
	if r := nodes[third].Do("DELETE", "/nacos/v1/ns/instance", q, nil, map[string]string{"User-Agent": javaUA}); r.Status != 200 {
		t.Fatalf("deregister: %d %s", r.Status, r.Body)
	}
	for i, n := range nodes {
		servertest.Eventually(t, 10*time.Second, func() error {
			hosts, err := listHosts(t, n, svc)
			if err != nil {
				return err
			}
			if len(hosts) != 0 {
				return fmt.Errorf("node %d still lists %v", i, hosts)
			}
			return nil
		})
	}

	// node views
	r := nodes[0].Do("GET", "/nacos/v1/core/cluster/nodes", nil, nil, nil)
	if r.Status != 200 || strings.Count(r.Body, `"state":"UP"`) != 3 || !strings.Contains(r.Body, `"raftMetaData"`) {
		t.Fatalf("nodes: %d %s", r.Status, r.Body)
	}
}

// TestClusterMetrics: a cluster node's /actuator/prometheus carries the
// Distro and membership series (exposed as Java exposes the endpoint).
func TestClusterMetrics(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 2)
	for i := range cfgs {
		cfgs[i].Ops.ExposePrometheus = true
	}
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	register(t, nodes[0], "metrics.svc", "10.2.0.1", 80, true)
	servertest.Eventually(t, 10*time.Second, func() error {
		r := nodes[1].Do("GET", "/nacos/actuator/prometheus", nil, nil, nil)
		for _, want := range []string{`nacosd_cluster_members{state="UP"} 2`, `nacosd_distro_checksum_rounds_total{direction="received"}`,
			`nacosd_distro_syncs_total{outcome="success"}`, `nacosd_raft_state{state=`} {
			if !strings.Contains(r.Body, want) {
				return fmt.Errorf("no %s in %d %.300s", want, r.Status, r.Body)
			}
		}
		return nil
	})
}

// TestClusterPushAcrossNodes: a UDP subscriber of one node is pushed a
// change registered on another.
func TestClusterPushAcrossNodes(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	nodes := servertest.StartCluster(t, servertest.ClusterConfigs(t, 3))
	servertest.WaitMembersUp(t, nodes)
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	u := &udpClient{conn}
	port := strconv.Itoa(conn.LocalAddr().(*net.UDPAddr).Port)
	r := nodes[2].Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"DEFAULT_GROUP@@xpush"}, "udpPort": {port},
		"clientIP": {"127.0.0.1"}}, nil, map[string]string{"User-Agent": javaUA})
	if !strings.Contains(r.Body, `"cacheMillis":10000`) {
		t.Fatalf("subscriber not registered: %s", r.Body)
	}
	start := time.Now()
	if r := register(t, nodes[0], "xpush", "10.3.0.1", 80, true); r.Body != "ok" {
		t.Fatal(r.Body)
	}
	for {
		p, err := u.read(t, 5*time.Second)
		if err != nil {
			t.Fatalf("no push on the other node: %v", err)
		}
		u.ack(t, p)
		if strings.Contains(p.Data, `"ip":"10.3.0.1"`) {
			t.Logf("push on another node %v after the register", time.Since(start))
			return
		}
	}
}

// TestClusterEmptyServiceClean: a service whose only instance left (it was
// registered on a node that neither owns the service nor leads raft) is
// removed from every node by the empty-service clean, whichever node
// decides it.
func TestClusterEmptyServiceClean(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].Naming.DisableEmptyServiceClean = false
		cfgs[i].Naming.EmptyServiceCleanInitial = 200 * time.Millisecond
		cfgs[i].Naming.EmptyServiceCleanPeriod = 100 * time.Millisecond
	}
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	// a service owned by a raft follower, registered through another node
	var leader int
	servertest.Eventually(t, 10*time.Second, func() error {
		for i, n := range nodes {
			if n.IsRaftLeader() {
				leader = i
				return nil
			}
		}
		return fmt.Errorf("no raft leader")
	})
	svc, other := "", 0
	for k := 0; svc == ""; k++ {
		name := "cluster.clean." + strconv.Itoa(k)
		if owner, o := ownerOf(t, nodes, name); owner != leader {
			svc, other = name, o
		}
	}
	if r := register(t, nodes[other], svc, "10.3.0.1", 80, true); r.Status != 200 {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	exists := func(n *servertest.Node) bool {
		r := n.Do("GET", "/nacos/v1/ns/service", url.Values{"serviceName": {svc}}, nil, nil)
		return r.Status == 200
	}
	servertest.Eventually(t, 10*time.Second, func() error {
		for i, n := range nodes {
			if !exists(n) {
				return fmt.Errorf("node %d has no service yet", i)
			}
		}
		return nil
	})
	q := url.Values{"serviceName": {svc}, "ip": {"10.3.0.1"}, "port": {"80"}, "ephemeral": {"true"}}
	if r := nodes[other].Do("DELETE", "/nacos/v1/ns/instance", q, nil, map[string]string{"User-Agent": javaUA}); r.Status != 200 {
		t.Fatalf("deregister: %d %s", r.Status, r.Body)
	}
	servertest.Eventually(t, 15*time.Second, func() error {
		for i, n := range nodes {
			if exists(n) {
				return fmt.Errorf("node %d still has the service", i)
			}
		}
		return nil
	})
}

// TestClusterDeleteRightAfterPublish: a config deleted through a follower
// right after it was published through the leader is gone on every node,
// even when the follower had not applied the publish yet when the delete
// came (it must not judge the delete a no-op on its own copy).
func TestClusterDeleteRightAfterPublish(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	nodes := servertest.StartCluster(t, servertest.ClusterConfigs(t, 3))
	servertest.WaitMembersUp(t, nodes)
	var leader, follower *servertest.Node
	servertest.Eventually(t, 10*time.Second, func() error {
		leader, follower = nil, nil
		for _, n := range nodes {
			if n.IsRaftLeader() {
				leader = n
			} else {
				follower = n
			}
		}
		if leader == nil || follower == nil {
			return fmt.Errorf("no raft leader")
		}
		return nil
	})
	const rounds = 30
	for i := range rounds {
		q := url.Values{"dataId": {"rapid." + strconv.Itoa(i)}, "group": {"DEFAULT_GROUP"}}
		if r := leader.Do("POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": q["dataId"], "group": q["group"], "content": {"x"}}, nil); r.Body != "true" {
			t.Fatalf("publish: %d %s", r.Status, r.Body)
		}
		if r := follower.Do("DELETE", "/nacos/v1/cs/configs", q, nil, nil); r.Body != "true" {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
	}
	servertest.Eventually(t, 5*time.Second, func() error {
		for i := range rounds {
			for j, n := range nodes {
				q := url.Values{"dataId": {"rapid." + strconv.Itoa(i)}, "group": {"DEFAULT_GROUP"}}
				if r := n.Do("GET", "/nacos/v1/cs/configs", q, nil, nil); r.Status != 404 {
					return fmt.Errorf("node %d: rapid.%d: %d %s", j, i, r.Status, r.Body)
				}
			}
		}
		return nil
	})
}

// TestClusterConsoleDistroColumns: the console's cluster page shows, on
// every member, each member's share of the instance lists and the outcome
// of its last checksum round (in sync once the rounds ran).
func TestClusterConsoleDistroColumns(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	nodes := servertest.StartCluster(t, servertest.ClusterConfigs(t, 3))
	servertest.WaitMembersUp(t, nodes)
	for k := range 6 {
		if r := register(t, nodes[k%3], "cluster.console."+strconv.Itoa(k), "10.4.0.1", 80, true); r.Status != 200 {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
	}
	servertest.Eventually(t, 15*time.Second, func() error {
		r := nodes[0].Do("GET", "/nacos/v1/console/cluster/nodes", nil, nil, nil)
		var v struct {
			Nodes []struct {
				Address, DistroRole, ChecksumHealth string
				Self                                bool
			}
		}
		if err := json.Unmarshal([]byte(r.Body), &v); err != nil || len(v.Nodes) != 3 {
			return fmt.Errorf("cluster nodes: %d %s", r.Status, r.Body)
		}
		total := 0
		for _, n := range v.Nodes {
			var owned, held int
			if _, err := fmt.Sscanf(n.DistroRole, "owns %d of %d lists", &owned, &held); err != nil || held != 6 {
				return fmt.Errorf("%s distroRole %q", n.Address, n.DistroRole)
			}
			total += owned
			if !n.Self && !strings.HasPrefix(n.ChecksumHealth, "in sync") {
				return fmt.Errorf("%s checksumHealth %q", n.Address, n.ChecksumHealth)
			}
		}
		if total != 6 {
			return fmt.Errorf("owned lists add up to %d", total)
		}
		return nil
	})
}

// TestReadinessWithoutLeader is issue 23's eighth defect: a member that has
// heard from no raft leader for longer than an election timeout (here the
// two others are gone) reports itself not ready, in the probe and in the
// metrics, and is ready again once a leader is back.
func TestReadinessWithoutLeader(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].Ops.ExposePrometheus = true
	}
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	ready := func(n *servertest.Node) servertest.Response {
		return n.Do("GET", "/nacos/v1/console/health/readiness", nil, nil, nil)
	}
	servertest.Eventually(t, 10*time.Second, func() error {
		if r := ready(nodes[0]); r.Status != 200 {
			return fmt.Errorf("readiness %d %s", r.Status, r.Body)
		}
		return nil
	})
	_ = nodes[1].Close()
	_ = nodes[2].Close()
	servertest.Eventually(t, 10*time.Second, func() error {
		r := ready(nodes[0])
		if r.Status != 500 || !strings.Contains(r.Body, "no raft leader") {
			return fmt.Errorf("readiness without a majority: %d %s", r.Status, r.Body)
		}
		m := nodes[0].Do("GET", "/nacos/actuator/prometheus", nil, nil, nil)
		if !strings.Contains(m.Body, `nacosd_ready{reason="Config is not in readiness"} 0`) {
			return fmt.Errorf("metrics lack the not-ready gauge")
		}
		return nil
	})
}
