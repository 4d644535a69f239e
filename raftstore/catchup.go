package raftstore

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// catchUp waits until the state reflects every entry that was in the log
// at Open. On a one-node cluster it waits for leadership and a barrier, so
// the first write does not fail with ErrNotLeader. Elsewhere it waits, up
// to OpenTimeout, for the leader to commit the log; if there is no quorum
// yet it logs a warning and returns, leaving the node to catch up.
func (s *Store) catchUp() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.OpenTimeout)
	defer cancel()
	last := s.raft.LastIndex()
	cf := s.raft.GetConfiguration()
	if err := cf.Error(); err != nil {
		return fmt.Errorf("raftstore: read configuration: %w", err)
	}
	servers := cf.Configuration().Servers
	if len(servers) == 0 {
		s.log.Info("raftstore: no cluster configuration yet; waiting to be added by a leader", "id", s.cfg.NodeID, "addr", s.Addr())
		return nil
	}
	solo := len(servers) == 1 && servers[0].ID == raft.ServerID(s.cfg.NodeID) && servers[0].Suffrage == raft.Voter
	if solo {
		if err := s.waitSelfLeader(ctx); err != nil {
			return fmt.Errorf("raftstore: open: one-node cluster did not elect itself within %v: %w", s.cfg.OpenTimeout, err)
		}
		if err := s.raft.Barrier(s.cfg.OpenTimeout).Error(); err != nil {
			return fmt.Errorf("raftstore: open: replay log: %w", err)
		}
		s.settle()
		s.log.Info("raftstore: open", "id", s.cfg.NodeID, "addr", s.Addr(), "applied", s.fsm.applied.get(), "last_index", last)
		return nil
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for s.raft.AppliedIndex() < last {
		select {
		case <-tick.C:
		case <-ctx.Done():
			_, had, _ := s.CatchingUp()
			s.log.Warn("raftstore: open: log not fully applied yet (no leader?); continuing, reads wait until this node is back where it was",
				"applied", s.fsm.applied.get(), "last_index", last, "had_applied", had)
			return nil
		}
	}
	return nil
}

func (s *Store) waitSelfLeader(ctx context.Context) error {
	ch := make(chan raft.Observation, 1)
	obs := raft.NewObserver(ch, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.RaftState)
		return ok
	})
	s.raft.RegisterObserver(obs)
	defer s.raft.DeregisterObserver(obs)
	for s.raft.State() != raft.Leader {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
