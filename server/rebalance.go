package server

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/cluster"
)

// DefaultRebalanceDelay is how long after a member (re)joins the members
// compare their 2.x connection counts (the joined member has loaded its
// data and answers by then); DefaultRebalanceInterval how often they
// compare them anyway (a member that restarted between two reports never
// looked down to the others).
const (
	DefaultRebalanceDelay    = 10 * time.Second
	DefaultRebalanceInterval = 60 * time.Second
)

// loaderFactor is RemoteUtils.LOADER_FACTOR: a member holding more than
// avg × (1 + 0.1) connections sheds the excess to members holding fewer
// than avg × (1 − 0.1).
const loaderFactor = 0.1

// rebalancer moves 2.x client connections to members that joined (a
// restarted member, a new one), so that they take load again: Java
// 2.5.1's smartReloadCluster (ServerLoaderController), which Java leaves
// to an operator's call, run by nacosd whenever a member joins. Each
// member decides for itself: it asks the other nacosd members for their
// counts (GET /v1/nacosd/loader), and when it holds more than the upper
// limit it sends ConnectResetRequest to its excess connections, naming a
// member under the lower limit to move to (ConnectionManager.loadCount
// with a redirect address).
type rebalancer struct {
	s     *Server
	delay time.Duration

	mu      sync.Mutex
	up      map[string]bool // other members UP at the last change
	pending bool
}

func (s *Server) startRebalance() {
	if s.cfg.Standalone || s.conns == nil {
		return
	}
	d := s.cfg.GRPC.RebalanceDelay
	if d == 0 {
		d = DefaultRebalanceDelay
	}
	if d < 0 {
		return // off
	}
	r := &rebalancer{s: s, delay: d, up: s.othersUp()}
	s.members.Subscribe(r.membersChanged)
	every := s.cfg.GRPC.RebalanceInterval
	if every == 0 {
		every = DefaultRebalanceInterval
	}
	if every > 0 {
		s.clusterTasks.Every(every, every, r.check)
	}
}

func (s *Server) othersUp() map[string]bool {
	up := map[string]bool{}
	self := s.members.SelfAddress()
	for _, m := range s.members.Members() {
		if a := m.Address(); a != self && m.State == compat.MemberUp {
			up[a] = true
		}
	}
	return up
}

// membersChanged schedules a comparison when a member became UP.
func (r *rebalancer) membersChanged() {
	up := r.s.othersUp()
	r.mu.Lock()
	joined := false
	for a := range up {
		if !r.up[a] {
			joined = true
		}
	}
	r.up = up
	schedule := joined && !r.pending
	if schedule {
		r.pending = true
	}
	r.mu.Unlock()
	if schedule {
		r.s.cfg.Clock.AfterFunc(r.delay, func() {
			r.mu.Lock()
			r.pending = false
			r.mu.Unlock()
			r.check()
		})
	}
}

// loaderCount is sdkCount for GET /v1/nacosd/loader (0 before the gRPC
// edge runs).
func (s *Server) loaderCount() int {
	if s.conns == nil {
		return 0
	}
	return s.sdkCount()
}

// sdkCount is this node's number of 2.x client connections.
func (s *Server) sdkCount() int {
	n := 0
	for _, c := range s.conns.List() {
		if c.SDK() {
			n++
		}
	}
	return n
}

// check compares the members' counts and sheds this node's excess.
func (r *rebalancer) check() {
	s := r.s
	self := s.members.SelfAddress()
	counts := map[string]int{self: s.sdkCount()}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for a := range s.othersUp() {
		if kind, _ := s.members.Kind(a); kind == cluster.KindJava {
			continue // no 2.x port
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			resp, err := s.peers.Do(ctx, cluster.Request{Method: http.MethodGet, Addr: a, Path: "/v1/nacosd/loader"})
			var body struct {
				SDKConCount *int `json:"sdkConCount"`
			}
			if err != nil || resp.Status != http.StatusOK || json.Unmarshal(resp.Body, &body) != nil || body.SDKConCount == nil {
				return
			}
			mu.Lock()
			counts[a] = *body.SDKConCount
			mu.Unlock()
		})
	}
	wg.Wait()
	moves := planRebalance(self, counts)
	if len(moves) == 0 {
		return
	}
	s.log.Info("rebalancing 2.x connections to members under the average", "counts", counts, "moves", moves)
	var ids []string
	for _, c := range s.conns.List() {
		if c.SDK() {
			ids = append(ids, c.ID)
		}
	}
	for _, target := range sortedKeys(moves) {
		for range moves[target] {
			if len(ids) == 0 {
				return
			}
			s.conns.Reset(ids[len(ids)-1], target) // the newest first
			ids = ids[:len(ids)-1]
		}
	}
}

// planRebalance is smartReloadCluster's arithmetic for one member: the
// connections self should move, per target member.
func planRebalance(self string, counts map[string]int) map[string]int {
	total := 0
	for _, n := range counts {
		total += n
	}
	avg := total / len(counts)
	over, low := int(float64(avg)*(1+loaderFactor)), int(float64(avg)*(1-loaderFactor))
	excess := counts[self] - over
	if excess <= 0 {
		return nil
	}
	type member struct {
		addr string
		need int
	}
	var lows []member
	for a, n := range counts {
		if a != self && n < low {
			lows = append(lows, member{a, avg - n})
		}
	}
	if len(lows) == 0 {
		return nil
	}
	sort.Slice(lows, func(i, j int) bool {
		if lows[i].need != lows[j].need {
			return lows[i].need > lows[j].need
		}
		return lows[i].addr < lows[j].addr
	})
	moves := map[string]int{}
	for excess > 0 {
		gave := false
		for i := range lows {
			if excess == 0 {
				break
			}
			if lows[i].need > 0 {
				lows[i].need--
				moves[lows[i].addr]++
				excess--
				gave = true
			}
		}
		if !gave {
			break
		}
	}
	return moves
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
