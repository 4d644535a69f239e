package raftstore

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// shipStore is raft's snapshot store with one change: once raft runs, Open
// of a version 3 snapshot (this node's own, its cold buckets in fsm.db)
// returns a version 2 one with fsm.db read into it, because after start
// raft opens a snapshot only to send it to a member that is behind (or to
// restore one it received, which is version 2 already). Raft needs the
// size before it streams, so the snapshot is written to a file in the data
// directory first and removed once raft closes it.
//
// At start (before ship is set) raft restores the node's own snapshot, and
// Open returns it as it is: the cold buckets are in fsm.db already.
type shipStore struct {
	*raft.FileSnapshotStore
	dir  string      // for the shipped copies
	cold diskBuckets // nil: no disk buckets, nothing to add
	log  *slog.Logger
	ship atomic.Bool
	// checked is the snapshot Open verified (its CRC read the whole
	// state.bin) just before raft restores it: raft's own Open would read
	// and check it again (a tenth of a second per 160 MB). Used once.
	checked atomic.Pointer[checkedSnapshot]
}

// checkedSnapshot is a snapshot whose CRC matched, and its state file as
// it was then.
type checkedSnapshot struct {
	meta  raft.SnapshotMeta
	state os.FileInfo
}

// shipPrefix names the copies written for sending.
const shipPrefix = "ship-"

// removeShipCopies removes copies left by a process that died while
// sending one.
func removeShipCopies(dir string, log *slog.Logger) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), shipPrefix) && strings.HasSuffix(e.Name(), ".tmp") {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				log.Warn("raftstore: cannot remove a stale snapshot copy", "path", filepath.Join(dir, e.Name()), "err", err)
			}
		}
	}
}

// Open implements raft.SnapshotStore.
func (s *shipStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	if meta, rc, ok := s.openChecked(id); ok {
		return meta, rc, nil
	}
	meta, rc, err := s.FileSnapshotStore.Open(id)
	if err != nil || s.cold == nil || !s.ship.Load() {
		return meta, rc, err
	}
	br := bufio.NewReaderSize(rc, 64<<10)
	head, err := br.Peek(1)
	if err != nil || head[0] != snapshotVersion {
		return meta, struct {
			io.Reader
			io.Closer
		}{br, rc}, nil // an older version carries everything; a short file fails in Restore
	}
	defer rc.Close()
	f, size, err := s.materialise(br)
	if err != nil {
		return nil, nil, fmt.Errorf("raftstore: snapshot %s for sending: %w", id, err)
	}
	m := *meta
	m.Size = size
	s.log.Info("raftstore: snapshot written for sending with fsm.db", "id", id, "bytes", size)
	return &m, &shipCopy{File: f}, nil
}

// openChecked opens snapshot id's state without reading it for the CRC
// when it is the snapshot checked at start and its file is unchanged.
func (s *shipStore) openChecked(id string) (*raft.SnapshotMeta, io.ReadCloser, bool) {
	c := s.checked.Swap(nil)
	if c == nil || c.meta.ID != id || s.ship.Load() {
		return nil, nil, false
	}
	path := filepath.Join(s.dir, "snapshots", id, "state.bin")
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false
	}
	fi, err := f.Stat()
	if err != nil || !os.SameFile(fi, c.state) || fi.Size() != c.state.Size() || !fi.ModTime().Equal(c.state.ModTime()) {
		_ = f.Close()
		return nil, nil, false
	}
	meta := c.meta
	return &meta, struct {
		io.Reader
		io.Closer
	}{bufio.NewReaderSize(f, 256<<10), f}, true
}

// materialise writes v3 (positioned at its version byte) as version 2 to a
// new file in s.dir and returns it positioned at its start.
func (s *shipStore) materialise(v3 *bufio.Reader) (f *os.File, size int64, err error) {
	f, err = os.CreateTemp(s.dir, shipPrefix+"*.tmp")
	if err != nil {
		return nil, 0, err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if _, err := v3.Discard(1); err != nil {
		return nil, 0, err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err := bw.WriteByte(snapshotV2); err != nil {
		return nil, 0, err
	}
	// the in-memory part is the same in both versions; version 3 ends with
	// the end byte, version 2 has the cold sections before it
	n, err := io.Copy(bw, v3)
	if err != nil {
		return nil, 0, err
	}
	if err := bw.Flush(); err != nil {
		return nil, 0, err
	}
	end := make([]byte, 1)
	if n < 3 {
		return nil, 0, errors.New("snapshot too short")
	}
	if _, err := f.ReadAt(end, n); err != nil || end[0] != 0 {
		return nil, 0, fmt.Errorf("snapshot does not end with its end byte (%v)", err)
	}
	if _, err := f.Seek(n, io.SeekStart); err != nil {
		return nil, 0, err
	}
	bw.Reset(f)
	if err := writeColdSections(bw, s.cold); err != nil {
		return nil, 0, err
	}
	if err := bw.WriteByte(0); err != nil {
		return nil, 0, err
	}
	if err := bw.Flush(); err != nil {
		return nil, 0, err
	}
	size, err = f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, 0, err
	}
	return f, size, nil
}

// shipCopy is a copy being sent; Close removes it.
type shipCopy struct{ *os.File }

func (c *shipCopy) Close() error {
	err := c.File.Close()
	if rerr := os.Remove(c.File.Name()); err == nil {
		err = rerr
	}
	return err
}
