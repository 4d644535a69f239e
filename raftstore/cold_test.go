package raftstore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
	"go.etcd.io/bbolt"

	"github.com/nacosd/nacosd/raftstore/cold"
)

// coldConfig is testConfig with bucket "h" kept on disk.
func coldConfig(t testing.TB, dir string) Config {
	cfg := testConfig(t, testLogger(t), dir)
	cfg.DiskBuckets = []string{"h"}
	return cfg
}

// newColdFSM is a bare fsm whose bucket "h" lives in dir/fsm.db (package
// cold; its own tests are there).
func newColdFSM(t *testing.T, dir string) *fsm {
	t.Helper()
	f := newFSM(testLogger(t))
	c, err := cold.Open(dir, []string{"h"}, true, true, f.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	f.cold = c
	return f
}

func keys(s *Store, bucket, prefix string, reverse bool) []string {
	var out []string
	fn := func(k string, _ Record) bool { out = append(out, k); return true }
	if reverse {
		s.ScanReverse(bucket, prefix, 0, fn)
	} else {
		s.Scan(bucket, prefix, fn)
	}
	return out
}

func TestDiskBucketReadsAndWrites(t *testing.T) {
	t.Parallel()
	s := mustOpen(t, coldConfig(t, t.TempDir()))
	// 600 keys under "a/" (more than one scan chunk), 3 under "b/", one "a"
	var ops []Op
	for i := range 600 {
		ops = append(ops, put("h", fmt.Sprintf("a/%04d", i), fmt.Sprint(i)))
	}
	ops = append(ops, put("h", "a", "bare"), put("h", "b/1", "x"), put("h", "b/2", "y"), put("h", "b/3", "z"), put("mem", "k", "v"))
	idx := mustApply(t, s, Batch{Ops: ops})
	if r, ok := s.Get("h", "a/0042"); !ok || string(r.Value) != "42" || r.Rev != idx {
		t.Fatalf("Get = %+v %v, want 42@%d", r, ok, idx)
	}
	if _, ok := s.Get("h", "nope"); ok {
		t.Fatal("Get of a missing key found it")
	}
	if n := s.Len("h"); n != 604 {
		t.Fatalf("Len = %d, want 604", n)
	}
	if n := s.Count("h", "a/"); n != 600 {
		t.Fatalf("Count(a/) = %d, want 600", n)
	}
	if n := s.Count("mem", ""); n != 1 {
		t.Fatalf("Count(mem) = %d", n)
	}
	got := keys(s, "h", "a/", false)
	if len(got) != 600 || got[0] != "a/0000" || got[599] != "a/0599" {
		t.Fatalf("Scan(a/) = %d keys %v..%v", len(got), got[0], got[len(got)-1])
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("Scan out of order at %d: %s %s", i, got[i-1], got[i])
		}
	}
	rev := keys(s, "h", "a/", true)
	if len(rev) != 600 || rev[0] != "a/0599" || rev[599] != "a/0000" {
		t.Fatalf("ScanReverse(a/) = %d keys %v..%v", len(rev), rev[0], rev[len(rev)-1])
	}
	var paged []string
	s.ScanReverse("h", "a/", 590, func(k string, _ Record) bool { paged = append(paged, k); return true })
	if len(paged) != 10 || paged[0] != "a/0009" || paged[9] != "a/0000" {
		t.Fatalf("ScanReverse(a/, skip 590) = %v", paged)
	}
	paged = nil
	s.ScanReverse("h", "a/", 600, func(k string, _ Record) bool { paged = append(paged, k); return true })
	s.ScanReverse("mem", "", 1, func(k string, _ Record) bool { paged = append(paged, k); return true })
	if len(paged) != 0 {
		t.Fatalf("skipping everything returned %v", paged)
	}
	if got := keys(s, "h", "b/", true); strings.Join(got, ",") != "b/3,b/2,b/1" {
		t.Fatalf("ScanReverse(b/) = %v", got)
	}
	if got := keys(s, "h", "", false); len(got) != 604 || got[0] != "a" {
		t.Fatalf("Scan(all) = %d keys from %v", len(got), got[0])
	}
	if got := keys(s, "h", "", true); len(got) != 604 || got[0] != "b/3" {
		t.Fatalf("ScanReverse(all) = %d keys from %v", len(got), got[0])
	}
	// early stop, and a write from inside the callback (no transaction held)
	n := 0
	s.Scan("h", "a/", func(k string, _ Record) bool {
		if n == 300 {
			mustApply(t, s, Batch{Ops: []Op{put("h", "c", "from scan")}})
		}
		n++
		return n < 400
	})
	if n != 400 {
		t.Fatalf("scan stopped after %d, want 400", n)
	}
	mustApply(t, s, Batch{Ops: []Op{del("h", "a"), del("h", "never")}})
	if n := s.Len("h"); n != 604 { // +c -a
		t.Fatalf("Len after delete = %d, want 604", n)
	}
	// conditions on a disk bucket are refused before anything is written
	_, err := s.Apply(context.Background(), Batch{Conds: []Cond{{Kind: CondAbsent, Bucket: "h", Key: "x"}},
		Ops: []Op{put("mem", "k2", "v")}})
	if !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("cond on a disk bucket: err = %v, want ErrInvalidBatch", err)
	}
	if _, ok := s.Get("mem", "k2"); ok {
		t.Fatal("refused batch was written")
	}
}

func TestDiskBucketSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := coldConfig(t, dir)
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		mustApply(t, s, Batch{Ops: []Op{put("h", fmt.Sprintf("k%02d", i), "v"), put("mem", "last", fmt.Sprint(i))}})
	}
	if err := s.Snapshot(); err != nil {
		t.Fatal(err)
	}
	for i := 50; i < 80; i++ {
		mustApply(t, s, Batch{Ops: []Op{put("h", fmt.Sprintf("k%02d", i), "v"), del("h", fmt.Sprintf("k%02d", i-50))}})
	}
	want := dump(s, "h", "mem")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, cfg)
	if got := dump(s, "h", "mem"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after restart:\n got %v\nwant %v", got, want)
	}
	if n := s.Len("h"); n != 50 {
		t.Fatalf("Len = %d, want 50", n)
	}
}

// fsm.db's meta bucket and three of its keys (package cold's file format).
const (
	coldMetaName = "\x00meta"
	coldClean    = "clean"
	coldBoot     = "boot"
	coldSynced   = "synced"
)

// setColdMeta rewrites fsm.db's meta keys, as a power loss would leave an
// unsynced file for another boot.
func setColdMeta(t *testing.T, dir string, kv map[string]string) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, cold.File), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bbolt.Tx) error {
		for k, v := range kv {
			if err := tx.Bucket([]byte(coldMetaName)).Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// fillAndClose puts h/k00..k39 into a store on cfg (a snapshot after
// k<snapshotAt>; none when negative), closes it and returns its "h".
func fillAndClose(t *testing.T, cfg Config, snapshotAt int) map[string]map[string]string {
	t.Helper()
	s := mustOpen(t, cfg)
	for i := range 40 {
		mustApply(t, s, Batch{Ops: []Op{put("h", fmt.Sprintf("k%02d", i), fmt.Sprint(i))}})
		if i == snapshotAt {
			if err := s.Snapshot(); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := dump(s, "h")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// An fsm.db of an earlier version, whose commits were not synced (no
// "synced" mark), is trusted only after a clean stop or on the boot that
// wrote it; otherwise it is rebuilt from the log (and from its snapshots,
// which carried the cold buckets then).
func TestUntrustedDiskBucketIsRebuilt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := coldConfig(t, dir)
	want := fillAndClose(t, cfg, -1)
	// not closed cleanly, on another boot; and some records lost
	setColdMeta(t, dir, map[string]string{coldClean: "0", coldBoot: "another boot", coldSynced: "0"})
	db, _ := bbolt.Open(filepath.Join(dir, cold.File), 0o600, nil)
	_ = db.Update(func(tx *bbolt.Tx) error { return tx.Bucket([]byte("h")).Delete([]byte("k05")) })
	_ = db.Close()
	s := mustOpen(t, cfg)
	if got := dump(s, "h"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after rebuild:\n got %v\nwant %v", got, want)
	}
	if n := s.Len("h"); n != 40 {
		t.Fatalf("Len = %d, want 40", n)
	}
}

// fsm.db's commits are synced, so it is trusted on any boot; and a node
// whose own snapshot left the cold buckets to it refuses to start without
// it instead of starting with the history gone.
func TestSyncedDiskBucketIsKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := coldConfig(t, dir)
	want := fillAndClose(t, cfg, 20)
	setColdMeta(t, dir, map[string]string{coldClean: "0", coldBoot: "another boot"})
	s := mustOpen(t, cfg)
	if got := dump(s, "h"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a restart on another boot:\n got %v\nwant %v", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, cold.File)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(cfg)
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.HasSuffix(ce.Path, cold.File) {
		t.Fatalf("Open without fsm.db = %v, want a CorruptError naming it", err)
	}
	t.Log(err)
}

func TestStaleDiskBucketFileIsDropped(t *testing.T) {
	t.Parallel()
	old := t.TempDir()
	s := mustOpen(t, coldConfig(t, old))
	mustApply(t, s, Batch{Ops: []Op{put("h", "old", "x")}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	raw, err := os.ReadFile(filepath.Join(old, cold.File))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fresh, cold.File), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, coldConfig(t, fresh))
	if _, ok := s.Get("h", "old"); ok {
		t.Fatal("a fresh raft directory kept another store's fsm.db")
	}
}

func TestColdSnapshotRestore(t *testing.T) {
	t.Parallel()
	src := newColdFSM(t, t.TempDir())
	src.Apply(cmdLog(1, Batch{Ops: []Op{put("h", "k1", "v1"), put("mem", "m", "x")}}))
	src.Apply(cmdLog(2, Batch{Ops: []Op{put("h", "k2", "")}}))
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	own := sink.Bytes()
	if own[0] != snapshotVersion {
		t.Fatalf("snapshot version %d, want %d", own[0], snapshotVersion)
	}
	dst := newColdFSM(t, t.TempDir())
	dst.Apply(cmdLog(1, Batch{Ops: []Op{put("h", "junk", "j")}}))
	// the node's own snapshot leaves "h" to its fsm.db: another file that
	// does not reach the snapshot's index cannot take it
	if err := dst.Restore(io.NopCloser(bytes.NewReader(own))); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("own snapshot restored onto an fsm.db behind it: %v", err)
	}
	// the source itself can (a restart)
	if err := src.Restore(io.NopCloser(bytes.NewReader(own))); err != nil {
		t.Fatal(err)
	}
	if r, ok := src.get("h", "k1"); !ok || string(r.Value) != "v1" {
		t.Fatalf("h/k1 after restoring the own snapshot: %+v %v", r, ok)
	}
	sent := shipped(t, src, own)
	if err := dst.Restore(io.NopCloser(bytes.NewReader(sent))); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"k1": "v1@1", "k2": "@2"} {
		r, ok := dst.get("h", k)
		if got := fmt.Sprintf("%s@%d", r.Value, r.Rev); !ok || got != want {
			t.Errorf("h/%s = %s %v, want %s", k, got, ok, want)
		}
	}
	if _, ok := dst.get("h", "junk"); ok {
		t.Error("h/junk present after restore")
	}
	if r, ok := dst.get("mem", "m"); !ok || string(r.Value) != "x" {
		t.Errorf("mem/m = %+v %v", r, ok)
	}
	if n := dst.len("h"); n != 2 {
		t.Errorf("len = %d, want 2", n)
	}
	if dst.cold.AppliedIndex() != 2 {
		t.Errorf("fsm.db applied = %d after restore, want 2", dst.cold.AppliedIndex())
	}
	// a store without disk buckets cannot take this snapshot
	if err := newTestFSM(t).Restore(io.NopCloser(bytes.NewReader(sent))); err == nil {
		t.Error("a store without disk buckets restored a snapshot with cold records")
	}
	// truncated in the cold section
	b := sent
	if err := newColdFSM(t, t.TempDir()).Restore(io.NopCloser(bytes.NewReader(b[:len(b)-3]))); err == nil {
		t.Error("truncated snapshot restored")
	}
}

// shipped is a node's own snapshot as it sends it to a member: version 2,
// with src's fsm.db read in.
func shipped(t *testing.T, src *fsm, own []byte) []byte {
	t.Helper()
	ss := &shipStore{dir: t.TempDir(), cold: src.cold, log: testLogger(t)}
	f, size, err := ss.materialise(bufio.NewReader(bytes.NewReader(own)))
	if err != nil {
		t.Fatal(err)
	}
	c := &shipCopy{File: f}
	b, err := io.ReadAll(c)
	if err != nil || int64(len(b)) != size || b[0] != snapshotV2 {
		t.Fatalf("shipped copy: %d bytes (size %d), %v", len(b), size, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(ss.dir); len(ents) != 0 {
		t.Fatalf("shipped copy left behind: %v", ents)
	}
	return b
}

// Entries applied after a snapshot, before it is sent, reach its cold
// section (fsm.db is read when the snapshot is sent, without one long
// transaction); replaying them after the restore, as raft does, ends in
// the source's exact state.
func TestFuzzyColdSnapshotReplays(t *testing.T) {
	t.Parallel()
	src := newColdFSM(t, t.TempDir())
	log := []*raft.Log{
		cmdLog(1, Batch{Ops: []Op{put("h", "k1", "v1"), put("h", "k2", "v2"), put("mem", "m", "1")}}),
		cmdLog(2, Batch{Ops: []Op{put("h", "k3", "v3")}}),
		// after the snapshot's index, applied while it persists:
		cmdLog(3, Batch{Ops: []Op{del("h", "k1"), put("h", "k2", "v2b"), put("h", "k4", "tmp"), put("mem", "m", "3")}}),
		cmdLog(4, Batch{Ops: []Op{del("h", "k4"), put("h", "k1", "back")}}),
	}
	for _, l := range log[:2] {
		src.Apply(l)
	}
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range log[2:] {
		src.Apply(l)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	dst := newColdFSM(t, t.TempDir())
	if err := dst.Restore(io.NopCloser(bytes.NewReader(shipped(t, src, sink.Bytes())))); err != nil {
		t.Fatal(err)
	}
	for _, l := range log[2:] { // raft's replay after the snapshot's index
		dst.Apply(l)
	}
	dumpCold := func(f *fsm) string {
		var out []string
		f.scan("h", "", false, func(k string, r Record) bool {
			out = append(out, fmt.Sprintf("%s=%s@%d", k, r.Value, r.Rev))
			return true
		})
		m, _ := f.get("mem", "m")
		return strings.Join(out, ",") + " mem=" + string(m.Value)
	}
	if got, want := dumpCold(dst), dumpCold(src); got != want {
		t.Fatalf("after restore and replay:\n got %s\nwant %s", got, want)
	}
}

// A version 1 snapshot (everything in memory) restored by a store that
// keeps "h" on disk moves "h" into fsm.db.
func TestV1SnapshotMovesDiskBuckets(t *testing.T) {
	t.Parallel()
	var v1 []byte
	v1 = append(v1, snapshotV1)
	v1 = binary.AppendUvarint(v1, 7)
	v1 = binary.AppendUvarint(v1, 2)
	v1 = appendString(v1, "h")
	v1 = binary.AppendUvarint(v1, 1)
	v1 = appendString(v1, "k")
	v1 = binary.AppendUvarint(v1, 5)
	v1 = appendBytes(v1, []byte("hist"))
	v1 = appendString(v1, "mem")
	v1 = binary.AppendUvarint(v1, 1)
	v1 = appendString(v1, "m")
	v1 = binary.AppendUvarint(v1, 6)
	v1 = appendBytes(v1, []byte("x"))
	f := newColdFSM(t, t.TempDir())
	if err := f.Restore(io.NopCloser(bytes.NewReader(v1))); err != nil {
		t.Fatal(err)
	}
	if r, ok := f.get("h", "k"); !ok || string(r.Value) != "hist" || r.Rev != 5 {
		t.Fatalf("h/k = %+v %v", r, ok)
	}
	f.mu.RLock()
	_, inMem := f.data["h"]
	f.mu.RUnlock()
	if inMem {
		t.Fatal("disk bucket left in memory")
	}
	if err := newTestFSM(t).Restore(io.NopCloser(bytes.NewReader(v1))); err != nil {
		t.Fatalf("v1 snapshot without disk buckets: %v", err)
	}
}
