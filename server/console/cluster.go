package console

import (
	"encoding/json"
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
	Address         string         `json:"address"`
	IP              string         `json:"ip"`
	Port            int            `json:"port"`
	State           string         `json:"state"`
	Self            bool           `json:"self"`
	Version         string         `json:"version,omitempty"`
	LastRefreshTime int64          `json:"lastRefreshTime,omitempty"`
	RaftPort        string         `json:"raftPort,omitempty"`
	RaftRole        string         `json:"raftRole,omitempty"`
	ExtendInfo      map[string]any `json:"extendInfo"`
}

type clusterView struct {
	Standalone bool       `json:"standalone"`
	Raft       RaftStatus `json:"raft"`
	Nodes      []nodeView `json:"nodes"`
}

// buildClusterView joins the member list with this node's raft status: self
// gets its own raft state; another member is the Leader when the leader's
// raft address is its ip:raftPort, else a Follower.
func buildClusterView(self compat.Member, members []compat.Member, standalone bool, raft RaftStatus, now time.Time) clusterView {
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
	v := buildClusterView(h.Cluster.Self(), h.Cluster.Members(), h.Cluster.Standalone(), raft, time.Now())
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return httpapi.SendJSON(c, b)
}
