package jepsen

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// readStaleness is how stale an acknowledged read was: the largest
// staleness of what it saw (see view.staleness), -1 if it saw a value no
// write wrote.
func readStaleness(vs views, op *Op, slots int) int64 {
	worst := int64(0)
	for _, o := range observations(op, slots) {
		s := vs[o.view].staleness(o, op)
		if s < 0 {
			return -1
		}
		worst = max(worst, s)
	}
	return worst
}

// StaleRow is one cell of the staleness table.
type StaleRow struct {
	Node  int
	Label string // situation or phase
	Reads int
	Stale int // reads with staleness > 0
	Max   int64
	MaxOp *Op
}

// Staleness measures every acknowledged read (the final reads aside), by
// node and by the node's situation or the cluster's phase.
func Staleness(run *Run) []StaleRow {
	vs := buildViews(run)
	tl := newTimeline(run)
	rows := map[[2]string]*StaleRow{}
	for _, op := range run.Ops {
		if !op.Kind.IsRead() || op.Outcome != OK || op.Client >= finalClient || op.Kind == EphList {
			continue
		}
		label := tl.situationOrPhase(op.Node, op.Invoke, op.Complete)
		k := [2]string{fmt.Sprint(op.Node), label}
		row := rows[k]
		if row == nil {
			row = &StaleRow{Node: op.Node, Label: label}
			rows[k] = row
		}
		row.Reads++
		s := readStaleness(vs, op, run.PISlots)
		if s > 0 {
			row.Stale++
		}
		if s > row.Max || row.MaxOp == nil {
			row.Max, row.MaxOp = max(s, 0), op
		}
	}
	out := make([]StaleRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].Label < out[j].Label
	})
	return out
}

// Recovery is how one node came back after a fault.
type Recovery struct {
	Node      int
	Kind      string // down, paused, partitioned
	Back      int64  // restarted and answering / resumed / healed
	Converged int64  // time from Back until its reads stayed fresh (-1: never in the window)
	Window    int64  // reads looked at until then
	Reads     int
	Worst     *Op // the stalest read after Back+ConvergeBound
	WorstAge  int64
}

// CheckConvergence is check 3: every node is identical to the others
// within ConvergeBound of its healing. After each fault it is judged from
// the node's reads (a read later than ConvergeBound after the node came
// back must not be staler than bound); at the end of the run, from the
// final comparison of every node's full state after the workload stopped.
func CheckConvergence(run *Run, bound time.Duration) (*Result, []Recovery) {
	r := &Result{ID: "3", Title: fmt.Sprintf("nodes identical within %v of healing", ConvergeBound), Fails: true}
	vs := buildViews(run)
	tl := newTimeline(run)
	var recs []Recovery
	nodes := make([]int, 0, len(tl.iso))
	for n := range tl.iso {
		nodes = append(nodes, n)
	}
	sort.Ints(nodes)
	for _, n := range nodes {
		for _, s := range tl.iso[n] {
			if s.to == inf {
				continue
			}
			// a restarted node may answer before the checker's liveness
			// probe sees it: its first answer is when it came back
			back := s.to
			if s.kind == SitDown {
				for _, op := range run.Ops {
					if op.Node == n && op.Outcome == OK && op.Invoke > s.from && op.Invoke < back {
						back = op.Invoke
					}
				}
			}
			// the window: until the node's or the cluster's next fault
			end := run.End
			for _, f := range tl.faults {
				if f.from > s.to && f.from < end {
					end = f.from
				}
			}
			rec := Recovery{Node: n, Kind: s.kind, Back: back, Window: end - back, Converged: 0}
			lastStale := int64(-1)
			for _, op := range run.Ops {
				if op.Node != n || !op.Kind.IsRead() || op.Outcome != OK || op.Kind == EphList ||
					op.Client >= finalClient || op.Invoke < back || op.Invoke > end {
					continue
				}
				rec.Reads++
				age := readStaleness(vs, op, run.PISlots)
				if age < 0 || age > int64(bound) {
					lastStale = max(lastStale, op.Invoke)
					if op.Invoke > back+int64(ConvergeBound) && (rec.Worst == nil || age > rec.WorstAge || age < 0) {
						rec.Worst, rec.WorstAge = op, age
					}
				}
			}
			if lastStale >= 0 {
				rec.Converged = lastStale - back
			}
			if rec.Reads == 0 {
				rec.Converged = -1
			}
			recs = append(recs, rec)
			if rec.Worst != nil {
				r.add(fmt.Sprintf("node %d (%s until %s) still served reads older than %v %.3fs after it came back (stalest: %.3fs old)",
					n+1, s.kind, fmtT(s.to), bound, float64(rec.Converged)/1e9, float64(rec.WorstAge)/1e9), rec.Worst)
			}
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Back < recs[j].Back })
	switch {
	case run.Converged < 0:
		r.add("after the workload stopped the nodes never became identical: " + run.FinalDiff)
	case run.Converged > int64(ConvergeBound):
		r.add(fmt.Sprintf("after the workload stopped the nodes became identical only %.3fs later", float64(run.Converged)/1e9))
	}
	if run.Converged >= 0 {
		r.Summary = fmt.Sprintf("final: identical %.3fs after the workload stopped; %d recoveries", float64(run.Converged)/1e9, len(recs))
	} else {
		r.Summary = fmt.Sprintf("final: never identical; %d recoveries", len(recs))
	}
	return r, recs
}

// FinalDiff describes how node states differ ("" when identical).
func FinalDiff(states []map[string]string) string {
	if len(states) == 0 {
		return ""
	}
	keys := map[string]bool{}
	for _, s := range states {
		for k := range s {
			keys[k] = true
		}
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var diffs []string
	for _, k := range names {
		same := true
		for _, s := range states[1:] {
			if s[k] != states[0][k] {
				same = false
			}
		}
		if !same {
			var vals []string
			for i, s := range states {
				vals = append(vals, fmt.Sprintf("n%d=%s", i+1, s[k]))
			}
			diffs = append(diffs, k+": "+strings.Join(vals, " "))
		}
	}
	return strings.Join(diffs, "; ")
}
