package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/cluster"
)

// openCluster builds the member list and the node-to-node client. It runs
// before the raft store opens: in cluster mode the first start bootstraps
// raft with every member of the list, and members starting together
// answer one another on the HTTP port until this node serves
// (server/startup.go).
func (s *Server) openCluster(context.Context) error {
	self := compat.JoinMemberAddress(s.ip, s.port)
	source := ""
	if h := net.ParseIP(s.cfg.Host); h != nil && !h.IsUnspecified() {
		source = s.cfg.Host // a node bound to one address talks from it
	}
	s.peers = cluster.NewPeers(cluster.PeersConfig{ContextPath: s.cfg.ContextPath, Version: Version, SourceIP: source,
		Identity: s.identityHeader})
	m, err := cluster.New(cluster.Config{Self: self, Version: Version, RaftAddr: s.raftAddr, Standalone: s.cfg.Standalone,
		Fixed: s.cfg.NacosServers, ConfPath: s.cfg.ClusterConf, MemberList: s.cfg.MemberList,
		ReportDelay: s.cfg.ClusterTimings.ReportDelay, ReportInterval: s.cfg.ClusterTimings.ReportInterval,
		Peers: s.peers, Clock: s.cfg.Clock, Logger: s.log.With("component", "cluster")})
	if err != nil {
		return fmt.Errorf("server: cluster: %w", err)
	}
	s.members = m
	if !s.cfg.Standalone {
		s.early = newHandoff(s.ln, s.startupResponder(m))
		s.ln = lateListener{s.early}
	}
	return nil
}

// loadPeers takes the peers' ephemeral data before this node answers
// clients with empty lists, then hands the HTTP port from the start-up
// responder to the API (cluster mode).
func (s *Server) loadPeers(ctx context.Context) error {
	if s.cfg.Standalone {
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	s.distro.LoadOnce(lctx)
	cancel()
	s.early.handOver()
	return nil
}

// identityHeader adds nacos.core.auth.server.identity.key/value to a
// node-to-node request (AuthHeaderUtil.addIdentityToHeader).
func (s *Server) identityHeader(h http.Header) {
	if k := s.cfg.Auth.ServerIdentityKey; k != "" {
		h.Set(k, s.cfg.Auth.ServerIdentityValue)
	}
}

// startClusterLoops starts the reports, the cluster.conf watch, Distro and
// the raft bookkeeping (the voter set follows the member list; self's
// raftMetaData follows raft).
func (s *Server) startClusterLoops(ctx context.Context) {
	if s.cfg.Standalone {
		return
	}
	s.members.Start(ctx)
	s.distro.Start(ctx)
	s.clusterTasks = clock.NewSchedules(s.cfg.Clock)
	s.clusterTasks.Every(0, time.Second, func() { s.members.PublishRaftMeta(s.store) })
	s.clusterTasks.Every(time.Second, 3*time.Second, func() { s.members.ReconcileVoters(s.store) })
	s.clusterTasks.Every(0, 500*time.Millisecond, s.bootstrapAuth)
	s.clusterTasks.Every(0, 250*time.Millisecond, s.watchReadiness)
	s.members.Subscribe(func() { go s.members.ReconcileVoters(s.store) })
	if s.conns != nil { // 2.x connections move to a member that (re)joins (server/cluster/rebalance.go)
		s.rebalance = cluster.StartRebalancer(cluster.RebalanceConfig{Members: s.members, Peers: s.peers, Conns: sdkConns{s.conns},
			Delay: s.cfg.GRPC.RebalanceDelay, Interval: s.cfg.GRPC.RebalanceInterval, Clock: s.cfg.Clock, Logger: s.log})
	}
}

// bootstrapAuth writes the built-in user nacos once a raft leader exists.
// The attempt at start fails on every node that does not lead raft at that
// moment, and the node that leads later may have tried before it led (a
// member started alone, without a quorum), so the leader retries until the
// record exists. A check of the local copy is all it costs afterwards.
func (s *Server) bootstrapAuth() {
	if s.auth == nil || s.auth.Initialized() || !s.store.IsLeader() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.auth.Bootstrap(ctx); err != nil && !errors.Is(err, raftstore.ErrNotLeader) {
		s.log.Warn("auth: writing the built-in user failed; retrying", "err", err)
	}
}

func (s *Server) closeCluster() {
	s.rebalance.Close()
	if s.clusterTasks != nil {
		s.clusterTasks.Close()
	}
	if s.distro != nil {
		s.distro.Close()
	}
	if s.members != nil {
		s.members.Close()
	}
	if s.peers != nil {
		s.peers.Close()
	}
}

// Report is POST /v1/core/cluster/report for httpapi: the reporter's
// information is stored (it is UP in this node's view) and what it runs is
// recorded from the raft header.
func (s *Server) Report(r compat.ReportedMember, raftHeader string) (known bool, selfRaft, leader string) {
	if s.store != nil {
		leader = s.store.LeaderAddr()
	}
	return s.members.Reported(r, raftHeader), s.members.RaftAddr(), leader
}

// Leave is POST /v1/core/cluster/server/leave.
func (s *Server) Leave(addrs []string) error { return s.members.Leave(addrs) }

// UpAddresses is memberAddressInfos.
func (s *Server) UpAddresses() []string { return s.members.UpAddresses() }

// HasMember is ServerMemberManager.hasMember (fuzzy).
func (s *Server) HasMember(addr string) bool { return s.members.HasMember(addr) }

// forwardToLeader relays a client's write to the raft leader as it came.
func (s *Server) forwardToLeader(ctx context.Context, addr, method, uri string, header http.Header, body []byte) (int, http.Header, []byte, error) {
	resp, err := s.peers.Do(ctx, cluster.Request{Method: method, Addr: addr, RawURI: uri, Header: header, Body: body,
		Timeout: 15 * time.Second})
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.Status, resp.Header, resp.Body, nil
}

// IsRaftLeader reports whether this node leads the raft group (tests, the
// console).
func (s *Server) IsRaftLeader() bool { return s.store.IsLeader() }

// RaftAppliedIndex is the last raft index this node applied.
func (s *Server) RaftAppliedIndex() uint64 { return s.store.AppliedIndex() }

// RaftLeaderID is the member address of the raft leader this node knows
// ("" during an election).
func (s *Server) RaftLeaderID() string { return s.store.LeaderID() }
