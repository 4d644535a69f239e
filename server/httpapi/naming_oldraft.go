package httpapi

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
)

// oldRaftPeer is the local peer of the old naming raft as 1.4.8 shows it
// once that raft has stopped (every member at 1.4+): RaftPeerSet.local()
// creates it on first use with term -1 (the stopped set's localTerm) and
// random timers that no longer move.
type oldRaftPeer struct {
	once                       sync.Once
	leaderDueMs, heartbeatDues int64
}

func (p *oldRaftPeer) values() (int64, int64) {
	p.once.Do(func() {
		p.leaderDueMs, p.heartbeatDues = rand.Int64N(15000), rand.Int64N(5000)
	})
	return p.leaderDueMs, p.heartbeatDues
}

// oldRaftClusterState is GET /operator/cluster/state (deprecated): the old raft's
// local peer; in cluster mode the stopped peer set has no peers and Java
// throws IllegalStateException.
func (h *namingHandlers) oldRaftClusterState(c *fiber.Ctx) error {
	addr := ""
	standalone := true
	if h.Cluster != nil {
		addr, standalone = h.Cluster.Self().Address(), h.Cluster.Standalone()
	}
	if !standalone {
		return compat.ServerError("unable to find local peer: " + addr + ", all peers: []")
	}
	leader, heartbeat := h.oldPeer.values()
	w := compat.NewJSON(128)
	w.BeginObject().Key("ip").Str(addr).Key("term").Int(-1).Key("leaderDueMs").Int(leader).
		Key("heartbeatDueMs").Int(heartbeat).Key("state").Str("FOLLOWER").EndObject()
	return SendJSON(c, w.Bytes())
}

// oldServerStatus is GET /operator/server/status (deprecated): the status
// reports of 1.2.1-and-older members, lines "site#ip:port#time#weight"
// separated by CRLF. Malformed lines (three parts or fewer) are skipped; an
// address that is no member is refused. nacosd keeps no site or weight per
// member, so a member's report changes nothing.
func (h *namingHandlers) oldServerStatus(c *fiber.Ctx) error {
	status, err := ParamsOf(c).SpringRequired("serverStatus")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(status, "\r\n") {
		parts := strings.Split(line, "#")
		if len(parts) <= 3 {
			continue
		}
		addr := parts[1]
		if compat.JavaTrim(addr) == "" {
			return compat.IllegalArgument("ip and port string cannot be empty!")
		}
		info := strings.Split(addr, ":")
		if strings.HasPrefix(addr, "[") && strings.Contains(addr, "]:") {
			i := strings.LastIndex(addr, "]:")
			info = []string{addr[1:i], addr[i+2:]}
		}
		if len(info) < 2 {
			return compat.ServerError("Index 1 out of bounds for length " + strconv.Itoa(len(info)))
		}
		if _, err := ParseJavaInt(info[1]); err != nil {
			return err
		}
		if len(parts) == 4 {
			if _, err := ParseJavaInt(parts[3]); err != nil {
				return err
			}
		}
		if !h.isMember(addr) {
			return compat.IllegalArgument("server: " + addr + " is not in serverlist")
		}
	}
	return SendText(c, "ok")
}

func (h *namingHandlers) isMember(addr string) bool {
	if h.Cluster == nil {
		return false
	}
	for _, m := range h.Cluster.Members() {
		if m.Address() == addr {
			return true
		}
	}
	return false
}
