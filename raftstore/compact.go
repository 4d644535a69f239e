package raftstore

import (
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// raft snapshots (and so truncates its log) by entry count. Entries vary
// from a few hundred bytes to a 10 MiB config, so the store also snapshots
// when the bytes applied since the last snapshot pass Config.SnapshotBytes
// or the size of the last snapshot, whichever is larger, and keeps at most
// a quarter of SnapshotBytes of log after it (never more entries than
// Config.TrailingLogs, never fewer than minTrailingLogs). The log on disk,
// and with it raft.db, is so bounded by bytes and by the state's size, and
// a large state is not rewritten for every few MiB of writes.

// minTrailingLogs keeps a few entries after every snapshot, so a follower
// just behind catches up from the log instead of a snapshot.
const minTrailingLogs = 64

// sizeRing is the size of the last entries applied, for sizing the
// trailing log. One slot per entry: raft keeps at most TrailingLogs.
type sizeRing struct {
	mu        sync.Mutex
	sizes     []uint32
	next      int    // slot of the next entry
	n         int    // slots in use
	sinceSnap uint64 // bytes applied since the last snapshot
	lastSnap  uint64 // bytes of the last snapshot persisted
}

// persisted records the size of a snapshot written.
func (r *sizeRing) persisted(size uint64) {
	r.mu.Lock()
	r.lastSnap = size
	r.mu.Unlock()
}

// threshold is the bytes since the last snapshot that make the next due.
func (r *sizeRing) threshold(min uint64) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(min, r.lastSnap)
}

func newSizeRing(n int) *sizeRing { return &sizeRing{sizes: make([]uint32, n)} }

// add records an applied entry of size bytes and returns the bytes applied
// since the last snapshot.
func (r *sizeRing) add(size int) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sizes[r.next] = uint32(min(size, 1<<31))
	r.next = (r.next + 1) % len(r.sizes)
	r.n = min(r.n+1, len(r.sizes))
	r.sinceSnap += uint64(size)
	return r.sinceSnap
}

// snapshotted resets the count (raft took a snapshot of the state).
func (r *sizeRing) snapshotted() {
	r.mu.Lock()
	r.sinceSnap = 0
	r.mu.Unlock()
}

// reset forgets everything (restore from a snapshot).
func (r *sizeRing) reset() {
	r.mu.Lock()
	r.next, r.n, r.sinceSnap = 0, 0, 0
	r.mu.Unlock()
}

// trailing returns how many of the newest entries fit in budget bytes,
// between lo and hi.
func (r *sizeRing) trailing(budget uint64, lo, hi int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sum uint64
	count := 0
	for i := 0; i < r.n && count < hi; i++ {
		slot := (r.next - 1 - i + len(r.sizes)) % len(r.sizes)
		sum += uint64(r.sizes[slot])
		if sum > budget {
			break
		}
		count++
	}
	return max(lo, min(count, hi))
}

// compactor takes the size-triggered snapshots on its own goroutine.
type compactor struct {
	s    *Store
	hint chan struct{} // capacity 1: a snapshot is due
	done chan struct{} // closed when the goroutine ends
}

// newCompactor wires a compactor to the FSM (before raft starts); its
// goroutine is started with run once raft exists, and Close waits for it.
func (s *Store) newCompactor() *compactor {
	c := &compactor{s: s, hint: make(chan struct{}, 1), done: make(chan struct{})}
	s.fsm.setOnBytes(c.due)
	return c
}

// due is called by the FSM (on raft's apply goroutine) with the bytes
// applied since the last snapshot; it never blocks.
func (c *compactor) due(since uint64) {
	if since < c.s.cfg.SnapshotBytes || since < c.s.fsm.ring.threshold(c.s.cfg.SnapshotBytes) {
		return
	}
	select {
	case c.hint <- struct{}{}:
	default:
	}
}

func (c *compactor) run() {
	defer close(c.done)
	for {
		select {
		case <-c.s.closed:
			return
		case <-c.hint:
		}
		// a hint sent while the last snapshot was starting is stale
		c.s.fsm.ring.mu.Lock()
		since := c.s.fsm.ring.sinceSnap
		c.s.fsm.ring.mu.Unlock()
		if since < c.s.fsm.ring.threshold(c.s.cfg.SnapshotBytes) {
			continue
		}
		if err := c.snapshot("raftstore: snapshot after the log grew past SnapshotBytes"); err != nil && !errors.Is(err, ErrClosed) {
			// The next one is due once SnapshotBytes more are applied
			// (the FSM's count restarted when raft took the state).
			c.s.log.Warn("raftstore: size-triggered snapshot failed", "err", err)
		}
	}
}

// snapshot sizes the trailing log by bytes, then snapshots and truncates;
// msg, unless empty, is logged when it did.
func (c *compactor) snapshot(msg string) error {
	s := c.s
	keep := s.fsm.ring.trailing(s.cfg.SnapshotBytes/4, minTrailingLogs, int(s.trailingLogs()))
	rc := s.raft.ReloadableConfig()
	if rc.TrailingLogs != uint64(keep) {
		rc.TrailingLogs = uint64(keep)
		if err := s.raft.ReloadConfig(rc); err != nil {
			return s.mapErr("snapshot: set trailing logs", err)
		}
	}
	err := s.raft.Snapshot().Error()
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	if err != nil {
		return s.mapErr("snapshot", err)
	}
	if msg != "" {
		s.log.Info(msg, "bytes", s.cfg.SnapshotBytes, "trailing_logs", keep)
	}
	s.logs.dropPages() // the compaction read the deleted range
	return nil
}

// snapshotAtClose takes Config.CloseSnapshotBytes' snapshot (Close, before
// raft stops).
func (c *compactor) snapshotAtClose() {
	s := c.s
	if s.cfg.CloseSnapshotBytes < 0 {
		return
	}
	s.fsm.ring.mu.Lock()
	since := s.fsm.ring.sinceSnap
	s.fsm.ring.mu.Unlock()
	if since < uint64(s.cfg.CloseSnapshotBytes) {
		return
	}
	t0 := time.Now()
	if err := c.snapshot(""); err != nil {
		s.log.Warn("raftstore: snapshot at close failed; the next start replays the log", "err", err)
		return
	}
	s.log.Info("raftstore: snapshot at close (the next start restores it instead of replaying the log)", "log_bytes", since, "took", time.Since(t0).Round(time.Millisecond).String())
}
