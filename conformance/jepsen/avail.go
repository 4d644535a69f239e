package jepsen

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// AvailRow counts the outcomes of one op kind in one phase.
type AvailRow struct {
	Kind           Kind
	Phase          string
	OK, Fail, Unkn int
	NoLeader       int // answers "did not find the Leader node"
	FastNoLeader   int // of which in less than ElectionWait
	MaxLatency     int64
	MaxLatencyOpID int
	SumLatency     int64
	Completed      int
}

// LeaderFault is the first acknowledged write after a fault that hit the
// leader.
type LeaderFault struct {
	Label     string
	Node      int
	At        int64
	FirstOK   *Op   // the first acknowledged CP write invoked after the fault began (a metadata batch that updated nothing aside)
	After     int64 // FirstOK's completion minus At
	NoLeader  int   // no-leader answers during the fault
	Refusals  int   // definite failures of CP writes during the fault
	Unknowns  int
	FaultSpan int64
}

// noLeaderMessage is JRaft's answer to a write without a leader.
const noLeaderMessage = "did not find the Leader"

// ElectionWait: docs/cluster.md says a write that finds an election under
// way waits for it up to 3 s; a no-leader answer in less than this on a
// node of the majority did not wait.
const ElectionWait = 2500 * time.Millisecond

// Availability is check 7 (a report): outcomes per op kind and phase, and
// the time to the first acknowledged write after each fault on the
// leader.
func Availability(run *Run) ([]AvailRow, []LeaderFault) {
	tl := newTimeline(run)
	rows := map[[2]string]*AvailRow{}
	for _, op := range run.Ops {
		if op.Client >= finalClient {
			continue
		}
		ph := tl.phaseAt(op.Invoke)
		k := [2]string{string(op.Kind), ph}
		row := rows[k]
		if row == nil {
			row = &AvailRow{Kind: op.Kind, Phase: ph}
			rows[k] = row
		}
		switch op.Outcome {
		case OK:
			row.OK++
		case Fail:
			row.Fail++
		default:
			row.Unkn++
		}
		if strings.Contains(op.Err, noLeaderMessage) {
			row.NoLeader++
			if op.Complete-op.Invoke < int64(ElectionWait) {
				row.FastNoLeader++
			}
		}
		if op.Complete != inf {
			lat := op.Complete - op.Invoke
			row.SumLatency += lat
			row.Completed++
			if lat > row.MaxLatency {
				row.MaxLatency, row.MaxLatencyOpID = lat, op.ID
			}
		}
	}
	out := make([]AvailRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].Phase < out[j].Phase
	})
	var lf []LeaderFault
	for _, f := range tl.faults {
		if !strings.HasSuffix(f.kind, "-leader") {
			continue
		}
		l := LeaderFault{Label: f.kind, Node: f.node, At: f.from, FaultSpan: f.to - f.from, After: -1}
		for _, op := range run.Ops {
			if !op.Kind.IsCP() || op.Client >= finalClient || op.Invoke < f.from {
				continue
			}
			if op.Invoke <= f.to {
				if strings.Contains(op.Err, noLeaderMessage) {
					l.NoLeader++
				}
				switch op.Outcome {
				case Fail:
					l.Refusals++
				case Unknown:
					l.Unknowns++
				}
			}
			if op.Outcome == OK && (op.Kind != PIMeta || op.Updated != 0) && (l.FirstOK == nil || op.Complete < l.FirstOK.Complete) {
				l.FirstOK = op
			}
		}
		if l.FirstOK != nil {
			l.After = l.FirstOK.Complete - f.from
		}
		lf = append(lf, l)
	}
	return out, lf
}

// quietWrites are the kinds that must succeed in a quiet cluster: every
// CP write whose answer says whether it was applied (a metadata batch
// always answers 200; a service update on a service of the persistent
// workload may find it removed by the empty-service clean).
var quietWrites = map[Kind]bool{CfgPut: true, CfgCAS: true, CfgDel: true, BetaPut: true, BetaStop: true,
	PIReg: true, PIDereg: true, SvcPut: true}

// CheckRefusals is check 8: a write is not refused without cause. In a
// quiet cluster (no fault in the last RecoveryWindow, every node up)
// every write succeeds; during a fault, once a write has been
// acknowledged after the fault began (the majority has a leader), every
// write sent to a node of the majority succeeds (a persistent register
// that waits on a paused Distro owner does not); and a node of the
// majority never answers "did not find the Leader node" without waiting
// ElectionWait for the election.
func CheckRefusals(run *Run) *Result {
	r := &Result{ID: "8", Title: "no write refused without cause (quiet cluster; majority with a leader; no-leader answers without waiting for the election)", Fails: true}
	tl := newTimeline(run)
	// when each fault's majority had a leader: the first acknowledged CP
	// write invoked after the fault began; when the fault took the leader
	// away, invoked after a leader of a newer term was seen (a write the
	// old leader finished as the signal or the rule landed is no sign of
	// a new one: seed 301 counted a write completed 77 ms into a pause)
	led := make([]int64, len(tl.faults))
	for i, f := range tl.faults {
		led[i] = inf
		from := f.from
		switch f.kind {
		case "kill-leader", "pause-leader", "partition-leader":
			if len(run.Leaders) > 0 { // without leader polls (tests' histories) the first write tells
				from = max(from, tl.leaderBack(f.from))
			}
		}
		for _, op := range run.Ops {
			if op.Kind.IsCP() && op.Outcome == OK && op.Invoke >= from && (op.Kind != PIMeta || op.Updated != 0) {
				led[i] = min(led[i], op.Complete)
			}
		}
	}
	majority := func(op *Op) (int64, bool) {
		for i, f := range tl.faults {
			if op.Invoke >= led[i] && op.Invoke <= f.to {
				return led[i], true
			}
		}
		return 0, false
	}
	quiet, faulted, fast := 0, 0, 0
	causes := map[string]int{}
	cause := func(op *Op) {
		e := op.Err
		if i := strings.Index(e, ": dial tcp"); i > 0 {
			e = e[i+2:]
		}
		var body struct {
			Message string `json:"message"`
			Data    any    `json:"data"`
		}
		if json.Unmarshal([]byte(e), &body) == nil && body.Message != "" {
			e = fmt.Sprintf("message %q data %v", body.Message, body.Data)
		}
		if len(e) > 90 {
			e = e[:90] + "…"
		}
		causes[fmt.Sprintf("%s %d %s", op.Kind, op.Status, e)]++
	}
	defer func() {
		var cs []string
		for c := range causes {
			cs = append(cs, c)
		}
		sort.Slice(cs, func(i, j int) bool {
			return causes[cs[i]] > causes[cs[j]] || causes[cs[i]] == causes[cs[j]] && cs[i] < cs[j]
		})
		for _, c := range cs {
			r.Notes = append(r.Notes, fmt.Sprintf("%d × %s", causes[c], c))
		}
	}()
	for _, op := range run.Ops {
		if op.Kind.IsRead() || op.Client >= finalClient || op.Client == 0 {
			continue
		}
		failed := quietWrites[op.Kind] && op.Outcome != OK && !casRefused(op)
		if failed && tl.phaseAt(op.Invoke) == PhaseQuiet && tl.phaseAt(min(op.Complete, run.End)) == PhaseQuiet {
			quiet++
			cause(op)
			r.addKind("a write failed in a quiet cluster", fmt.Sprintf("%s failed on node %d in a quiet cluster", op.Kind, op.Node+1), op)
			continue
		}
		if at, ok := majority(op); failed && ok && !tl.isolated(op.Node, op.Invoke, min(op.Complete, run.End)) {
			faulted++
			cause(op)
			r.addKind("a write failed on a node of a majority with a leader", fmt.Sprintf("%s failed on node %d (in the majority, %s) although a write had been acknowledged after the fault began (at %s)",
				op.Kind, op.Node+1, tl.phaseAt(op.Invoke), fmtT(at)), op)
			continue
		}
		if op.Kind.IsCP() && strings.Contains(op.Err, noLeaderMessage) && op.Complete-op.Invoke < int64(ElectionWait) &&
			!tl.isolated(op.Node, op.Invoke, op.Complete) {
			fast++
			cause(op)
			r.addKind("no leader, answered without waiting for the election", fmt.Sprintf("node %d (in the majority, %s) answered no leader after %.0f ms without waiting for the election",
				op.Node+1, tl.phaseAt(op.Invoke), float64(op.Complete-op.Invoke)/1e6), op)
		}
	}
	r.Summary = fmt.Sprintf("%d writes failed in quiet phases; %d on a node of a majority that had a leader; %d no-leader answers from the majority in under %v",
		quiet, faulted, fast, ElectionWait)
	return r
}
