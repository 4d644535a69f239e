package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/distro"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/cluster"
	"github.com/nacosd/nacosd/server/console"
	"github.com/nacosd/nacosd/server/console/live"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/naming"
)

// Raft group names Java 1.4.8 shows in raftMetaData: nacosd keeps configs
// (Java's embedded-storage group) and naming's persistent data in one raft
// group, so both names describe it.
var raftGroups = []string{"nacos_config", "naming_persistent_service"}

// openCluster builds the member list and the node-to-node client. It runs
// before the raft store opens: in cluster mode the first start bootstraps
// raft with every member of the list.
func (s *Server) openCluster(ip string, port int, raftAddr string) error {
	self := compat.JoinMemberAddress(ip, port)
	source := ""
	if h := net.ParseIP(s.cfg.Host); h != nil && !h.IsUnspecified() {
		source = s.cfg.Host // a node bound to one address talks from it
	}
	s.peers = cluster.NewPeers(cluster.PeersConfig{ContextPath: s.cfg.ContextPath, Version: Version, SourceIP: source,
		Identity: s.identityHeader})
	m, err := cluster.New(cluster.Config{Self: self, Version: Version, RaftAddr: raftAddr, Standalone: s.cfg.Standalone,
		Fixed: s.cfg.NacosServers, ConfPath: s.cfg.ClusterConf, MemberList: s.cfg.MemberList,
		ReportDelay: s.cfg.ClusterTimings.ReportDelay, ReportInterval: s.cfg.ClusterTimings.ReportInterval,
		Peers: s.peers, Clock: s.cfg.Clock, Logger: s.log.With("component", "cluster")})
	if err != nil {
		return err
	}
	s.members = m
	return nil
}

// identityHeader adds nacos.core.auth.server.identity.key/value to a
// node-to-node request (AuthHeaderUtil.addIdentityToHeader).
func (s *Server) identityHeader(h http.Header) {
	if k := s.cfg.Auth.ServerIdentityKey; k != "" {
		h.Set(k, s.cfg.Auth.ServerIdentityValue)
	}
}

// raftPeers is the voter list a fresh cluster member bootstraps with: every
// member of the list but those known to be Java nodes, each at the raft
// address it announced or else at its port − 1000 (Java's raft port rule).
func (s *Server) raftPeers(selfRaft string) []raftstore.Peer {
	var out []raftstore.Peer
	self := s.members.SelfAddress()
	for _, a := range s.members.Addresses() {
		if a == self {
			out = append(out, raftstore.Peer{ID: a, Addr: selfRaft})
			continue
		}
		switch kind, raftAddr := s.members.Kind(a); kind {
		case cluster.KindJava: // its JRaft cannot vote here
			continue
		case cluster.KindNacosd:
			out = append(out, raftstore.Peer{ID: a, Addr: raftAddr})
			continue
		}
		host, port, err := compat.SplitMemberAddress(a)
		if err != nil {
			continue
		}
		out = append(out, raftstore.Peer{ID: a, Addr: net.JoinHostPort(host, strconv.Itoa(compat.RaftPort(port)))})
	}
	return out
}

// syncRetryDelay is how soon Distro sends a failed sync again.
const syncRetryDelay = 250 * time.Millisecond

// buildDistro makes the AP protocol over the registry (always: Java serves
// the /v1/ns/distro endpoints in standalone mode too; they just have no
// peers).
func (s *Server) buildDistro(store *distroStore) error {
	d, err := distro.New(distro.Config{Store: store, Members: s.members, Transport: distroTransport{s.peers},
		SyncDelay: s.cfg.ClusterTimings.SyncDelay, BatchDelay: s.cfg.ClusterTimings.SyncDelay,
		VerifyInterval: s.cfg.ClusterTimings.VerifyInterval, StatusInterval: s.cfg.ClusterTimings.VerifyInterval,
		StatusDelay: s.cfg.ClusterTimings.VerifyInterval, LoadWait: s.cfg.ClusterTimings.LoadWait,
		// a failed sync is sent again soon (Java: 5 s): with the peers'
		// quick-SYN dial (server/cluster) a member cut off by a partition
		// gets the lists it missed within a moment of the heal
		RetryDelay: syncRetryDelay,
		Clock:      s.cfg.Clock, Logger: s.log.With("component", "distro")})
	if err != nil {
		return fmt.Errorf("server: start distro: %w", err)
	}
	s.distro = d
	s.members.Subscribe(d.MembersChanged)
	return nil
}

// consumeChanges subscribes the consumers of the registry's change
// stream: UDP push to the subscribers of the service, the console's event
// streams and Distro (its view of the lists held follows every ephemeral
// change; a list this node changed as its owner is shipped). Each call
// only marks the service and returns (push and Distro coalesce).
func (s *Server) consumeChanges(reg *naming.Registry) {
	ship := !s.cfg.Standalone
	reg.Changes().Subscribe(func(c naming.Change) {
		s.push.ServiceChanged(c.NamespaceID, c.Service)
		s.hub.Publish(live.Event{Namespace: c.NamespaceID, Service: c.Service})
		if s.distro != nil {
			if lc, ok := distroChange(c, ship); ok {
				s.distro.Changed(lc)
			}
		}
	})
}

// distroChange is the Distro side of a registry change: the edits of the
// ephemeral lists, their health (which their checksums cover) and the
// removal of services; ship says whether this node sends its own changes
// to the other members (not in standalone mode).
func distroChange(c naming.Change, ship bool) (distro.ListChange, bool) {
	if c.Kind&(naming.ChangedEphemeral|naming.ChangedHealth|naming.ChangedRemoved) == 0 {
		return distro.ListChange{}, false
	}
	lc := distro.ListChange{Ref: distro.ServiceRef{NamespaceID: c.NamespaceID, Service: c.Service}, Key: c.Key, Keys: c.Keys,
		Ship: ship && c.Ships()}
	switch {
	case c.Kind&naming.ChangedRemoved != 0:
		lc.Op = distro.EditDropped
	case c.Edit == naming.EditPut:
		lc.Op = distro.EditPut
	case c.Edit == naming.EditRemove:
		lc.Op = distro.EditRemove
	case c.Edit == naming.EditReplace:
		lc.Op = distro.EditReplace
	case c.Edit == naming.EditClear:
		lc.Op = distro.EditClear
	default:
		lc.Op = distro.EditNone
	}
	return lc, true
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
	s.clusterTasks.Every(0, time.Second, s.refreshRaftMeta)
	s.clusterTasks.Every(time.Second, 3*time.Second, s.reconcileVoters)
	s.clusterTasks.Every(0, 500*time.Millisecond, s.bootstrapAuth)
	s.clusterTasks.Every(0, 250*time.Millisecond, s.watchReadiness)
	s.members.Subscribe(func() { go s.reconcileVoters() })
	s.startRebalance() // 2.x connections move to a member that (re)joins (rebalance.go)
}

// watchReadiness logs when this member stops being ready and why, and
// when it is ready again (readiness probes only see the moment).
func (s *Server) watchReadiness() {
	err := s.Ready()
	was := s.notReady.Load()
	switch {
	case err != nil && was == nil:
		msg := err.Error()
		s.notReady.Store(&msg)
		s.log.Warn("member not ready: clients should use another member", "reason", msg)
	case err == nil && was != nil:
		s.notReady.Store(nil)
		s.log.Info("member ready again", "was", *was)
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

// refreshRaftMeta publishes self's raftMetaData as JRaftProtocol does:
// per raft group the leader (ip:raftPort), the members and the term.
func (s *Server) refreshRaftMeta() {
	st := s.store.Stats()
	servers, err := s.store.Servers()
	if err != nil {
		return
	}
	var group []any
	for _, sv := range servers {
		group = append(group, sv.Addr)
	}
	props := map[string]any{"raftGroupMember": group}
	if l := s.store.LeaderAddr(); l != "" {
		props["leader"] = l
	}
	if t, err := strconv.ParseInt(st["term"], 10, 64); err == nil {
		props["term"] = t
	}
	meta := map[string]any{}
	for _, g := range raftGroups {
		meta[g] = props
	}
	s.members.SetSelfInfo("raftMetaData", map[string]any{"metaDataMap": meta})
}

// reconcileVoters runs on the raft leader: nacosd members of the list that
// are not voters are added (at the raft address they announced); voters
// that left the list, or turned out to be Java nodes (whose JRaft cannot
// vote here), are removed. Members not heard from yet are left as they
// are, so a node that is merely down keeps its vote.
func (s *Server) reconcileVoters() {
	if s.store == nil || !s.store.IsLeader() {
		return
	}
	servers, err := s.store.Servers()
	if err != nil {
		return
	}
	voters := map[string]string{}
	for _, sv := range servers {
		voters[sv.ID] = sv.Addr
	}
	addrs := s.members.Addresses()
	for _, a := range addrs {
		kind, raftAddr := s.members.Kind(a)
		if kind != cluster.KindNacosd || raftAddr == "" {
			continue
		}
		if cur, ok := voters[a]; !ok || cur != raftAddr {
			s.log.Info("raft: adding voter", "member", a, "raft", raftAddr)
			if err := s.store.AddVoter(a, raftAddr); err != nil {
				s.log.Warn("raft: add voter failed", "member", a, "err", err)
			}
		}
	}
	for id := range voters {
		kind, _ := s.members.Kind(id)
		if !slices.Contains(addrs, id) || kind == cluster.KindJava {
			if id == s.members.SelfAddress() {
				continue
			}
			s.log.Info("raft: removing voter", "member", id, "java", kind == cluster.KindJava)
			if err := s.store.RemoveServer(id); err != nil {
				s.log.Warn("raft: remove voter failed", "member", id, "err", err)
			}
		}
	}
}

// Report is POST /v1/core/cluster/report for httpapi: the reporter's
// information is stored (it is UP in this node's view) and what it runs is
// recorded from the raft header.
func (s *Server) Report(r compat.ReportedMember, raftHeader string) (known bool, selfRaft, leader string) {
	r.State = compat.MemberUp
	if s.store != nil {
		leader = s.store.LeaderAddr()
	}
	if !s.members.Update(r) {
		return false, s.members.RaftAddr(), leader
	}
	if raftHeader != "" {
		s.members.SetKind(r.EffectiveAddress(), cluster.KindNacosd, raftHeader)
	} else {
		s.members.SetKind(r.EffectiveAddress(), cluster.KindJava, "")
	}
	return true, s.members.RaftAddr(), leader
}

// Leave is POST /v1/core/cluster/server/leave.
func (s *Server) Leave(addrs []string) error { return s.members.Leave(addrs) }

// UpAddresses is memberAddressInfos.
func (s *Server) UpAddresses() []string { return s.members.UpAddresses() }

// HasMember is ServerMemberManager.hasMember (fuzzy).
func (s *Server) HasMember(addr string) bool { return s.members.HasMember(addr) }

// distroProxy is DistroFilter's forwarding call: the owner gets the request
// with the server headers (path as the client sent it, so the context
// path is stripped for the peer client, which adds its own).
func (s *Server) distroProxy(ctx context.Context, method, addr, path string, query url.Values, header http.Header, timeout time.Duration) (int, []byte, error) {
	p := strings.TrimPrefix(path, s.cfg.ContextPath)
	resp, err := s.peers.Do(ctx, cluster.Request{Method: method, Addr: addr, Path: p, Query: query, Header: header, Timeout: timeout})
	if err != nil {
		return 0, nil, err
	}
	return resp.Status, resp.Body, nil
}

// forwardToLeader relays a client's write to the raft leader as it came.
func (s *Server) forwardToLeader(ctx context.Context, addr, method, uri string, header http.Header, body []byte) (int, http.Header, []byte, error) {
	resp, err := s.peers.Do(ctx, cluster.Request{Method: method, Addr: addr, RawURI: uri, Header: header, Body: body,
		Timeout: 15 * time.Second})
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.Status, resp.Header, resp.Body, nil
}

// distroTransport adapts the peer client to distro.Transport.
type distroTransport struct{ p *cluster.Peers }

func (t distroTransport) Do(ctx context.Context, r distro.Request) (distro.Response, error) {
	resp, err := t.p.Do(ctx, cluster.Request{Method: r.Method, Addr: r.Addr, Path: r.Path, Query: r.Query, Header: r.Header,
		Body: r.Body, Timeout: r.Timeout})
	return distro.Response{Status: resp.Status, Header: resp.Header, Body: resp.Body}, err
}

// distroStore adapts the naming registry to distro.Store.
type distroStore struct{ reg *naming.Registry }

func (d *distroStore) Instances(ref distro.ServiceRef) ([]compat.DistroInstance, bool) {
	return d.reg.EphemeralInstances(ref.NamespaceID, ref.Service)
}

func (d *distroStore) Apply(ref distro.ServiceRef, list []compat.DistroInstance) error {
	return d.reg.ApplyRemote(ref.NamespaceID, ref.Service, list)
}

func (d *distroStore) Remove(ref distro.ServiceRef) { d.reg.RemoveRemote(ref.NamespaceID, ref.Service) }

func (d *distroStore) ServiceChecksums(owned func(string) bool) map[string]map[string]string {
	return d.reg.StatusChecksums(owned)
}

func (d *distroStore) ServiceChecksum(ref distro.ServiceRef) (string, bool) {
	return d.reg.StatusChecksum(ref.NamespaceID, ref.Service)
}

func (d *distroStore) BeatTimes(owned func(string) bool, since int64, all bool) []distro.ServiceBeats {
	list := d.reg.BeatTimes(owned, since, all)
	out := make([]distro.ServiceBeats, len(list))
	for i, b := range list {
		out[i] = distro.ServiceBeats{ServiceRef: distro.ServiceRef{NamespaceID: b.NamespaceID, Service: b.Service}, Beats: b.Beats}
	}
	return out
}

func (d *distroStore) ApplyBeatTimes(ref distro.ServiceRef, beats map[string]int64) {
	d.reg.ApplyBeatTimes(ref.NamespaceID, ref.Service, beats)
}

func (d *distroStore) ApplyHealth(ref distro.ServiceRef, healthy map[string]bool) {
	d.reg.ApplyHealth(ref.NamespaceID, ref.Service, healthy)
}

var _ httpapi.Distro = (*distro.Distro)(nil)

// IsRaftLeader reports whether this node leads the raft group (tests, the
// console).
func (s *Server) IsRaftLeader() bool { return s.store.IsLeader() }

// RaftAppliedIndex is the last raft index this node applied.
func (s *Server) RaftAppliedIndex() uint64 { return s.store.AppliedIndex() }

// RaftLeaderID is the member address of the raft leader this node knows
// ("" during an election).
func (s *Server) RaftLeaderID() string { return s.store.LeaderID() }

// distroView is the console's Distro columns: each member's share of the
// instance lists held here and its last checksum round.
func (s *Server) distroView() map[string]console.DistroView {
	owned := s.distro.OwnedCounts()
	held := 0
	for _, n := range owned {
		held += n
	}
	out := map[string]console.DistroView{}
	for _, a := range s.members.Addresses() {
		out[a] = console.DistroView{Owned: owned[a], Held: held}
	}
	for a, pc := range s.distro.PeerChecksums() {
		v := out[a]
		v.LastRound, v.Lists, v.Differing, v.FetchFailed, v.Aborted = pc.At, pc.Lists, pc.Differing, pc.FetchFailed, pc.Aborted
		out[a] = v
	}
	return out
}
