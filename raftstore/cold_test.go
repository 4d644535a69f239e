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
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"go.etcd.io/bbolt"
)

// coldConfig is testConfig with bucket "h" kept on disk.
func coldConfig(t testing.TB, dir string) Config {
	cfg := testConfig(t, testLogger(t), dir)
	cfg.DiskBuckets = []string{"h"}
	return cfg
}

// newColdFSM is a bare fsm whose bucket "h" lives in dir/fsm.db.
func newColdFSM(t *testing.T, dir string) *fsm {
	t.Helper()
	f := newFSM(testLogger(t))
	c, err := openCold(dir, []string{"h"}, true, true, f.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.close() })
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

// setColdMeta rewrites fsm.db's meta keys, as a power loss would leave an
// unsynced file for another boot.
func setColdMeta(t *testing.T, dir string, kv map[string]string) {
	t.Helper()
	db, err := bbolt.Open(filepath.Join(dir, coldFile), 0o600, nil)
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

// stopColdWriter stops c's writer goroutine: what is queued stays queued
// until the test writes it.
func stopColdWriter(c *coldStore) {
	close(c.stopWriter)
	<-c.writerDone
	c.stopWriter = nil
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
	db, _ := bbolt.Open(filepath.Join(dir, coldFile), 0o600, nil)
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
	if err := os.Remove(filepath.Join(dir, coldFile)); err != nil {
		t.Fatal(err)
	}
	_, err := Open(cfg)
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.HasSuffix(ce.Path, coldFile) {
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
	raw, err := os.ReadFile(filepath.Join(old, coldFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fresh, coldFile), raw, 0o600); err != nil {
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
	if dst.cold.appliedIndex() != 2 {
		t.Errorf("fsm.db applied = %d after restore, want 2", dst.cold.appliedIndex())
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

// While fsm.db cannot be written (a full disk), the FSM goes on: reads see
// the pending writes, no snapshot is taken, and the next write that works
// writes them too.
func TestDiskBucketWritesPendWhileTheFileFails(t *testing.T) {
	t.Parallel()
	f := newColdFSM(t, t.TempDir())
	f.Apply(cmdLog(1, Batch{Ops: []Op{put("h", "a", "1"), put("h", "b", "2")}}))
	if err := f.cold.flushPending(); err != nil {
		t.Fatal(err)
	}
	full := errors.New("no space left on device")
	var fail atomic.Bool
	fail.Store(true)
	f.cold.mu.Lock() // the writer goroutine reads it under mu
	f.cold.failWrite = func() error {
		if fail.Load() {
			return full
		}
		return nil
	}
	f.cold.mu.Unlock()
	if r := f.Apply(cmdLog(2, Batch{Ops: []Op{put("h", "c", "3"), del("h", "a"), put("mem", "m", "x")}})); r != nil {
		t.Fatalf("Apply with the file failing = %v", r)
	}
	f.Apply(cmdLog(3, Batch{Ops: []Op{put("h", "b", "2b")}}))
	check := func(when string) {
		t.Helper()
		if _, ok := f.get("h", "a"); ok {
			t.Errorf("%s: deleted key still read", when)
		}
		if r, ok := f.get("h", "c"); !ok || string(r.Value) != "3" || r.Rev != 2 {
			t.Errorf("%s: h/c = %+v %v", when, r, ok)
		}
		if r, ok := f.get("h", "b"); !ok || string(r.Value) != "2b" || r.Rev != 3 {
			t.Errorf("%s: h/b = %+v %v", when, r, ok)
		}
		if n := f.len("h"); n != 2 {
			t.Errorf("%s: len = %d, want 2", when, n)
		}
		var got []string
		f.scan("h", "", true, func(k string, r Record) bool { got = append(got, k+"="+string(r.Value)); return true })
		if strings.Join(got, ",") != "c=3,b=2b" {
			t.Errorf("%s: reverse scan = %v", when, got)
		}
		if n := f.cold.count("h", "b"); n != 1 {
			t.Errorf("%s: count(b) = %d", when, n)
		}
	}
	check("pending")
	if f.cold.appliedIndex() != 1 {
		t.Fatalf("file's applied index moved to %d with writes pending", f.cold.appliedIndex())
	}
	if _, err := f.Snapshot(); err == nil {
		t.Fatal("snapshot taken with writes pending")
	}
	fail.Store(false)
	f.Apply(cmdLog(4, Batch{Ops: []Op{put("mem", "m", "y")}})) // no cold ops: nothing retried yet
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatalf("snapshot once the file works: %v", err)
	}
	snap.Release()
	if f.cold.hasPending.Load() {
		t.Fatal("still pending after the file recovered")
	}
	check("written")
	if r, ok := f.cold.fileGet("h", "c"); !ok || string(r.Value) != "3" {
		t.Fatalf("pending write not in the file: %+v %v", r, ok)
	}
}

// The writer writes the queue in transactions of about coldTxBytes; when
// one ends inside an entry's ops, the file's applied index stays below that
// entry, so a restart replays the entry rather than skip its unwritten ops.
func TestDiskBucketChunkEndsBelowASplitEntry(t *testing.T) {
	t.Parallel()
	f := newColdFSM(t, t.TempDir())
	f.Apply(cmdLog(1, Batch{Ops: []Op{put("h", "a", "1")}}))
	if err := f.cold.flushPending(); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", coldTxBytes/2+1)
	c := f.cold
	stopColdWriter(c) // the test writes the queue itself
	c.write([]coldOp{{2, put("h", "b", big)}, {2, put("h", "c", big)}, {2, put("h", "d", big)}, {3, put("h", "e", "3")}}, 3)
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	if got := c.appliedIndex(); got != 3 {
		t.Fatalf("applied after the whole queue = %d, want 3", got)
	}
	c.write([]coldOp{{4, put("h", "f", big)}, {4, put("h", "g", big)}, {4, put("h", "i", big)}}, 4)
	more, err := c.writeHead()
	if err != nil || !more {
		t.Fatalf("first chunk: more %v err %v", more, err)
	}
	if got := c.appliedIndex(); got != 3 {
		t.Fatalf("applied after a chunk inside entry 4 = %d, want 3", got)
	}
	if r, ok := f.get("h", "i"); !ok || len(r.Value) != len(big) || r.Rev != 4 {
		t.Fatalf("queued op not read: rev %d ok %v", r.Rev, ok)
	}
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	if got := c.appliedIndex(); got != 4 {
		t.Fatalf("applied after the rest = %d, want 4", got)
	}
}

// TestDiskBucketPagesStayFull appends to 100 key ranges at once, as config
// history grows, and checks bolt's leaf pages stay mostly full (its default
// split left every page behind half empty: the file twice the data).
func TestDiskBucketPagesStayFull(t *testing.T) {
	t.Parallel()
	f := newColdFSM(t, t.TempDir())
	val := strings.Repeat("v", 300)
	for i := range 20000 {
		f.Apply(cmdLog(uint64(i+1), Batch{Ops: []Op{put("h", fmt.Sprintf("g%03d\x00%020d", i%100, i), val)}}))
	}
	if err := f.cold.flushPending(); err != nil {
		t.Fatal(err)
	}
	var st bbolt.BucketStats
	if err := f.cold.db.View(func(tx *bbolt.Tx) error {
		st = tx.Bucket([]byte("h")).Stats()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fill := float64(st.LeafInuse) / float64(st.LeafAlloc)
	t.Logf("%d leaf pages, %d bytes in use of %d (%.0f %%)", st.LeafPageN, st.LeafInuse, st.LeafAlloc, 100*fill)
	if fill < 0.7 { // 43 % with bolt's default
		t.Fatalf("leaf pages %.0f %% full, want >= 70 %%", 100*fill)
	}
}

// A scan sees the queued ops of its own range merged into the file's, and
// reads only the file when what is queued lies in other ranges.
func TestDiskBucketScanSeesQueuedOps(t *testing.T) {
	t.Parallel()
	f := newColdFSM(t, t.TempDir())
	f.Apply(cmdLog(1, Batch{Ops: []Op{put("h", "a/1", "1"), put("h", "a/2", "2"), put("h", "b/1", "1")}}))
	if err := f.cold.flushPending(); err != nil {
		t.Fatal(err)
	}
	c := f.cold
	stopColdWriter(c) // keep what follows queued
	f.Apply(cmdLog(2, Batch{Ops: []Op{put("h", "b/2", "2"), del("h", "b/1")}}))
	f.Apply(cmdLog(3, Batch{Ops: []Op{put("h", "a/3", "3")}}))
	f.Apply(cmdLog(4, Batch{Ops: []Op{del("h", "a/3")}}))
	if !c.hasPending.Load() {
		t.Fatal("nothing queued")
	}
	scan := func(prefix string, reverse bool) string {
		var out []string
		f.scan("h", prefix, reverse, func(k string, r Record) bool {
			out = append(out, k+"="+string(r.Value))
			return true
		})
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		prefix  string
		reverse bool
		want    string
	}{
		{"a/", false, "a/1=1,a/2=2"},
		{"a/", true, "a/2=2,a/1=1"},
		{"b/", false, "b/2=2"},
		{"", false, "a/1=1,a/2=2,b/2=2"},
		{"c/", false, ""},
	} {
		if got := scan(tc.prefix, tc.reverse); got != tc.want {
			t.Errorf("scan %q reverse=%v = %s, want %s", tc.prefix, tc.reverse, got, tc.want)
		}
	}
	if n := c.count("h", "b/"); n != 1 {
		t.Errorf("count b/ = %d, want 1", n)
	}
	if n := c.count("h", "a/"); n != 2 {
		t.Errorf("count a/ = %d, want 2", n)
	}
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	if got := scan("", false); got != "a/1=1,a/2=2,b/2=2" {
		t.Errorf("after the flush: %s", got)
	}
}

// A count is kept until the next write: paging through a long history
// counted it again for every page.
func TestDiskBucketCountIsKeptUntilAWrite(t *testing.T) {
	t.Parallel()
	f := newColdFSM(t, t.TempDir())
	for i := range 20 {
		f.Apply(cmdLog(uint64(i+1), Batch{Ops: []Op{put("h", fmt.Sprintf("g%d\x00%03d", i%2, i), "v")}}))
	}
	c := f.cold
	if n := c.count("h", "g0\x00"); n != 10 {
		t.Fatalf("count = %d, want 10", n)
	}
	if _, ok := c.cntCache["h\x00g0\x00"]; !ok {
		t.Fatal("count not kept")
	}
	if n := c.count("h", "g0\x00"); n != 10 {
		t.Fatalf("kept count = %d, want 10", n)
	}
	f.Apply(cmdLog(21, Batch{Ops: []Op{put("h", "g0\x00100", "v")}}))
	if n := c.count("h", "g0\x00"); n != 11 {
		t.Fatalf("count after a put = %d, want 11", n)
	}
	f.Apply(cmdLog(22, Batch{Ops: []Op{del("h", "g0\x00000"), del("h", "g1\x00001")}}))
	if n := c.count("h", "g0\x00"); n != 10 {
		t.Fatalf("count after a delete = %d, want 10", n)
	}
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	if n, m := c.count("h", "g0\x00"), c.count("h", "g1\x00"); n != 10 || m != 9 {
		t.Fatalf("counts after the flush = %d, %d, want 10, 9", n, m)
	}
}

// Page N+1 starts where page N stopped (a kept position) until the next
// write, and reads the same records as a walk from the start.
func TestDiskBucketPageStartsWherePageBeforeStopped(t *testing.T) {
	t.Parallel()
	f := newColdFSM(t, t.TempDir())
	for i := range 60 {
		f.Apply(cmdLog(uint64(i+1), Batch{Ops: []Op{put("h", fmt.Sprintf("g%d\x00%03d", i%3, i), strconv.Itoa(i))}}))
	}
	if err := f.cold.flushPending(); err != nil {
		t.Fatal(err)
	}
	c := f.cold
	page := func(prefix string, reverse bool, n, size int) string {
		var out []string
		c.scan("h", prefix, reverse, n*size, func(k string, r Record) bool {
			out = append(out, string(r.Value))
			return len(out) < size
		})
		return strings.Join(out, ",")
	}
	forget := func() { c.countsChanged() }
	for _, reverse := range []bool{false, true} {
		var kept, walked []string
		for n := range 5 {
			kept = append(kept, page("g1\x00", reverse, n, 6))
		}
		if len(c.posCache) == 0 {
			t.Fatal("no position kept")
		}
		for n := range 5 {
			forget()
			walked = append(walked, page("g1\x00", reverse, n, 6))
		}
		if fmt.Sprint(kept) != fmt.Sprint(walked) {
			t.Fatalf("reverse=%v: pages from kept positions %v, walked %v", reverse, kept, walked)
		}
	}
	if got := page("g1\x00", true, 1, 6); got != "40,37,34,31,28,25" {
		t.Fatalf("page 2 newest first = %s", got)
	}
	page("g1\x00", true, 0, 6) // keeps the position of page 2
	f.Apply(cmdLog(61, Batch{Ops: []Op{put("h", "g1\x00999", "new"), del("h", "g1\x00040")}}))
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	if got := page("g1\x00", true, 1, 6); got != "43,37,34,31,28,25" {
		t.Fatalf("page 2 after a write = %s", got)
	}
}

// A count taken while a snapshot's cold section loads (a member restoring
// one from the leader) sees a part of it and must not be kept: the
// member's history pages stayed empty until its next write.
func TestDiskBucketCountDuringALoadIsNotKept(t *testing.T) {
	t.Parallel()
	f := newColdFSM(t, t.TempDir())
	c := f.cold
	load := c.beginLoad()
	if err := load.reset(); err != nil {
		t.Fatal(err)
	}
	if err := load.put("h", "g\x00001", Record{Rev: 1, Value: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	if err := load.commit(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() { done <- c.count("h", "g\x00") }() // walks the part loaded, then waits for the load
	time.Sleep(50 * time.Millisecond)
	for i := 2; i <= 5; i++ {
		if err := load.put("h", fmt.Sprintf("g\x00%03d", i), Record{Rev: uint64(i), Value: []byte("a")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := load.finish(5); err != nil {
		t.Fatal(err)
	}
	load.end()
	<-done
	if n := c.count("h", "g\x00"); n != 5 {
		t.Fatalf("count after the load = %d, want 5", n)
	}
}
