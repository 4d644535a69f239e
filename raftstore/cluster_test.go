package raftstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
)

// testCluster is a set of real stores (own dirs, TCP on 127.0.0.1) joined
// into one raft cluster.
type testCluster struct {
	t     *testing.T
	log   *slog.Logger
	nodes []*testNode
}

type testNode struct {
	cfg   Config
	s     *Store    // nil while stopped
	proxy *netProxy // peers reach the node through it
}

// newTestCluster starts n nodes: node0 bootstraps, the others are added
// by the leader with AddVoter.
func newTestCluster(t *testing.T, n int) *testCluster {
	t.Helper()
	return newTestClusterWith(t, n, nil)
}

// newTestClusterWith is newTestCluster with mod applied to every node's
// Config.
func newTestClusterWith(t *testing.T, n int, mod func(*Config)) *testCluster {
	t.Helper()
	c := &testCluster{t: t, log: testLogger(t)}
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			if nd.s != nil {
				_ = nd.s.Close()
			}
		}
		for _, nd := range c.nodes {
			nd.proxy.close()
		}
	})
	for i := range n {
		cfg := testConfig(t, c.log.With("node", i), t.TempDir())
		cfg.NodeID = "node" + strconv.Itoa(i)
		cfg.Bootstrap = i == 0
		cfg.TrailingLogs = 8
		cfg.OpenTimeout = 5 * time.Second
		if mod != nil {
			mod(&cfg)
		}
		p := newNetProxy(t)
		cfg.AdvertiseAddr = p.addr()
		s, err := Open(cfg)
		if err != nil {
			p.close()
			t.Fatalf("open node %d: %v", i, err)
		}
		p.setTarget(s.BindAddr())
		cfg.BindAddr = s.BindAddr() // restarts keep the address
		c.nodes = append(c.nodes, &testNode{cfg: cfg, s: s, proxy: p})
		if i > 0 {
			// AddVoter is idempotent: retry while leadership moves (50 ms
			// timings on a loaded machine)
			eventually(t, 10*time.Second, func() error {
				err := c.leader().AddVoter(cfg.NodeID, s.Addr())
				if err != nil && !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrLeadershipLost) {
					t.Fatalf("add voter %d: %v", i, err)
				}
				return err
			})
		}
	}
	for i := range c.nodes {
		c.waitLeader(i)
	}
	return c
}

// apply applies b on the current leader, retrying while leadership
// moves (the test's writes are idempotent puts and deletes, so a retry
// after ErrLeadershipLost is safe here).
func (c *testCluster) apply(b Batch) uint64 {
	c.t.Helper()
	var idx uint64
	eventually(c.t, 10*time.Second, func() error {
		var err error
		idx, err = c.leader().Apply(context.Background(), b)
		if err != nil && !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrLeadershipLost) && !errors.Is(err, ErrClosed) {
			c.t.Fatalf("apply: %v", err)
		}
		return err
	})
	return idx
}

// leader returns the running node that is leader, waiting for one.
func (c *testCluster) leader() *Store {
	c.t.Helper()
	var l *Store
	eventually(c.t, 10*time.Second, func() error {
		for _, nd := range c.nodes {
			if nd.s != nil && nd.s.IsLeader() {
				l = nd.s
				return nil
			}
		}
		return errors.New("no leader")
	})
	return l
}

func (c *testCluster) index(s *Store) int {
	for i, nd := range c.nodes {
		if nd.s == s {
			return i
		}
	}
	c.t.Fatalf("store not in cluster")
	return -1
}

func (c *testCluster) waitLeader(i int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.nodes[i].s.WaitLeader(ctx); err != nil {
		c.t.Fatalf("node %d: %v", i, err)
	}
}

// stop closes node i, keeping its directory.
func (c *testCluster) stop(i int) {
	c.t.Helper()
	if err := c.nodes[i].s.Close(); err != nil {
		c.t.Fatalf("stop node %d: %v", i, err)
	}
	c.nodes[i].s = nil
}

// restart reopens node i on its directory and address.
func (c *testCluster) restart(i int) {
	c.t.Helper()
	s, err := Open(c.nodes[i].cfg)
	if err != nil {
		c.t.Fatalf("restart node %d: %v", i, err)
	}
	c.nodes[i].s = s
}

// snapshotAll snapshots every running node, so whichever becomes leader
// has compacted its log.
func (c *testCluster) snapshotAll() {
	c.t.Helper()
	for i, nd := range c.nodes {
		if nd.s != nil {
			if err := nd.s.Snapshot(); err != nil {
				c.t.Fatalf("snapshot node %d: %v", i, err)
			}
		}
	}
}

// converged waits until every running node holds the leader's state of
// the buckets, reporting the differences if it never happens.
func (c *testCluster) converged(buckets ...string) {
	c.t.Helper()
	l := c.leader()
	eventually(c.t, 10*time.Second, func() error {
		want := dump(l, buckets...)
		for i, nd := range c.nodes {
			if nd.s == nil {
				continue
			}
			if got := dump(nd.s, buckets...); !reflect.DeepEqual(got, want) {
				return fmt.Errorf("node %d: %v\nleader: %v", i, got, want)
			}
		}
		return nil
	})
}

func TestCluster(t *testing.T) {
	testtier.Require(t, testtier.Integration) // 3-node cluster
	t.Parallel()
	ctx := context.Background()
	c := newTestCluster(t, 3)
	idx := c.apply(Batch{Ops: []Op{put("b", "k", "v1")}})
	l := c.leader()
	li := c.index(l)
	f := c.nodes[(li+1)%3].s
	if err := f.WaitApplied(ctx, idx); err != nil {
		t.Fatal(err)
	}
	if r, ok := f.Get("b", "k"); !ok || r.Rev != idx {
		t.Errorf("follower read after WaitApplied: %+v %v", r, ok)
	}
	if _, err := f.Apply(ctx, Batch{Ops: []Op{put("b", "k", "x")}}); !errors.Is(err, ErrNotLeader) {
		t.Errorf("Apply on follower = %v, want ErrNotLeader", err)
	}
	// A follower never decides a write on its own (possibly stale) copy,
	// not even that there is nothing to write: the leader must build it.
	built := false
	if _, err := f.Update(ctx, []Key{{Bucket: "b", Key: "k"}}, func() (Batch, error) {
		built = true
		return Batch{}, nil
	}); !errors.Is(err, ErrNotLeader) || built {
		t.Errorf("Update on follower = %v (build called: %v), want ErrNotLeader before build", err, built)
	}
	if _, err := l.Update(ctx, []Key{{Bucket: "b", Key: "k"}}, func() (Batch, error) { return Batch{}, nil }); err != nil {
		t.Errorf("Update on leader = %v", err)
	}
	if f.LeaderAddr() != l.Addr() || f.IsLeader() {
		t.Errorf("follower sees leader %q, want %q", f.LeaderAddr(), l.Addr())
	}
	if err := f.VerifyLeader(); !errors.Is(err, ErrNotLeader) {
		t.Errorf("VerifyLeader on follower = %v", err)
	}
	if err := f.AddVoter("x", "127.0.0.1:1"); !errors.Is(err, ErrNotLeader) {
		t.Errorf("AddVoter on follower = %v", err)
	}

	// A follower that misses more than TrailingLogs entries catches up
	// from a snapshot.
	fi := c.index(f)
	c.stop(fi)
	for i := range 40 {
		c.apply(Batch{Ops: []Op{put("b", strconv.Itoa(i), "x"), del("b", strconv.Itoa(i-3))}})
	}
	c.snapshotAll()
	c.apply(Batch{Ops: []Op{put("b", "after", "snapshot")}})
	c.restart(fi)
	c.converged("b")
	if st := c.nodes[fi].s.Stats(); st["last_snapshot_index"] == "0" {
		t.Errorf("lagging follower caught up without a snapshot: %v", st)
	}

	// Losing the leader: the other two elect a new one and keep every
	// acknowledged write; the old leader rejoins as a follower.
	c.stop(c.index(c.leader()))
	c.apply(Batch{Ops: []Op{put("b", "new-leader", "yes")}})
	for i, nd := range c.nodes {
		if nd.s == nil {
			li = i
		}
	}
	c.restart(li)
	c.converged("b")
	if r, ok := c.nodes[li].s.Get("b", "after"); !ok || string(r.Value) != "snapshot" {
		t.Errorf("old leader lost a write: %+v %v", r, ok)
	}

	// Membership: remove a follower.
	nl := c.leader()
	var victim int
	for i, nd := range c.nodes {
		if nd.s != nl {
			victim = i
			break
		}
	}
	if err := nl.RemoveServer(c.nodes[victim].cfg.NodeID); err != nil {
		t.Fatal(err)
	}
	servers, err := nl.Servers()
	if err != nil || len(servers) != 2 {
		t.Errorf("Servers after remove = %+v, %v", servers, err)
	}
	c.stop(victim)
	c.apply(Batch{Ops: []Op{put("b", "two-nodes", "ok")}})
	c.converged("b")
}

// TestClusterShipsDiskBuckets: a node's own snapshots leave the disk
// buckets in its fsm.db, so what it sends a follower that is behind is the
// snapshot with fsm.db read in; the follower ends with the same history.
func TestClusterShipsDiskBuckets(t *testing.T) {
	testtier.Require(t, testtier.Integration) // 3-node cluster
	t.Parallel()
	c := newTestClusterWith(t, 3, func(cfg *Config) { cfg.DiskBuckets = []string{"h"} })
	c.apply(Batch{Ops: []Op{put("h", "before", "x")}})
	c.converged("h")
	fi := (c.index(c.leader()) + 1) % 3
	c.stop(fi)
	for i := range 40 {
		c.apply(Batch{Ops: []Op{put("h", fmt.Sprintf("k%02d", i), strconv.Itoa(i)), put("b", "n", strconv.Itoa(i)),
			del("h", fmt.Sprintf("k%02d", i-5))}})
	}
	c.snapshotAll()
	c.apply(Batch{Ops: []Op{put("h", "after", "snapshot")}})
	c.restart(fi)
	c.converged("h", "b")
	f := c.nodes[fi].s
	if st := f.Stats(); st["last_snapshot_index"] == "0" {
		t.Errorf("lagging follower caught up without a snapshot: %v", st)
	}
	if n := f.Len("h"); n != 7 { // before, k35..k39, after
		t.Errorf("follower's Len(h) = %d, want 7", n)
	}
	for _, nd := range c.nodes {
		eventually(t, 5*time.Second, func() error {
			left, _ := filepath.Glob(filepath.Join(nd.cfg.Dir, shipPrefix+"*"))
			if len(left) > 0 {
				return fmt.Errorf("copies left: %v", left)
			}
			return nil
		})
	}
}

// TestClusterFollowerReset cuts a follower off, moves the leader's log past
// it with a snapshot, and heals: the follower installs the snapshot and its
// watchers get a Reset with the new state already visible.
func TestClusterFollowerReset(t *testing.T) {
	testtier.Require(t, testtier.Integration) // 3-node cluster
	t.Parallel()
	c := newTestCluster(t, 3)
	c.apply(Batch{Ops: []Op{put("b", "before", "x")}})
	l := c.leader()
	fi := (c.index(l) + 1) % 3
	f := c.nodes[fi].s
	c.converged("b")

	type seen struct {
		ev    Event
		after bool // the key written during the cut was visible
	}
	var mu sync.Mutex
	var events []seen
	defer f.Watch(func(ev Event) {
		_, ok := f.Get("b", "during-cut-39")
		mu.Lock()
		events = append(events, seen{ev, ok})
		mu.Unlock()
	})()

	c.nodes[fi].proxy.cut()
	for i := range 40 {
		c.apply(Batch{Ops: []Op{put("b", "during-cut-"+strconv.Itoa(i), "x")}})
	}
	c.snapshotAll()
	c.apply(Batch{Ops: []Op{del("b", "before")}})
	if _, ok := f.Get("b", "during-cut-0"); ok {
		t.Fatal("the cut follower received writes")
	}
	c.nodes[fi].proxy.heal()
	c.converged("b")
	last := c.apply(Batch{Ops: []Op{put("b", "after-heal", "x")}})
	if err := f.WaitApplied(context.Background(), last); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	resets := 0
	for _, s := range events {
		if s.ev.Reset {
			resets++
			if !s.after || s.ev.Ops != nil {
				t.Errorf("Reset event %+v: new state visible=%v", s.ev, s.after)
			}
		}
	}
	if resets == 0 {
		t.Errorf("follower caught up without a Reset event: %+v", events)
	}
	if lastEv := events[len(events)-1].ev; lastEv.Reset || lastEv.Index != last {
		t.Errorf("last event %+v, want the write at %d", lastEv, last)
	}
}
