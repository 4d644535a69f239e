package raftstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// raft answers ErrLeadershipLost for every entry in flight when a leader
// steps down, although the next leader commits most of them (it has them
// in its log). The caller cannot tell a lost write from a committed one
// and a blind retry of a non-idempotent write applies it twice. So Apply
// finds the outcome out before answering: it waits until the node has
// applied the entry's index (from whichever leader), then compares the
// entry committed there with its own — in the log store, or in the FSM's
// record of recent outcomes, which also holds the condition's result.

// errLostNotApplied: leadership was lost and another entry was committed
// at this write's index, so nothing was written. It wraps ErrNotLeader:
// safe to retry, or forward to the new leader.
var errLostNotApplied = fmt.Errorf("raftstore: apply: leadership lost before the entry was committed; nothing was written: %w", ErrNotLeader)

// outcomeSlots is how many recent entries the FSM remembers the result of.
const outcomeSlots = 1 << 14

// outcomeRing remembers, per recent log index, a hash of the entry and the
// batch's result (nil or a *CondError). Local to the node, not replicated.
type outcomeRing struct {
	mu    sync.Mutex
	seed  maphash.Seed
	slots []outcome
}

type outcome struct {
	index, hash uint64
	err         error
}

func newOutcomeRing() *outcomeRing {
	return &outcomeRing{seed: maphash.MakeSeed(), slots: make([]outcome, outcomeSlots)}
}

func (r *outcomeRing) hash(data []byte) uint64 { return maphash.Bytes(r.seed, data) }

func (r *outcomeRing) record(index uint64, data []byte, err error) {
	h := r.hash(data)
	r.mu.Lock()
	r.slots[index%outcomeSlots] = outcome{index: index, hash: h, err: err}
	r.mu.Unlock()
}

func (r *outcomeRing) lookup(index uint64) (outcome, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o := r.slots[index%outcomeSlots]
	return o, o.index == index && index != 0
}

// resolve finds out what became of the entry data that raft dispatched at
// index idx before this node lost leadership: its index and result when
// it was committed, errLostNotApplied when another entry took the index,
// ErrLeadershipLost when that cannot be told within ApplyTimeout.
func (s *Store) resolve(ctx context.Context, idx uint64, data []byte, conditional bool) (uint64, error) {
	s.lostApplies.Add(1)
	unknown := func() (uint64, error) {
		s.lostUnresolved.Add(1)
		return 0, fmt.Errorf("raftstore: apply: outcome unknown: %w", ErrLeadershipLost)
	}
	if idx == 0 {
		return unknown()
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.ApplyTimeout)
	defer cancel()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for s.raft.AppliedIndex() < idx { // committed up to idx, by some leader
		select {
		case <-ctx.Done():
			return unknown()
		case <-s.closed:
			return 0, ErrClosed
		case <-tick.C:
		}
	}
	var l raft.Log
	inLog := false
	switch err := s.logs.GetLog(idx, &l); {
	case err == nil:
		if l.Type != raft.LogCommand || !bytes.Equal(l.Data, data) {
			return 0, errLostNotApplied
		}
		inLog = true
	case !errors.Is(err, raft.ErrLogNotFound): // compacted away is fine: ask the FSM
		return unknown()
	}
	if err := s.fsm.applied.wait(ctx, idx, s.closed); err != nil {
		return unknown()
	}
	o, ok := s.fsm.outcomes.lookup(idx)
	switch {
	case ok && o.hash == s.fsm.outcomes.hash(data):
		if o.err != nil {
			return 0, o.err
		}
		return idx, nil
	case ok:
		return 0, errLostNotApplied
	case inLog && !conditional:
		return idx, nil
	}
	return unknown()
}
