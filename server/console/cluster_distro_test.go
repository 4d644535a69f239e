package console

import (
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// TestClusterViewDistroColumns: in cluster mode each member row carries its
// share of the instance lists and the outcome of its last checksum round;
// standalone rows carry neither.
func TestClusterViewDistroColumns(t *testing.T) {
	now := time.Unix(1700000000, 0)
	self := compat.Member{IP: "10.0.0.1", Port: 8848, State: "UP"}
	others := []compat.Member{{IP: "10.0.0.2", Port: 8848, State: "UP"}, {IP: "10.0.0.3", Port: 8848, State: "UP"}, {IP: "10.0.0.4", Port: 8848, State: "DOWN"}}
	dv := map[string]DistroView{
		"10.0.0.1:8848": {Owned: 3, Held: 10},
		"10.0.0.2:8848": {Owned: 4, Held: 10, LastRound: now.Add(-3 * time.Second), Lists: 4},
		"10.0.0.3:8848": {Owned: 3, Held: 10, LastRound: now.Add(-2 * time.Second), Lists: 3, Differing: 1, FetchFailed: true},
		"10.0.0.4:8848": {Held: 10},
	}
	v := buildClusterView(self, others, false, RaftStatus{}, dv, now)
	want := map[string][2]string{
		"10.0.0.1:8848": {"owns 3 of 10 lists", "this node"},
		"10.0.0.2:8848": {"owns 4 of 10 lists", "in sync: 4 lists, 3s ago"},
		"10.0.0.3:8848": {"owns 3 of 10 lists", "1 of 3 lists differed, fetch failed, 2s ago"},
		"10.0.0.4:8848": {"owns 0 of 10 lists", "no checksum round received yet"},
	}
	for _, n := range v.Nodes {
		if w := want[n.Address]; n.DistroRole != w[0] || n.ChecksumHealth != w[1] {
			t.Errorf("%s: %q %q, want %q %q", n.Address, n.DistroRole, n.ChecksumHealth, w[0], w[1])
		}
	}
	for _, n := range buildClusterView(self, nil, true, RaftStatus{}, nil, now).Nodes {
		if n.DistroRole != "" || n.ChecksumHealth != "" {
			t.Errorf("standalone row with Distro columns: %+v", n)
		}
	}
	if _, h := distroText(DistroView{LastRound: now, Aborted: true}, false, now); !strings.Contains(h, "member lists differ") {
		t.Errorf("aborted round: %q", h)
	}
}
