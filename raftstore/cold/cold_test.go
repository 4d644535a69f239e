package cold

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/nacosd/nacosd/internal/testlog"
)

// The engine's own tests: they write as raftstore's FSM does (Write with
// each entry's disk ops) and read as it does. What the FSM, its snapshots
// and the store make of the engine is tested in raftstore (cold_test.go).

// newStore is a store keeping bucket "h" in dir/fsm.db.
func newStore(t *testing.T, dir string) *Store {
	t.Helper()
	c, err := Open(dir, []string{"h"}, true, true, testlog.New(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func put(bucket, key, value string) Op { return Op{Bucket: bucket, Key: key, Value: []byte(value)} }

func del(bucket, key string) Op { return Op{Bucket: bucket, Key: key, Delete: true} }

// at is op at index.
func at(index uint64, op Op) Op {
	op.Index = index
	return op
}

// apply writes the disk ops of the entry at index, as the FSM does.
func apply(c *Store, index uint64, ops ...Op) {
	for i := range ops {
		ops[i].Index = index
	}
	c.Write(ops, index)
}

// stopColdWriter stops c's writer goroutine: what is queued stays queued
// until the test writes it.
func stopColdWriter(c *Store) {
	close(c.stopWriter)
	<-c.writerDone
	c.stopWriter = nil
}

// While fsm.db cannot be written (a full disk), the FSM goes on: reads see
// the pending writes, no snapshot is taken, and the next write that works
// writes them too.
func TestDiskBucketWritesPendWhileTheFileFails(t *testing.T) {
	t.Parallel()
	c := newStore(t, t.TempDir())
	apply(c, 1, put("h", "a", "1"), put("h", "b", "2"))
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	full := errors.New("no space left on device")
	var fail atomic.Bool
	fail.Store(true)
	c.mu.Lock() // the writer goroutine reads it under mu
	c.failWrite = func() error {
		if fail.Load() {
			return full
		}
		return nil
	}
	c.mu.Unlock()
	apply(c, 2, put("h", "c", "3"), del("h", "a")) // the FSM goes on: Write returns nothing
	apply(c, 3, put("h", "b", "2b"))
	check := func(when string) {
		t.Helper()
		if _, ok := c.Get("h", "a"); ok {
			t.Errorf("%s: deleted key still read", when)
		}
		if r, ok := c.Get("h", "c"); !ok || string(r.Value) != "3" || r.Rev != 2 {
			t.Errorf("%s: h/c = %+v %v", when, r, ok)
		}
		if r, ok := c.Get("h", "b"); !ok || string(r.Value) != "2b" || r.Rev != 3 {
			t.Errorf("%s: h/b = %+v %v", when, r, ok)
		}
		if n := c.Len("h"); n != 2 {
			t.Errorf("%s: len = %d, want 2", when, n)
		}
		var got []string
		c.Scan("h", "", true, 0, func(k string, r Record) bool { got = append(got, k+"="+string(r.Value)); return true })
		if strings.Join(got, ",") != "c=3,b=2b" {
			t.Errorf("%s: reverse scan = %v", when, got)
		}
		if n := c.Count("h", "b"); n != 1 {
			t.Errorf("%s: count(b) = %d", when, n)
		}
	}
	check("pending")
	if c.AppliedIndex() != 1 {
		t.Fatalf("file's applied index moved to %d with writes pending", c.AppliedIndex())
	}
	if err := c.Checkpoint(3); err == nil {
		t.Fatal("snapshot taken with writes pending")
	}
	fail.Store(false)
	// an entry without disk ops retries nothing; the snapshot's checkpoint does
	if err := c.Checkpoint(4); err != nil {
		t.Fatalf("snapshot once the file works: %v", err)
	}
	if c.hasPending.Load() {
		t.Fatal("still pending after the file recovered")
	}
	check("written")
	if r, ok := c.fileGet("h", "c"); !ok || string(r.Value) != "3" {
		t.Fatalf("pending write not in the file: %+v %v", r, ok)
	}
}

// The writer writes the queue in transactions of about coldTxBytes; when
// one ends inside an entry's ops, the file's applied index stays below that
// entry, so a restart replays the entry rather than skip its unwritten ops.
func TestDiskBucketChunkEndsBelowASplitEntry(t *testing.T) {
	t.Parallel()
	c := newStore(t, t.TempDir())
	apply(c, 1, put("h", "a", "1"))
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("x", coldTxBytes/2+1)
	stopColdWriter(c) // the test writes the queue itself
	c.Write([]Op{at(2, put("h", "b", big)), at(2, put("h", "c", big)), at(2, put("h", "d", big)), at(3, put("h", "e", "3"))}, 3)
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	if got := c.AppliedIndex(); got != 3 {
		t.Fatalf("applied after the whole queue = %d, want 3", got)
	}
	c.Write([]Op{at(4, put("h", "f", big)), at(4, put("h", "g", big)), at(4, put("h", "i", big))}, 4)
	more, err := c.writeHead()
	if err != nil || !more {
		t.Fatalf("first chunk: more %v err %v", more, err)
	}
	if got := c.AppliedIndex(); got != 3 {
		t.Fatalf("applied after a chunk inside entry 4 = %d, want 3", got)
	}
	if r, ok := c.Get("h", "i"); !ok || len(r.Value) != len(big) || r.Rev != 4 {
		t.Fatalf("queued op not read: rev %d ok %v", r.Rev, ok)
	}
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	if got := c.AppliedIndex(); got != 4 {
		t.Fatalf("applied after the rest = %d, want 4", got)
	}
}

// TestDiskBucketPagesStayFull appends to 100 key ranges at once, as config
// history grows, and checks bolt's leaf pages stay mostly full (its default
// split left every page behind half empty: the file twice the data).
func TestDiskBucketPagesStayFull(t *testing.T) {
	t.Parallel()
	c := newStore(t, t.TempDir())
	val := strings.Repeat("v", 300)
	for i := range 20000 {
		apply(c, uint64(i+1), put("h", fmt.Sprintf("g%03d\x00%020d", i%100, i), val))
	}
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	var st bbolt.BucketStats
	if err := c.db.View(func(tx *bbolt.Tx) error {
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
	c := newStore(t, t.TempDir())
	apply(c, 1, put("h", "a/1", "1"), put("h", "a/2", "2"), put("h", "b/1", "1"))
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	stopColdWriter(c) // keep what follows queued
	apply(c, 2, put("h", "b/2", "2"), del("h", "b/1"))
	apply(c, 3, put("h", "a/3", "3"))
	apply(c, 4, del("h", "a/3"))
	if !c.hasPending.Load() {
		t.Fatal("nothing queued")
	}
	scan := func(prefix string, reverse bool) string {
		var out []string
		c.Scan("h", prefix, reverse, 0, func(k string, r Record) bool {
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
	if n := c.Count("h", "b/"); n != 1 {
		t.Errorf("count b/ = %d, want 1", n)
	}
	if n := c.Count("h", "a/"); n != 2 {
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
	c := newStore(t, t.TempDir())
	for i := range 20 {
		apply(c, uint64(i+1), put("h", fmt.Sprintf("g%d\x00%03d", i%2, i), "v"))
	}
	if n := c.Count("h", "g0\x00"); n != 10 {
		t.Fatalf("count = %d, want 10", n)
	}
	if _, ok := c.cntCache["h\x00g0\x00"]; !ok {
		t.Fatal("count not kept")
	}
	if n := c.Count("h", "g0\x00"); n != 10 {
		t.Fatalf("kept count = %d, want 10", n)
	}
	apply(c, 21, put("h", "g0\x00100", "v"))
	if n := c.Count("h", "g0\x00"); n != 11 {
		t.Fatalf("count after a put = %d, want 11", n)
	}
	apply(c, 22, del("h", "g0\x00000"), del("h", "g1\x00001"))
	if n := c.Count("h", "g0\x00"); n != 10 {
		t.Fatalf("count after a delete = %d, want 10", n)
	}
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	if n, m := c.Count("h", "g0\x00"), c.Count("h", "g1\x00"); n != 10 || m != 9 {
		t.Fatalf("counts after the flush = %d, %d, want 10, 9", n, m)
	}
}

// Page N+1 starts where page N stopped (a kept position) until the next
// write, and reads the same records as a walk from the start.
func TestDiskBucketPageStartsWherePageBeforeStopped(t *testing.T) {
	t.Parallel()
	c := newStore(t, t.TempDir())
	for i := range 60 {
		apply(c, uint64(i+1), put("h", fmt.Sprintf("g%d\x00%03d", i%3, i), strconv.Itoa(i)))
	}
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	page := func(prefix string, reverse bool, n, size int) string {
		var out []string
		c.Scan("h", prefix, reverse, n*size, func(k string, r Record) bool {
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
	apply(c, 61, put("h", "g1\x00999", "new"), del("h", "g1\x00040"))
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
	c := newStore(t, t.TempDir())
	load := c.BeginLoad()
	if err := load.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := load.Put("h", "g\x00001", Record{Rev: 1, Value: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	if err := load.Commit(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int)
	go func() { done <- c.Count("h", "g\x00") }() // walks the part loaded, then waits for the load
	time.Sleep(50 * time.Millisecond)
	for i := 2; i <= 5; i++ {
		if err := load.Put("h", fmt.Sprintf("g\x00%03d", i), Record{Rev: uint64(i), Value: []byte("a")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := load.Finish(5); err != nil {
		t.Fatal(err)
	}
	load.End()
	<-done
	if n := c.Count("h", "g\x00"); n != 5 {
		t.Fatalf("count after the load = %d, want 5", n)
	}
}
