package raftstore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestSubscribeLoadThenEveryLaterEntry: writers run while a view loads; the
// view (load, then the events after it) must hold every acknowledged key,
// and no event may carry an entry the load already saw.
func TestSubscribeLoadThenEveryLaterEntry(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	for i := range 50 {
		mustApply(t, s, Batch{Ops: []Op{put("b", fmt.Sprintf("pre-%d", i), "v")}})
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ackMu sync.Mutex
	acked := map[string]bool{}
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("w%d-%d", w, i)
				if _, err := s.Apply(context.Background(), Batch{Ops: []Op{put("b", k, "v")}}); err != nil {
					t.Error(err)
					return
				}
				ackMu.Lock()
				acked[k] = true
				ackMu.Unlock()
			}
		})
	}
	time.Sleep(20 * time.Millisecond) // writers under way
	var mu sync.Mutex
	view := map[string]bool{}
	var loadedAt uint64
	var dup []string
	cancel := s.Subscribe(func() {
		loadedAt = s.AppliedIndex()
		s.Scan("b", "", func(k string, r Record) bool {
			if r.Rev > loadedAt {
				t.Errorf("load saw %s at rev %d past the applied index %d", k, r.Rev, loadedAt)
			}
			view[k] = true
			return true
		})
		time.Sleep(30 * time.Millisecond) // writers keep committing meanwhile
	}, func(ev Event) {
		mu.Lock()
		defer mu.Unlock()
		if ev.Index <= loadedAt {
			dup = append(dup, fmt.Sprint(ev.Index))
		}
		for _, op := range ev.Ops {
			view[op.Key] = true
		}
	})
	defer cancel()
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(dup) > 0 {
		t.Errorf("events at or below the loaded index %d: %v", loadedAt, dup)
	}
	ackMu.Lock()
	defer ackMu.Unlock()
	for k := range acked {
		if !view[k] {
			t.Errorf("acknowledged %s missing from the view", k)
		}
	}
	if len(acked) == 0 {
		t.Fatal("no write acknowledged")
	}
}

// TestWaitAppliedAfterWatchers: once WaitApplied returns for an index, the
// watchers have seen its entry (a follower relays a forwarded write's
// answer then, and the client reads the views they build).
func TestWaitAppliedAfterWatchers(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) }) // never leave raft's apply goroutine blocked
	var seen sync.Map
	cancel := s.Watch(func(ev Event) {
		<-release
		seen.Store(ev.Index, true)
	})
	defer cancel()
	idx := make(chan uint64, 1)
	go func() {
		i, err := s.Apply(context.Background(), Batch{Ops: []Op{put("b", "k", "v")}})
		if err != nil {
			t.Error(err)
		}
		idx <- i
	}()
	want := s.AppliedIndex() + 1
	ctx, cancelWait := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancelWait()
	if err := s.WaitApplied(ctx, want); err == nil {
		t.Fatalf("WaitApplied(%d) returned while the watcher had not seen the entry", want)
	}
	releaseOnce.Do(func() { close(release) })
	got := <-idx
	if err := s.WaitApplied(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if _, ok := seen.Load(got); !ok {
		t.Fatalf("index %d applied before its watcher saw it", got)
	}
}
