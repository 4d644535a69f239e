package jepsen

import (
	"fmt"
	"github.com/nacosd/nacosd/distro"
	"sort"
	"strings"
	"time"
)

// EphOptions are the allowances of check 6.
type EphOptions struct {
	// RegGrace: an instance must be listed everywhere from this long
	// after its first acknowledged registration (Distro ships a change to
	// the other members in about 200–300 ms).
	RegGrace time.Duration
	// RestartGrace: samples of a node within this long after it came back
	// from down or paused are left out (it loads every list from a peer
	// before it answers, but a beat proxied to it while it started may
	// still be in flight).
	RestartGrace time.Duration
	// Silence: an instance whose beater got no acknowledged beat for this
	// long is not required (the owner may have marked it unhealthy at 15 s
	// and may remove it at 30 s); with a beat a second this only matters
	// when every node refused the beats.
	Silence time.Duration
	// Expiry: a stopped instance must be gone from every node this long
	// after its last beat (Java: 30 s, checked every 5 s).
	Expiry time.Duration
	// Dereg: a deregistered instance must be gone from every node this
	// long after the deregistration was acknowledged (Distro ships it in
	// about 200–300 ms), and stay gone.
	Dereg time.Duration
}

// DefaultEphOptions are the allowances the report states.
func DefaultEphOptions() EphOptions {
	return EphOptions{RegGrace: 3 * time.Second, RestartGrace: 2 * time.Second, Silence: 20 * time.Second,
		Expiry: 31 * time.Second, Dereg: 3 * time.Second}
}

// ExpiryRow is how long a stopped instance stayed listed.
type ExpiryRow struct {
	Beater    Beater
	LastBeat  int64
	LastSeen  int64 // the last sample (any node, not isolated) listing it; -1 none
	Checked   bool  // samples after LastBeat+Expiry exist
	StaleNode int
	Dereg     *Op // its acknowledged deregistration, if it deregistered
	// Resurrected: listed after its deregistration (and opt.Dereg)
	Resurrected bool
}

// CheckEphemeral is check 6: a beating instance is never missing from a
// node's list (samples of a node down, paused or just back aside), and a
// stopped one is gone from every node within opt.Expiry of its last beat
// (a deregistered one within opt.Dereg of its deregistration, for good).
func CheckEphemeral(run *Run, opt EphOptions) (*Result, []ExpiryRow) {
	r := &Result{ID: "6", Title: fmt.Sprintf("beating instances never missing; stopped ones gone within %v, deregistered ones within %v", opt.Expiry, opt.Dereg), Fails: true}
	tl := newTimeline(run)
	type beats struct {
		firstOK int64
		okDone  []int64 // completion of acknowledged beats and registrations
		last    int64   // completion of the last attempt
		dereg   *Op     // the acknowledged deregistration
	}
	bs := map[int]*beats{}
	for _, b := range run.Beaters {
		bs[b.ID] = &beats{firstOK: -1}
	}
	var samples []*Op
	for _, op := range run.Ops {
		switch op.Kind {
		case EphReg, EphBeat:
			b := bs[op.Slot]
			if b == nil {
				continue
			}
			if op.Complete != inf {
				b.last = max(b.last, op.Complete)
			} else {
				b.last = max(b.last, op.Invoke)
			}
			if op.Outcome == OK {
				if b.firstOK < 0 || op.Complete < b.firstOK {
					b.firstOK = op.Complete
				}
				b.okDone = append(b.okDone, op.Complete)
			}
		case EphDereg:
			if b := bs[op.Slot]; b != nil && op.Outcome == OK && b.dereg == nil {
				b.dereg = op
			}
		case EphList:
			if op.Outcome == OK && op.Client < finalClient {
				samples = append(samples, op)
			}
		}
	}
	for _, b := range bs {
		sort.Slice(b.okDone, func(i, j int) bool { return b.okDone[i] < b.okDone[j] })
	}
	required, missing := 0, 0
	type miss struct{ beater, node int }
	misses := map[miss][]*Op{}
	var rows []ExpiryRow
	for _, bt := range run.Beaters {
		b := bs[bt.ID]
		stop := run.End
		if bt.Stopped > 0 {
			stop = bt.Stopped
		}
		row := ExpiryRow{Beater: bt, LastBeat: b.last, LastSeen: -1, StaleNode: -1}
		var deregFirst, deregLast, staleFirst, staleLast *Op
		for _, s := range samples {
			if s.Key != bt.Service {
				continue
			}
			t := s.Invoke
			listed := s.Insts[bt.Inst]
			// deregistered: gone within opt.Dereg, for good (a beat
			// processed after the delete must not bring it back)
			if b.dereg != nil && listed && t > deregBound(tl, b.dereg, opt) && tl.situation(s.Node, s.Invoke, s.Complete) == "" {
				if deregFirst == nil {
					deregFirst = s
				}
				deregLast = s
			}
			// stopped: gone within opt.Expiry of the last beat, on every
			// node that is neither cut off nor catching up
			if bt.Stopped > 0 && t > bt.Stopped && tl.situation(s.Node, s.Invoke, s.Complete) == "" {
				if listed {
					row.LastSeen = max(row.LastSeen, t)
				}
				if t > b.last+expiryBound(tl, run.Nodes, bt, b.last, opt) {
					row.Checked = true
					if listed {
						if staleFirst == nil {
							staleFirst = s
						}
						staleLast = s
						row.StaleNode = s.Node
					}
				}
			}
			if b.firstOK < 0 || t < b.firstOK+int64(opt.RegGrace) || t >= stop {
				continue
			}
			i := sort.Search(len(b.okDone), func(i int) bool { return b.okDone[i] > t })
			if i == 0 || t-b.okDone[i-1] > int64(opt.Silence) {
				continue
			}
			if tl.down(s.Node, s.Invoke-int64(opt.RestartGrace), s.Complete) {
				continue
			}
			required++
			if !listed {
				missing++
				k := miss{bt.ID, s.Node}
				misses[k] = append(misses[k], s)
			}
		}
		switch {
		case deregFirst != nil:
			row.Resurrected = true
			r.addKind("deregistered instances listed again", fmt.Sprintf("deregistered instance %s of %s listed on node %d %.1fs after its deregistration was acknowledged, and until %s (%.1fs after it) on node %d",
				bt.Inst, bt.Service, deregFirst.Node+1, float64(deregFirst.Invoke-b.dereg.Complete)/1e9,
				fmtT(deregLast.Invoke), float64(deregLast.Invoke-b.dereg.Complete)/1e9, deregLast.Node+1), b.dereg, deregFirst, deregLast)
		case staleFirst != nil:
			r.addKind("stopped instances listed too long", fmt.Sprintf("stopped instance %s of %s still listed on node %d %.1fs after its last beat (at %s), and until %s (%.1fs after it) on node %d",
				bt.Inst, bt.Service, staleFirst.Node+1, float64(staleFirst.Invoke-b.last)/1e9, fmtT(b.last),
				fmtT(staleLast.Invoke), float64(staleLast.Invoke-b.last)/1e9, staleLast.Node+1), staleFirst, staleLast)
		}
		if bt.Stopped > 0 {
			row.Dereg = b.dereg
			rows = append(rows, row)
		}
	}
	keys := make([]miss, 0, len(misses))
	for k := range misses {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return misses[keys[i]][0].Invoke < misses[keys[j]][0].Invoke
	})
	for _, k := range keys {
		ops := misses[k]
		bt := run.Beaters[k.beater]
		label := tl.situationOrPhase(k.node, ops[0].Invoke, ops[0].Complete)
		r.addKind("beating instances missing", fmt.Sprintf("beating instance %s of %s missing from node %d in %d sample(s), first at %s (%s)",
			bt.Inst, bt.Service, k.node+1, len(ops), fmtT(ops[0].Invoke), label), ops[:min(len(ops), 3)]...)
	}
	pct := 0.0
	if required > 0 {
		pct = 100 * float64(missing) / float64(required)
	}
	r.Summary = fmt.Sprintf("%d of %d required samples missed a beating instance (%.2f %%); %d stopped instances", missing, required, pct, len(rows))
	unverified := 0
	for _, row := range rows {
		if !row.Checked {
			unverified++
		}
	}
	if unverified > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d stopped instance(s) had no sample later than %v after their last beat: expiry not verified for them", unverified, opt.Expiry))
	}
	return r, rows
}

// deregBound is when an acknowledged deregistration must show on every
// node: opt.Dereg after it, or, when the node that acknowledged it was cut
// off or paused then (an AP write: it reaches the others only through that
// node's Distro sync), ConvergeBound after that node is back — as Java's
// Distro does, and as expiryBound allows for an owner cut off.
func deregBound(tl *timeline, dereg *Op, opt EphOptions) int64 {
	bound := dereg.Complete + int64(opt.Dereg)
	if back, ok := tl.cutOffUntil(dereg.Node, dereg.Complete); ok {
		bound = max(bound, back+int64(ConvergeBound))
	}
	return bound
}

// expiryBound is how long after its last beat a stopped instance may stay
// listed: opt.Expiry, unless the service's Distro owner was paused or cut
// off when the instance fell due (30 s after the last beat). Only the owner
// expires instances and a paused or partitioned member stays its services'
// owner (it is SUSPICIOUS, which Distro's mapping still counts, as Java's
// does) until it is DOWN, so the others learn of the expiry once the owner
// is back: until its return plus ConvergeBound (docs/cluster.md). A killed
// owner is DOWN at once (its connections are refused), and the new owner
// knows the beats: no allowance. The owner is found as Distro finds it:
// the service's hash over the members' sorted addresses (127.0.0.21–23,
// one port: the node order).
func expiryBound(tl *timeline, n int, bt Beater, last int64, opt EphOptions) int64 {
	bound := int64(opt.Expiry)
	if n == 0 {
		return bound
	}
	svc := bt.Service
	if !strings.Contains(svc, "@@") {
		svc = "DEFAULT_GROUP@@" + svc
	}
	owner := distro.Hash(svc) % n
	due := last + int64(30*time.Second)
	if back, ok := tl.cutOffUntil(owner, due); ok {
		bound = max(bound, back+int64(ConvergeBound)-last)
	}
	return bound
}
