package jepsen

import (
	"sort"
	"time"
)

// Phases of a run, as the report names them.
const (
	PhaseQuiet    = "quiet"    // no fault, none in the last RecoveryWindow
	PhaseRecovery = "recovery" // within RecoveryWindow after a fault ended
	// fault phases carry the fault's label: kill-leader, kill-follower,
	// pause-leader, partition-leader, partition-follower
)

// Situations of one node, for the staleness table.
const (
	SitDown        = "down"
	SitPaused      = "paused"
	SitPartitioned = "partitioned"
	SitCatchingUp  = "catching up" // within ConvergeBound after it came back
)

// RecoveryWindow follows each fault before the cluster counts as quiet.
const RecoveryWindow = 5 * time.Second

// ElectionBound is the least staleness docs/cluster.md allows a member of
// the majority right after the leader is lost (killed, paused, cut off): a
// follower learns that an entry it holds is committed with the leader's
// next message, so what the lost leader committed last becomes readable on
// the others only once a new leader is elected (an election timeout of 1 s,
// randomised up to 2 s, then the vote) and has told them. On a loaded
// machine the election can take longer: the bound is then the time until a
// leader of a newer term was seen, plus ConvergeBound (leaderLostBound).
const ElectionBound = 3 * time.Second

// leaderLostBound returns the staleness allowed at t when t falls after the
// start of a fault that took the leader away and before the cluster had
// its next leader for ConvergeBound (at least ElectionBound after the
// fault): the time from the fault to that leader plus ConvergeBound, at
// least ElectionBound. ok is false outside every such window.
func (tl *timeline) leaderLostBound(t int64) (bound int64, ok bool) {
	for _, f := range tl.faults {
		switch f.kind {
		case "kill-leader", "pause-leader", "partition-leader":
		default:
			continue
		}
		if t < f.from {
			continue
		}
		end, allowed := f.from+int64(ElectionBound), int64(ElectionBound)
		if back := tl.leaderBack(f.from); back < inf {
			end = max(end, back+int64(ConvergeBound))
			allowed = max(allowed, back-f.from+int64(ConvergeBound))
		}
		if t <= end {
			bound, ok = max(bound, allowed), true
		}
	}
	return bound, ok
}

// leaderBack is when a node was first seen leading in a newer term than
// the newest known at from (polls), or inf.
func (tl *timeline) leaderBack(from int64) int64 {
	then := tl.highestTerm(from)
	best := int64(inf)
	for _, spans := range tl.leader {
		for _, s := range spans {
			if s.term > then && s.from >= from && s.from < best {
				best = s.from
			}
		}
	}
	return best
}

// ConvergeBound is how soon after a node comes back (restarted, resumed,
// healed) its data must be the others' (check 3); reads within it are the
// node's catch-up and are left out of the bounded-staleness check.
const ConvergeBound = time.Second

type span struct {
	from, to int64
	kind     string // a situation, or a fault label
	node     int
	term     uint64 // leader spans
}

func (s span) overlaps(from, to int64) bool { return s.from <= to && from <= s.to }

// timeline is what the nemesis did, as spans.
type timeline struct {
	faults  []span
	iso     map[int][]span // down, paused, partitioned
	catchup map[int][]span
	leader  map[int][]span // the node named itself leader throughout
	// terms: the highest term any poll had reported by each poll's
	// completion, in completion order
	termAt  []int64
	termMax []uint64
}

func newTimeline(run *Run) *timeline {
	tl := &timeline{iso: map[int][]span{}, catchup: map[int][]span{}, leader: map[int][]span{}}
	open := map[[2]int]int64{} // (node, kind index) -> from
	kinds := map[string]int{EvKill: 0, EvReady: 0, EvStop: 1, EvCont: 1, EvPartition: 2, EvHeal: 2}
	names := []string{SitDown, SitPaused, SitPartitioned}
	var fault *span
	for _, e := range run.Events {
		switch e.Kind {
		case EvKill, EvStop, EvPartition:
			open[[2]int{e.Node, kinds[e.Kind]}] = e.T
		case EvReady, EvCont, EvHeal:
			k := [2]int{e.Node, kinds[e.Kind]}
			from, ok := open[k]
			if !ok {
				continue // the first start
			}
			delete(open, k)
			tl.iso[e.Node] = append(tl.iso[e.Node], span{from: from, to: e.T, kind: names[k[1]], node: e.Node})
			tl.catchup[e.Node] = append(tl.catchup[e.Node], span{from: e.T, to: e.T + int64(ConvergeBound), kind: SitCatchingUp, node: e.Node})
		case EvFault:
			fault = &span{from: e.T, to: inf, kind: e.Note, node: e.Node}
		case EvHealed:
			if fault != nil {
				fault.to = e.T
				tl.faults = append(tl.faults, *fault)
				fault = nil
			}
		}
	}
	for k, from := range open {
		tl.iso[k[0]] = append(tl.iso[k[0]], span{from: from, to: inf, kind: names[k[1]], node: k[0]})
	}
	if fault != nil {
		tl.faults = append(tl.faults, *fault)
	}
	// leadership: runs of polls in which a node names itself leader in
	// one term; it was leader (in its own view) from the first poll's
	// answer to the last poll's request
	obs := append([]LeaderObs(nil), run.Leaders...)
	sort.SliceStable(obs, func(i, j int) bool { return obs[i].Complete < obs[j].Complete })
	var top uint64
	for _, o := range obs {
		top = max(top, o.Term)
		tl.termAt = append(tl.termAt, o.Complete)
		tl.termMax = append(tl.termMax, top)
	}
	sort.SliceStable(obs, func(i, j int) bool { return obs[i].Invoke < obs[j].Invoke })
	byNode := map[int][]LeaderObs{}
	for _, o := range obs {
		byNode[o.Node] = append(byNode[o.Node], o)
	}
	for n, list := range byNode {
		for i := 0; i < len(list); {
			if list[i].Leader != n {
				i++
				continue
			}
			j := i
			for j+1 < len(list) && list[j+1].Leader == n && list[j+1].Term == list[i].Term {
				j++
			}
			if j > i {
				tl.leader[n] = append(tl.leader[n], span{from: list[i].Complete, to: list[j].Invoke, kind: "leader", node: n, term: list[i].Term})
			}
			i = j + 1
		}
	}
	return tl
}

// leaderThroughout reports whether node named itself leader in one term
// throughout [from, to], and no poll of any node had reported a higher
// term by then (a leader that was paused names itself leader for a while
// after it resumes, while the others already follow a newer one: its
// reads are a deposed leader's).
func (tl *timeline) leaderThroughout(node int, from, to int64) bool {
	for _, s := range tl.leader[node] {
		if s.from <= from && to <= s.to {
			return tl.highestTerm(to) <= s.term
		}
	}
	return false
}

// highestTerm is the highest term reported by a poll completed by t.
func (tl *timeline) highestTerm(t int64) uint64 {
	i := sort.Search(len(tl.termAt), func(i int) bool { return tl.termAt[i] > t })
	if i == 0 {
		return 0
	}
	return tl.termMax[i-1]
}

// isolated reports whether the node was down, paused, cut off or catching
// up at some time in [from, to].
// cutOffUntil is when node, paused or partitioned at t, came back (the
// latest end of such spans covering t); ok is false when it was not.
func (tl *timeline) cutOffUntil(node int, t int64) (back int64, ok bool) {
	for _, s := range tl.iso[node] {
		if (s.kind == SitPaused || s.kind == SitPartitioned) && s.from <= t && t <= s.to {
			back, ok = max(back, s.to), true
		}
	}
	return back, ok
}

func (tl *timeline) isolated(node int, from, to int64) bool {
	return tl.situation(node, from, to) != ""
}

// situation is the node's own trouble during [from, to], "" for none.
func (tl *timeline) situation(node int, from, to int64) string {
	for _, s := range tl.iso[node] {
		if s.overlaps(from, to) {
			return s.kind
		}
	}
	for _, s := range tl.catchup[node] {
		if s.overlaps(from, to) {
			return s.kind
		}
	}
	return ""
}

// down reports whether the node was down or paused at some time in
// [from, to] (it could not have answered then).
func (tl *timeline) down(node int, from, to int64) bool {
	for _, s := range tl.iso[node] {
		if (s.kind == SitDown || s.kind == SitPaused) && s.overlaps(from, to) {
			return true
		}
	}
	return false
}

// phaseAt is the cluster's phase at t.
func (tl *timeline) phaseAt(t int64) string {
	recovering := false
	for _, f := range tl.faults {
		if f.from <= t && t <= f.to {
			return f.kind
		}
		if f.to < t && t <= f.to+int64(RecoveryWindow) {
			recovering = true
		}
	}
	if recovering {
		return PhaseRecovery
	}
	return PhaseQuiet
}

// situationOrPhase labels a read for the staleness table.
func (tl *timeline) situationOrPhase(node int, from, to int64) string {
	if s := tl.situation(node, from, to); s != "" {
		return s
	}
	return tl.phaseAt(from)
}
