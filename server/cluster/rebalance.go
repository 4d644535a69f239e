package cluster

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
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

// Conns is the 2.x connection table a rebalancer sheds connections from
// (the server adapts *connections.Manager).
type Conns interface {
	// SDKIDs lists the client (SDK) connections, the oldest first.
	SDKIDs() []string
	// Reset asks a client connection to move to the member target.
	Reset(id, target string)
}

// RebalanceConfig configures a Rebalancer. Zero durations mean the
// defaults; negative ones turn that trigger off.
type RebalanceConfig struct {
	Members *Manager
	Peers   *Peers
	Conns   Conns
	// Delay is how long after a member (re)joins the counts are compared
	// (DefaultRebalanceDelay; negative: never, as Java without an
	// operator); Interval how often they are compared anyway
	// (DefaultRebalanceInterval; negative: only on joins).
	Delay, Interval time.Duration
	Clock           clock.Clock
	Logger          *slog.Logger
}

// Rebalancer moves 2.x client connections to members that joined (a
// restarted member, a new one), so that they take load again: Java
// 2.5.1's smartReloadCluster (ServerLoaderController), which Java leaves
// to an operator's call, run by nacosd whenever a member joins. Each
// member decides for itself: it asks the other nacosd members for their
// counts (GET /v1/nacosd/loader), and when it holds more than the upper
// limit it sends ConnectResetRequest to its excess connections, naming a
// member under the lower limit to move to (ConnectionManager.loadCount
// with a redirect address).
type Rebalancer struct {
	cfg   RebalanceConfig
	tasks *clock.Schedules
	unsub func()

	mu      sync.Mutex
	up      map[string]bool // other members UP at the last change
	pending bool
}

// StartRebalancer starts comparing counts on joins and every Interval; it
// returns nil when both triggers are off.
func StartRebalancer(cfg RebalanceConfig) *Rebalancer {
	if cfg.Delay == 0 {
		cfg.Delay = DefaultRebalanceDelay
	}
	if cfg.Delay < 0 {
		return nil // off
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultRebalanceInterval
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Rebalancer{cfg: cfg, tasks: clock.NewSchedules(cfg.Clock), up: othersUp(cfg.Members)}
	r.unsub = cfg.Members.Subscribe(r.membersChanged)
	if every := cfg.Interval; every > 0 {
		r.tasks.Every(every, every, r.check)
	}
	return r
}

// Close stops the comparisons (nil-safe).
func (r *Rebalancer) Close() {
	if r == nil {
		return
	}
	r.unsub()
	r.tasks.Close()
}

func othersUp(members *Manager) map[string]bool {
	up := map[string]bool{}
	self := members.SelfAddress()
	for _, m := range members.Members() {
		if a := m.Address(); a != self && m.State == compat.MemberUp {
			up[a] = true
		}
	}
	return up
}

// membersChanged schedules a comparison when a member became UP.
func (r *Rebalancer) membersChanged() {
	up := othersUp(r.cfg.Members)
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
		r.cfg.Clock.AfterFunc(r.cfg.Delay, func() {
			r.mu.Lock()
			r.pending = false
			r.mu.Unlock()
			r.check()
		})
	}
}

// check compares the members' counts and sheds this node's excess.
func (r *Rebalancer) check() {
	members := r.cfg.Members
	self := members.SelfAddress()
	ids := r.cfg.Conns.SDKIDs()
	counts := map[string]int{self: len(ids)}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for a := range othersUp(members) {
		if kind, _ := members.Kind(a); kind == KindJava {
			continue // no 2.x port
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			resp, err := r.cfg.Peers.Do(ctx, Request{Method: http.MethodGet, Addr: a, Path: "/v1/nacosd/loader"})
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
	r.cfg.Logger.Info("rebalancing 2.x connections to members under the average", "counts", counts, "moves", moves)
	ids = r.cfg.Conns.SDKIDs()
	for _, target := range slices.Sorted(maps.Keys(moves)) {
		for range moves[target] {
			if len(ids) == 0 {
				return
			}
			r.cfg.Conns.Reset(ids[len(ids)-1], target) // the newest first
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
