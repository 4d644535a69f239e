package jepsen

import (
	"fmt"
	"sort"
	"strings"
)

// sessions groups the ops by session, each in invocation order.
func sessions(run *Run) (map[int][]*Op, []int) {
	by := map[int][]*Op{}
	for _, op := range run.Ops {
		if op.Client >= finalClient {
			continue
		}
		by[op.Session] = append(by[op.Session], op)
	}
	ids := make([]int, 0, len(by))
	for id, ops := range by {
		sort.SliceStable(ops, func(i, j int) bool { return ops[i].Invoke < ops[j].Invoke })
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return by, ids
}

// CheckRYW is check 4: after a client's acknowledged write to node X, its
// next read of that value on X reflects the write or something newer. A
// session is a client's run of ops on one node. A service update answered
// "not found" right after the client's acknowledged register of an
// instance of that service on the same node also misses its own write.
func CheckRYW(run *Run) *Result {
	r := &Result{ID: "4", Title: "read-your-writes on the acknowledging node", Fails: true}
	vs := buildViews(run)
	by, ids := sessions(run)
	type pending struct {
		e  effect
		op *Op
	}
	checked := 0
	seen := map[[2]int]int{} // (write, read) -> its violation
	for _, id := range ids {
		want := map[string]pending{}
		registered := map[string]*Op{} // service -> the session's last acknowledged register in it
		for _, op := range by[id] {
			if !op.Kind.IsRead() && op.Outcome == OK {
				for _, e := range effects(op, run.PISlots, run.CASHonoured) {
					want[e.view] = pending{e, op}
				}
				switch op.Kind {
				case PIReg:
					registered[op.Key] = op
				case PIDereg:
					if reg := registered[op.Key]; reg != nil && reg.Slot == op.Slot {
						delete(registered, op.Key)
					}
				}
			}
			if op.Kind == PISvcPut && op.Outcome != OK && registered[op.Key] != nil &&
				strings.Contains(strings.ToLower(op.Err), "not found") {
				checked++
				reg := registered[op.Key]
				r.addKind("service update not found after an own register", fmt.Sprintf("node %d answered a service update %q %.3fs after this client's acknowledged register in the service on the same node",
					op.Node+1, op.Err, float64(op.Invoke-reg.Complete)/1e9), reg, op)
			}
			for _, o := range observations(op, run.PISlots) {
				p, ok := want[o.view]
				if !ok {
					continue
				}
				delete(want, o.view)
				checked++
				if o.present == p.e.present && o.value == p.e.value {
					continue
				}
				src := vs[o.view].sources(o.present, o.value, op.Invoke, op.Complete)
				w := &version{op: p.op, inv: p.op.Invoke, done: p.op.Complete}
				if !definitelyBefore(src, []*version{w}) {
					continue
				}
				msg := fmt.Sprintf("%s = %s (wrote %s; read was written by %s)", o.view, showObs(o), showObs(p.e), describeSources(src))
				k := [2]int{p.op.ID, op.ID}
				if i, ok := seen[k]; ok {
					r.Violations[i].Msg += "; " + msg
					continue
				}
				seen[k] = len(r.Violations)
				r.addKind("own write missing from the next read", fmt.Sprintf("client %d's %s on node %d, acknowledged %.1f ms before, is not in its next read there: %s",
					op.Client, p.op.Kind, op.Node+1, float64(op.Invoke-p.op.Complete)/1e6, msg),
					append([]*Op{p.op, op}, sourceOps(src)...)...)
			}
		}
	}
	r.Summary = fmt.Sprintf("%d first reads after an own acknowledged write", checked)
	return r
}

// CheckMonotonic is check 5: within a session (one client on one node, or
// the sampler of one node across the whole run) no read returns a value
// definitely older than one an earlier read returned.
func CheckMonotonic(run *Run) *Result {
	r := &Result{ID: "5", Title: "monotonic reads per session on a node (clients and per-node samplers)", Fails: true}
	vs := buildViews(run)
	by, ids := sessions(run)
	type seen struct {
		o  obs
		op *Op
	}
	pairs := 0
	for _, id := range ids {
		last := map[string]seen{}
		for _, op := range by[id] {
			for _, o := range observations(op, run.PISlots) {
				prev, ok := last[o.view]
				last[o.view] = seen{o, op}
				if !ok || prev.o == o {
					continue
				}
				pairs++
				v := vs[o.view]
				now := v.sources(o.present, o.value, op.Invoke, op.Complete)
				before := v.sources(prev.o.present, prev.o.value, prev.op.Invoke, prev.op.Complete)
				if definitelyBefore(now, before) {
					r.add(fmt.Sprintf("node %d went back: %s read %s (written by %s) after %s (written by %s)",
						op.Node+1, o.view, showObs(o), describeSources(now), showObs(prev.o), describeSources(before)),
						append([]*Op{prev.op, op}, append(sourceOps(now), sourceOps(before)...)...)...)
				}
			}
		}
	}
	r.Summary = fmt.Sprintf("%d changes between successive reads in %d sessions", pairs, len(ids))
	return r
}
