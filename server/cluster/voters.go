package cluster

import (
	"net"
	"slices"
	"strconv"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// Raft is the CP store as cluster control drives it: its voter set
// follows the member list, and self's raftMetaData follows it
// (*raftstore.Store).
type Raft interface {
	IsLeader() bool
	LeaderAddr() string
	Stats() map[string]string
	Servers() ([]raftstore.Server, error)
	AddVoter(id, addr string) error
	RemoveServer(id string) error
}

// Raft group names Java 1.4.8 shows in raftMetaData: nacosd keeps configs
// (Java's embedded-storage group) and naming's persistent data in one raft
// group, so both names describe it.
var raftGroups = [...]string{"nacos_config", "naming_persistent_service"}

// BootstrapPeers is the voter list a fresh cluster member bootstraps
// with: every member of the list but those known to be Java nodes, each at
// the raft address it announced or else at its port − 1000 (Java's raft
// port rule); self is at selfRaft.
func (m *Manager) BootstrapPeers(selfRaft string) []raftstore.Peer {
	var out []raftstore.Peer
	self := m.SelfAddress()
	for _, a := range m.Addresses() {
		if a == self {
			out = append(out, raftstore.Peer{ID: a, Addr: selfRaft})
			continue
		}
		switch kind, raftAddr := m.Kind(a); kind {
		case KindJava: // its JRaft cannot vote here
			continue
		case KindNacosd:
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

// PublishRaftMeta publishes self's raftMetaData as JRaftProtocol does:
// per raft group the leader (ip:raftPort), the members and the term.
func (m *Manager) PublishRaftMeta(r Raft) {
	st := r.Stats()
	servers, err := r.Servers()
	if err != nil {
		return
	}
	var group []any
	for _, sv := range servers {
		group = append(group, sv.Addr)
	}
	props := map[string]any{"raftGroupMember": group}
	if l := r.LeaderAddr(); l != "" {
		props["leader"] = l
	}
	if t, err := strconv.ParseInt(st["term"], 10, 64); err == nil {
		props["term"] = t
	}
	meta := map[string]any{}
	for _, g := range raftGroups {
		meta[g] = props
	}
	m.SetSelfInfo("raftMetaData", map[string]any{"metaDataMap": meta})
}

// ReconcileVoters runs on the raft leader: nacosd members of the list
// that are not voters are added (at the raft address they announced);
// voters that left the list, or turned out to be Java nodes (whose JRaft
// cannot vote here), are removed. Members not heard from yet are left as
// they are, so a node that is merely down keeps its vote.
func (m *Manager) ReconcileVoters(r Raft) {
	if r == nil || !r.IsLeader() {
		return
	}
	servers, err := r.Servers()
	if err != nil {
		return
	}
	voters := map[string]string{}
	for _, sv := range servers {
		voters[sv.ID] = sv.Addr
	}
	addrs := m.Addresses()
	for _, a := range addrs {
		kind, raftAddr := m.Kind(a)
		if kind != KindNacosd || raftAddr == "" {
			continue
		}
		if cur, ok := voters[a]; !ok || cur != raftAddr {
			m.log.Info("raft: adding voter", "member", a, "raft", raftAddr)
			if err := r.AddVoter(a, raftAddr); err != nil {
				m.log.Warn("raft: add voter failed", "member", a, "err", err)
			}
		}
	}
	for id := range voters {
		kind, _ := m.Kind(id)
		if !slices.Contains(addrs, id) || kind == KindJava {
			if id == m.SelfAddress() {
				continue
			}
			m.log.Info("raft: removing voter", "member", id, "java", kind == KindJava)
			if err := r.RemoveServer(id); err != nil {
				m.log.Warn("raft: remove voter failed", "member", id, "err", err)
			}
		}
	}
}

// Reported records a report's sender (POST /v1/core/cluster/report): it
// is UP in this node's view, and what it runs follows from the raft
// header (a nacosd node announces its raft address; a Java node sends
// none). known is false for an address outside the member list.
func (m *Manager) Reported(r compat.ReportedMember, raftHeader string) (known bool) {
	r.State = compat.MemberUp
	if !m.Update(r) {
		return false
	}
	if raftHeader != "" {
		m.SetKind(r.EffectiveAddress(), KindNacosd, raftHeader)
	} else {
		m.SetKind(r.EffectiveAddress(), KindJava, "")
	}
	return true
}
