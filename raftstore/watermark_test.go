package raftstore

import (
	"context"
	"testing"
	"time"
)

// TestRestartedMemberWaitsUntilBackWhereItWas: a member that stops and
// starts again while no leader can reach it rebuilds its state from its
// newest snapshot, older than what it served before it stopped (raft keeps
// no commit index). It reports itself catching up, and WaitCaughtUp holds
// until a leader brings it back where it was (issue 23: the fault checker
// saw a restarted member serve values 40 s old, a client's reads going back
// in time).
func TestRestartedMemberWaitsUntilBackWhereItWas(t *testing.T) {
	c := newTestClusterWith(t, 3, func(cfg *Config) {
		cfg.CloseSnapshotBytes = -1 // a stop leaves the state as a kill does
	})
	c.apply(Batch{Ops: []Op{put("cfg", "k", "old")}})
	c.converged("cfg")
	c.snapshotAll()
	c.apply(Batch{Ops: []Op{put("cfg", "k", "new")}})
	c.converged("cfg")
	f := (c.index(c.leader()) + 1) % 3
	if r, _ := c.nodes[f].s.Get("cfg", "k"); string(r.Value) != "new" {
		t.Fatalf("follower %d reads %q before the stop", f, r.Value)
	}
	for i := range c.nodes {
		c.stop(i)
	}

	c.nodes[f].cfg.OpenTimeout = 500 * time.Millisecond // no leader to wait for
	c.restart(f)
	s := c.nodes[f].s
	if r, _ := s.Get("cfg", "k"); string(r.Value) != "old" {
		t.Fatalf("the restarted member's state without a leader reads %q; the test needs it to start from the older snapshot", r.Value)
	}
	applied, had, catching := s.CatchingUp()
	if !catching {
		t.Fatalf("CatchingUp = applied %d, target %d, false; want true", applied, had)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := s.WaitCaughtUp(ctx)
	cancel()
	if err == nil {
		t.Fatal("WaitCaughtUp returned before any leader was there")
	}

	for i := range c.nodes {
		if i != f {
			c.restart(i)
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := s.WaitCaughtUp(ctx); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Get("cfg", "k"); string(r.Value) != "new" {
		t.Fatalf("caught up, the member reads %q", r.Value)
	}
	if _, _, catching := s.CatchingUp(); catching {
		t.Fatal("still catching up after WaitCaughtUp")
	}
}

// TestOneNodeRestartIsCaughtUp: a one-node cluster applies its whole log at
// open, so it never waits.
func TestOneNodeRestartIsCaughtUp(t *testing.T) {
	s, cfg := newTestStore(t)
	cfg.CloseSnapshotBytes = -1
	mustApply(t, s, Batch{Ops: []Op{put("cfg", "k", "v")}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, cfg)
	if a, had, catching := s.CatchingUp(); catching {
		t.Fatalf("CatchingUp after a one-node restart: applied %d, had %d", a, had)
	}
}
