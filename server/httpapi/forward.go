package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/leader"
)

// Headers of a write forwarded to the raft leader.
const (
	// HeaderForwarded marks a request a follower forwarded (its value is the
	// follower's address); the leader does not forward it again and skips
	// DistroFilter, which the follower already ran.
	HeaderForwarded = "X-Nacosd-Forwarded"
	// HeaderApplied is the leader's applied raft index when it answered a
	// forwarded write; the follower waits for it before relaying the answer,
	// so a client reads its own write on the node it talks to.
	HeaderApplied = "X-Nacosd-Applied"
	// HeaderNotLeader marks the answer to a forwarded write that was
	// refused before anything was written: the node it reached is no
	// longer the leader (an election moved the leadership). The follower
	// then waits for the new leader and sends the write there.
	HeaderNotLeader = "X-Nacosd-Not-Leader"
	// HeaderUnknown marks the answer to a forwarded write that the node
	// reached lost the leadership while committing: its outcome is
	// unknown; an idempotent write goes to the next leader again.
	HeaderUnknown = "X-Nacosd-Unknown"
	// HeaderWriteID carries an idempotent write's id (raftstore.WithWriteID)
	// to the leader, the same on every copy sent: a copy that reaches raft
	// after an earlier one was applied changes nothing.
	HeaderWriteID = "X-Nacosd-Write-Id"
)

// RaftState is what the gate needs of the local CP store.
type RaftState = leader.State

// ForwardFunc sends the request to the leader's HTTP address as it came
// (method, path with the context path, query, headers, body).
type ForwardFunc func(ctx context.Context, addr, method, pathAndQuery string, header http.Header, body []byte) (int, http.Header, []byte, error)

// forwardedHeaders are the answer headers a client may read after a write.
var forwardedHeaders = []string{"Content-Type", "Content-MD5", "Config-Type", "Content-Encoding", "Cache-Control", "Pragma", "Expires", "Last-Modified"}

// forwardTimeout bounds the whole forwarding of one write: the leader's
// answer, a new leader's election and this node's catching up
// (server/leader's waits).
const forwardTimeout = 20 * time.Second

// forward sends a CP write (or the CP half of a Mixed one) to the raft
// leader through the node's leader router (server/leader, shared with the
// gRPC edge), and relays the leader's answer once this node applied the
// leader's state, so the client reads its own write here. A leader that
// cannot be reached (killed a moment ago: the connection is refused) or
// that lost the leadership before writing is replaced by the next one; a
// leader that took the request and did not answer leaves the outcome
// unknown: the client gets Java's no-leader error, as from a JRaft leader
// that failed mid-write.
func (g *gate) forward(c *fiber.Ctx, run func() error, part string) error {
	ctx, cancel := forwardContext(c)
	defer cancel()
	req := c.Request()
	header := http.Header{}
	req.Header.VisitAll(func(k, v []byte) {
		switch strings.ToLower(string(k)) {
		case "host", "content-length", "connection", "transfer-encoding", "keep-alive", strings.ToLower(HeaderPart), strings.ToLower(HeaderWriteID):
			return
		}
		header.Add(string(k), string(v))
	})
	header.Set(HeaderForwarded, g.Self)
	if id, _ := c.Locals(writeIDKey).(string); id != "" {
		header.Set(HeaderWriteID, id)
	}
	if part != "" {
		header.Set(HeaderPart, part)
	}
	if header.Get("X-Forwarded-For") == "" && header.Get("X-Real-IP") == "" {
		header.Set("X-Forwarded-For", c.Context().RemoteIP().String())
	}
	uri := string(req.URI().RequestURI())
	var (
		sent   bool // the answer below is the leader's
		status int
		rh     http.Header
		body   []byte
	)
	idem, _ := c.Locals(idemKey).(bool)
	w := leader.Write{Name: c.Method() + " " + c.Path(), Idempotent: idem,
		Here: func() error {
			sent = false
			c.Response().Reset()
			if part != "" {
				c.Locals(partKey, PartAll)
			}
			return runNoted(c, run)
		},
		Send: func(ctx context.Context, to string) (leader.Answer, error) {
			g.Stats.Forwarded.Add(1)
			var err error
			status, rh, body, err = g.Forward(ctx, to, c.Method(), uri, header, req.Body())
			if err != nil {
				if notSent(err) {
					return leader.Answer{}, leader.Undelivered(err)
				}
				return leader.Answer{}, err
			}
			sent = true
			a := leader.Answer{NotLeader: rh.Get(HeaderNotLeader) != "", Unknown: rh.Get(HeaderUnknown) != ""}
			if n, perr := strconv.ParseUint(rh.Get(HeaderApplied), 10, 64); perr == nil {
				a.Applied, a.HasApplied = n, true
			}
			return a, nil
		}}
	err := g.router.Forward(ctx, w)
	if err != nil {
		return g.routeError(c, err)
	}
	if !sent {
		return nil // this node took over and ran it
	}
	if part != "" && status == fiber.StatusOK {
		// the CP half is done: the AP half runs here
		c.Locals(partKey, PartEphemeral)
		c.Locals(partAnswerKey, body)
		return run()
	}
	c.Response().Reset()
	for _, h := range forwardedHeaders {
		if v := rh.Get(h); v != "" {
			c.Set(h, v)
		}
	}
	return c.Status(status).Send(body)
}

// routeError answers a write the router could not get applied: Java's
// no-leader error, or 503 when the leader took it and this node could
// not apply it in time.
func (g *gate) routeError(c *fiber.Ctx, err error) error {
	var na *leader.NotAppliedError
	switch {
	case errors.As(err, &na):
		return &compat.Error{Status: fiber.StatusServiceUnavailable,
			Body: "the raft leader " + na.Leader + " took the write, but this node has not applied it yet; read it from another node"}
	case errors.Is(err, leader.ErrNoLeader):
		return noLeader(c)
	}
	return err
}

// notSent reports a transport error that happened before the request
// left: the connection could not be made.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED)
}

// noLeader answers a CP write that found no leader the way Java's JRaft
// layer does (NoLeaderException through the controllers' handlers): the
// config tables live in raft group nacos_config, naming's persistent data
// in naming_persistent_service.
func noLeader(c *fiber.Ctx) error {
	group := "naming_persistent_service"
	if p := c.Path(); strings.Contains(p, "/v1/cs/") || strings.Contains(p, "/v1/console/") || strings.Contains(p, "/v1/auth/") {
		group = "nacos_config"
	}
	return compat.ServerError("The Raft Group [" + group + "] did not find the Leader node")
}
