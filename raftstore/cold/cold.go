// Package cold is raftstore's disk-bucket engine: it keeps the buckets
// named in raftstore's Config.DiskBuckets (config history: large,
// append-mostly, rarely read) in <Dir>/fsm.db instead of the FSM's maps,
// so memory does not grow with them. raftstore's FSM drives it through
// the interface in raftstore/fsm.go (diskBuckets).
//
// fsm.db holds the cold buckets durably from a snapshot on: the node's
// own snapshots (format 3, raftstore/snapshot.go) leave them out, and raft
// drops the log below a snapshot. Every bolt commit is synced; the writer
// goroutine (Write) gathers the FSM's cold ops for coldWriteDelay into one
// transaction, so the syncs cost little, and a snapshot's checkpoint
// writes what is queued. The file records the last applied index whose
// ops it holds ("applied"); on restart the log's entries up to that index
// skip their cold ops, later ones put and delete them again.
//
// Cold buckets take no conditions (raftstore's Store.Apply refuses them):
// replaying an entry whose cold ops are already applied then gives the
// same state, and the FSM's decisions depend only on the in-memory state.
package cold

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/bbolt"

	"github.com/nacosd/nacosd/raftstore/internal/boltio"
)

// File is the engine's file in the raft directory.
const File = "fsm.db"

const (
	coldMetaName  = "\x00meta" // bucket of fsm.db's own keys; bucket names never start with NUL
	coldApplied   = "applied"
	coldClean     = "clean"
	coldBoot      = "boot"
	coldSynced    = "synced" // "1": every commit since was synced
	coldCountPref = "n\x00"  // + bucket name: number of keys
	// coldMmap is fsm.db's initial mapping: address space only. While the
	// file is smaller bolt never remaps, so the FSM's write transactions
	// never wait for readers (a remap takes bolt's mmap lock against every
	// open read transaction: history pages, a snapshot's reads).
	coldMmap = 8 << 30
	// coldDropAfter is how many bytes of pages written or read make
	// dropPages due.
	coldDropAfter = 2 << 20
	// coldChunk is how many records a scan copies per read transaction.
	coldChunk = 256
	// coldQueueMax is how many queued ops make the FSM write them itself
	// instead of leaving them to the writer; coldQueueMin is the queue's
	// initial capacity.
	coldQueueMax = 8192
	coldQueueMin = 256
	// coldWriteDelay is how long the writer gathers ops before a
	// transaction: every commit is synced, and a transaction rewrites a
	// leaf per config it touches, so under load fewer, larger ones cost
	// less (against 20 ms: publish 6 442 and 5 186/s against 5 264 and
	// 5 539/s in the 40 s and 60 s runs of one A/B, within noise).
	coldWriteDelay = 100 * time.Millisecond
	// coldTxBytes bounds the keys and values one writer transaction takes.
	coldTxBytes = 1 << 20
	// coldFill is how full bolt fills the pages it splits. Disk buckets
	// grow at the end of many key ranges at once (each config's history
	// rows, ids rising), and a split page then keeps its left part for
	// good: with bolt's default of a half, leaves were 43 % full and
	// fsm.db 1.25 KB per ~500-byte history row; with 0.9, 77 %
	// (TestDiskBucketPagesStayFull).
	coldFill = 0.9
)

// Store is an open fsm.db. Safe for concurrent use: the FSM writes, and
// reads run beside it.
type Store struct {
	db    *bbolt.DB
	path  string
	names map[string]bool
	log   *slog.Logger
	// failWrite, when set (tests), fails write transactions as a full disk
	// would.
	failWrite func() error

	// pending are cold ops the FSM applied that are not in the file yet,
	// oldest first: queued for the writer goroutine, or not writable (a
	// full disk); reads see them (read.go), and no snapshot is taken
	// until they are written.
	pendMu     sync.RWMutex
	pending    []Op
	pendIndex  uint64 // newest index queued
	hasPending atomic.Bool
	failedAt   time.Time // last logged write failure (flushMu)

	// The writer goroutine (write): wake has a buffer of one; nil wake
	// means no writer, the FSM writes itself.
	flushMu    sync.Mutex // one flush at a time, so the queue's written head is what is dropped
	wake       chan struct{}
	stopWriter chan struct{}
	writerDone chan struct{}

	// counts by prefix (count), valid while no op was queued since: a
	// history page counts its config's rows, and paging through a long
	// history counted them again for every page
	cntMu    sync.Mutex
	cntGen   uint64
	cntCache map[string]int    // bucket + "\x00" + prefix
	posCache map[string]string // where a scan stopped (positionKey) → the key there

	mu        sync.Mutex // write transactions and page drops
	applied   uint64     // newest index whose cold ops are in the file
	counts    map[string]int
	touched   uint64 // bytes written or read since the last page drop
	pageAlloc uint64 // bolt's count of page bytes allocated, when last read
}

// Open opens (or creates) dir/fsm.db with the given buckets. fresh
// means the raft directory has no state: an old fsm.db is then removed.
// rebuildable means the newest snapshot carries the cold buckets (format 1
// or 2, or no snapshot): an unreadable file is then removed and rebuilt
// from it and the log instead of refusing to start.
func Open(dir string, names []string, fresh, rebuildable bool, log *slog.Logger) (*Store, error) {
	path := dir + string(os.PathSeparator) + File
	if fresh {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("raftstore: remove stale %s: %w", path, err)
		}
	}
	db, err := openColdDB(path)
	if err != nil && !errors.Is(err, syscall.ENOMEM) && rebuildable {
		log.Warn("raftstore: fsm.db unreadable, rebuilding it from the snapshot and the log", "path", path, "err", err)
		if rerr := os.Remove(path); rerr != nil {
			return nil, fmt.Errorf("raftstore: open %s: %w (and cannot remove it: %v)", path, err, rerr)
		}
		db, err = openColdDB(path)
	}
	if err != nil {
		return nil, fmt.Errorf("raftstore: open %s: %w", path, err)
	}
	c := &Store{db: db, path: path, names: map[string]bool{}, log: log, counts: map[string]int{}}
	for _, n := range names {
		c.names[n] = true
	}
	if err := c.init(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("raftstore: open %s: %w", path, err)
	}
	c.wake, c.stopWriter, c.writerDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go c.runWriter(c.stopWriter, c.writerDone)
	return c, nil
}

// openColdDB opens path with bolt, mapping coldMmap bytes up front, or
// less when the address space is limited (ulimit -v).
func openColdDB(path string) (*bbolt.DB, error) {
	var err error
	for _, size := range []int{coldMmap, 1 << 30, 0} {
		var db *bbolt.DB
		err = boltio.Guarded(func() (err error) {
			// every commit synced: the file is durable (raftstore/snapshot.go, version 3)
			db, err = bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, NoGrowSync: true,
				InitialMmapSize: size})
			return err
		})
		if err == nil {
			// with a large mapping bolt grows the file AllocSize at a time
			// (16 MiB by default): keep a small store small
			db.AllocSize = 1 << 20
		}
		if err == nil || !errors.Is(err, syscall.ENOMEM) {
			return db, err
		}
	}
	return nil, err
}

// init decides whether the file is trusted, empties it when not, and marks
// it in use (not clean). Since every commit is synced (coldSynced set) the
// file is always trusted: it holds exactly the entries up to its applied
// index, or later ones too, which a replay puts again. A file written by
// an earlier version without syncs is trusted after a clean stop or on the
// boot that wrote it (a killed process loses nothing from the page cache;
// the kernel's boot id tells); its snapshots carry the cold buckets, so an
// untrusted one is rebuilt from them.
func (c *Store) init() error {
	boot := bootID()
	err := c.db.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists([]byte(coldMetaName))
		if err != nil {
			return err
		}
		synced := string(meta.Get([]byte(coldSynced))) == "1"
		clean := string(meta.Get([]byte(coldClean))) == "1"
		sameBoot := boot != "" && string(meta.Get([]byte(coldBoot))) == boot
		if trusted := synced || clean || sameBoot; !trusted {
			if err := c.emptyLocked(tx); err != nil {
				return err
			}
		}
		for n := range c.names {
			if _, err := tx.CreateBucketIfNotExists([]byte(n)); err != nil {
				return err
			}
		}
		if v := meta.Get([]byte(coldApplied)); len(v) == 8 {
			c.applied = binary.BigEndian.Uint64(v)
		}
		for n := range c.names {
			if v := meta.Get([]byte(coldCountPref + n)); v != nil {
				k, _ := binary.Uvarint(v)
				c.counts[n] = int(k)
			}
		}
		if err := meta.Put([]byte(coldClean), []byte("0")); err != nil {
			return err
		}
		if err := meta.Put([]byte(coldSynced), []byte("1")); err != nil {
			return err
		}
		return meta.Put([]byte(coldBoot), []byte(boot))
	})
	if err != nil {
		return err
	}
	return c.db.Sync()
}

// emptyLocked deletes every cold bucket and resets the meta keys.
func (c *Store) emptyLocked(tx *bbolt.Tx) error {
	var names [][]byte
	if err := tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
		if string(name) != coldMetaName {
			names = append(names, append([]byte(nil), name...))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, n := range names {
		if err := tx.DeleteBucket(n); err != nil {
			return err
		}
	}
	meta := tx.Bucket([]byte(coldMetaName))
	var keys [][]byte
	_ = meta.ForEach(func(k, _ []byte) error {
		if bytes.HasPrefix(k, []byte(coldCountPref)) || string(k) == coldApplied {
			keys = append(keys, append([]byte(nil), k...))
		}
		return nil
	})
	for _, k := range keys {
		if err := meta.Delete(k); err != nil {
			return err
		}
	}
	c.applied = 0
	clear(c.counts)
	return nil
}

// Empty removes every cold record (the file belongs to another raft state).
func (c *Store) Empty() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.emptyTx(); err != nil {
		return err
	}
	return c.db.Sync()
}

// emptyTx empties every cold bucket in one transaction (c.mu held).
func (c *Store) emptyTx() error {
	defer c.countsChanged()
	err := c.db.Update(func(tx *bbolt.Tx) error {
		if err := c.emptyLocked(tx); err != nil {
			return err
		}
		for n := range c.names {
			if _, err := tx.CreateBucket([]byte(n)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("raftstore: empty fsm.db: %w", err)
	}
	return nil
}

// bootID is the kernel's boot id ("" where there is none).
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// IsCold reports whether bucket is kept here (false on a nil Store).
func (c *Store) IsCold(bucket string) bool { return c != nil && c.names[bucket] }

// AppliedIndex is the newest index whose cold ops the file holds.
func (c *Store) AppliedIndex() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied
}

// Op is one put or delete of a disk bucket, by the raft entry at Index.
type Op struct {
	Index  uint64
	Bucket string
	Key    string
	// Value is the new value of a put; the store keeps it as it is (the
	// caller does not modify it).
	Value []byte
	// Delete makes the op a delete.
	Delete bool
}

// Record is a stored value and the raft index that set it. Its layout is
// raftstore.Record's: the two convert into each other.
type Record struct {
	// Value is the stored bytes; shared, never modify it.
	Value []byte
	// Rev is the raft log index of the batch that last set the record.
	Rev uint64
}

// Write queues ops, the cold ops of entries up to index, for the writer
// goroutine, which writes everything queued in one transaction: while it
// writes, the FSM queues the next batches, so under load one transaction
// carries the history rows of many raft batches (their leaves are shared)
// and the FSM goroutine does not wait for bolt. Reads see queued ops
// (read.go), so a write is visible as soon as its entry is applied.
// Past coldQueueMax queued ops the FSM writes them itself (back-pressure).
//
// When a write fails (a full disk: the raft log had room, the file not), the
// ops stay queued: reads see them, later writes retry them, no snapshot is
// taken (checkpoint), and a restart replays their entries from the log (the
// file's applied index did not move). The FSM goes on: the entries are
// committed.
func (c *Store) Write(ops []Op, index uint64) {
	c.pendMu.Lock()
	c.pending = append(c.pending, ops...)
	c.pendIndex = max(c.pendIndex, index)
	n := len(c.pending)
	c.hasPending.Store(n > 0)
	c.pendMu.Unlock()
	c.countsChanged()
	if c.wake == nil || n >= coldQueueMax {
		_ = c.flush()
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// runWriter writes queued ops until stop is closed, coldWriteDelay after
// the first of them was queued: every commit is synced, and an fsync per
// raft batch would double the node's fsyncs.
func (c *Store) runWriter(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	delay := time.NewTimer(coldWriteDelay)
	delay.Stop()
	for {
		select {
		case <-stop:
			return
		case <-c.wake:
		}
		delay.Reset(coldWriteDelay)
		select {
		case <-stop:
			return
		case <-delay.C:
		}
		for more, err := c.writeHead(); more && err == nil; more, err = c.writeHead() {
		}
	}
}

// flush writes every queued op.
func (c *Store) flush() error {
	for {
		more, err := c.writeHead()
		if err != nil || !more {
			return err
		}
	}
}

// writeHead writes the queued ops, at most coldTxBytes of values of them
// (a transaction's pages stay in RSS until the next page drop), in one
// transaction with the index every entry up to which is then in the file,
// drops them from the queue, and reports whether ops are left (after a
// failed write: all of them, kept for the next try).
func (c *Store) writeHead() (more bool, err error) {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.pendMu.RLock()
	n, size := 0, 0
	for n < len(c.pending) && (n == 0 || size < coldTxBytes) {
		size += len(c.pending[n].Key) + len(c.pending[n].Value)
		n++
	}
	ops := c.pending[:n:n] // appends go past its end
	index := c.pendIndex
	if n < len(c.pending) {
		index = c.pending[n].Index - 1 // that entry's ops are not all written yet
	}
	c.pendMu.RUnlock()
	if n == 0 {
		return false, nil
	}
	err = c.tryWrite(ops, index)
	c.pendMu.Lock()
	defer c.pendMu.Unlock()
	if err == nil {
		if rest := c.pending[n:]; len(rest) > 0 {
			c.pending = append(make([]Op, 0, max(len(rest), coldQueueMin)), rest...)
		} else {
			c.pending = c.pending[:0:0]
		}
		c.hasPending.Store(len(c.pending) > 0)
		return len(c.pending) > 0, nil
	}
	if time.Since(c.failedAt) > 10*time.Second {
		c.failedAt = time.Now()
		c.log.Error("raftstore: cannot write fsm.db; keeping the writes in memory and retrying", "index", index,
			"pending_ops", len(c.pending), "err", err)
	}
	return true, err
}

// flushPending writes queued ops; it fails while they cannot be written.
func (c *Store) flushPending() error {
	if err := c.flush(); err != nil {
		return fmt.Errorf("raftstore: fsm.db: writes pending (disk full?): %w", err)
	}
	return nil
}

// dropPending forgets the queued ops (a snapshot restore replaces them).
// flushMu is held by the caller.
func (c *Store) dropPending() {
	c.pendMu.Lock()
	c.pending, c.pendIndex = nil, 0
	c.hasPending.Store(false)
	c.pendMu.Unlock()
}

func (c *Store) tryWrite(ops []Op, index uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failWrite != nil {
		if err := c.failWrite(); err != nil {
			return err
		}
	}
	delta := map[string]int{}
	err := c.db.Update(func(tx *bbolt.Tx) error {
		for _, o := range ops {
			b := tx.Bucket([]byte(o.Bucket))
			if b == nil {
				return fmt.Errorf("no bucket %q", o.Bucket)
			}
			b.FillPercent = coldFill
			k := []byte(o.Key)
			had := b.Get(k) != nil
			switch {
			case !o.Delete:
				v := binary.AppendUvarint(make([]byte, 0, len(o.Value)+10), o.Index)
				if err := b.Put(k, append(v, o.Value...)); err != nil {
					return err
				}
				if !had {
					delta[o.Bucket]++
				}
			case had: // a delete of a key the file holds
				if err := b.Delete(k); err != nil {
					return err
				}
				delta[o.Bucket]--
			}
		}
		return c.putMeta(tx, index, delta)
	})
	if err != nil {
		return err
	}
	for b, d := range delta {
		c.counts[b] += d
	}
	c.applied = max(c.applied, index)
	c.noteWrittenLocked()
	return nil
}

// noteWrittenLocked counts the pages the last transactions allocated: every
// page written is read through the mapping by a later transaction (bolt
// copies a leaf and its branches on every change), so this is what makes
// RSS grow.
func (c *Store) noteWrittenLocked() {
	alloc := uint64(c.db.Stats().TxStats.PageAlloc)
	// plus the leaves the transaction read on its way, each mapped with
	// the kernel's fault-around: a page per transaction, roughly
	c.touched += alloc - c.pageAlloc + 4096*faultAround
	c.pageAlloc = alloc
	if c.touched >= coldDropAfter {
		c.dropPagesLocked()
	}
}

// putMeta records index and the changed counts in tx.
func (c *Store) putMeta(tx *bbolt.Tx, index uint64, delta map[string]int) error {
	meta := tx.Bucket([]byte(coldMetaName))
	var ib [8]byte
	binary.BigEndian.PutUint64(ib[:], max(c.applied, index))
	if err := meta.Put([]byte(coldApplied), ib[:]); err != nil {
		return err
	}
	for b, d := range delta {
		if d == 0 {
			continue
		}
		if err := meta.Put([]byte(coldCountPref+b), binary.AppendUvarint(nil, uint64(max(0, c.counts[b]+d)))); err != nil {
			return err
		}
	}
	return nil
}

// Checkpoint writes what is queued and records index as applied (every
// entry up to it is in the file, with or without cold ops), synced. Called
// on the FSM goroutine when a snapshot is taken: the snapshot leaves the
// cold buckets to the file.
func (c *Store) Checkpoint(index uint64) error {
	if err := c.flushPending(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.db.Update(func(tx *bbolt.Tx) error { return c.putMeta(tx, index, nil) }); err != nil {
		return fmt.Errorf("raftstore: fsm.db checkpoint: %w", err)
	}
	c.applied = max(c.applied, index)
	return nil
}

// dropPagesLocked drops fsm.db's pages from this process's mapping: every
// page a write or a scan touched would otherwise count in RSS. c.mu is
// held, so no write transaction (the only thing that remaps the file) runs
// meanwhile and the mapping read from /proc/self/maps is the live one:
// MADV_DONTNEED is safe, and the pages stay in the page cache.
func (c *Store) dropPagesLocked() {
	c.touched = 0
	boltio.DropMappedPages(c.path)
}

// Close marks the file clean after syncing it, then closes it.
func (c *Store) Close() error {
	if c.stopWriter != nil {
		close(c.stopWriter)
		<-c.writerDone
		c.stopWriter = nil
	}
	if err := c.flushPending(); err != nil {
		c.log.Warn("raftstore: closing fsm.db with writes pending; the next start replays them from the log", "err", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.db.Sync()
	if err == nil {
		err = c.db.Update(func(tx *bbolt.Tx) error {
			return tx.Bucket([]byte(coldMetaName)).Put([]byte(coldClean), []byte("1"))
		})
	}
	if err == nil {
		err = c.db.Sync()
	}
	if cerr := c.db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("raftstore: close fsm.db: %w", err)
	}
	return nil
}

// Load replaces the cold buckets' contents (a snapshot restore), in
// transactions of coldLoadTx bytes, with c.mu held throughout.
type Load struct {
	c      *Store
	tx     *bbolt.Tx
	bytes  int
	counts map[string]int
}

const coldLoadTx = 16 << 20

// BeginLoad starts replacing the buckets' contents; End must follow.
func (c *Store) BeginLoad() *Load {
	c.flushMu.Lock()
	c.dropPending()
	c.mu.Lock()
	c.countsChanged()
	return &Load{c: c, counts: map[string]int{}}
}

// Reset empties every cold bucket.
func (l *Load) Reset() error { return l.c.emptyTx() }

// Put stores one record.
func (l *Load) Put(bucket, key string, r Record) error {
	if l.tx == nil {
		tx, err := l.c.db.Begin(true)
		if err != nil {
			return fmt.Errorf("fsm.db: load: %w", err)
		}
		l.tx = tx
	}
	v := binary.AppendUvarint(make([]byte, 0, len(r.Value)+10), r.Rev)
	v = append(v, r.Value...)
	b := l.tx.Bucket([]byte(bucket))
	b.FillPercent = coldFill
	if err := b.Put([]byte(key), v); err != nil {
		return fmt.Errorf("fsm.db: load: %w", err)
	}
	l.counts[bucket]++
	l.bytes += len(key) + len(v)
	if l.bytes >= coldLoadTx {
		return l.Commit()
	}
	return nil
}

// Commit commits the records put so far.
func (l *Load) Commit() error {
	if l.tx == nil {
		return nil
	}
	err := l.tx.Commit()
	l.tx, l.bytes = nil, 0
	l.c.noteWrittenLocked()
	if err != nil {
		return fmt.Errorf("fsm.db: load: %w", err)
	}
	return nil
}

// Finish records the counts and index and syncs the file.
func (l *Load) Finish(applied uint64) error {
	if err := l.Commit(); err != nil {
		return err
	}
	c := l.c
	delta := map[string]int{}
	for n := range c.names {
		delta[n] = l.counts[n] - c.counts[n]
	}
	c.applied = 0
	if err := c.db.Update(func(tx *bbolt.Tx) error { return c.putMeta(tx, applied, delta) }); err != nil {
		return fmt.Errorf("fsm.db: load: %w", err)
	}
	for n, d := range delta {
		c.counts[n] += d
	}
	c.applied = applied
	return nil
}

// End rolls back an unfinished transaction and releases c.mu.
func (l *Load) End() {
	if l.tx != nil {
		_ = l.tx.Rollback()
		l.tx = nil
	}
	// again at the end: a count or page walked meanwhile saw a part
	// (TestDiskBucketCountDuringALoadIsNotKept)
	l.c.countsChanged()
	l.c.mu.Unlock()
	l.c.flushMu.Unlock()
}
