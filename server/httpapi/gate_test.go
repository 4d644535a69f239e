package httpapi

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/raftstore/raftstoretest"
)

// fakeRaft is a node's view of raft: the leader it knows, whether it is
// the leader, and its applied index.
type fakeRaft struct {
	mu      sync.Mutex
	self    string
	leader  string
	term    uint64
	applied uint64
	waited  []uint64
	verify  func() error // VerifyLeader's answer (nil: confirmed)
}

func (f *fakeRaft) VerifyLeader() error {
	f.mu.Lock()
	v := f.verify
	f.mu.Unlock()
	if v == nil {
		return nil
	}
	return v()
}

func (f *fakeRaft) Term() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.term
}

func (f *fakeRaft) IsLeader() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leader == f.self
}

func (f *fakeRaft) AppliedIndex() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.applied
}

func (f *fakeRaft) WaitApplied(_ context.Context, i uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.waited = append(f.waited, i)
	if i > f.applied {
		f.applied = i
	}
	return nil
}

func (f *fakeRaft) LeaderID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leader
}

func (f *fakeRaft) set(l string) {
	f.mu.Lock()
	f.leader = l
	f.term++
	f.mu.Unlock()
}

// gateApp is one node: the gate over a one-route table whose handler
// records that it ran.
func gateApp(t *testing.T, st *fakeRaft, class Class, fwd ForwardFunc, handler fiber.Handler) *fiber.App {
	t.Helper()
	return gateAppRoute(t, st, fwd, Route{Class: class, Handler: handler})
}

// gateAppRoute is gateApp for a route of one's own (its method and path
// are POST /v1/cs/configs).
func gateAppRoute(t *testing.T, st *fakeRaft, fwd ForwardFunc, rt Route) *fiber.App {
	t.Helper()
	rt.Method, rt.Path = fiber.MethodPost, "/v1/cs/configs"
	table := MustTable([]Route{rt})
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandlerIn(nil, "/nacos")})
	app.Use(Gate(GateDeps{Table: table, ContextPath: "/nacos", Raft: st, Forward: fwd, Self: st.self}))
	table.Mount(app.Group("/nacos"))
	return app
}

func post(t *testing.T, app *fiber.App, header map[string]string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest("POST", "/nacos/v1/cs/configs", nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestGateForwardsCPWriteBeforeItsHandler is issue 23's second defect: a
// handler that maps the not-leader error (stopBeta, the metadata batch)
// answered 200 on a follower and wrote nothing. A CP route on a follower
// now goes to the leader before any handler runs, and is answered after
// this node applied the leader's index.
func TestGateForwardsCPWriteBeforeItsHandler(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "A"}
	ran := false
	var calls []string
	fwd := func(_ context.Context, addr, _, _ string, h http.Header, _ []byte) (int, http.Header, []byte, error) {
		calls = append(calls, addr+" "+h.Get(HeaderForwarded))
		return 200, http.Header{HeaderApplied: {"42"}}, []byte("true"), nil
	}
	app := gateApp(t, st, CP, fwd, func(c *fiber.Ctx) error {
		ran = true
		return c.SendString(`{"code":500,"message":"remove beta data error","data":false}`) // swallows the write
	})
	resp, body := post(t, app, nil)
	if ran || resp.StatusCode != 200 || body != "true" || strings.Join(calls, ",") != "A C" {
		t.Fatalf("handler ran %v; answer %d %q; forwards %v", ran, resp.StatusCode, body, calls)
	}
	if fmt.Sprint(st.waited) != "[42]" {
		t.Fatalf("answered before applying the leader's index: waited for %v", st.waited)
	}
	// the same route on the leader runs here
	st.set("C")
	if _, body := post(t, app, nil); !ran || body == "true" {
		t.Fatalf("the leader did not run the handler: %q", body)
	}
}

// TestGateSeesAMaskedLostLeadership: on the node that believed it led, a
// handler whose write found the leadership gone and that answered an
// answer of its own for it (stopBeta's 200 "remove beta data error": the
// fault checker saw it during a partition, the beta left in place) does
// not have that answer relayed: the gate learns of the refusal from the
// write itself and sends the request to the new leader.
func TestGateSeesAMaskedLostLeadership(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "C"}
	var calls []string
	fwd := func(_ context.Context, addr, _, _ string, _ http.Header, _ []byte) (int, http.Header, []byte, error) {
		calls = append(calls, addr)
		return 200, http.Header{HeaderApplied: {"7"}}, []byte(`{"code":200,"message":"stop beta ok","data":true}`), nil
	}
	app := gateApp(t, st, CP, fwd, func(c *fiber.Ctx) error {
		st.set("A") // the leadership moved before the write
		raftstore.NoteWrite(c.UserContext(), &raftstore.NotLeaderError{LeaderID: "A"})
		return c.SendString(`{"code":500,"message":"remove beta data error","data":false}`)
	})
	if _, body := post(t, app, nil); !strings.Contains(body, "stop beta ok") || strings.Join(calls, ",") != "A" {
		t.Fatalf("answer %q after forwards to %v", body, calls)
	}
}

// TestGateConfirmsLeadershipBeforeANoop is checker seed 707: a leader back
// from a pause, not yet told that another node leads, answered a metadata
// batch `updated: []` from its old view — the handler found nothing to
// change, so no raft write told it it no longer led. A CP write that made
// no raft write is answered only once the leadership is confirmed; if it
// is gone, the request goes to the new leader.
func TestGateConfirmsLeadershipBeforeANoop(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "C"}
	st.verify = func() error { st.set("A"); return &raftstore.NotLeaderError{LeaderID: "A"} }
	var calls []string
	fwd := func(_ context.Context, addr, _, _ string, _ http.Header, _ []byte) (int, http.Header, []byte, error) {
		calls = append(calls, addr)
		return 200, http.Header{HeaderApplied: {"9"}}, []byte(`{"updated":["1.1.1.1:80:DEFAULT:persist"]}`), nil
	}
	app := gateApp(t, st, CP, fwd, func(c *fiber.Ctx) error { return c.SendString(`{"updated":[]}`) })
	if _, body := post(t, app, nil); body != `{"updated":["1.1.1.1:80:DEFAULT:persist"]}` || strings.Join(calls, ",") != "A" {
		t.Fatalf("answer %q after forwards to %v", body, calls)
	}
	if fmt.Sprint(st.waited) != "[9]" {
		t.Fatalf("answered before applying the leader's index: waited for %v", st.waited)
	}

	// a confirmed leader answers its no-op itself; a handler that wrote
	// through raft is not checked again (its write was the check)
	verified := 0
	st2 := &fakeRaft{self: "C", leader: "C", verify: func() error { verified++; return nil }}
	noop := gateApp(t, st2, CP, fwd, func(c *fiber.Ctx) error { return c.SendString(`{"updated":[]}`) })
	if _, body := post(t, noop, nil); body != `{"updated":[]}` || verified != 1 {
		t.Fatalf("confirmed leader: %q, %d verifications", body, verified)
	}
	wrote := gateApp(t, st2, CP, fwd, func(c *fiber.Ctx) error {
		raftstore.NoteProposal(c.UserContext())
		return c.SendString("ok")
	})
	if _, body := post(t, wrote, nil); body != "ok" || verified != 1 {
		t.Fatalf("a write that reached raft: %q, %d verifications", body, verified)
	}
}

// TestGateConfirmsLeadershipBeforeAMixedNoop: a metadata batch (an AP and
// a CP half) on a deposed leader whose CP half found nothing to write sends
// the CP half to the new leader and runs the AP half here again, as a
// follower does (issue 23: the mixed path had no leadership check).
func TestGateConfirmsLeadershipBeforeAMixedNoop(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "C"}
	st.verify = func() error { st.set("A"); return &raftstore.NotLeaderError{LeaderID: "A"} }
	var calls []string
	fwd := func(_ context.Context, addr, _, _ string, h http.Header, _ []byte) (int, http.Header, []byte, error) {
		calls = append(calls, addr+" "+h.Get(HeaderPart))
		return 200, http.Header{HeaderApplied: {"9"}}, []byte(`{"updated":["p"]}`), nil
	}
	var parts []Part
	app := gateApp(t, st, Mixed, fwd, func(c *fiber.Ctx) error {
		part, answer := PartOf(c)
		parts = append(parts, part)
		if part == PartEphemeral {
			return c.SendString(`{"ap":"e","cp":` + string(answer) + `}`)
		}
		return c.SendString(`{"updated":[]}`)
	})
	if _, body := post(t, app, nil); body != `{"ap":"e","cp":{"updated":["p"]}}` || strings.Join(calls, ",") != "A persistent" {
		t.Fatalf("answer %q after forwards to %v (parts run here %v)", body, calls, parts)
	}
	if fmt.Sprint(st.waited) != "[9]" {
		t.Fatalf("answered before applying the leader's index: waited for %v", st.waited)
	}
}

// TestGateSendsOneWriteIDOnEveryCopy: an idempotent write sent again
// after its outcome was unknown carries the id its first copy carried, so
// the leader applies it once (raftstore.WithWriteID; checker seed 705); a
// client's own id header is not trusted.
func TestGateSendsOneWriteIDOnEveryCopy(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "A"}
	var ids []string
	fwd := func(_ context.Context, addr, _, _ string, h http.Header, _ []byte) (int, http.Header, []byte, error) {
		ids = append(ids, addr+" "+h.Get(HeaderWriteID))
		if addr == "A" {
			go st.set("B") // A was cut off after it took the write
			return 0, nil, nil, io.ErrUnexpectedEOF
		}
		return 200, http.Header{HeaderApplied: {"3"}}, []byte("ok"), nil
	}
	app := gateAppRoute(t, st, fwd, Route{Class: CP, Idempotent: true,
		Handler: func(*fiber.Ctx) error { t.Error("a follower ran a CP handler"); return nil }})
	if _, body := post(t, app, map[string]string{HeaderWriteID: "forged"}); body != "ok" {
		t.Fatalf("answer %q after sends %v", body, ids)
	}
	if len(ids) != 2 {
		t.Fatalf("sends %v; want A then B", ids)
	}
	a, b := strings.TrimPrefix(ids[0], "A "), strings.TrimPrefix(ids[1], "B ")
	if a == "" || a == "forged" || a != b {
		t.Fatalf("write ids of the two copies: %q, %q; want one id of this node's choosing", a, b)
	}
}

// TestGateAppliesAForwardedCopyOnce: on the leader, two copies of one
// forwarded write (the same write id) apply once, so a write made between
// them stays; a client's id header without the forwarded mark is ignored.
func TestGateAppliesAForwardedCopyOnce(t *testing.T) {
	store := raftstoretest.New(t)
	st := &fakeRaft{self: "A", leader: "A"}
	value := "v1"
	app := gateAppRoute(t, st, func(context.Context, string, string, string, http.Header, []byte) (int, http.Header, []byte, error) {
		t.Error("the leader forwarded")
		return 0, nil, nil, io.EOF
	}, Route{Class: CP, Idempotent: true, Handler: func(c *fiber.Ctx) error {
		_, err := store.Apply(c.UserContext(), raftstore.Batch{Ops: []raftstore.Op{{Kind: raftstore.OpPut, Bucket: "b", Key: "k", Value: []byte(value)}}})
		if err != nil {
			return err
		}
		return c.SendString("ok")
	}})
	copyOf := map[string]string{HeaderForwarded: "C", HeaderWriteID: "w1"}
	get := func() string { r, _ := store.Get("b", "k"); return string(r.Value) }

	if _, body := post(t, app, copyOf); body != "ok" || get() != "v1" {
		t.Fatalf("first copy: %q, k = %q", body, get())
	}
	value = "between"
	if _, body := post(t, app, map[string]string{HeaderForwarded: "C", HeaderWriteID: "w2"}); body != "ok" || get() != "between" {
		t.Fatalf("another write: %q, k = %q", body, get())
	}
	value = "v1"
	if _, body := post(t, app, copyOf); body != "ok" || get() != "between" {
		t.Fatalf("second copy: %q, k = %q; want the write made in between kept", body, get())
	}
	// a client's own id (no forwarded mark) is not an id: applied
	if _, body := post(t, app, map[string]string{HeaderWriteID: "w2"}); body != "ok" || get() != "v1" {
		t.Fatalf("client's id header: %q, k = %q; want applied", body, get())
	}
}

// TestGateWaitsForTheNextLeader is issue 23's fifth defect: right after the
// leader is killed a follower still knows it as leader; a refused
// connection (the write was not delivered) now waits for the next leader
// instead of failing in 0 ms.
func TestGateWaitsForTheNextLeader(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "A"}
	var calls []string
	fwd := func(_ context.Context, addr, _, _ string, _ http.Header, _ []byte) (int, http.Header, []byte, error) {
		calls = append(calls, addr)
		if addr == "A" {
			go st.set("B") // the election ends a moment later
			return 0, nil, nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		}
		return 200, http.Header{}, []byte("ok"), nil
	}
	app := gateApp(t, st, CP, fwd, func(*fiber.Ctx) error { t.Error("a follower ran a CP handler"); return nil })
	if _, body := post(t, app, nil); body != "ok" || strings.Join(calls, ",") != "A,B" {
		t.Fatalf("answer %q after forwards to %v", body, calls)
	}
}

// TestGateForwardFollowsLeaderReelected: the leader that refused a write
// (it stepped down a moment) can be elected again: the write goes to it in
// its new term instead of waiting for another leader that never comes.
func TestGateForwardFollowsLeaderReelected(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "A"}
	calls := 0
	fwd := func(_ context.Context, addr, _, _ string, _ http.Header, _ []byte) (int, http.Header, []byte, error) {
		calls++
		if calls == 1 {
			go st.set("A") // A steps down and wins the next election
			return 500, http.Header{HeaderNotLeader: {"true"}}, nil, nil
		}
		return 200, http.Header{}, []byte("ok"), nil
	}
	app := gateApp(t, st, CP, fwd, func(*fiber.Ctx) error { return nil })
	start := time.Now()
	if _, body := post(t, app, nil); body != "ok" || calls != 2 {
		t.Fatalf("answer %q after %d forwards", body, calls)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("waited %v for a leader other than the re-elected one", d)
	}
}

// TestGateForwardFollowsMovedLeadership: a write forwarded to a node that
// lost the leadership before the write reached it (its answer says nothing
// was written) goes once more, to the new leader; a no-leader answer
// without that mark (the outcome is unknown) is relayed as it is, and so
// is a transport error after the request left.
func TestGateForwardFollowsMovedLeadership(t *testing.T) {
	const noLeaderBody = "caused: The Raft Group [nacos_config] did not find the Leader node;"
	for _, tc := range []struct {
		name      string
		notLeader bool
		lost      bool
		want      string
		calls     string
	}{
		{"moved before the write", true, false, "ok", "A,B"},
		{"outcome unknown", false, false, noLeaderBody, "A"},
		{"connection lost after sending", false, true, noLeaderBody, "A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &fakeRaft{self: "C", leader: "A"}
			var calls []string
			fwd := func(_ context.Context, addr, _, _ string, _ http.Header, _ []byte) (int, http.Header, []byte, error) {
				calls = append(calls, addr)
				if addr == "A" {
					st.set("B") // the election ends while A answers
					if tc.lost {
						return 0, nil, nil, io.ErrUnexpectedEOF
					}
					h := http.Header{}
					if tc.notLeader {
						h.Set(HeaderNotLeader, "true")
					}
					return 500, h, []byte(noLeaderBody), nil
				}
				return 200, http.Header{}, []byte("ok"), nil
			}
			app := gateApp(t, st, CP, fwd, func(*fiber.Ctx) error { return nil })
			if _, body := post(t, app, nil); body != tc.want || strings.Join(calls, ",") != tc.calls {
				t.Fatalf("answer %q after forwards to %v", body, calls)
			}
		})
	}
}

// TestGateForwardedRefusalIsMarked: a forwarded write that reaches a node
// which is no longer the leader is refused with HeaderNotLeader, never
// forwarded again.
func TestGateForwardedRefusalIsMarked(t *testing.T) {
	st := &fakeRaft{self: "A", leader: "A"}
	fwd := func(context.Context, string, string, string, http.Header, []byte) (int, http.Header, []byte, error) {
		t.Fatal("a forwarded write is not forwarded again")
		return 0, nil, nil, nil
	}
	app := gateApp(t, st, CP, fwd, func(*fiber.Ctx) error { return &raftstore.NotLeaderError{LeaderID: "B"} })
	resp, _ := post(t, app, map[string]string{HeaderForwarded: "C"})
	if resp.StatusCode != 500 || resp.Header.Get(HeaderNotLeader) == "" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	// a write that succeeds tells the follower the index to wait for
	st.applied = 7
	app = gateApp(t, st, CP, fwd, func(c *fiber.Ctx) error { return c.SendString("true") })
	if resp, _ := post(t, app, map[string]string{HeaderForwarded: "C"}); resp.Header.Get(HeaderApplied) != "7" {
		t.Fatalf("applied header %q", resp.Header.Get(HeaderApplied))
	}
}

// TestGateCountsUndeclaredWrites: a route the table does not declare CP
// whose handler reaches raft on a follower is still forwarded, and
// counted: the route test of the cluster fails on it.
func TestGateCountsUndeclaredWrites(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "A"}
	fwd := func(context.Context, string, string, string, http.Header, []byte) (int, http.Header, []byte, error) {
		return 200, http.Header{}, []byte("ok"), nil
	}
	stats := &GateStats{}
	table := MustTable([]Route{{Method: fiber.MethodPost, Path: "/v1/cs/configs", Class: Read,
		Handler: func(*fiber.Ctx) error { return &raftstore.NotLeaderError{LeaderID: "A"} }}})
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandlerIn(nil, "/nacos")})
	app.Use(Gate(GateDeps{Table: table, ContextPath: "/nacos", Raft: st, Forward: fwd, Self: "C", Stats: stats}))
	table.Mount(app.Group("/nacos"))
	if _, body := post(t, app, nil); body != "ok" || stats.Undeclared.Load() != 1 {
		t.Fatalf("answer %q, undeclared %d", body, stats.Undeclared.Load())
	}
}

// TestGateMixedRunsTheCPHalfOnTheLeader: a Mixed write on a follower that
// owns the service: the leader runs the persistent half first, then the
// handler runs the ephemeral half here with the leader's answer.
func TestGateMixedRunsTheCPHalfOnTheLeader(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "A"}
	var part string
	fwd := func(_ context.Context, _, _, _ string, h http.Header, _ []byte) (int, http.Header, []byte, error) {
		part = h.Get(HeaderPart)
		return 200, http.Header{HeaderApplied: {"5"}}, []byte(`{"updated":["p"]}`), nil
	}
	app := gateApp(t, st, Mixed, fwd, func(c *fiber.Ctx) error {
		p, answer := PartOf(c)
		return c.SendString(fmt.Sprintf("%d %s", p, answer))
	})
	if _, body := post(t, app, nil); part != "persistent" || body != fmt.Sprintf(`%d {"updated":["p"]}`, PartEphemeral) {
		t.Fatalf("part header %q, handler saw %q", part, body)
	}
	// on the leader, a forwarded Mixed write runs its persistent half only
	st.set("C")
	if _, body := post(t, app, map[string]string{HeaderForwarded: "B", HeaderPart: "persistent"}); body != fmt.Sprintf("%d ", PartPersistent) {
		t.Fatalf("leader's handler saw %q", body)
	}
}

// TestGateRerunsAfterTakingOver: a write refused as not-leader on a node
// that then becomes the leader runs its handler again, not the path's next
// route (a second c.Next answered "Request method 'POST' not supported").
func TestGateRerunsAfterTakingOver(t *testing.T) {
	st := &fakeRaft{self: "C", leader: "C"}
	calls := 0
	fwd := func(context.Context, string, string, string, http.Header, []byte) (int, http.Header, []byte, error) {
		t.Error("forwarded to itself")
		return 0, nil, nil, nil
	}
	table := MustTable(withHead([]Route{{Method: fiber.MethodPost, Path: "/v1/cs/configs", Class: CP, Handler: func(c *fiber.Ctx) error {
		calls++
		if calls == 1 {
			return &raftstore.NotLeaderError{LeaderID: "C"} // a step-down and re-election in between
		}
		return c.SendString("true")
	}}}, methodNotSupported))
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandlerIn(nil, "/nacos")})
	app.Use(Gate(GateDeps{Table: table, ContextPath: "/nacos", Raft: st, Forward: fwd, Self: "C"}))
	table.Mount(app.Group("/nacos"))
	if _, body := post(t, app, nil); body != "true" || calls != 2 {
		t.Fatalf("answer %q after %d runs", body, calls)
	}
}
