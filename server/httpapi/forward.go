package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
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

// RaftApplied is what forwarding needs of the local CP store.
type RaftApplied interface {
	AppliedIndex() uint64
	WaitApplied(ctx context.Context, index uint64) error
	WaitLeader(ctx context.Context) error
	LeaderID() string
}

// ForwardFunc sends the request to the leader's HTTP address as it came
// (method, path with the context path, query, headers, body).
type ForwardFunc func(ctx context.Context, addr, method, pathAndQuery string, header http.Header, body []byte) (int, http.Header, []byte, error)

// ForwardDeps are the collaborators of write forwarding.
type ForwardDeps struct {
	Self    string
	Store   RaftApplied
	Forward ForwardFunc
	Logger  *slog.Logger
}

// forwardedHeaders are the answer headers a client may read after a write.
var forwardedHeaders = []string{"Content-Type", "Content-MD5", "Config-Type", "Content-Encoding", "Cache-Control", "Pragma", "Expires", "Last-Modified"}

// ForwardToLeader is rqlite's proxy pattern at the HTTP edge: a write that
// failed on this node because it is a raft follower (raftstore's
// *NotLeaderError) is sent to the leader, and the leader's answer relayed
// once this node has applied the leader's state. Reads and writes that
// never touch raft are served locally. With no leader known (an election,
// or this node is cut off from a quorum) the write answers Java's JRaft
// error for the raft group of the path.
func ForwardToLeader(d ForwardDeps) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := c.Next()
		forwarded := len(c.Request().Header.Peek(HeaderForwarded)) > 0
		if err == nil {
			if forwarded && d.Store != nil {
				c.Set(HeaderApplied, strconv.FormatUint(d.Store.AppliedIndex(), 10))
			}
			return nil
		}
		if errors.Is(err, raftstore.ErrLeadershipLost) {
			// this node lost the leadership while committing (cut off
			// from its quorum, or an election): the write may or may not
			// commit; answer as Java's JRaft answers a write without a
			// leader, which a client retries
			return noLeader(c)
		}
		var nl *raftstore.NotLeaderError
		if !errors.As(err, &nl) {
			return err
		}
		if forwarded {
			c.Set(HeaderNotLeader, "true") // nothing was written
			return noLeader(c)
		}
		if d.Forward == nil {
			return noLeader(c)
		}
		leader := nl.LeaderID
		if leader == "" && d.Store != nil {
			// an election is under way (the leader died a moment ago): wait
			// for its outcome briefly rather than fail the write
			ctx, cancel := context.WithTimeout(c.UserContext(), electionWait)
			if d.Store.WaitLeader(ctx) == nil {
				leader = d.Store.LeaderID()
			}
			cancel()
		}
		if leader == "" {
			return noLeader(c)
		}
		// the leader may be this node by now: its own handler runs again,
		// through the same relay, as a forwarded request
		return forward(c, d, leader)
	}
}

// electionWait bounds how long a write waits for a new raft leader.
const electionWait = 3 * time.Second

func forward(c *fiber.Ctx, d ForwardDeps, leader string) error {
	req := c.Request()
	header := http.Header{}
	req.Header.VisitAll(func(k, v []byte) {
		switch strings.ToLower(string(k)) {
		case "host", "content-length", "connection", "transfer-encoding", "keep-alive":
			return
		}
		header.Add(string(k), string(v))
	})
	header.Set(HeaderForwarded, d.Self)
	if header.Get("X-Forwarded-For") == "" && header.Get("X-Real-IP") == "" {
		header.Set("X-Forwarded-For", c.Context().RemoteIP().String())
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), 15*time.Second)
	defer cancel()
	status, rh, body, err := d.Forward(ctx, leader, c.Method(), string(req.URI().RequestURI()), header, req.Body())
	if err == nil && rh.Get(HeaderNotLeader) != "" && d.Store != nil {
		// the leadership moved before the write reached it: once, to the
		// new leader
		if next := waitOtherLeader(ctx, d.Store, leader); next != "" {
			leader = next
			status, rh, body, err = d.Forward(ctx, leader, c.Method(), string(req.URI().RequestURI()), header, req.Body())
		}
	}
	if err != nil {
		if d.Logger != nil {
			d.Logger.Warn("write forward to the raft leader failed", "leader", leader, "path", c.Path(), "err", err)
		}
		return noLeader(c)
	}
	if applied, perr := strconv.ParseUint(rh.Get(HeaderApplied), 10, 64); perr == nil && d.Store != nil {
		wctx, wcancel := context.WithTimeout(c.UserContext(), 3*time.Second)
		if werr := d.Store.WaitApplied(wctx, applied); werr != nil && d.Logger != nil {
			d.Logger.Warn("forwarded write not applied here in time", "leader", leader, "index", applied, "err", werr)
		}
		wcancel()
	}
	c.Response().Reset()
	for _, h := range forwardedHeaders {
		if v := rh.Get(h); v != "" {
			c.Set(h, v)
		}
	}
	return c.Status(status).Send(body)
}

// waitOtherLeader waits up to electionWait for a leader other than old
// and returns its ID ("" if none came).
func waitOtherLeader(ctx context.Context, st RaftApplied, old string) string {
	ctx, cancel := context.WithTimeout(ctx, electionWait)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if l := st.LeaderID(); l != "" && l != old {
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
