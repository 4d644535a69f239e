package jepsen

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Violation is one breach of a property, with the ops that show it.
type Violation struct {
	Kind string // groups the violations of a check in the report ("" for one group)
	Msg  string
	Ops  []*Op
}

// Result is the outcome of one check.
type Result struct {
	ID         string // "1a", "2", ...
	Title      string
	Fails      bool // violations fail the run
	Violations []Violation
	Summary    string   // one line for the table
	Notes      []string // details printed under the violations
}

// Failed reports whether the result fails the run.
func (r *Result) Failed() bool { return r.Fails && len(r.Violations) > 0 }

func (r *Result) add(msg string, ops ...*Op) {
	r.Violations = append(r.Violations, Violation{Msg: msg, Ops: ops})
}

func (r *Result) addKind(kind, msg string, ops ...*Op) {
	r.Violations = append(r.Violations, Violation{Kind: kind, Msg: msg, Ops: ops})
}

// LinOptions tunes the porcupine checks.
type LinOptions struct {
	// Timeout per partition; a partition that takes longer is reported
	// inconclusive, not failed.
	Timeout time.Duration
	// VisualDir, when set, receives porcupine's HTML visualization of
	// each partition that is not linearizable.
	VisualDir string
	// Logf, when set, is told how long each partition took.
	Logf func(format string, args ...any)
	// Budget bounds one pass (all its partitions): a partition reached
	// after it is spent is reported inconclusive unchecked.
	Budget time.Duration
	// UnknownHorizon: an op of unknown outcome takes effect, if ever,
	// within this long of its invocation (0: any time later).
	UnknownHorizon time.Duration
}

// readFilter picks the reads of a linearizability check and how far back
// their invocation moves (0 for none); writes are always in.
type readFilter func(op *Op) (bool, int64)

// linSpec is one porcupine pass.
type linSpec struct {
	tag    string
	filter readFilter
	extra  []*Op // synthetic reads (the final state)
	// relax does not believe a metadata batch that answers it did not
	// update an instance: for that instance the batch counts as of unknown
	// outcome (it may or may not have taken effect). An answer that it
	// did update one is still held to.
	relax bool
	only  map[string]bool // partitions to check (nil: all)
}

// linStats sums up a pass.
type linStats struct {
	ops, parts   int
	inconclusive []string
	illegal      map[string]bool
}

// checkLin runs porcupine on every partition with the reads the filter
// keeps, plus the extra reads, and adds a violation per partition that is
// not linearizable.
//
// An unknown write of a unique value that no read ever returned can be
// left out: had it taken effect, nothing saw it before the next write
// replaced it. Such writes are most of the unknown ones, and each one
// left in is concurrent with everything after it, which is what makes
// the search slow. A partition found not linearizable without them is
// checked again with them (a metadata batch can see an instance present
// that only such a register put there).
func checkLin(run *Run, r *Result, spec linSpec, opt LinOptions) linStats {
	type entry struct {
		op, orig *Op
		shift    int64
	}
	parts := map[string][]entry{}
	var relaxed *Op
	add := func(op *Op, shift int64) {
		for _, p := range partitionsOf(op, run.PISlots) {
			if spec.only != nil && !spec.only[p] {
				continue
			}
			e := entry{op, op, shift}
			if spec.relax && op.Kind == PIMeta && op.Outcome == OK && op.Updated&(1<<slotOf(p)) == 0 {
				if relaxed == nil || relaxed.ID != op.ID {
					c := *op
					c.Outcome = Unknown
					relaxed = &c
				}
				e.op = relaxed
			}
			parts[p] = append(parts[p], e)
		}
	}
	for _, op := range run.Ops {
		if !op.Kind.IsRead() {
			add(op, 0)
		} else if keep, shift := spec.filter(op); keep {
			add(op, shift)
		}
	}
	for _, op := range spec.extra {
		add(op, 0)
	}
	observed := map[string]bool{}
	for _, ops := range [][]*Op{run.Ops, spec.extra} {
		for _, op := range ops {
			for _, o := range observations(op, run.PISlots) {
				if o.present {
					observed[o.view+"\x00"+o.value] = true
				}
			}
		}
	}
	unseen := func(op *Op) bool {
		if op.Outcome != Unknown || op.Kind.IsRead() || (op.Kind == CfgCAS && run.CASHonoured) {
			return false
		}
		any := false
		for _, e := range effects(op, run.PISlots, run.CASHonoured) {
			if e.present {
				any = true
				if observed[e.view+"\x00"+e.value] {
					return false
				}
			}
		}
		return any
	}
	byID := map[int]*Op{}
	build := func(p string, entries []entry, all bool) []porcupine.Operation {
		clients := map[int]int{}
		var h []porcupine.Operation
		for _, e := range entries {
			if !all && unseen(e.op) {
				continue
			}
			in, out, ok := porcupineOp(e.op, p, run.CASHonoured)
			if !ok {
				continue
			}
			cid, seen := clients[e.op.Client]
			if !seen {
				cid = len(clients)
				clients[e.op.Client] = cid
			}
			byID[e.op.ID] = e.orig
			h = append(h, porcupine.Operation{ClientId: cid, Input: in, Output: out,
				Call: e.op.Invoke - e.shift, Return: returnTime(e.op, opt.UnknownHorizon), Metadata: e.op.ID})
		}
		return h
	}
	names := make([]string, 0, len(parts))
	for p := range parts {
		names = append(names, p)
	}
	sort.Strings(names)
	st := linStats{parts: len(names), illegal: map[string]bool{}}
	deadline := time.Now().Add(opt.Budget)
	for _, p := range names {
		timeout := opt.Timeout
		if opt.Budget > 0 {
			left := time.Until(deadline)
			if left < time.Second {
				st.inconclusive = append(st.inconclusive, p+" (budget spent)")
				continue
			}
			timeout = min(timeout, left)
		}
		m := modelOf(p)
		m.DescribeOperationMetadata = func(info any) string {
			if id, ok := info.(int); ok {
				if op := byID[id]; op != nil {
					return op.String()
				}
			}
			return ""
		}
		h := build(p, parts[p], false)
		st.ops += len(h)
		began := time.Now()
		res, info := porcupine.CheckOperationsVerbose(m, h, timeout)
		label := p
		if res == porcupine.Illegal {
			if full := build(p, parts[p], true); len(full) != len(h) {
				switch fres, finfo := porcupine.CheckOperationsVerbose(m, full, timeout); fres {
				case porcupine.Ok:
					res = porcupine.Ok
				case porcupine.Unknown:
					res = porcupine.Unknown
					label += " (not linearizable without the unknown writes nobody saw; timed out with them)"
				default:
					h, info = full, finfo
				}
			}
		}
		if opt.Logf != nil {
			opt.Logf("porcupine %s %s: %d ops: %s in %v", spec.tag, p, len(h), res, time.Since(began).Round(time.Millisecond))
		}
		switch res {
		case porcupine.Unknown:
			st.inconclusive = append(st.inconclusive, label)
		case porcupine.Illegal:
			st.illegal[p] = true
			msg, ops := explainIllegal(p, h, info, byID)
			if opt.VisualDir != "" {
				file := filepath.Join(opt.VisualDir, "lin-"+spec.tag+"-"+strings.NewReplacer("/", "_", "#", "_").Replace(p)+".html")
				if err := porcupine.VisualizePath(m, info, file); err == nil {
					msg += "; visualization: " + file
				}
			}
			r.add(msg, ops...)
		}
	}
	return st
}

func (st linStats) summary(timeout time.Duration) string {
	s := fmt.Sprintf("%d ops in %d partitions", st.ops, st.parts)
	if len(st.inconclusive) > 0 {
		s += fmt.Sprintf("; inconclusive (porcupine gave up after %v): %s", timeout, strings.Join(st.inconclusive, ", "))
	}
	return s
}

// explainIllegal names the ops around the point where every linearization
// of the partition got stuck: the end of the longest partial
// linearization and the ops that return earliest among those it could
// not place.
func explainIllegal(p string, h []porcupine.Operation, info porcupine.LinearizationInfo, byID map[int]*Op) (string, []*Op) {
	partials := info.PartialLinearizationsOperations()
	var longest []porcupine.Operation
	for _, part := range partials {
		for _, l := range part {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	placed := map[int]bool{}
	for _, o := range longest {
		placed[o.Metadata.(int)] = true
	}
	var stuck []porcupine.Operation
	for _, o := range h {
		if !placed[o.Metadata.(int)] {
			stuck = append(stuck, o)
		}
	}
	sort.Slice(stuck, func(i, j int) bool { return stuck[i].Return < stuck[j].Return })
	var ops []*Op
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not linearizable: the longest linearizable prefix places %d of %d ops", p, len(longest), len(h))
	if len(longest) > 0 {
		last := longest[len(longest)-1]
		if op := byID[last.Metadata.(int)]; op != nil {
			fmt.Fprintf(&b, "; it ends with op %d, state then %s", op.ID, describeAfter(p, longest))
			from := max(0, len(longest)-3)
			for _, o := range longest[from:] {
				ops = append(ops, byID[o.Metadata.(int)])
			}
		}
	}
	if len(stuck) > 0 {
		// the op that could not follow: the earliest-returning one left
		first := byID[stuck[0].Metadata.(int)]
		fmt.Fprintf(&b, "; none of the next ops fits, first of them op %d", first.ID)
		for i := 0; i < len(stuck) && i < 3; i++ {
			ops = append(ops, byID[stuck[i].Metadata.(int)])
		}
	}
	return b.String(), ops
}

// describeAfter replays a linearization to print the state it reaches.
func describeAfter(p string, ops []porcupine.Operation) string {
	m := modelOf(p)
	s := m.Init()
	for _, o := range ops {
		_, s = m.Step(s, o.Input, o.Output)
	}
	return m.DescribeState(s)
}

// CheckStrict is check 1a: writes and the reads served by a node that was
// the raft leader throughout the read are linearizable. A persistent
// instance slot found not linearizable is checked once more with every
// metadata batch that answered it did not update the slot taken as of
// unknown outcome, so that wrong batch answers (a batch answered
// {"updated":[]} and did nothing) do not hide other violations in the
// same slot.
func CheckStrict(run *Run, opt LinOptions) *Result {
	r := &Result{ID: "1a", Title: "CP writes and leader reads linearizable (porcupine)", Fails: true}
	tl := newTimeline(run)
	leaderReads := 0
	filter := func(op *Op) (bool, int64) {
		return op.Client < finalClient && tl.leaderThroughout(op.Node, op.Invoke, op.Complete), 0
	}
	for _, op := range run.Ops {
		if ok, _ := filter(op); ok && op.Outcome == OK {
			leaderReads++
		}
	}
	st := checkLin(run, r, linSpec{tag: "strict", filter: filter}, opt)
	again := map[string]bool{}
	for p := range st.illegal {
		if strings.HasPrefix(p, "pi/") {
			again[p] = true
		}
	}
	r.Summary = st.summary(opt.Timeout) + fmt.Sprintf(" (%d leader reads)", leaderReads)
	if len(again) > 0 {
		sub := &Result{}
		rst := checkLin(run, sub, linSpec{tag: "strict-relaxed", filter: filter, relax: true, only: again}, opt)
		for _, v := range sub.Violations {
			r.add("even when no metadata batch answer 'not updated' is believed: "+v.Msg, v.Ops...)
		}
		r.Summary += fmt.Sprintf("; %d of %d slots linearizable once no batch answer 'not updated' is believed", len(again)-len(rst.illegal), len(again))
	}
	return r
}

// CheckBounded is check 1b: every read on a node in the majority (not cut
// off, paused, down, nor catching up after one of those) linearizes once
// its invocation moves back by bound. First read by read: a read whose
// staleness (see view.staleness, a lower bound) exceeds bound cannot
// linearize, whatever the other ops did; then porcupine, with the reads
// moved back, on the partitions where no single read already fails (a
// partition that fails makes porcupine search every order before it
// gives up, which on minutes of history takes longer than the run). A
// metadata batch answer "not updated" is not believed here (1a judges
// the answers; this check is about what reads return).
func CheckBounded(run *Run, bound time.Duration, opt LinOptions) *Result {
	r := &Result{ID: "1b", Title: "every read of a node in the majority linearizes within " + bound.String() + " of staleness (" +
		"after losing the leader: until the next leader plus " + ConvergeBound.String() + ", at least " + ElectionBound.String() + ")", Fails: true}
	tl := newTimeline(run)
	vs := buildViews(run)
	// reads right after the leader was lost may be as stale as the
	// election takes (docs/cluster.md): they get ElectionBound
	boundAt := func(op *Op) int64 {
		if lb, ok := tl.leaderLostBound(op.Invoke); ok && lb > int64(bound) {
			return lb
		}
		return int64(bound)
	}
	filter := func(op *Op) (bool, int64) {
		if op.Client >= finalClient || tl.isolated(op.Node, op.Invoke, op.Complete) {
			return false, 0
		}
		return true, boundAt(op)
	}
	n, stale := 0, 0
	failed := map[string]int{} // partition -> reads too stale
	for _, op := range run.Ops {
		if ok, _ := filter(op); !ok || !op.Kind.IsRead() || op.Outcome != OK || op.Kind == EphList {
			continue
		}
		n++
		for _, o := range observations(op, run.PISlots) {
			v := vs[o.view]
			age := v.staleness(o, op)
			if age >= 0 && age <= boundAt(op) {
				continue
			}
			stale++
			p := partitionOfView(o.view)
			failed[p]++
			if failed[p] > 3 {
				continue // the first three per partition are shown
			}
			if age < 0 {
				r.add(fmt.Sprintf("node %d read %s = %s, which no write wrote", op.Node+1, o.view, showObs(o)), op)
				continue
			}
			src := v.sources(o.present, o.value, op.Invoke, op.Complete)
			if len(src) == 0 {
				src = []*version{initial}
			}
			ops := []*Op{op}
			ops = append(ops, sourceOps(src)...)
			if w := v.supersededBy(src); w != nil {
				ops = append(ops, w.op)
			}
			r.add(fmt.Sprintf("node %d (%s) read %s = %s %.3fs stale: what it returned had been overwritten by an acknowledged write %.3fs before the read began",
				op.Node+1, tl.phaseAt(op.Invoke), o.view, showObs(o), float64(age)/1e9, float64(age)/1e9), ops...)
		}
	}
	var only map[string]bool
	var skipped []string
	if len(failed) > 0 {
		only = map[string]bool{}
		all := map[string]bool{}
		for _, op := range run.Ops {
			for _, p := range partitionsOf(op, run.PISlots) {
				all[p] = true
			}
		}
		for p := range all {
			if failed[p] == 0 {
				only[p] = true
			}
		}
		for p, c := range failed {
			skipped = append(skipped, fmt.Sprintf("%s (%d reads)", p, c))
		}
		sort.Strings(skipped)
	}
	st := checkLin(run, r, linSpec{tag: "bounded", filter: filter, relax: true, only: only}, opt)
	r.Summary = fmt.Sprintf("%d reads; %d observations staler than %v", n, stale, bound)
	if len(skipped) > 0 {
		r.Summary += " in " + strings.Join(skipped, ", ")
	}
	r.Summary += "; porcupine on the other partitions: " + st.summary(opt.Timeout)
	return r
}

// finalClient numbers the synthetic final reads (2000 + node).
const finalClient = 2000

// samplerClient numbers the samplers (1000 + node).
const samplerClient = 1000

// CheckFinal is check 2: after the final heal and settle, each node's
// state is one the model reaches after every acknowledged write (and some
// of the unknown ones): no acknowledged write lost. First directly (an
// acknowledged write that began after every write that could have left
// what the node holds had completed is lost), then with porcupine on the
// writes and the node's final reads (a metadata batch answer "not
// updated" not believed, as in 1b).
func CheckFinal(run *Run, opt LinOptions) *Result {
	r := &Result{ID: "2", Title: "no acknowledged write lost (final state of every node allowed by the model)", Fails: true}
	vs := buildViews(run)
	var finals []*Op
	for _, op := range run.Ops {
		if op.Client >= finalClient {
			finals = append(finals, op)
		}
	}
	if len(finals) == 0 {
		r.add("no final reads were recorded")
		return r
	}
	byNode := map[int][]*Op{}
	for _, op := range finals {
		byNode[op.Node] = append(byNode[op.Node], op)
		if op.Outcome != OK {
			r.add(fmt.Sprintf("final read failed on node %d", op.Node+1), op)
			continue
		}
		if op.Kind == PIList && op.Extra > 0 {
			r.add(fmt.Sprintf("node %d lists %d instance(s) of %s nobody registered, or an instance twice", op.Node+1, op.Extra, op.Key), op)
		}
		// a direct explanation: an acknowledged write definitely after
		// every write that could have produced what the node holds
		for _, o := range observations(op, run.PISlots) {
			v := vs[o.view]
			src := v.sources(o.present, o.value, op.Invoke, op.Complete)
			if len(src) == 0 {
				r.add(fmt.Sprintf("node %d holds %s = %s, which no write wrote", op.Node+1, o.view, showObs(o)), op)
				continue
			}
			if v == nil {
				continue
			}
			for _, w := range v.okAll {
				if w.present == o.present && w.value == o.value {
					continue
				}
				if definitelyBefore(src, []*version{w}) {
					r.add(fmt.Sprintf("node %d holds %s = %s (from %s), but %s was acknowledged after it: lost",
						op.Node+1, o.view, showObs(o), describeSources(src), w.op), append([]*Op{op, w.op}, sourceOps(src)...)...)
					break
				}
			}
		}
	}
	direct := len(r.Violations)
	nodes := make([]int, 0, len(byNode))
	for n := range byNode {
		nodes = append(nodes, n)
	}
	sort.Ints(nodes)
	total := 0
	for _, n := range nodes {
		sub := &Result{}
		fst := checkLin(run, sub, linSpec{tag: "final-n" + strconv.Itoa(n+1), filter: func(*Op) (bool, int64) { return false, 0 },
			extra: byNode[n], relax: true}, opt)
		total++
		if direct == 0 {
			for _, v := range sub.Violations {
				r.add(fmt.Sprintf("node %d final state: %s", n+1, v.Msg), v.Ops...)
			}
		}
		if len(fst.inconclusive) > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("node %d: %s", n+1, fst.summary(opt.Timeout)))
		}
	}
	r.Summary = fmt.Sprintf("%d final reads on %d nodes", len(finals), total)
	return r
}

func showObs(o obs) string {
	if !o.present {
		return "absent"
	}
	return strconv.Quote(o.value)
}

func sourceOps(src []*version) []*Op {
	var out []*Op
	for _, s := range src {
		if s.op != nil && len(out) < 3 {
			out = append(out, s.op)
		}
	}
	return out
}

// inf is +∞ for times.
const inf = math.MaxInt64
