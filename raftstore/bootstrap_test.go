package raftstore

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"testing"
	"time"
)

// freeAddrs returns n free TCP addresses on 127.0.0.1 (raft addresses must
// be known before the nodes start when they bootstrap together).
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// TestClusterStaticBootstrap starts three nodes that all bootstrap with the
// same voter list (cluster.conf), as nacosd's cluster mode does: they elect
// one leader, a write on it reaches the followers, a follower's write
// answers NotLeaderError naming the leader, and a node whose directory was
// wiped bootstraps again and catches up from the leader's snapshot.
func TestClusterStaticBootstrap(t *testing.T) {
	t.Parallel()
	log := testLogger(t)
	addrs := freeAddrs(t, 3)
	var peers []Peer
	for i, a := range addrs {
		peers = append(peers, Peer{ID: "n" + strconv.Itoa(i), Addr: a})
	}
	cfgs := make([]Config, 3)
	stores := make([]*Store, 3)
	t.Cleanup(func() {
		for _, s := range stores {
			if s != nil {
				s.Close()
			}
		}
	})
	for i := range cfgs {
		cfg := testConfig(t, log.With("node", i), t.TempDir())
		cfg.NodeID, cfg.BindAddr = peers[i].ID, peers[i].Addr
		cfg.Bootstrap, cfg.Peers = true, peers
		cfg.OpenTimeout = 200 * time.Millisecond // a lone node does not wait for its peers
		cfg.TrailingLogs = 4
		cfgs[i] = cfg
	}
	for i := range cfgs { // concurrently, like three processes
		done := make(chan error, 1)
		go func() {
			s, err := Open(cfgs[i])
			stores[i] = s
			done <- err
		}()
		if err := <-done; err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
	}
	leader := func() (int, *Store) {
		var li int
		eventually(t, 10*time.Second, func() error {
			for i, s := range stores {
				if s != nil && s.IsLeader() {
					li = i
					return nil
				}
			}
			return errors.New("no leader")
		})
		return li, stores[li]
	}
	li, l := leader()
	idx := mustApply(t, l, Batch{Ops: []Op{put("b", "k", "v1")}})
	for i, s := range stores {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := s.WaitApplied(ctx, idx); err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		cancel()
		if r, ok := s.Get("b", "k"); !ok || string(r.Value) != "v1" {
			t.Fatalf("node %d: got %q %v", i, r.Value, ok)
		}
	}
	fi := (li + 1) % 3
	_, err := stores[fi].Apply(context.Background(), Batch{Ops: []Op{put("b", "k", "x")}})
	var nl *NotLeaderError
	if !errors.As(err, &nl) || !errors.Is(err, ErrNotLeader) || nl.LeaderID != peers[li].ID || nl.LeaderAddr != peers[li].Addr {
		t.Fatalf("follower write: %v (%+v), want NotLeaderError naming %v", err, nl, peers[li])
	}

	// Wipe a follower; compact the leader's log so it must send a snapshot.
	stores[fi].Close()
	stores[fi] = nil
	if err := os.RemoveAll(cfgs[fi].Dir); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		mustApply(t, l, Batch{Ops: []Op{put("b", "k"+strconv.Itoa(i), "v")}})
	}
	if err := l.Snapshot(); err != nil {
		t.Fatal(err)
	}
	last := mustApply(t, l, Batch{Ops: []Op{put("b", "last", "yes")}})
	s, err := Open(cfgs[fi])
	if err != nil {
		t.Fatalf("reopen wiped node: %v", err)
	}
	stores[fi] = s
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitApplied(ctx, last); err != nil {
		t.Fatalf("wiped node did not catch up: %v", err)
	}
	if r, ok := s.Get("b", "k9"); !ok || string(r.Value) != "v" {
		t.Fatalf("wiped node: k9 = %q %v", r.Value, ok)
	}
	if _, l2 := leader(); l2 != l {
		t.Logf("leadership moved during the rejoin")
	}
}
