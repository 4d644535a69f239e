package raftstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Key names one record: a bucket and a key inside it.
type Key struct {
	Bucket, Key string
}

// maxUpdateAttempts bounds how often Update rebuilds a batch whose
// condition failed while the keys were locked (which only happens when the
// state changed outside the locks).
const maxUpdateAttempts = 8

// Update runs a read-compute-apply on keys, serialised with every other
// Update on any of those keys in this process.
//
// It takes the in-process lock of every key (in a fixed order, so
// overlapping key sets cannot deadlock; waiting ends with ctx), then calls
// build, which reads the current state (Get, Scan) and returns the batch to
// apply — normally with CondRev / CondAbsent conditions on what it read —
// and applies it like Apply. While the locks are held no other Update on
// these keys in this process can run between build and the commit, so
// local writers of one key queue up instead of losing compare-and-set races
// to each other: on the leader every one of them succeeds, in lock order
// (last writer wins).
//
// A condition can still fail when the state changed outside the locks (a
// plain Apply, a key the caller read but did not lock, or a new leader that
// had not applied its predecessor's log yet). Update then calls build again
// on the fresh state, up to 8 times in all, and returns the last *CondError
// if it keeps failing. build returning an error ends Update with that error
// (unwrapped). A batch without ops writes nothing: Update returns 0, nil.
//
// Only the leader builds: on a follower Update returns a *NotLeaderError
// before calling build, since a follower's state may lag the leader's (a
// delete it judged a no-op on its stale copy would be lost). A new leader
// first applies what its predecessors committed (a raft barrier, once per
// term), so build reads the committed state.
//
// build runs with the locks held: it must not call Update on any of the
// same keys (that deadlocks) and should be quick.
func (s *Store) Update(ctx context.Context, keys []Key, build func() (Batch, error)) (index uint64, err error) {
	defer func() { noteWrite(ctx, err) }()
	if s.isClosed() {
		return 0, ErrClosed
	}
	unlock, err := s.locks.lock(ctx, keys)
	if err != nil {
		return 0, fmt.Errorf("raftstore: update: wait for key lock: %w", err)
	}
	defer unlock()
	if err := s.leaderFresh(ctx); err != nil {
		return 0, err
	}
	var lastErr error
	wkey := nextWriteKey(ctx) // one key for every attempt: they are one write
	for range maxUpdateAttempts {
		b, err := build()
		if err != nil {
			return 0, err
		}
		if len(b.Ops) == 0 {
			return 0, nil
		}
		idx, err := s.apply(ctx, b, wkey)
		if err == nil || !errors.Is(err, ErrCondFailed) {
			return idx, err
		}
		lastErr = err
	}
	return 0, lastErr
}

// leaderFresh returns a *NotLeaderError on a follower; on the leader it
// waits, once per term, until every entry committed before the term is
// applied here.
func (s *Store) leaderFresh(ctx context.Context) error {
	if s.raft.State() != raft.Leader {
		return s.mapErr("update", raft.ErrNotLeader)
	}
	term := s.raft.CurrentTerm()
	if s.freshTerm.Load() == term {
		return nil
	}
	timeout := s.cfg.ApplyTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, max(time.Until(dl), time.Millisecond))
	}
	if err := s.waitFuture(ctx, s.raft.Barrier(timeout)); err != nil {
		return s.mapErr("update: barrier", err)
	}
	s.freshTerm.Store(term)
	return nil
}

// keyLocks is a table of per-key mutexes that exist only while someone
// holds or waits for them.
type keyLocks struct {
	mu sync.Mutex
	m  map[Key]*keyLock
}

type keyLock struct {
	ch   chan struct{} // capacity 1: holding the lock is having sent into it
	refs int           // holders and waiters
}

// lock acquires every key's lock in sorted order (duplicates once), or
// none if ctx ends first. unlock releases them.
func (t *keyLocks) lock(ctx context.Context, keys []Key) (unlock func(), err error) {
	ks := slices.Clone(keys)
	slices.SortFunc(ks, func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Bucket, b.Bucket), cmp.Compare(a.Key, b.Key))
	})
	ks = slices.Compact(ks)
	held := make([]*keyLock, 0, len(ks))
	release := func() {
		for i := len(held) - 1; i >= 0; i-- {
			<-held[i].ch
		}
		t.mu.Lock()
		for i, l := range held {
			t.unref(ks[i], l)
		}
		t.mu.Unlock()
	}
	for _, k := range ks {
		t.mu.Lock()
		if t.m == nil {
			t.m = map[Key]*keyLock{}
		}
		l := t.m[k]
		if l == nil {
			l = &keyLock{ch: make(chan struct{}, 1)}
			t.m[k] = l
		}
		l.refs++
		t.mu.Unlock()
		select {
		case l.ch <- struct{}{}:
			held = append(held, l)
		case <-ctx.Done():
			t.mu.Lock()
			t.unref(k, l)
			t.mu.Unlock()
			release()
			return nil, ctx.Err()
		}
	}
	return release, nil
}

// unref drops one reference; the entry goes when nobody holds or waits.
// Caller holds t.mu.
func (t *keyLocks) unref(k Key, l *keyLock) {
	l.refs--
	if l.refs == 0 {
		delete(t.m, k)
	}
}

// size is the number of keys locked or waited for (tests).
func (t *keyLocks) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
