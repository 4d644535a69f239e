package raftstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestUnknownOutcomeResolved cuts the leader off its followers for a few
// lease timeouts while writers keep it busy, then heals. The leader steps
// down and raft answers the entries in flight ErrLeadershipLost, although
// the next leader (often the same node, its log being the longest) commits
// many of them ("500 leadership lost while committing log" for a write
// that was applied). Apply must find the
// outcome out: every write that returned an error must not be in the
// state, every write that returned nil must be.
func TestUnknownOutcomeResolved(t *testing.T) {
	c := newTestCluster(t, 3)
	type result struct {
		key string
		err error
	}
	var mu sync.Mutex
	var results []result
	var seq atomic.Int64
	lost := 0 // writes that met a leadership change mid-flight (raft said ErrLeadershipLost)
	var lostMu sync.Mutex
	rounds := 0
	for ; rounds < 40 && lost < 8; rounds++ {
		l := c.leader()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					key := fmt.Sprintf("w%d", seq.Add(1))
					b := Batch{Ops: []Op{put("out", key, "v")}}
					if w%2 == 1 { // conditional: the condition's result must come back too
						b.Conds = []Cond{{Kind: CondAbsent, Bucket: "out", Key: key}}
					}
					_, err := l.Apply(context.Background(), b)
					mu.Lock()
					results = append(results, result{key, err})
					mu.Unlock()
					if err != nil {
						time.Sleep(5 * time.Millisecond)
					}
				}
			}()
		}
		time.Sleep(30 * time.Millisecond)
		for _, nd := range c.nodes {
			if nd.s != l {
				nd.proxy.cut()
			}
		}
		time.Sleep(150 * time.Millisecond) // three lease timeouts
		for _, nd := range c.nodes {
			nd.proxy.heal()
		}
		// The cluster takes writes as usual: when a follower won, its log
		// grows past the old leader's entries, which decides their fate.
		for range 10 {
			c.apply(Batch{Ops: []Op{put("tick", "t", "x")}})
		}
		close(stop)
		wg.Wait()
		lostMu.Lock()
		lost = 0
		for _, nd := range c.nodes {
			lost += int(nd.s.lostApplies.Load())
		}
		lostMu.Unlock()
	}
	// every node has every committed entry
	c.apply(Batch{Ops: []Op{put("out", "barrier", "v")}})
	c.converged("out")
	state := c.leader()
	var ok, failedAbsent, unknown, unknownApplied, wrong int
	for _, r := range results {
		_, present := state.Get("out", r.key)
		switch {
		case r.err == nil && present:
			ok++
		case r.err == nil:
			t.Errorf("write %s answered nil but is not in the state", r.key)
		case errors.Is(r.err, ErrLeadershipLost) && !errors.Is(r.err, ErrNotLeader):
			unknown++ // could not be resolved in time: still reported as unknown
			if present {
				unknownApplied++
			}
		case present:
			wrong++
			if wrong <= 5 {
				t.Errorf("write %s answered %v but was applied", r.key, r.err)
			}
		default:
			failedAbsent++
		}
	}
	kinds := map[string]int{}
	for _, r := range results {
		if r.err != nil {
			kinds[r.err.Error()]++
		}
	}
	t.Logf("%d rounds, %d writes met a leadership loss; errors: %v", rounds, lost, kinds)
	if lost == 0 {
		t.Fatal("no write met a leadership loss: the test proved nothing")
	}
	t.Logf("%d writes: %d ok, %d failed and absent, %d unresolved (ErrLeadershipLost; %d of them applied), %d failed but applied",
		len(results), ok, failedAbsent, unknown, unknownApplied, wrong)
	if wrong > 0 {
		t.Fatalf("%d writes answered an error although they were applied", wrong)
	}
	if unknown > 0 {
		t.Errorf("%d outcomes left unknown although a leader was elected within the timeout", unknown)
	}
}

// TestResolveDecides checks resolve's answers on one node whose log holds
// known entries: the same bytes at the index are this write (with the
// batch's result), other bytes are another write (nothing written).
func TestResolveDecides(t *testing.T) {
	s, _ := newTestStore(t)
	okBatch := Batch{Ops: []Op{put("b", "k", "v1")}}
	okIdx := mustApply(t, s, okBatch)
	failing := Batch{Conds: []Cond{{Kind: CondAbsent, Bucket: "b", Key: "k"}}, Ops: []Op{put("b", "k", "v2")}}
	if _, err := s.Apply(context.Background(), failing); !errors.Is(err, ErrCondFailed) {
		t.Fatalf("conditional write: %v", err)
	}
	failIdx := s.AppliedIndex()
	ctx := context.Background()

	if idx, err := s.resolve(ctx, okIdx, encodeBatch(okBatch), false); err != nil || idx != okIdx {
		t.Errorf("own entry: %d, %v; want %d, nil", idx, err, okIdx)
	}
	if _, err := s.resolve(ctx, failIdx, encodeBatch(failing), true); !errors.Is(err, ErrCondFailed) {
		t.Errorf("own conditional entry: %v, want its CondError", err)
	}
	other := encodeBatch(Batch{Ops: []Op{put("b", "k", "someone else")}})
	if _, err := s.resolve(ctx, okIdx, other, false); !errors.Is(err, ErrNotLeader) || !errors.Is(err, errLostNotApplied) {
		t.Errorf("another entry at the index: %v, want not applied (ErrNotLeader)", err)
	}
	// the FSM's record alone decides once the log entry is gone
	s.fsm.outcomes.record(okIdx+100, other, nil)
	if _, err := s.fsm.outcomes.lookup(okIdx + 100); !err {
		t.Fatal("record not found")
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.resolve(short, s.AppliedIndex()+1000, other, false); !errors.Is(err, ErrLeadershipLost) {
		t.Errorf("index never applied: %v, want ErrLeadershipLost", err)
	}
	if _, err := s.resolve(ctx, 0, other, false); !errors.Is(err, ErrLeadershipLost) {
		t.Errorf("no index: %v, want ErrLeadershipLost", err)
	}
}
