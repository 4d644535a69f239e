package raftstore

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestUpdateConcurrentCounter runs 800 read-modify-write increments of one
// key, 16 at a time, each guarded by CondRev: with Update every one of them
// succeeds (none loses a CAS race) and the counter ends at 800.
func TestUpdateConcurrentCounter(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	ctx := context.Background()
	const n, par = 800, 16
	k := Key{"ctr", "c"}
	incr := func() (Batch, error) {
		r, ok := s.Get(k.Bucket, k.Key)
		v := 0
		cond := Cond{Kind: CondAbsent, Bucket: k.Bucket, Key: k.Key}
		if ok {
			v, _ = strconv.Atoi(string(r.Value))
			cond = Cond{Kind: CondRev, Bucket: k.Bucket, Key: k.Key, Rev: r.Rev}
		}
		return Batch{Conds: []Cond{cond}, Ops: []Op{put(k.Bucket, k.Key, strconv.Itoa(v+1))}}, nil
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := s.Update(ctx, []Key{k}, incr); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("update: %v", err)
	}
	if r, _ := s.Get(k.Bucket, k.Key); string(r.Value) != strconv.Itoa(n) {
		t.Errorf("counter = %s, want %d", r.Value, n)
	}
	if got := s.locks.size(); got != 0 {
		t.Errorf("%d key locks left after all updates", got)
	}
}

func TestUpdateBehaviour(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	ctx := context.Background()

	// build's error comes back as is; an empty batch writes nothing.
	boom := errors.New("boom")
	if _, err := s.Update(ctx, []Key{{"b", "k"}}, func() (Batch, error) { return Batch{}, boom }); err != boom {
		t.Errorf("build error: %v", err)
	}
	before := s.AppliedIndex()
	if idx, err := s.Update(ctx, []Key{{"b", "k"}}, func() (Batch, error) { return Batch{}, nil }); idx != 0 || err != nil {
		t.Errorf("empty batch: %d, %v", idx, err)
	}
	if s.AppliedIndex() != before {
		t.Error("empty batch wrote")
	}

	// A condition that keeps failing is retried with a fresh build, then
	// reported as a *CondError.
	mustApply(t, s, Batch{Ops: []Op{put("b", "k", "v")}})
	calls := 0
	_, err := s.Update(ctx, []Key{{"b", "k"}}, func() (Batch, error) {
		calls++
		return Batch{Conds: []Cond{{Kind: CondAbsent, Bucket: "b", Key: "k"}}, Ops: []Op{put("b", "k", "x")}}, nil
	})
	var ce *CondError
	if !errors.As(err, &ce) || calls != maxUpdateAttempts {
		t.Errorf("persistent cond failure: %v after %d builds", err, calls)
	}

	// A write outside the lock between build and commit is seen by the
	// next build.
	calls = 0
	idx, err := s.Update(ctx, []Key{{"b", "k"}}, func() (Batch, error) {
		calls++
		r, _ := s.Get("b", "k")
		if calls == 1 {
			mustApply(t, s, Batch{Ops: []Op{put("b", "k", "outside")}})
		}
		return Batch{Conds: []Cond{{Kind: CondRev, Bucket: "b", Key: "k", Rev: r.Rev}}, Ops: []Op{put("b", "k", string(r.Value)+"+1")}}, nil
	})
	if r, _ := s.Get("b", "k"); err != nil || calls != 2 || string(r.Value) != "outside+1" || r.Rev != idx {
		t.Errorf("retry after outside write: %v, %d builds, %+v at %d", err, calls, r, idx)
	}
}

// TestUpdateLockWaitEndsWithContext holds a key's lock and checks that a
// second Update on it (with another key too, in the other order) gives up
// when its context ends, leaving no lock behind.
func TestUpdateLockWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	held := make(chan struct{})
	release := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Update(context.Background(), []Key{{"b", "x"}, {"b", "y"}}, func() (Batch, error) {
			close(held)
			<-release
			return Batch{Ops: []Op{put("b", "x", "1")}}, nil
		})
		done <- err
	}()
	<-held
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Update(ctx, []Key{{"b", "y"}, {"b", "a"}}, func() (Batch, error) {
		t.Error("build ran while the key was locked")
		return Batch{}, nil
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Update on a locked key = %v, want deadline exceeded", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := s.locks.size(); got != 0 {
		t.Errorf("%d key locks left", got)
	}
	if _, err := s.Update(context.Background(), []Key{{"b", "y"}}, func() (Batch, error) {
		return Batch{Ops: []Op{put("b", "y", "2")}}, nil
	}); err != nil {
		t.Fatal(err)
	}
}
