package server

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/config"
)

// standaloneRaftTimeout is the raft heartbeat, election and lease timeout of
// a standalone node (a one-voter cluster).
const standaloneRaftTimeout = 25 * time.Millisecond

// openStore opens the raft CP store. In cluster mode a first start waits
// to hear from the members (Java nodes cannot vote) before it fixes the
// voter set, or joins the raft group a member names; without a quorum the
// node still starts (AP data, reads).
func (s *Server) openStore(ctx context.Context) (err error) {
	rc := raftstore.DefaultConfig()
	rc.Dir = filepath.Join(s.cfg.DataDir, "raft")
	rc.NodeID = s.members.SelfAddress()
	rc.BindAddr = s.raftAddr
	rc.Bootstrap = true
	rc.Standalone = s.cfg.Standalone
	if !s.cfg.Standalone {
		if fresh, _ := raftstore.IsEmpty(rc.Dir); fresh {
			// first start: learn which members are Java nodes before the
			// voter set is fixed (members that do not answer count as voters)
			pctx, cancel := context.WithTimeout(ctx, s.cfg.ClusterTimings.bootstrapWait())
			s.members.Probe(pctx, 500*time.Millisecond)
			cancel()
			if l := s.members.RaftLeaderSeen(); l != "" {
				// a nacosd raft group exists already (this node is new, or its
				// data was wiped): join it; the leader adds this node as a
				// voter when its report arrives and sends it a snapshot
				rc.Bootstrap = false
				s.log.Info("raft: joining the existing raft group", "leader", l)
			}
		}
		rc.Peers = s.members.BootstrapPeers(s.raftAddr)
		rc.OpenTimeout = 5 * time.Second // without a quorum yet the node still starts (AP data, reads)
	}
	rc.DiskBuckets = config.DiskBuckets()
	rc.Logger = s.log.With("component", "raft")
	if s.cfg.Standalone {
		// A lone voter has no peer to lose touch with: it elects itself
		// after one heartbeat timeout as a follower (raft waits 1–2×), which
		// was most of a start (100 ms: ~155 of ~185 ms to the first answer).
		// As leader it checks its lease (against itself only) once per
		// timeout: each check is a wake-up of the idle process, so the
		// timeout is not shorter still (idle CPU, 20 s of an idle node: 100 ms
		// 0.4 % of a core, 25 ms ~1 %, 10 ms 1.8 %).
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = standaloneRaftTimeout, standaloneRaftTimeout, standaloneRaftTimeout
	}
	if s.cfg.FastRaft {
		d := 50 * time.Millisecond
		if s.cfg.RaftTimeout > 0 {
			d = s.cfg.RaftTimeout
		}
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout, rc.CommitTimeout = d, d, d, 5*time.Millisecond
	}
	if s.store, err = raftstore.Open(rc); err != nil {
		return fmt.Errorf("server: %w", portTaken(fmt.Errorf("open raft store: %w", err),
			"raft address "+s.raftAddr, s.raftAddr, "choose another HTTP port (raft uses port − 1000) or -raft-addr"))
	}
	return nil
}
