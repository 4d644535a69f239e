package console

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/httpapi"
)

// nodeView is one row of the console's cluster page. Fields that cluster
// mode will add (the Distro view, checksum health) go here as new optional
// fields; the page shows every column it knows of that a node has.
type nodeView struct {
	Address         string `json:"address"`
	IP              string `json:"ip"`
	Port            int    `json:"port"`
	State           string `json:"state"`
	Self            bool   `json:"self"`
	Version         string `json:"version,omitempty"`
	LastRefreshTime int64  `json:"lastRefreshTime,omitempty"`
	RaftPort        string `json:"raftPort,omitempty"`
	RaftRole        string `json:"raftRole,omitempty"`
	// DistroRole is the member's share of the instance lists this node
	// holds ("owns 12 of 40 lists"); cluster mode only.
	DistroRole string `json:"distroRole,omitempty"`
	// ChecksumHealth is the outcome of the last Distro checksum round the
	// member sent this node; cluster mode only.
	ChecksumHealth string         `json:"checksumHealth,omitempty"`
	ExtendInfo     map[string]any `json:"extendInfo"`
}

// DistroView is what this node's Distro knows of one member: how many of
// the instance lists held here it owns, and its last checksum round.
type DistroView struct {
	Owned, Held      int
	LastRound        time.Time // zero: no round received yet
	Lists, Differing int
	FetchFailed      bool
	Aborted          bool
}

// distroText renders the Distro columns of a member.
func distroText(v DistroView, self bool, now time.Time) (role, health string) {
	role = fmt.Sprintf("owns %d of %d lists", v.Owned, v.Held)
	switch {
	case self:
		health = "this node"
	case v.LastRound.IsZero():
		health = "no checksum round received yet"
	default:
		ago := now.Sub(v.LastRound).Round(time.Second)
		switch {
		case v.Aborted:
			health = fmt.Sprintf("round refused %s ago: it named a list this node owns (member lists differ)", ago)
		case v.FetchFailed:
			health = fmt.Sprintf("%d of %d lists differed, fetch failed, %s ago", v.Differing, v.Lists, ago)
		case v.Differing > 0:
			health = fmt.Sprintf("%d of %d lists differed and were fetched, %s ago", v.Differing, v.Lists, ago)
		default:
			health = fmt.Sprintf("in sync: %d lists, %s ago", v.Lists, ago)
		}
	}
	return role, health
}

type clusterView struct {
	Standalone bool       `json:"standalone"`
	Raft       RaftStatus `json:"raft"`
	Nodes      []nodeView `json:"nodes"`
}

// buildClusterView joins the member list with this node's raft status: self
// gets its own raft state; another member is the Leader when the leader's
// raft address is its ip:raftPort, else a Follower.
func buildClusterView(self compat.Member, members []compat.Member, standalone bool, raft RaftStatus, distro map[string]DistroView, now time.Time) clusterView {
	v := clusterView{Standalone: standalone, Raft: raft}
	seen := map[string]bool{}
	for _, m := range append([]compat.Member{self}, members...) {
		addr := m.Address()
		if seen[addr] {
			continue
		}
		seen[addr] = true
		n := nodeView{Address: addr, IP: m.IP, Port: m.Port, State: m.State, Self: addr == self.Address(), ExtendInfo: m.ExtendInfo}
		if n.ExtendInfo == nil {
			n.ExtendInfo = map[string]any{}
		}
		n.Version, _ = m.ExtendInfo["version"].(string)
		n.RaftPort, _ = m.ExtendInfo["raftPort"].(string)
		switch t := m.ExtendInfo["lastRefreshTime"].(type) {
		case int64:
			n.LastRefreshTime = t
		case int:
			n.LastRefreshTime = int64(t)
		case float64:
			n.LastRefreshTime = int64(t)
		case json.Number:
			n.LastRefreshTime, _ = t.Int64()
		}
		switch {
		case n.Self:
			n.RaftRole = raft.State
			n.LastRefreshTime = now.UnixMilli() // it answered this request
		case raft.LeaderAddr != "" && n.RaftPort != "" && raft.LeaderAddr == m.IP+":"+n.RaftPort:
			n.RaftRole = "Leader"
		case raft.LeaderAddr != "":
			n.RaftRole = "Follower"
		}
		if distro != nil {
			n.DistroRole, n.ChecksumHealth = distroText(distro[addr], n.Self, now)
		}
		v.Nodes = append(v.Nodes, n)
	}
	sort.SliceStable(v.Nodes, func(i, j int) bool { return v.Nodes[i].Address < v.Nodes[j].Address })
	return v
}

// clusterNodes is GET /v1/console/cluster/nodes: the members of
// /v1/core/cluster/nodes with their raft role and the raft status.
func (h *handlers) clusterNodes(c *fiber.Ctx) error {
	if h.Cluster == nil {
		return notAvailable("the member list")
	}
	var raft RaftStatus
	if h.Raft != nil {
		raft = h.Raft()
	}
	var distro map[string]DistroView
	if h.Distro != nil && !h.Cluster.Standalone() {
		distro = h.Distro()
	}
	v := buildClusterView(h.Cluster.Self(), h.Cluster.Members(), h.Cluster.Standalone(), raft, distro, time.Now())
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return httpapi.SendJSON(c, b)
}
