package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/leader"
)

// Headers of a forwarded request (metadata headers, between nacosd nodes).
const (
	// HeaderForwarded marks a request a follower forwarded: its value is
	// the follower's member address. The leader does not forward it again.
	HeaderForwarded = "X-Nacosd-Forwarded"
	// HeaderClientIP is the client IP the follower's connection had: the
	// leader writes it as the config's source IP.
	HeaderClientIP = "X-Nacosd-Client-Ip"
	// HeaderApplied is the leader's applied raft index in its answer; the
	// follower waits for it before answering its client, who then reads its
	// own write on the node it talks to.
	HeaderApplied = "X-Nacosd-Applied"
	// HeaderNotLeader in an answer says the node reached was no longer the
	// leader and wrote nothing.
	HeaderNotLeader = "X-Nacosd-Not-Leader"
	// HeaderUnknown: the node reached lost the leadership while committing
	// the write (its outcome is unknown).
	HeaderUnknown = "X-Nacosd-Unknown"
	// HeaderWriteID is an idempotent write's id (raftstore.WithWriteID),
	// the same on every copy sent, so that the write applies once.
	HeaderWriteID = "X-Nacosd-Write-Id"
)

// Sender sends a CP request to the raft leader over a cluster connection
// (label source=cluster) of internal/remoteclient: the client's Payload
// unchanged, with the client IP and the server identity added. The leader
// runs it as if its client had sent it (without checking auth again) and
// answers with its applied index. The routing itself — waiting for a
// leader, trying the next one, catching up before answering — is the
// node's leader router (server/leader), shared with the HTTP edge.
type Sender struct {
	Self  string                      // this node's member address
	Sign  func(set func(k, v string)) // adds the server identity (nil: none)
	Port  func(memberAddr string) string
	Log   *slog.Logger
	mu    sync.Mutex
	peers map[string]*remoteclient.Client
}

// sendTimeout bounds one request to the leader.
const sendTimeout = 15 * time.Second

// Send sends c's request to leader and returns its answer. An error
// before the request left (no connection could be made) wraps
// leader.ErrNotDelivered.
func (f *Sender) Send(ctx context.Context, leaderAddr string, c *Call) (*remote.Payload, error) {
	cl, err := f.peer(ctx, leaderAddr)
	if err != nil {
		return nil, leader.Undelivered(err)
	}
	p := *c.Payload
	h := make(map[string]string, len(p.Metadata.Headers)+3)
	for k, v := range p.Metadata.Headers {
		h[k] = v
	}
	h[HeaderForwarded], h[HeaderClientIP] = f.Self, c.ClientIP()
	delete(h, HeaderWriteID)
	if c.writeID != "" {
		h[HeaderWriteID] = c.writeID
	}
	if f.Sign != nil {
		f.Sign(func(k, v string) { h[k] = v })
	}
	p.Metadata.Headers = h
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	out, err := cl.Raw(ctx, &p)
	if err != nil {
		f.drop(leaderAddr, cl)
		return nil, err
	}
	if out.Metadata.Type == remote.TypeErrorResponse {
		if d, derr := remote.DecodeResponse(out.Metadata.Type, out.Body); derr == nil && d.ErrorCode == remote.ErrUnregister {
			// the leader dropped our connection before reading the
			// request: reconnect once
			f.drop(leaderAddr, cl)
			if cl, err = f.peer(ctx, leaderAddr); err != nil {
				return nil, leader.Undelivered(err)
			}
			return cl.Raw(ctx, &p)
		}
	}
	return out, nil
}

// peer returns the cluster connection to a member, dialling it once; a
// connection whose stream ended (the member was killed) is dialled again.
func (f *Sender) peer(ctx context.Context, member string) (*remoteclient.Client, error) {
	f.mu.Lock()
	if f.peers == nil {
		f.peers = map[string]*remoteclient.Client{}
	}
	cl := f.peers[member]
	f.mu.Unlock()
	if cl != nil {
		select {
		case <-cl.Done():
			f.drop(member, cl)
		default:
			return cl, nil
		}
	}
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cl, err := remoteclient.Dial(dctx, f.Port(member), remoteclient.Options{ClientIP: hostOf(f.Self), Version: "nacosd",
		Labels: map[string]string{"source": "cluster", "module": "forward"}})
	if err != nil {
		return nil, fmt.Errorf("grpcapi: connect to leader %s: %w", member, err)
	}
	f.mu.Lock()
	if old := f.peers[member]; old != nil {
		f.mu.Unlock()
		cl.Close()
		return old, nil
	}
	f.peers[member] = cl
	f.mu.Unlock()
	return cl, nil
}

func (f *Sender) drop(member string, cl *remoteclient.Client) {
	f.mu.Lock()
	if f.peers[member] == cl {
		delete(f.peers, member)
	}
	f.mu.Unlock()
	cl.Close()
}

// Close closes the cluster connections.
func (f *Sender) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, cl := range f.peers {
		cl.Close()
		delete(f.peers, k)
	}
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// errNotLeaderHere is what a CP handler's run reports when its write was
// refused as not leader (Call.Wrote saw it), whatever the handler answered.
var errNotLeaderHere = fmt.Errorf("grpcapi: the write was refused here: %w", raftstore.ErrNotLeader)

// noLeaderText is Java's JRaft answer to a config write without a leader.
const noLeaderText = "The Raft Group [nacos_config] did not find the Leader node"

// noLeaderNaming is the same for naming's persistent data.
const noLeaderNaming = "The Raft Group [naming_persistent_service] did not find the Leader node"

// writeFailure maps a write error to the text a handler answers.
func writeFailure(err error) string {
	if errors.Is(err, leader.ErrNoLeader) || leader.IsNotLeader(err) || errors.Is(err, raftstore.ErrLeadershipLost) {
		return noLeaderText
	}
	var na *leader.NotAppliedError
	if errors.As(err, &na) {
		return "the raft leader " + na.Leader + " took the write, but this node has not applied it yet; read it from another node"
	}
	var ce *compat.Error
	if errors.As(err, &ce) {
		return ce.Body
	}
	return err.Error()
}

// routeCP runs a CP request on the raft leader: here when this node leads,
// else sent there before any handler runs; the answer is the leader's,
// relayed once this node applied it.
func (s *Server) routeCP(ctx context.Context, rt *Route, call *Call) *remote.Payload {
	idem := idempotent(rt.Type, call.Req)
	if idem {
		call.writeID = raftstore.NewWriteID() // sent again when the outcome is unknown: applied once
	}
	var out *remote.Payload
	w := leader.Write{Name: rt.Type, Idempotent: idem,
		Here: func() error {
			hctx, note := raftstore.WithWriteNote(raftstore.WithWriteID(ctx, call.writeID))
			out = s.runHandler(hctx, rt, call)
			if call.notLeader {
				call.notLeader = false
				return errNotLeaderHere
			}
			if s.cfg.Router.ConfirmUnwritten(note) != nil {
				return errNotLeaderHere // an answer from a deposed leader's state
			}
			return nil
		},
		Send: func(ctx context.Context, to string) (leader.Answer, error) {
			s.forwarded.Add(1)
			p, err := s.cfg.Sender.Send(ctx, to, call)
			if err != nil {
				return leader.Answer{}, err
			}
			out = &remote.Payload{Metadata: remote.Metadata{Type: p.Metadata.Type}, Body: p.Body}
			a := leader.Answer{NotLeader: p.Metadata.Headers[HeaderNotLeader] != "", Unknown: p.Metadata.Headers[HeaderUnknown] != ""}
			if n, perr := strconv.ParseUint(p.Metadata.Headers[HeaderApplied], 10, 64); perr == nil {
				a.Applied, a.HasApplied = n, true
			}
			return a, nil
		}}
	if err := s.cfg.Router.Run(ctx, w); err != nil {
		s.log.Warn("grpc write not applied", "type", rt.Type, "err", err)
		return remote.Encode(rt.refuse(err))
	}
	return out
}

// onLeader runs a CP request another node forwarded: refused without
// running when this node no longer leads, else answered with this node's
// applied index (or the not-leader mark, when the handler's write was
// refused).
func (s *Server) onLeader(ctx context.Context, rt *Route, call *Call) *remote.Payload {
	var out *remote.Payload
	notLeader := s.cfg.Router != nil && !s.cfg.Router.State().IsLeader()
	if notLeader {
		out = remote.Encode(rt.refuse(leader.ErrNoLeader))
	} else {
		out = s.runHandler(raftstore.WithWriteID(ctx, call.writeID), rt, call)
		notLeader = call.notLeader
	}
	out.Metadata.Headers = map[string]string{}
	switch {
	case notLeader:
		out.Metadata.Headers[HeaderNotLeader] = "true"
	case s.cfg.Router != nil:
		out.Metadata.Headers[HeaderApplied] = strconv.FormatUint(s.cfg.Router.State().AppliedIndex(), 10)
	}
	return out
}
