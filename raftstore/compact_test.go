package raftstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSnapshotOnLogBytes: with entries of 4 KiB and SnapshotBytes of
// 64 KiB, the store snapshots by size long before raft's entry count
// (8192) would, and truncates the log to about a quarter of SnapshotBytes,
// so the log holds a bounded number of bytes whatever is written.
func TestSnapshotOnLogBytes(t *testing.T) {
	cfg := testConfig(t, testLogger(t), t.TempDir())
	cfg.SnapshotBytes = 64 << 10
	s := mustOpen(t, cfg)
	value := strings.Repeat("v", 4<<10)
	for i := range 300 {
		mustApply(t, s, Batch{Ops: []Op{put("b", fmt.Sprint(i%10), value+fmt.Sprint(i))}}) // state 40 KiB < SnapshotBytes
	}
	entries := func() uint64 {
		first, _ := s.logs.FirstIndex()
		last, _ := s.logs.LastIndex()
		return last - first + 1
	}
	// at most SnapshotBytes since the last snapshot plus the trailing quarter
	maxEntries := uint64((cfg.SnapshotBytes+cfg.SnapshotBytes/4)/(4<<10)) + minTrailingLogs
	eventually(t, 10*time.Second, func() error {
		if n := entries(); n > maxEntries {
			return fmt.Errorf("log holds %d entries of 4 KiB, want at most %d", n, maxEntries)
		}
		return nil
	})
	snaps, err := os.ReadDir(filepath.Join(cfg.Dir, "snapshots"))
	if err != nil || len(snaps) == 0 {
		t.Fatalf("no snapshot written: %v", err)
	}
	want := dumpState(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, cfg)
	got := dumpState(s2)
	if len(got) != len(want) {
		t.Fatalf("reopened with %d records, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("record %s changed across snapshot and reopen", k)
		}
	}
}

func TestSizeRingTrailing(t *testing.T) {
	r := newSizeRing(8)
	for _, n := range []int{100, 100, 100, 1000, 10} {
		r.add(n)
	}
	for _, c := range []struct {
		budget uint64
		lo, hi int
		want   int
	}{
		{10, 0, 8, 1}, {1010, 0, 8, 2}, {1110, 0, 8, 3}, {5000, 0, 8, 5}, {5000, 0, 4, 4}, {0, 2, 8, 2},
	} {
		if got := r.trailing(c.budget, c.lo, c.hi); got != c.want {
			t.Errorf("trailing(%d, %d, %d) = %d, want %d", c.budget, c.lo, c.hi, got, c.want)
		}
	}
	if r.add(0) != 1310 {
		t.Error("bytes since snapshot")
	}
	r.snapshotted()
	if r.add(5) != 5 {
		t.Error("count not reset by a snapshot")
	}
	if r.threshold(100) != 100 {
		t.Error("threshold before any snapshot")
	}
	r.persisted(5000)
	if r.threshold(100) != 5000 || r.threshold(9000) != 9000 {
		t.Error("a snapshot larger than SnapshotBytes is the threshold")
	}
	for range 20 { // wraps
		r.add(1)
	}
	if got := r.trailing(100, 0, 100); got != 8 {
		t.Errorf("trailing after wrap = %d, want the ring size 8", got)
	}
}

// TestSnapshotAtClose: Close snapshots once CloseSnapshotBytes of log were
// applied since the last snapshot, so the next open restores it instead of
// replaying the log; CloseSnapshotBytes < 0 leaves the log to be replayed.
func TestSnapshotAtClose(t *testing.T) {
	value := strings.Repeat("v", 4<<10)
	for _, c := range []struct {
		name      string
		bytes     int64
		writes    int
		wantSnaps bool
	}{
		{"past the bound", 512 << 10, 200, true},
		{"below the bound", 4 << 20, 200, false},
		{"off", -1, 200, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t, testLogger(t), t.TempDir())
			cfg.SnapshotBytes = 64 << 20 // no size-triggered snapshot
			cfg.CloseSnapshotBytes = c.bytes
			s := mustOpen(t, cfg)
			var last uint64
			for i := range c.writes {
				last = mustApply(t, s, Batch{Ops: []Op{put("b", fmt.Sprint(i%10), value+fmt.Sprint(i))}})
			}
			want := dumpState(s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			var newest uint64
			snaps, _ := os.ReadDir(filepath.Join(cfg.Dir, "snapshots"))
			for _, e := range snaps {
				var term, index, ms uint64
				if _, err := fmt.Sscanf(e.Name(), "%d-%d-%d", &term, &index, &ms); err == nil {
					newest = max(newest, index)
				}
			}
			if got := newest >= last; got != c.wantSnaps {
				t.Fatalf("newest snapshot at index %d, last write at %d: snapshot at close = %v, want %v", newest, last, got, c.wantSnaps)
			}
			s2 := mustOpen(t, cfg)
			got := dumpState(s2)
			if len(got) != len(want) {
				t.Fatalf("reopened with %d records, want %d", len(got), len(want))
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("record %s changed across close and reopen", k)
				}
			}
		})
	}
}

// TestNoLeakReportedWithoutFreelist: raft.db's free list is not synced
// (NoFreelistSync), so after a compaction freed pages the file check must
// not count the pages no tree reaches as lost (it warned on every start).
func TestNoLeakReportedWithoutFreelist(t *testing.T) {
	cfg := testConfig(t, testLogger(t), t.TempDir())
	cfg.SnapshotBytes = 64 << 10
	s := mustOpen(t, cfg)
	value := strings.Repeat("v", 4<<10)
	for i := range 300 {
		mustApply(t, s, Batch{Ops: []Op{put("b", fmt.Sprint(i%10), value)}})
	}
	eventually(t, 10*time.Second, func() error {
		if first, _ := s.logs.FirstIndex(); first < 100 {
			return fmt.Errorf("log not compacted yet (first index %d)", first)
		}
		return nil
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	leaked, warn, err := checkBoltFile(filepath.Join(cfg.Dir, "raft.db"))
	if err != nil || warn != "" || leaked != 0 {
		t.Fatalf("checkBoltFile: %d pages lost, warning %q, err %v; want none", leaked, warn, err)
	}
}
