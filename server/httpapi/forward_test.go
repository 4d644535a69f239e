package httpapi

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/raftstore"
)

// fakeRaft is a follower's view of raft: the leader it knows.
type fakeRaft struct {
	mu     sync.Mutex
	leader string
}

func (f *fakeRaft) AppliedIndex() uint64                      { return 0 }
func (f *fakeRaft) WaitApplied(context.Context, uint64) error { return nil }
func (f *fakeRaft) WaitLeader(context.Context) error          { return nil }
func (f *fakeRaft) LeaderID() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leader
}

func (f *fakeRaft) set(l string) {
	f.mu.Lock()
	f.leader = l
	f.mu.Unlock()
}

// TestForwardFollowsMovedLeadership: a write forwarded to a node that lost
// the leadership before the write reached it (its answer says nothing was
// written) goes once more, to the new leader, instead of failing the
// client's write; a no-leader answer without that mark (the outcome of the
// write is unknown) is relayed as it is.
func TestForwardFollowsMovedLeadership(t *testing.T) {
	for _, tc := range []struct {
		name      string
		notLeader bool
		want      string
		calls     string
	}{
		{"moved before the write", true, "ok", "A,B"},
		{"outcome unknown", false, "caused: The Raft Group [nacos_config] did not find the Leader node;", "A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &fakeRaft{leader: "A"}
			var calls []string
			fwd := func(_ context.Context, addr, method, uri string, _ http.Header, _ []byte) (int, http.Header, []byte, error) {
				calls = append(calls, addr)
				if addr == "A" {
					st.set("B") // the election ends while A answers
					h := http.Header{}
					if tc.notLeader {
						h.Set(HeaderNotLeader, "true")
					}
					return 500, h, []byte("caused: The Raft Group [nacos_config] did not find the Leader node;"), nil
				}
				return 200, http.Header{}, []byte("ok"), nil
			}
			app := fiber.New(fiber.Config{ErrorHandler: ErrorHandlerIn(nil, "/nacos")})
			app.Use(ForwardToLeader(ForwardDeps{Self: "C", Store: st, Forward: fwd}))
			app.Post("/nacos/v1/cs/configs", func(*fiber.Ctx) error { return &raftstore.NotLeaderError{LeaderID: "A"} })
			resp, err := app.Test(httptest.NewRequest("POST", "/nacos/v1/cs/configs", nil), -1)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			if string(b) != tc.want || strings.Join(calls, ",") != tc.calls {
				t.Fatalf("answer %d %q after forwards to %v", resp.StatusCode, b, calls)
			}
		})
	}
}

// TestForwardedRefusalIsMarked: a forwarded write that reaches a node which
// is no leader is refused with HeaderNotLeader (nothing was written).
func TestForwardedRefusalIsMarked(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandlerIn(nil, "/nacos")})
	app.Use(ForwardToLeader(ForwardDeps{Self: "A", Store: &fakeRaft{leader: "B"},
		Forward: func(context.Context, string, string, string, http.Header, []byte) (int, http.Header, []byte, error) {
			t.Fatal("a forwarded write is not forwarded again")
			return 0, nil, nil, nil
		}}))
	app.Post("/nacos/v1/cs/configs", func(*fiber.Ctx) error { return &raftstore.NotLeaderError{LeaderID: "B"} })
	req := httptest.NewRequest("POST", "/nacos/v1/cs/configs", nil)
	req.Header.Set(HeaderForwarded, "C")
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 500 || resp.Header.Get(HeaderNotLeader) == "" {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
}
