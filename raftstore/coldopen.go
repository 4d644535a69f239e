package raftstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/hashicorp/raft"

	"github.com/nacosd/nacosd/raftstore/cold"
)

// openCold opens fsm.db (package cold). A file of an earlier raft state (the
// directory had none, or the file claims entries beyond the log and the
// newest snapshot) is emptied. When the newest snapshot leaves the disk
// buckets to the file (format 3), a file that does not reach its index is
// damage, not something to rebuild.
func (s *Store) openCold(ls *logStore, snaps raft.SnapshotStore, hadState bool, v *verifier) (*cold.Store, error) {
	own := v.newest != nil && v.newestHead.version == snapshotVersion
	path := filepath.Join(s.cfg.Dir, cold.File)
	advice := "Standalone: restore the data directory from a backup. In a cluster: stop this node, delete its directory " +
		s.cfg.Dir + " and start it again; it rejoins and receives the data from the leader. See docs/operations.md"
	c, err := cold.Open(s.cfg.Dir, s.cfg.DiskBuckets, !hadState, !own, s.log)
	if err != nil {
		if own && !errors.Is(err, syscall.ENOMEM) && !errors.Is(err, syscall.ENOSPC) {
			return nil, &CorruptError{Path: path, Problem: err.Error(), Advice: advice}
		}
		return nil, err
	}
	last, err := ls.LastIndex()
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("raftstore: read last log index: %w", err)
	}
	if metas, err := snaps.List(); err == nil && len(metas) > 0 {
		last = max(last, metas[0].Index)
	}
	switch {
	case own && (c.AppliedIndex() < v.newestHead.applied || c.AppliedIndex() > last):
		_ = c.Close()
		return nil, &CorruptError{Path: path, Advice: advice, Problem: fmt.Sprintf(
			"it holds the log's entries up to index %d, but the newest snapshot %s (index %d; the log ends at %d) keeps the config history in it",
			c.AppliedIndex(), v.newest.ID, v.newestHead.applied, last)}
	case c.AppliedIndex() > last:
		s.log.Warn("raftstore: fsm.db is ahead of the raft log; rebuilding it", "fsm_db_applied", c.AppliedIndex(), "last_index", last)
		if err := c.Empty(); err != nil {
			_ = c.Close()
			return nil, err
		}
	}
	return c, nil
}
