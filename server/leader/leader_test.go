package leader

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/raftstore"
)

// fakeState is a node's view of raft.
type fakeState struct {
	mu      sync.Mutex
	self    string
	leader  string
	term    uint64
	applied uint64
	stuck   bool // WaitApplied never reaches the index
}

func (f *fakeState) IsLeader() bool       { f.mu.Lock(); defer f.mu.Unlock(); return f.leader == f.self }
func (f *fakeState) LeaderID() string     { f.mu.Lock(); defer f.mu.Unlock(); return f.leader }
func (f *fakeState) Term() uint64         { f.mu.Lock(); defer f.mu.Unlock(); return f.term }
func (f *fakeState) AppliedIndex() uint64 { f.mu.Lock(); defer f.mu.Unlock(); return f.applied }
func (f *fakeState) WaitApplied(ctx context.Context, i uint64) error {
	f.mu.Lock()
	stuck := f.stuck
	if !stuck && i > f.applied {
		f.applied = i
	}
	f.mu.Unlock()
	if stuck {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (f *fakeState) set(l string) {
	f.mu.Lock()
	f.leader = l
	f.term++
	f.mu.Unlock()
}

func router(t *testing.T, st *fakeState) *Router {
	t.Helper()
	r, err := New(Config{State: st, Self: st.self, ElectionWait: 500 * time.Millisecond, AppliedWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRouterRetriesUndeliveredOnTheNextLeader: a refused connection to a
// killed leader waits for the next leader; a send that failed after the
// write left is an unknown outcome (ErrNoLeader), never retried.
func TestRouterRetriesUndeliveredOnTheNextLeader(t *testing.T) {
	st := &fakeState{self: "C", leader: "A"}
	var sent []string
	w := Write{Here: func() error { t.Error("ran on a follower"); return nil },
		Send: func(_ context.Context, to string) (Answer, error) {
			sent = append(sent, to)
			if to == "A" {
				go st.set("B")
				return Answer{}, Undelivered(errors.New("connection refused"))
			}
			return Answer{Applied: 9, HasApplied: true}, nil
		}}
	if err := router(t, st).Run(context.Background(), w); err != nil || len(sent) != 2 || st.AppliedIndex() != 9 {
		t.Fatalf("err %v, sent %v, applied %d", err, sent, st.AppliedIndex())
	}
	st = &fakeState{self: "C", leader: "A"}
	sent = nil
	w.Send = func(_ context.Context, to string) (Answer, error) {
		sent = append(sent, to)
		return Answer{}, io.ErrUnexpectedEOF
	}
	if err := router(t, st).Run(context.Background(), w); !errors.Is(err, ErrNoLeader) || len(sent) != 1 {
		t.Fatalf("err %v, sent %v", err, sent)
	}
}

// TestRouterRefusesWhatItCannotShow: the leader acknowledged, this node
// cannot apply the index in time: NotAppliedError, not a success.
func TestRouterRefusesWhatItCannotShow(t *testing.T) {
	st := &fakeState{self: "C", leader: "A", stuck: true}
	w := Write{Send: func(context.Context, string) (Answer, error) { return Answer{Applied: 3, HasApplied: true}, nil }}
	var na *NotAppliedError
	if err := router(t, st).Run(context.Background(), w); !errors.As(err, &na) || na.Leader != "A" || na.Index != 3 {
		t.Fatalf("err %v", err)
	}
}

// TestRouterLeaderRefusalRunsHereAfterTakeover: a write the local node
// refused (it stepped down) goes to the next leader, which is this node
// again in a newer term: it runs here.
func TestRouterLeaderRefusalRunsHereAfterTakeover(t *testing.T) {
	st := &fakeState{self: "C", leader: "C"}
	runs := 0
	w := Write{Here: func() error {
		runs++
		if runs == 1 {
			go st.set("C")
			return &raftstore.NotLeaderError{}
		}
		return nil
	}, Send: func(context.Context, string) (Answer, error) { t.Error("sent to itself"); return Answer{}, nil }}
	if err := router(t, st).Run(context.Background(), w); err != nil || runs != 2 {
		t.Fatalf("err %v after %d runs", err, runs)
	}
	// no leader at all: ErrNoLeader after the election wait
	st = &fakeState{self: "C"}
	if err := router(t, st).Run(context.Background(), w); !errors.Is(err, ErrNoLeader) {
		t.Fatalf("err %v", err)
	}
}

// TestRouterRetriesIdempotentUnknown: an idempotent write whose leader died
// after the write left (no answer), or answered that it lost the
// leadership while committing, goes to the next leader: the client gets
// the write's outcome instead of no-leader (the fault checker counted the
// no-leader answers of writes in flight at a leader kill). A write that is
// not idempotent keeps the unknown outcome.
func TestRouterRetriesIdempotentUnknown(t *testing.T) {
	for _, tc := range []struct {
		name       string
		idempotent bool
		unknown    bool // an answer saying so, instead of a broken connection
		wantErr    bool
		sends      int
	}{
		{"idempotent, leader died with it", true, false, false, 2},
		{"idempotent, leader lost it committing", true, true, false, 2},
		{"not idempotent", false, false, true, 1},
		{"not idempotent, answer says unknown", false, true, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &fakeState{self: "C", leader: "A"}
			sends := 0
			w := Write{Name: "w", Idempotent: tc.idempotent, Here: func() error { t.Error("ran here"); return nil },
				Send: func(_ context.Context, to string) (Answer, error) {
					sends++
					if to == "A" {
						go st.set("B")
						if tc.unknown {
							return Answer{Unknown: true}, nil
						}
						return Answer{}, io.ErrUnexpectedEOF
					}
					return Answer{Applied: 3, HasApplied: true}, nil
				}}
			err := router(t, st).Forward(context.Background(), w)
			// an unanswered idempotent write may go once more to the same
			// leader when it still leads (here: before the election ends)
			extra := tc.idempotent && !tc.unknown && sends == tc.sends+1
			if (err != nil) != tc.wantErr || sends != tc.sends && !extra {
				t.Fatalf("err %v after %d sends", err, sends)
			}
		})
	}
	// here, a lost leadership while committing: the next leader
	st := &fakeState{self: "A", leader: "A"}
	ran, sent := 0, 0
	w := Write{Name: "w", Idempotent: true,
		Here: func() error { ran++; go st.set("B"); return raftstore.ErrLeadershipLost },
		Send: func(context.Context, string) (Answer, error) { sent++; return Answer{}, nil }}
	if err := router(t, st).Run(context.Background(), w); err != nil || ran != 1 || sent != 1 {
		t.Fatalf("err %v, ran %d, sent %d", err, ran, sent)
	}
}

// TestRouterResendsToALiveLeader: an idempotent write whose connection
// the leader closed (EOF on a pooled connection) goes to the same leader
// again while it still leads, instead of waiting for another leader that
// never comes (the fault checker saw such a write answered no-leader in a
// quiet cluster).
func TestRouterResendsToALiveLeader(t *testing.T) {
	st := &fakeState{self: "C", leader: "A", term: 1}
	sends := 0
	w := Write{Name: "w", Idempotent: true, Here: func() error { t.Error("ran here"); return nil },
		Send: func(_ context.Context, to string) (Answer, error) {
			sends++
			if sends == 1 {
				return Answer{}, io.EOF
			}
			return Answer{Applied: 3, HasApplied: true}, nil
		}}
	start := time.Now()
	if err := router(t, st).Forward(context.Background(), w); err != nil || sends != 2 {
		t.Fatalf("err %v after %d sends", err, sends)
	}
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Fatalf("the resend waited %v", d)
	}
}

// TestRouterLeavesAPausedLeader: a send to a leader that stops answering
// (paused: the connection stays open) is abandoned once another node leads
// in a newer term: an idempotent write goes to the new leader, another
// answers no-leader at once, instead of both waiting for the client's
// timeout (the fault checker saw writes hang the whole 5.3 s of a pause
// although a new leader was elected after 2 s).
func TestRouterLeavesAPausedLeader(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		st := &fakeState{self: "C", leader: "A"}
		var sent []string
		w := Write{Name: "w", Idempotent: idempotent, Here: func() error { t.Error("ran here"); return nil },
			Send: func(ctx context.Context, to string) (Answer, error) {
				sent = append(sent, to)
				if to == "A" {
					time.AfterFunc(200*time.Millisecond, func() { st.set("B") })
					<-ctx.Done() // paused: never answers
					return Answer{}, ctx.Err()
				}
				return Answer{Applied: 3, HasApplied: true}, nil
			}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		start := time.Now()
		err := router(t, st).Forward(ctx, w)
		cancel()
		if took := time.Since(start); took > 2*time.Second {
			t.Fatalf("idempotent %v: the write waited %v for the paused leader", idempotent, took)
		}
		switch {
		case idempotent && (err != nil || len(sent) != 2 || sent[1] != "B"):
			t.Fatalf("idempotent: err %v, sent to %v", err, sent)
		case !idempotent && (!errors.Is(err, ErrNoLeader) || len(sent) != 1):
			t.Fatalf("not idempotent: err %v, sent to %v", err, sent)
		}
	}
}
