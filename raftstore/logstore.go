package raftstore

import (
	"errors"
	"io/fs"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/nacosd/nacosd/raftstore/internal/boltio"
)

// logStore is the bolt log and stable store with a memory of the last
// failed write. When the disk is full, raft's leader steps down after the
// failed StoreLogs and later writes only see ErrNotLeader; the store turns
// that into an ErrStorage error naming the cause while the failure lasts.
type logStore struct {
	*raftboltdb.BoltStore
	path string // raft.db

	// wmu serialises the writes (bolt remaps its file only in a write
	// transaction) with dropPages.
	wmu     sync.Mutex
	written int  // log bytes stored since the last dropPages (under wmu)
	closed  bool // the store is closing (under wmu): stable writes are dropped

	mu      sync.Mutex
	failErr error     // last failed write; nil after a successful one
	failAt  time.Time // when it failed
}

// deleteChunk is how many entries one DeleteRange transaction removes.
const deleteChunk = 2048

// DeleteRange implements raft.LogStore in transactions of deleteChunk
// entries: raft compacts the log after a snapshot with one call, and bolt's
// single writer lock held for a large range (a minute's worth of durable
// publishes: seconds) blocked every StoreLogs meanwhile, so writes timed out
// being enqueued.
func (l *logStore) DeleteRange(min, max uint64) error {
	for lo := min; lo <= max; lo += deleteChunk {
		hi := lo + deleteChunk - 1
		if hi > max || hi < lo {
			hi = max
		}
		l.wmu.Lock()
		err := l.BoltStore.DeleteRange(lo, hi)
		l.wmu.Unlock()
		if err != nil {
			return err
		}
		if hi == max {
			break
		}
	}
	return nil
}

// StoreLog implements raft.LogStore.
func (l *logStore) StoreLog(log *raft.Log) error { return l.StoreLogs([]*raft.Log{log}) }

// StoreLogs implements raft.LogStore and records the outcome.
func (l *logStore) StoreLogs(logs []*raft.Log) error {
	l.wmu.Lock()
	err := l.BoltStore.StoreLogs(logs)
	for _, lg := range logs {
		l.written += len(lg.Data)
	}
	if l.written >= logDropAfter && l.path != "" {
		// every commit reads the newest leaf through the mapping, and the
		// kernel maps the pages around it, just written: they add up
		boltio.DropMappedPages(l.path)
		l.written = 0
	}
	l.wmu.Unlock()
	l.record(err)
	return err
}

// Set implements raft.StableStore and records the outcome.
func (l *logStore) Set(k, v []byte) error {
	l.wmu.Lock()
	if l.closed {
		l.wmu.Unlock()
		return nil // see closeWrites
	}
	err := l.BoltStore.Set(k, v)
	l.wmu.Unlock()
	l.record(err)
	return err
}

// SetUint64 implements raft.StableStore and records the outcome.
func (l *logStore) SetUint64(k []byte, v uint64) error {
	l.wmu.Lock()
	if l.closed {
		l.wmu.Unlock()
		return nil // see closeWrites
	}
	err := l.BoltStore.SetUint64(k, v)
	l.wmu.Unlock()
	l.record(err)
	return err
}

// closeWrites makes the stable store drop writes from now on, before the
// bolt file closes. raft runs a heartbeat on the transport's connection
// goroutine, which its Shutdown does not wait for: one that arrived as the
// node stopped saved the leader's newer term after the file had closed, and
// raft panics when it cannot save a term ("failed to save current term:
// database not open"). The node has stopped by then: the term it learned
// from a heartbeat is learned again from the next one after its restart
// (no vote is lost: a vote is persisted on raft's main goroutine, which
// has ended).
func (l *logStore) closeWrites() {
	l.wmu.Lock()
	l.closed = true
	l.wmu.Unlock()
}

// logDropAfter is how many bytes of log entries make dropping raft.db's
// pages due.
const logDropAfter = 4 << 20

// dropPages unmaps raft.db's resident pages (internal/boltio) between
// writes.
func (l *logStore) dropPages() {
	if l.path == "" {
		return
	}
	l.wmu.Lock()
	boltio.DropMappedPages(l.path)
	l.written = 0
	l.wmu.Unlock()
}

func (l *logStore) record(err error) {
	l.mu.Lock()
	if err != nil {
		l.failErr, l.failAt = err, time.Now()
	} else {
		l.failErr = nil
	}
	l.mu.Unlock()
}

// failure returns the error of the last write when it failed, else nil.
func (l *logStore) failure() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.failErr
}

// storageError explains a write that failed because the log could not be
// written. It wraps ErrStorage and the disk's error; its text names the
// disk's error without the file's path (it reaches HTTP clients; the log
// has the path).
func storageError(op string, cause error) error { return &storageErr{op: op, cause: cause} }

type storageErr struct {
	op    string
	cause error
}

func (e *storageErr) Error() string {
	msg := e.cause.Error()
	var pe *fs.PathError
	if errors.As(e.cause, &pe) {
		msg = pe.Op + ": " + pe.Err.Error()
	}
	return "raftstore: " + e.op + ": cannot write the raft log (" + msg +
		"); nothing was written: free space in the data directory or fix the disk, writes resume by themselves"
}

func (e *storageErr) Unwrap() []error { return []error{ErrStorage, e.cause} }

// isStorageErr reports whether err is the log store's own recorded failure
// (raft answers a failed StoreLogs with that very error).
func isStorageErr(err, failure error) bool {
	return failure != nil && errors.Is(err, failure)
}
