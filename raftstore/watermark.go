package raftstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
)

// watermarkFile keeps the newest index this node's state reflected: every
// applied batch and every restore writes it before the applied index moves
// (and so before any read can see that state).
const watermarkFile = "applied"

// watermark is a node's memory, across a restart, of how far its state had
// come. raft persists the log but not the commit index: a restarted member
// rebuilds its state from its newest snapshot and applies the entries after
// it only once a leader tells it they are committed. Until then its state
// is older than what it served before it stopped, and a client that read
// there before would read back in time (the fault checker saw a restarted
// member serve values 40 s old). The file is 8 bytes overwritten in place,
// not synced: it survives the process being killed (the page cache has
// it); a machine crash can only leave it behind, never ahead.
type watermark struct {
	f    *os.File
	log  *slog.Logger
	boot atomic.Uint64 // the value found at open: the state to reach before serving reads
	bad  atomic.Bool
	// reached is set once the state reached boot: from then on it stays
	// (the applied index only moves on), and reads check one atomic
	reached atomic.Bool
}

// openWatermark opens (or creates) dir's watermark and reads the index it
// holds.
func openWatermark(dir string, log *slog.Logger) (*watermark, error) {
	path := filepath.Join(dir, watermarkFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("raftstore: open %s: %w", path, err)
	}
	w := &watermark{f: f, log: log}
	var b [8]byte
	switch n, err := f.ReadAt(b[:], 0); {
	case n == 8:
		w.boot.Store(binary.BigEndian.Uint64(b[:]))
	case err != nil && !errors.Is(err, io.EOF):
		_ = f.Close()
		return nil, fmt.Errorf("raftstore: read %s: %w", path, err)
	}
	return w, nil
}

// set records index as reflected by the state. A failed write is logged
// once; the node goes on (the mark is a guard for reads, not data).
func (w *watermark) set(index uint64) {
	if w == nil {
		return
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], index)
	if _, err := w.f.WriteAt(b[:], 0); err != nil && !w.bad.Swap(true) {
		w.log.Error("raftstore: cannot record the applied index; after a restart this node may serve older state until it catches up", "file", w.f.Name(), "err", err)
	}
}

func (w *watermark) close() error {
	if w == nil {
		return nil
	}
	return w.f.Close()
}

// CatchingUp reports whether this node's state is still older than what it
// had applied before it last stopped, with the applied index and the one
// to reach. A restarted member catches up once a leader has told it which
// of its entries are committed (or sent it a snapshot); until then its
// reads could go back in time.
func (s *Store) CatchingUp() (applied, target uint64, catching bool) {
	if s.mark == nil || s.mark.reached.Load() {
		return 0, 0, false
	}
	applied = s.fsm.applied.get()
	target = s.mark.boot.Load()
	if applied >= target {
		s.mark.reached.Store(true)
		return applied, target, false
	}
	return applied, target, true
}

// settle accepts the state of a node that applied everything committed
// (a one-node cluster after its barrier, a leader after its term's
// barrier) as caught up, even below the mark: its directory was restored
// from an older copy.
func (s *Store) settle() {
	if s.mark == nil {
		return
	}
	if applied, target := s.fsm.applied.get(), s.mark.boot.Load(); applied < target {
		s.log.Warn("raftstore: the state is older than what this node had applied before it stopped (its directory was restored from an older copy?); serving it", "applied", applied, "had", target)
		s.mark.boot.Store(applied)
	}
}

// Behind reports whether this node is still catching up (CatchingUp's
// verdict alone: once caught up, one atomic load).
func (s *Store) Behind() bool {
	_, _, catching := s.CatchingUp()
	return catching
}

// WaitCaughtUp blocks until this node's state is at least as new as what it
// had applied before it last stopped (at once when it is), ctx ends or the
// store closes.
func (s *Store) WaitCaughtUp(ctx context.Context) error {
	if _, _, catching := s.CatchingUp(); !catching {
		return nil
	}
	if s.IsLeader() {
		// a leader has every committed entry: once its barrier passed it
		// is as new as the cluster
		if err := s.leaderFresh(ctx); err == nil {
			s.settle()
			return nil
		}
	}
	if err := s.fsm.applied.wait(ctx, s.mark.boot.Load(), s.closed); err != nil {
		return err
	}
	s.mark.reached.Store(true)
	return nil
}
