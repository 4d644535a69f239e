package raftstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nacosd/nacosd/internal/testtier"
)

// dumpState returns every record of s as bucket/key → value.
func dumpState(s *Store) map[string]string {
	out := map[string]string{}
	s.fsm.mu.RLock()
	defer s.fsm.mu.RUnlock()
	for b, m := range s.fsm.data {
		for k, r := range m {
			out[b+"/"+k] = string(r.Value)
		}
	}
	return out
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func zeroAt(t *testing.T, path string, off int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, n), off); err != nil {
		t.Fatal(err)
	}
}

// damageFixture is a closed store directory and the states it went through.
type damageFixture struct {
	dir                       string
	final, beforeLast, atSnap map[string]string
}

// buildDamageFixture writes a store with small and large (overflow page)
// values, deletes and optionally a snapshot in the middle.
func buildDamageFixture(t *testing.T, withSnapshot bool) damageFixture {
	t.Helper()
	cfg := testConfig(t, testLogger(t), t.TempDir())
	fx := damageFixture{dir: cfg.Dir}
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	val := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return string(b)
	}
	for i := range 120 {
		n := 100
		if i%7 == 0 {
			n = 9000 // spans overflow pages
		}
		mustApply(t, s, Batch{Ops: []Op{put("cfg", fmt.Sprintf("k%03d", i), val(n)), put("idx", fmt.Sprint(i%10), val(30))}})
		if i%11 == 0 {
			mustApply(t, s, Batch{Ops: []Op{del("cfg", fmt.Sprintf("k%03d", i/2))}})
		}
		if withSnapshot && i == 60 {
			if err := s.Snapshot(); err != nil {
				t.Fatal(err)
			}
			fx.atSnap = dumpState(s)
		}
	}
	fx.beforeLast = dumpState(s)
	mustApply(t, s, Batch{Ops: []Op{put("cfg", "last", "the last write")}})
	fx.final = dumpState(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return fx
}

// TestDamagedRaftDBIsReported zeroes 4 KiB of raft.db at every page and at
// unaligned offsets. Open must either report a CorruptError naming raft.db
// with advice, or open with the state intact (a free page was hit; for a
// bolt meta page, the state before the last write is bolt's fallback).
// Before the check, Open panicked (invalid page type, msgpack decode error,
// index out of range) or applied damaged entries.
func TestDamagedRaftDBIsReported(t *testing.T) {
	for _, withSnap := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshot=%v", withSnap), func(t *testing.T) {
			fx := buildDamageFixture(t, withSnap)
			src, final, beforeLast := fx.dir, fx.final, fx.beforeLast
			fi, err := os.Stat(filepath.Join(src, "raft.db"))
			if err != nil {
				t.Fatal(err)
			}
			var offsets []int64
			for off := int64(0); off < fi.Size(); off += 4096 {
				offsets = append(offsets, off)
			}
			for off := int64(1000); off < fi.Size(); off += 37 * 4096 {
				offsets = append(offsets, off)
			}
			if !testtier.On(testtier.Integration) {
				offsets = offsets[:min(len(offsets), 24)]
			}
			var reported, intact, fellBack int
			for _, off := range offsets {
				dir := filepath.Join(t.TempDir(), "d")
				copyDir(t, src, dir)
				db := filepath.Join(dir, "raft.db")
				zeroAt(t, db, off, 4096)
				cfg := testConfig(t, testLogger(t), dir)
				s, err := Open(cfg)
				if err != nil {
					var ce *CorruptError
					if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
						t.Fatalf("offset %d: Open: %v, want a CorruptError", off, err)
					}
					if !strings.Contains(err.Error(), db) || !strings.Contains(err.Error(), "docs/operations.md") {
						t.Fatalf("offset %d: error does not name the file and what to do: %v", off, err)
					}
					if withSnap && !strings.Contains(err.Error(), "restores the latest snapshot") {
						t.Fatalf("offset %d: a snapshot exists but the advice does not offer it: %v", off, err)
					}
					reported++
					continue
				}
				got := dumpState(s)
				_ = s.Close()
				switch {
				case maps.Equal(got, final):
					intact++
				case off < 2*4096 && maps.Equal(got, beforeLast):
					fellBack++
				default:
					t.Fatalf("offset %d: opened with a changed state (%d records, want %d)", off, len(got), len(final))
				}
			}
			t.Logf("%d offsets: %d reported damaged, %d opened intact (free pages), %d fell back to the other meta page",
				len(offsets), reported, intact, fellBack)
			if reported == 0 {
				t.Fatal("no damage detected at any offset")
			}
		})
	}
}

// TestRecoverFromSnapshotAfterDamage follows the advice for a damaged
// raft.db: moving it aside restores the latest snapshot, and the store
// takes writes and reopens.
func TestRecoverFromSnapshotAfterDamage(t *testing.T) {
	fx := buildDamageFixture(t, true)
	src := fx.dir
	db := filepath.Join(src, "raft.db")
	zeroAt(t, db, 2*4096, 4096*8)
	cfg := testConfig(t, testLogger(t), src)
	if _, err := Open(cfg); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open damaged: %v", err)
	}
	if err := os.Rename(db, db+".damaged"); err != nil {
		t.Fatal(err)
	}
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open after moving raft.db aside: %v", err)
	}
	if got := dumpState(s); !maps.Equal(got, fx.atSnap) {
		t.Fatalf("restored %d records, want the snapshot's %d", len(got), len(fx.atSnap))
	}
	idx := mustApply(t, s, Batch{Ops: []Op{put("cfg", "after", "recovery")}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, cfg)
	if r, ok := s2.Get("cfg", "after"); !ok || r.Rev != idx {
		t.Fatalf("write after recovery lost on reopen: %+v %v", r, ok)
	}
	if _, err := s2.Apply(context.Background(), Batch{Ops: []Op{put("cfg", "again", "x")}}); err != nil {
		t.Fatal(err)
	}
}
