// Package leader routes a CP write to the raft leader, for every edge of a
// node (HTTP and gRPC): it waits for a leader, sends the write there, tries
// the next leader (or the same node in a newer term) when the write was
// refused before anything was written, and answers only once this node has
// applied the leader's write, so a client reads its own write on the node
// it talks to. It is rqlite's proxy with the retries a Nacos client
// expects after a leader is killed.
//
// The edges supply the two ways to run a write (Write): here, when this
// node leads, and sent to a leader, in their own protocol. This package
// knows neither.
package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/raftstore"
)

// Errors of a routed write.
var (
	// ErrNoLeader: no leader took the write, or one took it and did not
	// answer (the outcome is unknown). Edges answer Java's JRaft
	// "did not find the Leader node".
	ErrNoLeader = errors.New("leader: no raft leader took the write")
	// ErrNotDelivered marks a Send error that happened before the write
	// left this node (the connection was refused: the leader was killed a
	// moment ago); the write then goes to the next leader. Wrap it with
	// Undelivered.
	ErrNotDelivered = errors.New("leader: write not delivered")
)

// NotAppliedError is a write the leader acknowledged that this node could
// not apply within Config.AppliedWait (cut off right after the answer):
// the node refuses to acknowledge what it cannot show (HTTP 503).
type NotAppliedError struct {
	Leader string
	Index  uint64
	Err    error
}

func (e *NotAppliedError) Error() string {
	return fmt.Sprintf("leader: the raft leader %s took the write, but this node has not applied index %d: %v", e.Leader, e.Index, e.Err)
}

func (e *NotAppliedError) Unwrap() error { return e.Err }

// Undelivered marks err as a failure before the write left this node.
func Undelivered(err error) error { return fmt.Errorf("%w: %w", ErrNotDelivered, err) }

// State is what routing needs of the local raft node.
type State interface {
	IsLeader() bool
	LeaderID() string
	Term() uint64
	AppliedIndex() uint64
	WaitApplied(ctx context.Context, index uint64) error
}

// Answer is what an edge read from a leader's answer to a sent write.
type Answer struct {
	// NotLeader: the node reached was no longer the leader and wrote
	// nothing; the write goes to the next leader.
	NotLeader bool
	// Unknown: the node reached lost the leadership while committing the
	// write; its outcome is unknown (an idempotent write goes to the next
	// leader again).
	Unknown bool
	// Applied is the leader's applied index after the write (HasApplied
	// false: an error answer, nothing to wait for).
	Applied    uint64
	HasApplied bool
}

// Write is one CP write, as an edge runs it.
type Write struct {
	// Here runs the write on this node, which leads (or led a moment
	// ago). An error wrapping raftstore.ErrNotLeader says nothing was
	// written (it stepped down): the write goes to the next leader.
	Here func() error
	// Send sends the write to leader (a member address) and reads its
	// answer; an edge keeps the answer to relay it. Errors before the
	// write left wrap ErrNotDelivered (Undelivered).
	Send func(ctx context.Context, leader string) (Answer, error)
	// Name describes the write in logs (a path, a request type).
	Name string
	// Idempotent: running the write twice leaves what running it once
	// leaves, and answers the same (a publish of the same content, a
	// deregistration, a metadata update; not a create that refuses an
	// existing object, not a compare-and-set). A write whose outcome is
	// unknown (the leader died or stepped down after it left) is then sent
	// to the next leader instead of answering no-leader: the client learns
	// its outcome, as a retry on another server would have told it.
	Idempotent bool
}

// Config configures a Router.
type Config struct {
	State State
	// Self is this node's member address (the raft server ID).
	Self string
	// ElectionWait bounds the wait for a (new) leader: a killed leader is
	// replaced within about two election timeouts (3 s).
	ElectionWait time.Duration
	// AppliedWait bounds how long this node waits to apply a write the
	// leader acknowledged (10 s).
	AppliedWait time.Duration
	// Attempts bounds the sends and local runs of one write (6).
	Attempts int
	Logger   *slog.Logger
}

// DefaultConfig returns the shipped timings; State and Self must be set.
func DefaultConfig() Config {
	return Config{ElectionWait: 3 * time.Second, AppliedWait: 10 * time.Second, Attempts: 6, Logger: slog.New(slog.DiscardHandler)}
}

// Router routes CP writes of every edge of a node.
type Router struct{ cfg Config }

// New returns a router; zero fields of cfg take DefaultConfig's values.
func New(cfg Config) (*Router, error) {
	d := DefaultConfig()
	if cfg.ElectionWait <= 0 {
		cfg.ElectionWait = d.ElectionWait
	}
	if cfg.AppliedWait <= 0 {
		cfg.AppliedWait = d.AppliedWait
	}
	if cfg.Attempts <= 0 {
		cfg.Attempts = d.Attempts
	}
	if cfg.Logger == nil {
		cfg.Logger = d.Logger
	}
	if cfg.State == nil {
		return nil, errors.New("leader: Config.State is nil")
	}
	if cfg.Self == "" {
		return nil, errors.New("leader: Config.Self is empty")
	}
	return &Router{cfg: cfg}, nil
}

// State returns the raft state the router reads.
func (r *Router) State() State { return r.cfg.State }

// Run runs w on the leader: here when this node leads, else through
// Forward.
func (r *Router) Run(ctx context.Context, w Write) error {
	if !r.cfg.State.IsLeader() {
		return r.Forward(ctx, w)
	}
	return r.After(ctx, w, w.Here())
}

// After handles the outcome of a write this node ran believing it led:
// refused as not leader (nothing written), it goes to the leader; lost
// while committing, the outcome is unknown (ErrNoLeader).
func (r *Router) After(ctx context.Context, w Write, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raftstore.ErrLeadershipLost) && w.Idempotent:
		return r.forward(ctx, w, r.cfg.Self, r.cfg.State.Term())
	case errors.Is(err, raftstore.ErrLeadershipLost):
		return fmt.Errorf("%w: %w", ErrNoLeader, err)
	case IsNotLeader(err):
		return r.Forward(ctx, w)
	}
	return err
}

// Verifier is the part of the raft state that confirms with a quorum
// that this node still leads (raftstore.Store.VerifyLeader); a State
// without it is trusted.
type Verifier interface{ VerifyLeader() error }

// ConfirmUnwritten is for a CP write this node ran believing it led whose
// handler made no raft write (note: nothing to change, not found): its
// answer came from this node's state alone, which a leader back from a
// pause or a partition holds until a raft round tells it another node
// leads (issue 23, checker seed 707: a metadata batch answered `updated:
// []` from a 6-second-old view). It confirms the leadership — one
// heartbeat round; a write that reached raft needs none — and returns an
// error wrapping raftstore.ErrNotLeader when it is gone: nothing was
// written, so the edge sends the request to the new leader.
func (r *Router) ConfirmUnwritten(note *raftstore.WriteNote) error {
	if note.Proposed() {
		return nil
	}
	v, ok := r.cfg.State.(Verifier)
	if !ok {
		return nil
	}
	if err := v.VerifyLeader(); err != nil {
		if IsNotLeader(err) {
			return err
		}
		return fmt.Errorf("%w: %w", raftstore.ErrNotLeader, err)
	}
	return nil
}

// IsNotLeader reports a write refused because this node is not (or no
// longer) the leader, with nothing written.
func IsNotLeader(err error) bool { return err != nil && errors.Is(err, raftstore.ErrNotLeader) }

// Forward sends w to the raft leader and returns once this node applied
// the leader's write (nil: the edge relays the answer Send kept), or runs
// it here if this node took over meanwhile. A leader that cannot be
// reached or that lost the leadership before writing is replaced by the
// next one within ElectionWait (the same node too, in a newer term).
func (r *Router) Forward(ctx context.Context, w Write) error { return r.forward(ctx, w, "", 0) }

// forward is Forward after failed (in failedTerm) could not take w.
func (r *Router) forward(ctx context.Context, w Write, failed string, failedTerm uint64) error {
	st := r.cfg.State
	for attempt := 1; ; attempt++ {
		retry := attempt < r.cfg.Attempts && ctx.Err() == nil
		leader := st.LeaderID()
		if leader == "" || leader == failed && st.Term() <= failedTerm {
			leader = r.waitOtherLeader(ctx, failed, failedTerm)
		}
		if leader == "" {
			r.cfg.Logger.Warn("no raft leader for a write", "write", w.Name, "waited", r.cfg.ElectionWait)
			return ErrNoLeader
		}
		if leader == r.cfg.Self || st.IsLeader() {
			// this node took over meanwhile
			err := w.Here()
			if (IsNotLeader(err) || w.Idempotent && errors.Is(err, raftstore.ErrLeadershipLost)) && retry {
				// it stepped down again before writing anything (or, for
				// an idempotent write, while committing it)
				failed, failedTerm = r.cfg.Self, st.Term()
				continue
			}
			if IsNotLeader(err) || errors.Is(err, raftstore.ErrLeadershipLost) {
				return fmt.Errorf("%w: %w", ErrNoLeader, err)
			}
			return err
		}
		a, err := r.send(ctx, w, leader)
		if err != nil {
			if errors.Is(err, ErrNotDelivered) && retry {
				// the leader is gone (killed: connection refused): the
				// write was not delivered; wait for the next leader
				r.cfg.Logger.Info("raft leader unreachable; waiting for the next one", "leader", leader, "err", err)
				failed, failedTerm = leader, st.Term()
				continue
			}
			if w.Idempotent && retry {
				// delivered, unanswered: sent again, to the next leader if
				// this one is gone (it died with it, or another leads
				// now), else to the same one (a connection it closed)
				if st.LeaderID() == leader && failed != leader { // once to the same leader
					r.cfg.Logger.Info("raft leader did not answer an idempotent write; sending it again", "leader", leader, "err", err)
					failed, failedTerm = leader, 0
					continue
				}
				r.cfg.Logger.Info("raft leader did not answer an idempotent write; sending it to the next one", "leader", leader, "err", err)
				failed, failedTerm = leader, st.Term()
				continue
			}
			r.cfg.Logger.Warn("write forward to the raft leader failed; outcome unknown", "leader", leader, "write", w.Name, "err", err)
			return fmt.Errorf("%w: %w", ErrNoLeader, err)
		}
		if (a.NotLeader || a.Unknown && w.Idempotent) && retry {
			failed, failedTerm = leader, st.Term() // nothing was written there (or it may go twice)
			continue
		}
		if !a.HasApplied {
			return nil // an error answer: nothing to wait for
		}
		return r.catchUp(ctx, leader, a.Applied)
	}
}

// movedPoll is how often a send watches whether the leadership moved.
const movedPoll = 50 * time.Millisecond

// send sends w to leader, giving up on it once another node leads in a
// newer term: a leader that is paused (a stop signal, a long GC, a frozen
// VM) or cut off keeps the connection open and never answers, and the
// write would wait for it until the client's timeout although the rest of
// the cluster elected another leader within an election timeout. A write
// abandoned so has an unknown outcome (it was delivered): an idempotent
// one goes to the new leader, another answers no-leader at once.
func (r *Router) send(ctx context.Context, w Write, leader string) (Answer, error) {
	st := r.cfg.State
	term := st.Term()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var moved atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(movedPoll)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if l := st.LeaderID(); l != "" && l != leader && st.Term() > term {
					moved.Store(true)
					cancel()
					return
				}
			}
		}
	}()
	a, err := w.Send(sctx, leader)
	if err != nil && moved.Load() {
		err = fmt.Errorf("leader: %s stopped answering and %s leads now: %w", leader, st.LeaderID(), err)
	}
	return a, err
}

// catchUp waits until this node applied index, what the leader answered
// with.
func (r *Router) catchUp(ctx context.Context, leader string, index uint64) error {
	wctx, cancel := context.WithTimeout(ctx, r.cfg.AppliedWait)
	defer cancel()
	if err := r.cfg.State.WaitApplied(wctx, index); err != nil {
		r.cfg.Logger.Warn("forwarded write not applied here in time", "leader", leader, "index", index, "err", err)
		return &NotAppliedError{Leader: leader, Index: index, Err: err}
	}
	return nil
}

// waitOtherLeader waits up to ElectionWait for a leader other than old, or
// old elected again in a term after oldTerm, and returns its ID ("" if
// none came).
func (r *Router) waitOtherLeader(ctx context.Context, old string, oldTerm uint64) string {
	st := r.cfg.State
	ctx, cancel := context.WithTimeout(ctx, r.cfg.ElectionWait)
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
