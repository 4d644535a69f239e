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
)

// Forwarder sends a write that a raft follower refused to the leader and
// returns the leader's answer.
type Forwarder interface {
	Forward(ctx context.Context, c *Call) (remote.Responder, error)
}

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
)

// isNotLeader reports a write refused because this node is not the raft
// leader.
func isNotLeader(err error) bool {
	var nl *raftstore.NotLeaderError
	return errors.As(err, &nl) || errors.Is(err, raftstore.ErrNotLeader)
}

// Raft is what forwarding needs of the local CP store.
type Raft interface {
	LeaderID() string
	WaitLeader(ctx context.Context) error
	AppliedIndex() uint64
	WaitApplied(ctx context.Context, index uint64) error
}

// LeaderForwarder forwards over gRPC, as the HTTP edge forwards over HTTP
// (rqlite's proxy): the follower keeps one cluster connection (label
// source=cluster) to each leader it has forwarded to and sends the
// client's Payload there unchanged, with the client IP and the server
// identity added; the leader runs it as if its client had sent it (without
// checking auth again) and answers with its applied index.
type LeaderForwarder struct {
	Self  string // this node's member address
	Raft  Raft
	Sign  func(set func(k, v string)) // adds the server identity (nil: none)
	Port  func(memberAddr string) string
	Log   *slog.Logger
	mu    sync.Mutex
	peers map[string]*remoteclient.Client
}

// electionWait bounds how long a write waits for a new raft leader.
const electionWait = 3 * time.Second

// Forward implements Forwarder.
func (f *LeaderForwarder) Forward(ctx context.Context, c *Call) (remote.Responder, error) {
	leader := f.Raft.LeaderID()
	if leader == "" || leader == f.Self {
		wctx, cancel := context.WithTimeout(ctx, electionWait)
		f.Raft.WaitLeader(wctx)
		cancel()
		leader = f.Raft.LeaderID()
	}
	if leader == "" || leader == f.Self {
		return nil, errNoLeader
	}
	out, err := f.send(ctx, leader, c)
	if err == nil && out.Metadata.Headers[HeaderNotLeader] != "" {
		// the leadership moved: once more, to the new leader
		if next := f.otherLeader(ctx, leader); next != "" {
			out, err = f.send(ctx, next, c)
		}
	}
	if err != nil {
		f.Log.Warn("grpc write forward to the raft leader failed", "leader", leader, "type", c.Payload.Metadata.Type, "err", err)
		return nil, errNoLeader
	}
	if applied, perr := strconv.ParseUint(out.Metadata.Headers[HeaderApplied], 10, 64); perr == nil {
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if werr := f.Raft.WaitApplied(wctx, applied); werr != nil {
			f.Log.Warn("forwarded write not applied here in time", "leader", leader, "index", applied, "err", werr)
		}
		cancel()
	}
	return rawResponse{typ: out.Metadata.Type, body: out.Body}, nil
}

func (f *LeaderForwarder) otherLeader(ctx context.Context, old string) string {
	ctx, cancel := context.WithTimeout(ctx, electionWait)
	defer cancel()
	for {
		if l := f.Raft.LeaderID(); l != "" && l != old && l != f.Self {
			return l
		}
		select {
		case <-ctx.Done():
			return ""
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (f *LeaderForwarder) send(ctx context.Context, leader string, c *Call) (*remote.Payload, error) {
	cl, err := f.peer(ctx, leader)
	if err != nil {
		return nil, err
	}
	p := *c.Payload
	h := make(map[string]string, len(p.Metadata.Headers)+3)
	for k, v := range p.Metadata.Headers {
		h[k] = v
	}
	h[HeaderForwarded], h[HeaderClientIP] = f.Self, c.ClientIP()
	if f.Sign != nil {
		f.Sign(func(k, v string) { h[k] = v })
	}
	p.Metadata.Headers = h
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := cl.Raw(ctx, &p)
	if err != nil {
		f.drop(leader, cl)
		return nil, err
	}
	if out.Metadata.Type == remote.TypeErrorResponse {
		if d, derr := remote.DecodeResponse(out.Metadata.Type, out.Body); derr == nil && d.ErrorCode == remote.ErrUnregister {
			// the leader dropped our connection: reconnect once
			f.drop(leader, cl)
			if cl, err = f.peer(ctx, leader); err != nil {
				return nil, err
			}
			return cl.Raw(ctx, &p)
		}
	}
	return out, nil
}

// peer returns the cluster connection to a member, dialling it once.
func (f *LeaderForwarder) peer(ctx context.Context, member string) (*remoteclient.Client, error) {
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
	cl, err := remoteclient.Dial(ctx, f.Port(member), remoteclient.Options{ClientIP: hostOf(f.Self), Version: "nacosd",
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

func (f *LeaderForwarder) drop(member string, cl *remoteclient.Client) {
	f.mu.Lock()
	if f.peers[member] == cl {
		delete(f.peers, member)
	}
	f.mu.Unlock()
	cl.Close()
}

// Close closes the cluster connections.
func (f *LeaderForwarder) Close() {
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

var (
	errNotLeaderHere = errors.New("grpcapi: forwarded write reached a node that is no longer the raft leader")
	errNoLeader      = errors.New("grpcapi: no raft leader")
)

// noLeaderText is Java's JRaft answer to a config write without a leader.
const noLeaderText = "The Raft Group [nacos_config] did not find the Leader node"

// writeFailure maps a write error of the forwarding path to its text.
func writeFailure(err error) string {
	if errors.Is(err, errNoLeader) || errors.Is(err, errNotLeaderHere) || isNotLeader(err) || errors.Is(err, raftstore.ErrLeadershipLost) {
		return noLeaderText
	}
	var ce *compat.Error
	if errors.As(err, &ce) {
		return ce.Body
	}
	return err.Error()
}

// rawResponse relays an answer as the leader rendered it.
type rawResponse struct {
	typ  string
	body []byte
	base remote.Response
}

func (r rawResponse) Type() string              { return r.typ }
func (r rawResponse) Base() *remote.Response    { return &r.base }
func (r rawResponse) AppendJSON(w *compat.JSON) { w.Raw(r.body) }
