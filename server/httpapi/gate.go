package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync/atomic"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/leader"
)

// GateDeps are what the gate needs: the route table, the @Secured checks'
// collaborators and the cluster's two ways of deciding a write.
type GateDeps struct {
	Table       *Table
	ContextPath string
	// Auth checks @Secured routes; Objects (may be nil) reads the config
	// objects the per-object checks look at.
	Auth    *auth.Service
	Objects ConfigObjects
	// Raft and Forward send CP writes to the raft leader (forward.go);
	// Self is this node's member address. A nil Forward runs CP writes
	// here (a node that is always the leader: tests).
	Raft    RaftState
	Forward ForwardFunc
	Self    string
	// Router is the node's leader router (server/leader), shared with the
	// gRPC edge; nil: one over Raft and Self.
	Router *leader.Router
	// Distro sends AP writes to the service's owner (DistroFilter).
	Distro DistroDeps
	Logger *slog.Logger
	// Stats counts what the gate did; may be nil.
	Stats *GateStats
	// CatchUp, when set, returns once this node's raft state is at least
	// as new as what it had applied before it last stopped (or ctx's
	// error): reads of raft state wait for it (catchup.go).
	CatchUp func(ctx context.Context) error
	// Behind reports, cheaply, whether CatchUp would wait: the reads of a
	// node that caught up pay one atomic load, no context or path test.
	Behind func() bool
}

// GateStats are the gate's counters (metrics).
type GateStats struct {
	// Forwarded counts CP writes sent to the raft leader.
	Forwarded atomic.Int64
	// Undeclared counts writes a route of another class tried on a raft
	// follower: a route the table does not declare CP (a bug; the write is
	// still forwarded).
	Undeclared atomic.Int64
}

// Locals of a request the gate prepared.
const (
	partKey       = "nacosd.gate.part"
	partAnswerKey = "nacosd.gate.partAnswer"
	idemKey       = "nacosd.gate.idempotent"
	writeIDKey    = "nacosd.gate.writeID"
)

// Part is which half of a Mixed write a handler runs.
type Part uint8

// Parts of a Mixed write.
const (
	PartAll        Part = iota // both (on the raft leader)
	PartEphemeral              // the AP half (the Distro owner, after the leader ran the CP half)
	PartPersistent             // the CP half (the raft leader)
)

// HeaderPart names the half of a Mixed write a forwarded request carries.
const HeaderPart = "X-Nacosd-Part"

// PartOf returns the half of a Mixed write the handler runs, and the
// body the raft leader answered for the CP half (PartEphemeral only).
func PartOf(c *fiber.Ctx) (Part, []byte) {
	p, _ := c.Locals(partKey).(Part)
	b, _ := c.Locals(partAnswerKey).([]byte)
	return p, b
}

// Gate is the one middleware in front of every route: it finds the
// request's route in the table, runs its @Secured check (Java's
// AuthFilter), then sends the request where its class is decided — a CP
// write to the raft leader before any handler runs, an AP write to the
// service's Distro owner — and serves everything else here.
func Gate(d GateDeps) fiber.Handler {
	if d.ContextPath == "/" {
		d.ContextPath = ""
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Stats == nil {
		d.Stats = &GateStats{}
	}
	g := &gate{GateDeps: d, router: d.Router}
	if g.router == nil && d.Raft != nil {
		rc := leader.DefaultConfig()
		rc.State, rc.Self, rc.Logger = d.Raft, d.Self, d.Logger
		if rc.Self == "" {
			rc.Self = "self"
		}
		r, err := leader.New(rc)
		if err != nil {
			panic(err) // State is set: cannot fail
		}
		g.router = r
	}
	return g.serve
}

type gate struct {
	GateDeps
	router *leader.Router // CP writes to the raft leader (nil without Raft)
}

func (g *gate) serve(c *fiber.Ctx) error {
	var buf [128]byte
	key, ok := appendRouteKey(buf[:0], c, g.ContextPath)
	var rt *Route
	if ok {
		rt = g.Table.lookup(string(key)) // no allocation for the lookup
	}
	if rt != nil && rt.Filter != nil {
		if done, err := rt.Filter(c); done {
			return err
		}
	}
	if rt != nil && g.Auth != nil {
		if err, denied := g.check(c, rt.Auth); denied {
			return err
		}
	} else if g.Auth != nil {
		g.dropForgedForward(c)
	}
	class := Read
	if rt != nil {
		class = rt.classOf(c)
	}
	// run runs the route's handler: the router's chain the first time, the
	// handler itself again when a write comes back here after a refusal
	// (a second c.Next would skip to the path's next route)
	ran := false
	run := func() error {
		if ran && rt != nil {
			c.Response().Reset()
			return rt.Handler(c)
		}
		ran = true
		return c.Next()
	}
	if rt != nil && (class == CP || class == Mixed) && rt.idempotent(c) {
		// sent again when its outcome is unknown: its id makes it apply
		// once (the forwarding node chose it; a client's is dropped)
		c.Locals(idemKey, true)
		id := string(c.Request().Header.Peek(HeaderWriteID))
		if id == "" || !g.forwarded(c) {
			id = raftstore.NewWriteID()
		}
		c.Locals(writeIDKey, id)
	}
	if class == Read && rt != nil && g.Behind != nil && g.Behind() && freshRead(rt.Path) {
		if done, err := g.caughtUp(c); done {
			return err
		}
	}
	switch class {
	case AP:
		return g.distroFilter(c, run)
	case CP:
		return g.cp(c, run)
	case Mixed:
		return g.mixed(c, run)
	}
	err := run()
	if isNotLeader(err) {
		// a write the table does not declare CP reached raft on a
		// follower: still forwarded, and counted so tests catch it
		g.Stats.Undeclared.Add(1)
		g.Logger.Error("route wrote raft state but is not declared CP in the route table", "method", c.Method(), "path", c.Path())
		return g.afterLeaderRun(c, run, err)
	}
	return err
}

// dropForgedForward removes the forwarded mark from a request that does
// not carry the server identity: only a node may say a write was
// forwarded by a node.
func (g *gate) dropForgedForward(c *fiber.Ctx) {
	if len(c.Request().Header.Peek(HeaderForwarded)) == 0 || !g.Auth.Enabled() {
		return
	}
	if !g.Auth.Identity().Verify(func(k string) string { return string(c.Request().Header.Peek(k)) }) {
		c.Request().Header.Del(HeaderForwarded)
		c.Request().Header.Del(HeaderPart)
		c.Request().Header.Del(HeaderWriteID)
	}
}

// cp runs a CP write on the raft leader.
func (g *gate) cp(c *fiber.Ctx, run func() error) error {
	if g.forwarded(c) {
		return g.onLeader(c, run)
	}
	if g.Forward == nil || g.Raft == nil || g.Raft.IsLeader() {
		note, err := runNotedWith(c, run)
		return g.afterLeaderRun(c, run, g.confirmNoop(note, err))
	}
	return g.forward(c, run, "")
}

// confirmNoop: a CP write whose handler made no raft write is answered
// only once the leadership is confirmed (leader.Router.ConfirmUnwritten);
// if it is gone, the request goes to the new leader as a refused write.
func (g *gate) confirmNoop(note *raftstore.WriteNote, err error) error {
	if g.router == nil || isNotLeader(err) || errors.Is(err, raftstore.ErrLeadershipLost) {
		return err
	}
	if cerr := g.router.ConfirmUnwritten(note); cerr != nil {
		return cerr
	}
	return err
}

// runNoted runs a write's handler with a raftstore.WriteNote in its
// context: when a write of the handler found the leadership gone, the
// gate sees that error even if the handler answered something of its own
// for it (stopBeta's "remove beta data error"), and routes the write to
// the new leader (afterLeaderRun, onLeader) instead of relaying that
// answer.
func runNoted(c *fiber.Ctx, run func() error) error {
	_, err := runNotedWith(c, run)
	return err
}

// runNotedWith is runNoted that also returns the note.
func runNotedWith(c *fiber.Ctx, run func() error) (*raftstore.WriteNote, error) {
	ctx, note := raftstore.WithWriteNote(c.UserContext())
	if id, _ := c.Locals(writeIDKey).(string); id != "" {
		ctx = raftstore.WithWriteID(ctx, id) // numbered afresh on every run
	}
	c.SetUserContext(ctx)
	err := run()
	if nerr := note.Err(); nerr != nil && !isNotLeader(err) && !errors.Is(err, raftstore.ErrLeadershipLost) {
		return note, nerr
	}
	return note, err
}

// forwarded reports whether a follower forwarded this request here.
func (g *gate) forwarded(c *fiber.Ctx) bool {
	return len(c.Request().Header.Peek(HeaderForwarded)) > 0
}

// onLeader runs a write a follower forwarded: the answer carries this
// node's applied index, or says that nothing was written because this
// node is no longer the leader (the follower then tries the new one).
func (g *gate) onLeader(c *fiber.Ctx, run func() error) error {
	if v := c.Request().Header.Peek(HeaderPart); string(v) == "persistent" {
		c.Locals(partKey, PartPersistent)
	}
	err := runNoted(c, run)
	switch {
	case errors.Is(err, raftstore.ErrLeadershipLost):
		c.Set(HeaderUnknown, "true") // may or may not commit
		return noLeader(c)
	case isNotLeader(err):
		c.Set(HeaderNotLeader, "true") // nothing was written
		return noLeader(c)
	}
	if g.Raft != nil {
		c.Set(HeaderApplied, strconv.FormatUint(g.Raft.AppliedIndex(), 10))
	}
	return err
}

// afterLeaderRun handles a write's outcome on a node that believed it led:
// the leadership moved before anything was written, so the write goes to
// the new leader; lost while committing, the outcome is unknown and the
// client gets Java's no-leader answer (which it retries).
func (g *gate) afterLeaderRun(c *fiber.Ctx, run func() error, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raftstore.ErrLeadershipLost) && g.Forward != nil && g.Raft != nil && c.Locals(idemKey) == true:
		// an idempotent write whose outcome is unknown: to the next leader
		c.Response().Reset()
		return g.forward(c, run, "")
	case errors.Is(err, raftstore.ErrLeadershipLost):
		return noLeader(c)
	case isNotLeader(err) && g.Forward != nil && g.Raft != nil:
		c.Response().Reset()
		return g.forward(c, run, "")
	case isNotLeader(err):
		return noLeader(c)
	}
	return err
}

// mixed runs a write with an AP and a CP half on the service's Distro
// owner, the CP half first on the raft leader. On a node that believes it
// leads, both halves run here; a CP half that made no raft write is
// confirmed as a CP write is (confirmNoop), and when the leadership is
// gone the CP half goes to the new leader and the AP half runs here again.
func (g *gate) mixed(c *fiber.Ctx, run func() error) error {
	if g.forwarded(c) {
		return g.onLeader(c, run)
	}
	if target, ok := g.distroTarget(c); ok {
		return g.distroProxy(c, target)
	}
	if g.Forward == nil || g.Raft == nil {
		return g.afterLeaderRun(c, run, runNoted(c, run))
	}
	if g.Raft.IsLeader() {
		note, err := runNotedWith(c, run)
		err = g.confirmNoop(note, err)
		if !isNotLeader(err) {
			return g.afterLeaderRun(c, run, err)
		}
		c.Response().Reset()
	}
	return g.forward(c, run, "persistent")
}

// isNotLeader reports a write refused because this node is not (or no
// longer) the leader, with nothing written: it may go to the leader.
func isNotLeader(err error) bool {
	return err != nil && errors.Is(err, raftstore.ErrNotLeader)
}

// check runs a route's @Secured check; denied says the answer was sent.
func (g *gate) check(c *fiber.Ctx, s *Secured) (err error, denied bool) {
	a := g.Auth
	node := false
	if a.Enabled() {
		node = a.Identity().Verify(func(k string) string { return string(c.Request().Header.Peek(k)) })
		if !node {
			g.dropForgedForward(c)
		}
	}
	if s == nil || !a.Enabled() && !s.admin {
		return nil, false
	}
	p := ParamsOf(c)
	creds := credentialsOf(c, p)
	if node {
		// a request a node forwarded (a CP write to the raft leader)
		// passes; the caller's token still names the principal the
		// handler may need (PUT /v1/auth/users: admin or the user itself)
		if creds.Bearer != "" || creds.AccessToken != "" {
			if pr, err := a.Authenticate(auth.Credentials{Bearer: creds.Bearer, AccessToken: creds.AccessToken}); err == nil {
				c.Locals(principalKey, pr)
			}
		}
		return nil, false
	}
	if s.node {
		pr, err := a.Authenticate(creds)
		if err == nil && !pr.GlobalAdmin {
			err = auth.ErrNotNode
		}
		if err != nil {
			return deny(c, err), true
		}
		c.Locals(principalKey, pr)
		return nil, false
	}
	resource := s.resource
	if s.parser != nil {
		r, err := s.parser(p)
		if err != nil {
			return deny(c, err), true
		}
		resource = r
	}
	pr, err := a.Check(resource, s.action, creds)
	if err != nil {
		return deny(c, err), true
	}
	if s.extra != nil && g.Objects != nil {
		checks, err := s.extra(c, p, g.Objects)
		if err != nil {
			return deny(c, err), true
		}
		for _, ch := range checks {
			if !a.HasPermission(pr.Username, ch.resource, ch.action) {
				return deny(c, auth.ErrForbidden), true
			}
		}
	}
	c.Locals(principalKey, pr)
	return nil, false
}

// forwardContext bounds a forwarded write: the leader's answer, a new
// leader's election and this node's catching up.
func forwardContext(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.UserContext(), forwardTimeout)
}
