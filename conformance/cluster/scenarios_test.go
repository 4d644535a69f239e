package cluster_test

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKillNodes: kill -9 the raft leader, then a follower, while configs
// are published, persistent instances registered and real clients (each
// knowing all three nodes) keep ephemeral instances alive. No acknowledged
// write is lost, every ephemeral instance stays listed on every running
// node while owners move, and a restarted node rejoins and converges.
func TestKillNodes(t *testing.T) {
	c := newCluster(t)
	c.startAll()
	t.Logf("members UP after %v", c.membersUp(60*time.Second))
	apps := c.registerApps(t, "fault.app", 6)
	t.Logf("ephemeral instances on every node after %v", c.allListed(30*time.Second, "fault.app", apps))
	l := c.startLoad()
	time.Sleep(3 * time.Second)
	watch := c.watchListed(t, "fault.app", apps)

	li := c.leader()
	t.Logf("killing the raft leader, node %d", li)
	killed := time.Now()
	c.nodes[li].kill()
	nl := c.leader()
	t.Logf("new leader node %d after %v", nl, time.Since(killed))
	time.Sleep(10 * time.Second)
	l.check(t)
	c.start(li)
	t.Logf("node %d back: members UP after %v", li, c.membersUp(60*time.Second))
	took, _ := c.converged(30*time.Second, []string{"fault.app", "fault.persistent"})
	t.Logf("restarted node converged after %v", took)

	fi := (c.leader() + 1) % 3
	t.Logf("killing follower node %d and wiping its data directory", fi)
	c.nodes[fi].kill()
	if err := os.RemoveAll(filepath.Join(c.nodes[fi].home, "data")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(8 * time.Second)
	l.check(t)
	c.start(fi)
	c.membersUp(60 * time.Second)
	took, _ = c.converged(30*time.Second, []string{"fault.app", "fault.persistent"})
	t.Logf("wiped follower rejoined and converged after %v", took)

	l.end()
	l.check(t)
	t.Logf("writes: %d acknowledged, %d failed during the faults: %v", l.ok.Load(), l.errs.Load(), l.samples)
	if gaps := watch(); len(gaps) > 0 {
		t.Errorf("ephemeral instances dropped while owners moved (%d samples): %s", len(gaps), strings.Join(gaps[:min(len(gaps), 10)], "; "))
	}
}

// TestPartition cuts the raft leader off from the other two nodes: the
// majority elects a new leader and keeps taking writes; the cut-off node
// refuses CP writes with Java's no-leader error but keeps serving reads and
// its own ephemeral data; after healing every node holds the same data.
func TestPartition(t *testing.T) {
	c := newCluster(t)
	c.startAll()
	c.membersUp(60 * time.Second)
	apps := c.registerApps(t, "part.app", 4)
	c.allListed(30*time.Second, "part.app", apps)
	if r, err := do(c.nodes[0], "POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": {"part.before"}, "group": {"FAULT"}, "content": {"v1"}}); err != nil || r.body != "true" {
		t.Fatalf("publish before the partition: %v %+v", err, r)
	}
	li := c.leader()
	cut := c.nodes[li]
	t.Logf("partitioning the raft leader, node %d (%s)", li, cut.addr())
	c.partition(li)

	// Each attempt writes its own dataId: an attempt the client gave up on
	// (its 10 s timeout) has an unknown outcome, and the node may still
	// send it to a leader once the partition heals; the attempt answered
	// with the no-leader error must never land.
	var minorityErr, refusedID string
	attempt := 0
	eventually(t, 30*time.Second, "the cut-off node refuses CP writes", func() error {
		attempt++
		id := fmt.Sprintf("part.minority.%d", attempt)
		r, err := do(cut, "POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": {id}, "group": {"FAULT"}, "content": {"x"}})
		if err != nil {
			return err
		}
		refusedID = id
		if r.status == 200 {
			return errFmt("write accepted: %s", r.body)
		}
		minorityErr = r.body
		if !strings.Contains(r.body, "did not find the Leader node") {
			return errFmt("answered %d %s", r.status, r.body)
		}
		return nil
	})
	t.Logf("minority CP write answered: %s", minorityErr)
	if !strings.Contains(minorityErr, "did not find the Leader node") {
		t.Errorf("minority write error %q is not Java's no-leader error", minorityErr)
	}
	if body, st, err := config(cut, "part.before"); err != nil || st != 200 || body != "v1" {
		t.Errorf("minority read: %d %q %v", st, body, err)
	}
	if h, err := hosts(cut, "part.app"); err != nil || len(h) == 0 {
		t.Errorf("minority instance list: %v %v", h, err)
	}
	q := url.Values{"serviceName": {"part.minority.app"}, "ip": {"127.8.1.1"}, "port": {"9000"}, "ephemeral": {"true"}}
	eventually(t, 40*time.Second, "the cut-off node takes ephemeral registrations", func() error {
		r, err := do(cut, "POST", "/nacos/v1/ns/instance", q, nil)
		if err != nil || r.status != 200 {
			return errFmt("%v %+v", err, r)
		}
		return nil
	})
	majority := c.nodes[(li+1)%3]
	eventually(t, 20*time.Second, "the majority takes CP writes", func() error {
		r, err := do(majority, "POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": {"part.majority"}, "group": {"FAULT"}, "content": {"v2"}})
		if err != nil || r.body != "true" {
			return errFmt("%v %+v", err, r)
		}
		return nil
	})

	heal(t)
	healed := time.Now()
	c.membersUp(60 * time.Second)
	took, st := c.converged(30*time.Second, []string{"part.app"})
	t.Logf("after healing: members UP, data identical on every node after %v (since heal %v)", took, time.Since(healed))
	if !strings.Contains(st, "part.majority=v2") || strings.Contains(st, refusedID+"=") {
		t.Errorf("converged state:\n%s", st)
	}
	if time.Since(healed) > 40*time.Second {
		t.Errorf("convergence took %v after healing", time.Since(healed))
	}
}

// TestFullRestart: every node is killed and started again; every
// acknowledged config and persistent instance is back, and the clients
// (which keep beating) re-register their ephemeral instances.
func TestFullRestart(t *testing.T) {
	c := newCluster(t)
	c.startAll()
	c.membersUp(60 * time.Second)
	apps := c.registerApps(t, "restart.app", 3)
	c.allListed(30*time.Second, "restart.app", apps)
	l := c.startLoad()
	time.Sleep(5 * time.Second)
	l.end()
	for _, n := range c.nodes {
		n.kill()
	}
	start := time.Now()
	c.startAll()
	c.membersUp(60 * time.Second)
	l.check(t)
	t.Logf("acknowledged writes back after %v", time.Since(start))
	took := c.allListed(60*time.Second, "restart.app", apps)
	t.Logf("clients re-registered after %v", took)
}

// TestClientSurvivesNodeLoss: a client given all three addresses keeps
// working (publish, read, register, discover) with any one node down.
func TestClientSurvivesNodeLoss(t *testing.T) {
	c := newCluster(t)
	c.startAll()
	c.membersUp(60 * time.Second)
	cl := c.sdkClient(t)
	for down := range c.nodes {
		c.nodes[down].kill()
		svc := "survive.app." + string(rune('a'+down))
		eventually(t, 30*time.Second, "register with a node down", func() error {
			_, err := cl.RegisterInstance(voParam(svc))
			return err
		})
		eventually(t, 30*time.Second, "discover with a node down", func() error {
			ins, err := cl.SelectAllInstances(selectParam(svc))
			if err != nil || len(ins) != 1 {
				return errFmt("%v %v", ins, err)
			}
			return nil
		})
		c.start(down)
		c.membersUp(60 * time.Second)
	}
}
