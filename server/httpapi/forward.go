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
	"github.com/nacosd/nacosd/raftstore"
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
)

// RaftState is what the gate needs of the local CP store.
type RaftState interface {
	IsLeader() bool
	LeaderID() string
	Term() uint64
	AppliedIndex() uint64
	WaitApplied(ctx context.Context, index uint64) error
}

// ForwardFunc sends the request to the leader's HTTP address as it came
// (method, path with the context path, query, headers, body).
type ForwardFunc func(ctx context.Context, addr, method, pathAndQuery string, header http.Header, body []byte) (int, http.Header, []byte, error)

// forwardedHeaders are the answer headers a client may read after a write.
var forwardedHeaders = []string{"Content-Type", "Content-MD5", "Config-Type", "Content-Encoding", "Cache-Control", "Pragma", "Expires", "Last-Modified"}

// Timings of a forwarded write.
const (
	// electionWait bounds how long a write waits for a (new) raft leader:
	// a killed leader is replaced within about two election timeouts.
	electionWait = 3 * time.Second
	// appliedWait bounds how long a follower waits to apply a write the
	// leader acknowledged before it answers the client.
	appliedWait = 10 * time.Second
	// forwardTimeout bounds the whole forwarding of one write.
	forwardTimeout = 20 * time.Second
)

// forward sends a CP write (or the CP half of a Mixed one) to the raft
// leader as rqlite's proxy does, and relays the leader's answer once this
// node applied the leader's state, so the client reads its own write here.
// A leader that cannot be reached (killed a moment ago: the connection is
// refused) or that lost the leadership before writing is replaced by the
// next one within electionWait; a leader that took the request and did not
// answer leaves the outcome unknown: the client gets Java's no-leader
// error, as from a JRaft leader that failed mid-write.
func (g *gate) forward(c *fiber.Ctx, run func() error, part string) error {
	ctx, cancel := forwardContext(c)
	defer cancel()
	req := c.Request()
	header := http.Header{}
	req.Header.VisitAll(func(k, v []byte) {
		switch strings.ToLower(string(k)) {
		case "host", "content-length", "connection", "transfer-encoding", "keep-alive", strings.ToLower(HeaderPart):
			return
		}
		header.Add(string(k), string(v))
	})
	header.Set(HeaderForwarded, g.Self)
	if part != "" {
		header.Set(HeaderPart, part)
	}
	if header.Get("X-Forwarded-For") == "" && header.Get("X-Real-IP") == "" {
		header.Set("X-Forwarded-For", c.Context().RemoteIP().String())
	}
	uri := string(req.URI().RequestURI())
	failed, failedTerm := "", uint64(0) // the leader that could not take the write, in its term
	for attempt := 0; ; attempt++ {
		leader := g.Raft.LeaderID()
		if leader == "" || leader == failed && g.Raft.Term() <= failedTerm {
			leader = waitOtherLeader(ctx, g.Raft, failed, failedTerm)
		}
		if leader == "" {
			g.Logger.Warn("no raft leader for a write", "path", c.Path(), "waited", electionWait)
			return noLeader(c)
		}
		if leader == g.Self || g.Raft.IsLeader() {
			// this node took over meanwhile
			if part != "" {
				c.Locals(partKey, PartAll)
			}
			err := run()
			if isNotLeader(err) && attempt < 5 && ctx.Err() == nil {
				// it stepped down again before writing anything
				failed, failedTerm = g.Self, g.Raft.Term()
				c.Response().Reset()
				continue
			}
			if isNotLeader(err) || errors.Is(err, raftstore.ErrLeadershipLost) {
				return noLeader(c)
			}
			return err
		}
		g.Stats.Forwarded.Add(1)
		status, rh, body, err := g.Forward(ctx, leader, c.Method(), uri, header, req.Body())
		if err != nil {
			if notSent(err) && attempt < 5 && ctx.Err() == nil {
				// the leader is gone (killed: connection refused): the
				// write was not delivered; wait for the next leader
				g.Logger.Info("raft leader unreachable; waiting for the next one", "leader", leader, "err", err)
				failed, failedTerm = leader, g.Raft.Term()
				continue
			}
			g.Logger.Warn("write forward to the raft leader failed; outcome unknown", "leader", leader, "path", c.Path(), "err", err)
			return noLeader(c)
		}
		if rh.Get(HeaderNotLeader) != "" && attempt < 5 && ctx.Err() == nil {
			failed, failedTerm = leader, g.Raft.Term() // nothing was written there
			continue
		}
		if err := g.catchUp(ctx, rh, leader); err != nil {
			return err
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
}

// catchUp waits until this node applied the index the leader answered
// with. A node that cannot (cut off right after the leader's answer)
// refuses to acknowledge what it could not show: 503, and the client tries
// another node.
func (g *gate) catchUp(ctx context.Context, rh http.Header, leader string) error {
	applied, err := strconv.ParseUint(rh.Get(HeaderApplied), 10, 64)
	if err != nil {
		return nil // an error answer: nothing to wait for
	}
	wctx, cancel := context.WithTimeout(ctx, appliedWait)
	defer cancel()
	if err := g.Raft.WaitApplied(wctx, applied); err != nil {
		g.Logger.Warn("forwarded write not applied here in time", "leader", leader, "index", applied, "err", err)
		return &compat.Error{Status: fiber.StatusServiceUnavailable,
			Body: "the raft leader " + leader + " took the write, but this node has not applied it yet; read it from another node"}
	}
	return nil
}

// notSent reports a transport error that happened before the request
// left: the connection could not be made.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED)
}

// waitOtherLeader waits up to electionWait for a leader other than old,
// or old elected again in a term after oldTerm, and returns its ID (""
// if none came).
func waitOtherLeader(ctx context.Context, st RaftState, old string, oldTerm uint64) string {
	ctx, cancel := context.WithTimeout(ctx, electionWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if l := st.LeaderID(); l != "" && (l != old || st.Term() > oldTerm) {
			return l
		}
		select {
		case <-ctx.Done():
			return ""
		case <-tick.C:
		}
	}
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
