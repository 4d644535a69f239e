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
