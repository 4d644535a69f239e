package jepsen

import (
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Each check on a hand-made history: one that holds and one that breaks
// it, so that a check that cannot fail is caught.

const ms = int64(time.Millisecond)

// hist builds a run by hand.
type hist struct {
	run *Run
}

func newHist() *hist {
	return &hist{run: &Run{Seed: 1, Nodes: 3, PISlots: 4, End: 200_000 * ms, Final: 201_000 * ms}}
}

// op appends an op with times in ms; Session defaults to the client.
func (h *hist) op(o Op, from, to int64) *Op {
	o.ID = len(h.run.Ops) + 1
	o.Invoke, o.Complete = from*ms, to*ms
	if o.Session == 0 {
		o.Session = o.Client
	}
	p := &o
	h.run.Ops = append(h.run.Ops, p)
	return p
}

func (h *hist) put(client, node int, key, v string, from, to int64) *Op {
	return h.op(Op{Client: client, Node: node, Kind: CfgPut, Key: key, Value: v, Outcome: OK}, from, to)
}

func (h *hist) get(client, node int, key, v string, from, to int64) *Op {
	return h.op(Op{Client: client, Node: node, Kind: CfgGet, Key: key, Found: v != "", Read: v, Outcome: OK}, from, to)
}

// leader: node names itself leader (term 1) in polls every 100 ms over
// [from, to] ms.
func (h *hist) leader(node int, from, to int64) {
	for t := from; t <= to; t += 100 {
		h.run.Leaders = append(h.run.Leaders, LeaderObs{Invoke: t * ms, Complete: t*ms + ms, Node: node, Leader: node, Term: 1})
	}
}

func (h *hist) event(kind string, node int, t int64, note string) {
	h.run.Events = append(h.run.Events, Event{T: t * ms, Kind: kind, Node: node, Note: note})
}

func opts() LinOptions { return LinOptions{Timeout: 10 * time.Second} }

func mustPass(t *testing.T, r *Result) {
	t.Helper()
	if len(r.Violations) > 0 {
		t.Fatalf("check %s: unexpected violations: %+v", r.ID, r.Violations)
	}
}

func mustFail(t *testing.T, r *Result, n int, substr string) {
	t.Helper()
	if len(r.Violations) != n || !r.Failed() {
		t.Fatalf("check %s: want %d violation(s), got %d: %+v", r.ID, n, len(r.Violations), r.Violations)
	}
	if !strings.Contains(r.Violations[0].Msg, substr) {
		t.Fatalf("check %s: violation %q does not say %q", r.ID, r.Violations[0].Msg, substr)
	}
}

func TestStrictLinearizability(t *testing.T) {
	good := newHist()
	good.leader(0, 0, 1000)
	good.put(1, 1, "k", "a", 0, 10)
	good.put(2, 2, "k", "b", 20, 30)
	good.get(3, 0, "k", "b", 40, 50)
	good.get(4, 1, "k", "a", 40, 50) // a stale follower read: not in the strict check
	good.op(Op{Client: 5, Node: 2, Kind: CfgDel, Key: "k", Outcome: Unknown}, 60, 70)
	good.get(3, 0, "k", "", 80, 90) // the unknown delete took effect
	mustPass(t, CheckStrict(good.run, opts()))

	bad := newHist()
	bad.leader(0, 0, 1000)
	bad.put(1, 1, "k", "a", 0, 10)
	bad.put(2, 2, "k", "b", 20, 30)
	bad.get(3, 0, "k", "a", 40, 50) // the leader serves a value overwritten before the read began
	mustFail(t, CheckStrict(bad.run, opts()), 1, "cfg/k is not linearizable")
}

func TestStrictMetadataBatch(t *testing.T) {
	good := newHist()
	good.leader(0, 0, 1000)
	good.op(Op{Client: 1, Node: 0, Kind: PIReg, Key: "s", Slot: 2, Value: "r1", Outcome: OK}, 0, 10)
	good.op(Op{Client: 1, Node: 0, Kind: PIMeta, Key: "s", Mask: 0b0101, Value: "m1", Updated: 0b0100, Outcome: OK}, 20, 30)
	good.op(Op{Client: 2, Node: 0, Kind: PIList, Key: "s", Slots: []Slot{{}, {}, {P: true, V: "r1", M: "m1"}, {}}, Outcome: OK}, 40, 50)
	mustPass(t, CheckStrict(good.run, opts()))

	// a follower answered {"updated":[]} and wrote nothing (issue 23,
	// defect 2): the answer is what no linearization allows
	bad := newHist()
	bad.leader(0, 0, 1000)
	bad.op(Op{Client: 1, Node: 0, Kind: PIReg, Key: "s", Slot: 2, Value: "r1", Outcome: OK}, 0, 10)
	bad.op(Op{Client: 1, Node: 1, Kind: PIMeta, Key: "s", Mask: 0b0100, Value: "m1", Updated: 0, Outcome: OK}, 20, 30)
	bad.op(Op{Client: 2, Node: 0, Kind: PIList, Key: "s", Slots: []Slot{{}, {}, {P: true, V: "r1"}, {}}, Outcome: OK}, 40, 50)
	r := CheckStrict(bad.run, opts())
	mustFail(t, r, 1, "pi/s#2 is not linearizable")
	if !strings.Contains(r.Summary, "1 of 1 slots linearizable once") {
		t.Fatalf("the relaxed pass should accept the slot: %s", r.Summary)
	}
}

func TestBoundedStaleness(t *testing.T) {
	mk := func(readAt int64) *Run {
		h := newHist()
		h.put(1, 0, "k", "a", 0, 10)
		h.put(1, 0, "k", "b", 1000, 1010)
		h.get(2, 1, "k", "a", readAt, readAt+5) // follower read of the old value
		return h.run
	}
	mustPass(t, CheckBounded(mk(1500), time.Second, opts()))
	mustFail(t, CheckBounded(mk(4000), time.Second, opts()), 1, "read cfg/k = \"a\" 2.990s stale")

	// no single read is too stale, but together they are: b was read
	// before 101 ms, so a (written before b) cannot be read after 1.5 s
	both := newHist()
	both.put(1, 0, "k", "a", 0, 10)
	both.put(2, 0, "k", "b", 20, 2000) // slow to acknowledge
	both.get(3, 1, "k", "b", 100, 101)
	both.get(4, 2, "k", "a", 1500, 1501)
	mustFail(t, CheckBounded(both.run, time.Second, opts()), 1, "cfg/k is not linearizable")

	// right after the leader is lost a majority read may be as stale as
	// the election takes (ElectionBound), not later
	lost := func(readAt int64) *Run {
		h := newHist()
		h.put(1, 0, "k", "a", 0, 10)
		h.put(1, 0, "k", "b", 1000, 1010)
		h.event(EvFault, 0, 1005, "pause-leader")
		h.event(EvStop, 0, 1005, "")
		h.event(EvCont, 0, 9000, "")
		h.event(EvHealed, 0, 9000, "")
		h.get(2, 1, "k", "a", readAt, readAt+5)
		return h.run
	}
	mustPass(t, CheckBounded(lost(3000), time.Second, opts()))
	mustFail(t, CheckBounded(lost(5000), time.Second, opts()), 1, "3.990s stale")

	// a cut-off node's reads are left out of 1b
	h := newHist()
	h.put(1, 0, "k", "a", 0, 10)
	h.put(1, 0, "k", "b", 1000, 1010)
	h.event(EvPartition, 1, 500, "")
	h.event(EvHeal, 1, 9000, "")
	h.get(2, 1, "k", "a", 5000, 5005)
	mustPass(t, CheckBounded(h.run, time.Second, opts()))
}

func finalRead(h *hist, node int, key, v string) {
	h.op(Op{Client: finalClient + node, Session: 9000 + node, Node: node, Kind: CfgGet, Key: key, Found: v != "", Read: v, Outcome: OK}, 201_000, 201_001)
}

func TestFinalState(t *testing.T) {
	mk := func(final string) *Run {
		h := newHist()
		h.put(1, 0, "k", "a", 0, 10)
		h.put(2, 1, "k", "b", 20, 30)
		h.op(Op{Client: 3, Node: 2, Kind: CfgPut, Key: "k", Value: "c", Outcome: Unknown}, 40, 5040)
		for n := 0; n < 3; n++ {
			finalRead(h, n, "k", final)
		}
		return h.run
	}
	mustPass(t, CheckFinal(mk("b"), opts()))
	mustPass(t, CheckFinal(mk("c"), opts())) // the unknown write took effect
	mustFail(t, CheckFinal(mk("a"), opts()), 3, "was acknowledged after it: lost")
	r := CheckFinal(mk(""), opts()) // deleted by nobody
	if len(r.Violations) != 3 {
		t.Fatalf("an absent final state with no delete: want 3 violations, got %+v", r.Violations)
	}
}

func TestConvergence(t *testing.T) {
	mk := func(readAt int64, converged int64) *Run {
		h := newHist()
		h.event(EvFault, 1, 10_000, "kill-follower")
		h.event(EvKill, 1, 10_000, "")
		h.event(EvReady, 1, 20_000, "")
		h.event(EvHealed, 1, 20_000, "kill-follower")
		h.put(1, 0, "k", "a", 0, 10)
		h.put(1, 0, "k", "b", 15_000, 15_010) // while node 2 was down
		h.get(2, 1, "k", "b", 20_100, 20_105)
		h.get(2, 1, "k", "a", readAt, readAt+5)
		h.run.Converged = converged
		return h.run
	}
	r, recs := CheckConvergence(mk(20_500, 5*ms), time.Second) // stale only within ConvergeBound
	mustPass(t, r)
	if len(recs) != 1 || recs[0].Converged != 500*ms {
		t.Fatalf("recoveries: %+v", recs)
	}
	r, _ = CheckConvergence(mk(25_000, 5*ms), time.Second) // still stale 5 s after it came back
	mustFail(t, r, 1, "still served reads older than")
	r, _ = CheckConvergence(mk(20_500, 2500*ms), time.Second)
	mustFail(t, r, 1, "became identical only 2.500s later")
	h := newHist()
	h.run.Converged, h.run.FinalDiff = -1, "cfg.get k: n1=a n2=b"
	r, _ = CheckConvergence(h.run, time.Second)
	mustFail(t, r, 1, "never became identical")
}

func TestReadYourWrites(t *testing.T) {
	mk := func(read string) *Run {
		h := newHist()
		h.put(2, 0, "k", "old", 0, 10)
		h.op(Op{Client: 1, Session: 7, Node: 1, Kind: CfgPut, Key: "k", Value: "mine", Outcome: OK}, 100, 110)
		h.op(Op{Client: 1, Session: 7, Node: 1, Kind: CfgGet, Key: "k", Found: true, Read: read, Outcome: OK}, 111, 112)
		h.put(3, 2, "k", "newer", 105, 200) // concurrent: may come after mine
		return h.run
	}
	mustPass(t, CheckRYW(mk("mine")))
	mustPass(t, CheckRYW(mk("newer")))
	mustFail(t, CheckRYW(mk("old")), 1, "is not in its next read there")

	// a persistent register then a service update "not found" on the same
	// node (issue 23, defect 3)
	h := newHist()
	h.op(Op{Client: 1, Session: 7, Node: 1, Kind: PIReg, Key: "s", Slot: 0, Value: "r1", Outcome: OK}, 0, 10)
	h.op(Op{Client: 1, Session: 7, Node: 1, Kind: PISvcPut, Key: "s", Value: "x", Outcome: Unknown, Status: 500,
		Err: "caused: service DEFAULT_GROUP@@s not found!"}, 11, 12)
	mustFail(t, CheckRYW(h.run), 1, "service update")
}

func TestMonotonicReads(t *testing.T) {
	mk := func(first, second string) *Run {
		h := newHist()
		h.put(1, 0, "k", "a", 0, 10)
		h.put(1, 0, "k", "b", 20, 30)
		h.op(Op{Client: samplerClient + 2, Session: 50, Node: 2, Kind: CfgGet, Key: "k", Found: true, Read: first, Outcome: OK}, 40, 41)
		h.op(Op{Client: samplerClient + 2, Session: 50, Node: 2, Kind: CfgGet, Key: "k", Found: true, Read: second, Outcome: OK}, 50, 51)
		return h.run
	}
	mustPass(t, CheckMonotonic(mk("a", "b")))
	mustFail(t, CheckMonotonic(mk("b", "a")), 1, "went back")

	// instance lists: a deregistered instance comes back
	h := newHist()
	h.op(Op{Client: 1, Node: 0, Kind: PIReg, Key: "s", Slot: 1, Value: "r1", Outcome: OK}, 0, 10)
	h.op(Op{Client: 1, Node: 0, Kind: PIDereg, Key: "s", Slot: 1, Outcome: OK}, 20, 30)
	list := func(s Slot, at int64) {
		h.op(Op{Client: 9, Session: 90, Node: 1, Kind: PIList, Key: "s", Slots: []Slot{{}, s, {}, {}}, Outcome: OK}, at, at+1)
	}
	list(Slot{}, 40)
	list(Slot{P: true, V: "r1"}, 50)
	mustFail(t, CheckMonotonic(h.run), 1, "went back")
}

func TestEphemeral(t *testing.T) {
	mk := func(missingAt int64, listedAfterStop bool) *Run {
		h := newHist()
		h.run.End = 120_000 * ms
		h.run.Beaters = []Beater{
			{ID: 0, Service: "e", Inst: "127.0.0.20:9170"},
			{ID: 1, Service: "e", Inst: "127.0.0.20:9171", StopAt: 10_000 * ms, Stopped: 10_000 * ms},
		}
		for t := int64(0); t < 120_000; t += 1000 {
			h.op(Op{Client: 500, Node: int(t/1000) % 3, Kind: EphBeat, Key: "e", Slot: 0, Outcome: OK}, t, t+2)
			if t < 10_000 {
				h.op(Op{Client: 501, Node: int(t/1000) % 3, Kind: EphBeat, Key: "e", Slot: 1, Outcome: OK}, t, t+2)
			}
		}
		for t := int64(500); t < 120_000; t += 1000 {
			for n := 0; n < 3; n++ {
				insts := map[string]bool{"127.0.0.20:9170": t != missingAt || n != 1}
				if t < 40_000 || (listedAfterStop && n == 2) {
					insts["127.0.0.20:9171"] = true
				}
				h.op(Op{Client: samplerClient + n, Session: 100 + n, Node: n, Kind: EphList, Key: "e", Insts: insts, Outcome: OK}, t, t+1)
			}
		}
		return h.run
	}
	r, exp := CheckEphemeral(mk(-1, false), DefaultEphOptions())
	mustPass(t, r)
	if len(exp) != 1 || exp[0].LastSeen != 39_500*ms {
		t.Fatalf("expiry rows: %+v", exp)
	}
	r, _ = CheckEphemeral(mk(50_500, false), DefaultEphOptions())
	mustFail(t, r, 1, "beating instance 127.0.0.20:9170 of e missing from node 2")
	r, _ = CheckEphemeral(mk(-1, true), DefaultEphOptions())
	mustFail(t, r, 1, "stopped instance 127.0.0.20:9171 of e still listed on node 3")

	// a deregistered instance listed again 5 s after its deregistration
	// (a late beat registered it again)
	run := mk(-1, false)
	run.Beaters[1].Deregister = true
	run.Ops = append(run.Ops, &Op{ID: len(run.Ops) + 1, Client: 501, Session: 501, Node: 0, Kind: EphDereg, Key: "e", Slot: 1,
		Outcome: OK, Invoke: 10_010 * ms, Complete: 10_020 * ms})
	r, _ = CheckEphemeral(run, DefaultEphOptions())
	mustFail(t, r, 1, "deregistered instance 127.0.0.20:9171 of e listed on node 1")
	for _, op := range run.Ops {
		if op.Kind == EphList && op.Invoke > 12_000*ms {
			delete(op.Insts, "127.0.0.20:9171")
		}
	}
	r, _ = CheckEphemeral(run, DefaultEphOptions())
	mustPass(t, r)

	// a deregistration acknowledged by a node cut off from the others
	// (checker seed 801): they list the instance until the partition
	// heals, and within ConvergeBound after it no longer
	cutOff := func(listedUntil int64) *Run {
		run := mk(-1, false)
		run.Beaters[1].Deregister = true
		run.Events = []Event{{T: 5_000 * ms, Kind: EvPartition, Node: 0}, {T: 20_000 * ms, Kind: EvHeal, Node: 0}}
		run.Ops = append(run.Ops, &Op{ID: len(run.Ops) + 1, Client: 501, Session: 501, Node: 0, Kind: EphDereg, Key: "e", Slot: 1,
			Outcome: OK, Invoke: 10_010 * ms, Complete: 10_020 * ms})
		for _, op := range run.Ops {
			if op.Kind == EphList && (op.Node == 0 && op.Invoke > 10_020*ms || op.Invoke > listedUntil*ms) {
				delete(op.Insts, "127.0.0.20:9171")
			}
		}
		return run
	}
	r, _ = CheckEphemeral(cutOff(20_600), DefaultEphOptions())
	mustPass(t, r)
	r, _ = CheckEphemeral(cutOff(23_000), DefaultEphOptions())
	mustFail(t, r, 1, "deregistered instance 127.0.0.20:9171 of e listed on node 2")

	// a sample of a node that was down just before is left out
	run = mk(50_500, false)
	run.Events = []Event{{T: 49_000 * ms, Kind: EvKill, Node: 1}, {T: 49_800 * ms, Kind: EvReady, Node: 1}}
	r, _ = CheckEphemeral(run, DefaultEphOptions())
	mustPass(t, r)
}

func TestRefusals(t *testing.T) {
	h := newHist()
	h.event(EvFault, 0, 50_000, "kill-leader")
	h.event(EvKill, 0, 50_000, "")
	h.event(EvReady, 0, 58_000, "")
	h.event(EvHealed, 0, 58_000, "kill-leader")
	h.put(1, 1, "k", "a", 10_000, 10_010)
	// during the election: waited 3 s for it, then refused: fine
	h.op(Op{Client: 1, Node: 1, Kind: CfgPut, Key: "k", Value: "b", Outcome: Unknown, Status: 500,
		Err: "caused: The Raft Group [nacos_config] did not find the Leader node;"}, 50_100, 53_100)
	// a write on the killed node while it was down: not a refusal without cause
	h.op(Op{Client: 2, Node: 0, Kind: CfgPut, Key: "k", Value: "c", Outcome: Unknown, Err: "connection refused"}, 51_000, 51_001)
	mustPass(t, CheckRefusals(h.run))

	h.op(Op{Client: 3, Node: 2, Kind: CfgPut, Key: "k", Value: "d", Outcome: Unknown, Status: 500,
		Err: "caused: The Raft Group [nacos_config] did not find the Leader node;"}, 50_200, 50_201)
	mustFail(t, CheckRefusals(h.run), 1, "without waiting for the election")

	// a register on node 2 times out on a paused Distro owner after the
	// majority elected a new leader (issue 23, defect 4)
	m := newHist()
	m.event(EvFault, 0, 50_000, "pause-leader")
	m.event(EvStop, 0, 50_000, "")
	m.event(EvCont, 0, 58_000, "")
	m.event(EvHealed, 0, 58_000, "pause-leader")
	m.put(1, 1, "k", "a", 51_000, 52_500) // the new leader takes writes
	m.op(Op{Client: 2, Node: 2, Kind: PIReg, Key: "s", Slot: 1, Value: "r1", Outcome: Unknown, Status: 500,
		Err: "java.net.SocketTimeoutException: Read timed out"}, 53_000, 58_000)
	mustFail(t, CheckRefusals(m.run), 1, "pi.reg failed on node 3 (in the majority, pause-leader)")

	q := newHist()
	q.op(Op{Client: 4, Node: 2, Kind: BetaStop, Key: "k", Outcome: Fail, Status: 200,
		Err: `{"code":500,"message":"remove beta data error","data":false}`}, 20_000, 20_001)
	mustFail(t, CheckRefusals(q.run), 1, "beta.stop failed on node 3 in a quiet cluster")
}

func TestStaleness(t *testing.T) {
	h := newHist()
	h.put(1, 0, "k", "a", 0, 10)
	h.put(1, 0, "k", "b", 100, 200)
	h.op(Op{Client: 1, Node: 0, Kind: CfgDel, Key: "k", Outcome: OK}, 300, 310)
	vs := buildViews(h.run)
	v := vs[viewCfg("k")]
	for _, c := range []struct {
		o        obs
		at       int64
		want     int64
		describe string
	}{
		{obs{viewCfg("k"), true, "a"}, 150, 0, "a while b is written"},
		{obs{viewCfg("k"), true, "a"}, 700, 500, "a, overwritten at 200"},
		{obs{viewCfg("k"), true, "b"}, 400, 90, "b, deleted at 310"},
		{obs{viewCfg("k"), false, ""}, 400, 0, "absent after the delete"},
		{obs{viewCfg("k"), false, ""}, 250, 240, "absent (initial), written at 10"},
		{obs{viewCfg("k"), true, "zz"}, 250, -1, "a value nobody wrote"},
	} {
		r := &Op{Invoke: c.at * ms, Complete: c.at*ms + ms}
		want := c.want * ms
		if c.want < 0 {
			want = -1
		}
		if got := v.staleness(c.o, r); got != want {
			t.Errorf("%s: staleness %v, want %v", c.describe, time.Duration(got), time.Duration(want))
		}
	}
}

func TestPlan(t *testing.T) {
	a, b := Plan(42, 5*time.Minute, 3), Plan(42, 5*time.Minute, 3)
	if PlanString(a) != PlanString(b) || len(a) < 8 {
		t.Fatalf("plan not reproducible or too short:\n%s", PlanString(a))
	}
	if PlanString(Plan(43, 5*time.Minute, 3)) == PlanString(a) {
		t.Fatal("another seed gives the same plan")
	}
	var total time.Duration
	for _, f := range a {
		total += f.Gap + f.Hold
		if f.Gap < 10*time.Second || f.Gap >= 20*time.Second || f.Target < 0 || f.Target > 2 {
			t.Fatalf("fault out of bounds: %+v", f)
		}
	}
	if total > 5*time.Minute-10*time.Second {
		t.Fatalf("the plan does not end quiet: %v", total)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		st   int
		body string
		err  error
		want Outcome
	}{
		{CfgPut, 200, "true", nil, OK},
		{CfgPut, 0, "", errors.New("i/o timeout"), Unknown},
		{CfgPut, 0, "", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, Fail},
		{CfgPut, 500, "caused: The Raft Group [nacos_config] did not find the Leader node;", nil, Unknown},
		{CfgPut, 503, "server is starting", nil, Fail},
		{CfgPut, 400, "bad", nil, Fail},
		{CfgCAS, 500, "Cas publish fail, server md5 may have changed.", nil, Fail},
	} {
		op := &Op{Kind: c.kind}
		got := classify(op, c.st, c.body, c.err, bodyIs("true"))
		op.Outcome = got
		if got != c.want {
			t.Errorf("%s %d %q %v: %s, want %s", c.kind, c.st, c.body, c.err, got, c.want)
		}
		if c.kind == CfgCAS && !casRefused(op) {
			t.Errorf("a CAS refusal is not marked: %q", op.Err)
		}
	}
}

func TestFirewallRefusesForeignAddresses(t *testing.T) {
	fw := &Firewall{IPs: []string{"127.0.0.21", "127.0.0.22"}}
	if err := fw.Partition("127.0.0.21", []string{"127.0.0.11"}); err == nil {
		t.Fatal("a rule naming another address was allowed")
	}
	if err := fw.Partition("10.0.0.1", nil); err == nil {
		t.Fatal("a rule naming another address was allowed")
	}
}

func TestAvailability(t *testing.T) {
	h := newHist()
	h.event(EvFault, 0, 50_000, "kill-leader")
	h.event(EvKill, 0, 50_000, "")
	h.event(EvReady, 0, 58_000, "")
	h.event(EvHealed, 0, 58_000, "kill-leader")
	h.put(1, 1, "k", "a", 10_000, 10_010)
	h.op(Op{Client: 1, Node: 1, Kind: CfgPut, Key: "k", Value: "b", Outcome: Unknown, Status: 500,
		Err: "caused: The Raft Group [nacos_config] did not find the Leader node;"}, 50_100, 50_101)
	// a batch that updated nothing is no proof of a leader
	h.op(Op{Client: 2, Node: 2, Kind: PIMeta, Key: "s", Mask: 1, Value: "m", Outcome: OK}, 50_200, 50_201)
	h.put(1, 1, "k", "c", 51_000, 52_600)
	rows, lf := Availability(h.run)
	if len(lf) != 1 || lf[0].FirstOK == nil || lf[0].FirstOK.Value != "c" || lf[0].After != 2600*ms || lf[0].NoLeader != 1 {
		t.Fatalf("leader faults: %+v", lf)
	}
	var put AvailRow
	for _, r := range rows {
		if r.Kind == CfgPut && r.Phase == "kill-leader" {
			put = r
		}
	}
	if put.OK != 1 || put.Unkn != 1 || put.FastNoLeader != 1 {
		t.Fatalf("cfg.put in kill-leader: %+v", put)
	}
}

// TestSlotListedTwice: a list naming a slot's instance twice counts the
// second copy as extra (check 3 flags it) instead of letting the copy that
// comes last decide the slot's value.
func TestSlotListedTwice(t *testing.T) {
	body := `{"hosts":[{"ip":"127.0.0.20","port":9161,"metadata":{"v":"new"}},{"ip":"127.0.0.20","port":9161,"metadata":{"v":"old"}},{"ip":"127.0.0.20","port":9160,"metadata":{"v":"a"}}]}`
	slots, extra, err := parseSlots(body, "127.0.0.20", 9160, 4)
	if err != nil {
		t.Fatal(err)
	}
	if extra != 1 || slots[1].V != "new" || slots[0].V != "a" || slots[2].P {
		t.Fatalf("slots %+v extra %d; want slot 1 = new, slot 0 = a, one extra", slots, extra)
	}
}

// A 2.x list (QueryServiceResponse) reads into slots as the HTTP list
// does: other hosts and a slot listed twice count as extra.
func TestParseServiceInfoSlots(t *testing.T) {
	body := `{"resultCode":200,"errorCode":0,"serviceInfo":{"name":"jps0","groupName":"DEFAULT_GROUP","hosts":[
		{"ip":"127.0.0.20","port":9160,"metadata":{"v":"r1.1"}},
		{"ip":"127.0.0.20","port":9162,"metadata":{"v":"r2.5","m":"m3.1"}},
		{"ip":"127.0.0.20","port":9162,"metadata":{"v":"old"}},
		{"ip":"10.0.0.1","port":9161,"metadata":{}}]}}`
	slots, extra, err := parseServiceInfoSlots([]byte(body), "127.0.0.20", 9160, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []Slot{{P: true, V: "r1.1"}, {}, {P: true, V: "r2.5", M: "m3.1"}, {}}
	if slotsString(slots) != slotsString(want) || extra != 2 {
		t.Fatalf("slots %s extra %d, want %s extra 2", slotsString(slots), extra, slotsString(want))
	}
	if _, _, err := parseServiceInfoSlots([]byte(`{"resultCode":500,"errorCode":500}`), "127.0.0.20", 9160, 4); err == nil {
		t.Fatal("an answer without serviceInfo read as a list")
	}
}
