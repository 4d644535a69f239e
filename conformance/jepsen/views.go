package jepsen

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// A register view is one value of the cluster's state that writes replace
// as a whole: the content of one config, its beta, the metadata of one
// service, and, for each instance slot of a persistent service, the
// instance's registration (metadata "v") and its batch metadata ("m").
// Every written value is unique (it names the client and a sequence
// number), so a value read names the write it came from; absence comes
// from a delete or from the initial state. Read-your-writes, monotonic
// reads, staleness and lost writes are judged on views, with real-time
// order alone: write a is definitely before write b when a completed
// before b was invoked.

// version is one op's possible effect on a view.
type version struct {
	op      *Op // nil: the initial state
	present bool
	value   string
	inv     int64
	done    int64 // +inf when the outcome is unknown
	ok      bool
}

func (v *version) String() string {
	if v.op == nil {
		return "the initial state (absent)"
	}
	return v.op.String()
}

// initial is the state before the first write: absent.
var initial = &version{inv: -1, done: -1, ok: true}

// obs is what a read saw of one view.
type obs struct {
	view    string
	present bool
	value   string
}

// effect is what a write does to one view.
type effect = obs

func viewCfg(key string) string  { return "cfg/" + key }
func viewBeta(key string) string { return "beta/" + key }
func viewSvc(key string) string  { return "svc/" + key }
func viewPIV(key string, slot int) string {
	return fmt.Sprintf("pi/%s#%d/v", key, slot)
}
func viewPIM(key string, slot int) string {
	return fmt.Sprintf("pi/%s#%d/m", key, slot)
}

// effects lists what a write may have done, nil for reads and for writes
// that definitely did nothing.
func effects(op *Op, slots int, casHonoured bool) []effect {
	if op.Kind.IsRead() || op.Outcome == Fail {
		return nil
	}
	switch op.Kind {
	case CfgPut, CfgCAS:
		return []effect{{viewCfg(op.Key), true, op.Value}}
	case CfgDel:
		return []effect{{viewCfg(op.Key), false, ""}}
	case BetaPut:
		return []effect{{viewBeta(op.Key), true, op.Value}}
	case BetaStop:
		return []effect{{viewBeta(op.Key), false, ""}}
	case SvcPut:
		return []effect{{viewSvc(op.Key), true, op.Value}}
	case PIReg:
		return []effect{{viewPIV(op.Key, op.Slot), true, op.Value}, {viewPIM(op.Key, op.Slot), false, ""}}
	case PIDereg:
		return []effect{{viewPIV(op.Key, op.Slot), false, ""}, {viewPIM(op.Key, op.Slot), false, ""}}
	case PIMeta:
		m := op.Mask
		if op.Outcome == OK {
			m &= op.Updated
		}
		var out []effect
		for i := 0; i < slots; i++ {
			if m&(1<<i) != 0 {
				out = append(out, effect{viewPIM(op.Key, i), true, op.Value})
			}
		}
		return out
	}
	return nil
}

// observations lists what an acknowledged read saw.
func observations(op *Op, slots int) []obs {
	if !op.Kind.IsRead() || op.Outcome != OK {
		return nil
	}
	switch op.Kind {
	case CfgGet:
		return []obs{{viewCfg(op.Key), op.Found, op.Read}}
	case BetaGet:
		return []obs{{viewBeta(op.Key), op.Found, op.Read}}
	case SvcGet:
		return []obs{{viewSvc(op.Key), op.Found, op.Read}}
	case PIList:
		out := make([]obs, 0, 2*slots)
		for i := 0; i < slots && i < len(op.Slots); i++ {
			s := op.Slots[i]
			out = append(out, obs{viewPIV(op.Key, i), s.P, s.V}, obs{viewPIM(op.Key, i), s.M != "", s.M})
		}
		return out
	}
	return nil
}

// view is the versions of one register view.
type view struct {
	name    string
	byValue map[string][]*version
	absent  []*version // deletes, sorted by invocation
	// acknowledged versions sorted by invocation, with the suffix minimum
	// of their completion times: the earliest a version definitely
	// followed by them was overwritten
	okAll, okPresent       []*version
	minDoneAll, minDonePre []int64
}

// views indexes every view of a run.
type views map[string]*view

func buildViews(run *Run) views {
	vs := views{}
	get := func(name string) *view {
		v := vs[name]
		if v == nil {
			v = &view{name: name, byValue: map[string][]*version{}}
			vs[name] = v
		}
		return v
	}
	for _, op := range run.Ops {
		for _, e := range effects(op, run.PISlots, run.CASHonoured) {
			v := get(e.view)
			ver := &version{op: op, present: e.present, value: e.value, inv: op.Invoke, done: op.Done(), ok: op.Outcome == OK}
			if e.present {
				v.byValue[e.value] = append(v.byValue[e.value], ver)
			} else {
				v.absent = append(v.absent, ver)
			}
			if ver.ok {
				v.okAll = append(v.okAll, ver)
				if ver.present {
					v.okPresent = append(v.okPresent, ver)
				}
			}
		}
	}
	for _, v := range vs {
		v.minDoneAll = suffixMin(v.okAll)
		v.minDonePre = suffixMin(v.okPresent)
	}
	return vs
}

func suffixMin(vs []*version) []int64 {
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].inv < vs[j].inv })
	m := make([]int64, len(vs)+1)
	m[len(vs)] = math.MaxInt64
	for i := len(vs) - 1; i >= 0; i-- {
		m[i] = min(m[i+1], vs[i].done)
	}
	return m
}

// sources are the versions a read of (present, value) on v, made during
// [inv, done], can have seen.
func (v *view) sources(present bool, value string, inv, done int64) []*version {
	var out []*version
	if v == nil {
		if present {
			return nil
		}
		return []*version{initial}
	}
	if present {
		for _, s := range v.byValue[value] {
			if s.inv <= done {
				out = append(out, s)
			}
		}
		return out
	}
	for _, s := range v.absent {
		if s.inv <= done {
			out = append(out, s)
		}
	}
	// the initial state is still possible when no acknowledged write of a
	// value definitely precedes the read
	if len(v.okPresent) == 0 || minDone(v.okPresent) >= inv {
		out = append(out, initial)
	}
	return out
}

func minDone(vs []*version) int64 {
	m := int64(math.MaxInt64)
	for _, s := range vs {
		m = min(m, s.done)
	}
	return m
}

// supersededAt is the earliest time at which s was definitely overwritten:
// the completion of the first acknowledged write that definitely followed
// s and left another state (+inf if none).
func (v *view) supersededAt(s *version) int64 {
	if v == nil || s.done == math.MaxInt64 {
		return math.MaxInt64
	}
	list, mins := v.okAll, v.minDoneAll
	if !s.present {
		list, mins = v.okPresent, v.minDonePre
	}
	i := sort.Search(len(list), func(i int) bool { return list[i].inv > s.done })
	return mins[i]
}

// supersededBy is the acknowledged write that definitely followed every
// version of src and completed first (nil if none).
func (v *view) supersededBy(src []*version) *version {
	if v == nil {
		return nil
	}
	var best *version
	for _, w := range v.okAll {
		after := true
		for _, s := range src {
			if w == s || (s.present && w.present && w.value == s.value) || (!s.present && !w.present) || s.done >= w.inv {
				after = false
				break
			}
		}
		if after && (best == nil || w.done < best.done) {
			best = w
		}
	}
	return best
}

// partitionOfView is the porcupine partition a view belongs to.
func partitionOfView(view string) string {
	if strings.HasPrefix(view, "pi/") {
		return view[:strings.LastIndexByte(view, '/')]
	}
	return view
}

// staleness is how far back a read's invocation must move for what it saw
// to be current: 0 for a fresh read, -1 when no write explains the value.
func (v *view) staleness(o obs, r *Op) int64 {
	src := v.sources(o.present, o.value, r.Invoke, r.Complete)
	if len(src) == 0 && !o.present {
		src = []*version{initial} // the initial state, seen late
	}
	if len(src) == 0 {
		return -1
	}
	latest := int64(math.MinInt64)
	for _, s := range src {
		latest = max(latest, v.supersededAt(s))
	}
	if latest >= r.Invoke {
		return 0
	}
	return r.Invoke - latest
}

// definitelyBefore reports whether every version of a completed before
// every version of b was invoked (both non-empty).
func definitelyBefore(a, b []*version) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	for _, x := range a {
		for _, y := range b {
			if x == y || x.done >= y.inv {
				return false
			}
		}
	}
	return true
}

func describeSources(src []*version) string {
	switch len(src) {
	case 0:
		return "no write"
	case 1:
		return src[0].String()
	}
	s := fmt.Sprintf("%d candidates, e.g. %s", len(src), src[0])
	return s
}
