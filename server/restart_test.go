package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/servertest"
)

// TestRestartUnderWriteLoadKeepsViews is issue 23's first defect end to
// end: members restarted on their data directories while writers keep
// registering and deregistering persistent instances and publishing and
// deleting configs through every member. Afterwards every member's views
// (naming's persistent instances and services, the config cache) are
// exactly its raft state, and every member holds the same state. A view
// that skipped entries applied while the member loaded (the race fixed by
// raftstore.Subscribe) shows as a difference even where later writes hide
// it from clients.
func TestRestartUnderWriteLoadKeepsViews(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 3)
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	var mu sync.Mutex // guards nodes
	pick := func(i int) *servertest.Node {
		mu.Lock()
		defer mu.Unlock()
		return nodes[i%len(nodes)]
	}
	stop := make(chan struct{})
	var acked, failed atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 7))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n := pick(rnd.IntN(3))
				svc := "restart.svc" + strconv.Itoa(rnd.IntN(3))
				ip := "10.7." + strconv.Itoa(w) + "." + strconv.Itoa(rnd.IntN(8))
				var method, path string
				var q url.Values
				switch rnd.IntN(4) {
				case 0, 1:
					method, path = "POST", "/nacos/v1/ns/instance"
					if rnd.IntN(3) == 0 {
						method = "DELETE"
					}
					q = url.Values{"serviceName": {svc}, "ip": {ip}, "port": {"80"}, "ephemeral": {"false"}}
				case 2:
					method, path = "POST", "/nacos/v1/cs/configs"
					q = url.Values{"dataId": {"restart.cfg" + strconv.Itoa(rnd.IntN(4))}, "group": {"R"}, "content": {fmt.Sprint(w, "-", i)}}
				default:
					method, path = "DELETE", "/nacos/v1/cs/configs"
					q = url.Values{"dataId": {"restart.cfg" + strconv.Itoa(rnd.IntN(4))}, "group": {"R"}}
				}
				if doQuiet(n, method, path, q) {
					acked.Add(1)
				} else {
					failed.Add(1) // a member restarting, an election
				}
			}
		})
	}
	for round := range 3 {
		time.Sleep(700 * time.Millisecond)
		victim := 1 + round%2 // a follower or the leader, whichever it is
		mu.Lock()
		old := nodes[victim]
		mu.Unlock()
		cfg := old.Cfg
		_ = old.Close()
		time.Sleep(time.Duration(300+round*200) * time.Millisecond) // writes go on without it
		restarted := servertest.Start(t, cfg)                       // the same data directory and addresses
		mu.Lock()
		nodes[victim] = restarted
		mu.Unlock()
	}
	time.Sleep(700 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d writes acknowledged, %d refused or failed during the restarts", acked.Load(), failed.Load())
	if acked.Load() < 50 {
		t.Fatalf("only %d writes acknowledged", acked.Load())
	}
	// every member applies the same last index, then its views must be
	// its state, and the states equal
	servertest.Eventually(t, 15*time.Second, func() error {
		idx := nodes[0].RaftAppliedIndex()
		for i, n := range nodes {
			if got := n.RaftAppliedIndex(); got != idx {
				return fmt.Errorf("member %d applied %d, member 0 %d", i, got, idx)
			}
		}
		return nil
	})
	for i, n := range nodes {
		if diffs := n.CheckViews(); len(diffs) > 0 {
			t.Errorf("member %d: its views differ from its raft state:\n%v", i, diffs)
		}
	}
	lists := func(n *servertest.Node) string {
		var s string
		for k := range 3 {
			r := n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"restart.svc" + strconv.Itoa(k)}, "healthyOnly": {"false"}}, nil, nil)
			s += hostsOf(t, r.Body) + "|"
		}
		for k := range 4 {
			r := n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"restart.cfg" + strconv.Itoa(k)}, "group": {"R"}}, nil, nil)
			s += strconv.Itoa(r.Status) + ":" + r.Body + "|"
		}
		return s
	}
	want := lists(nodes[0])
	for i, n := range nodes[1:] {
		if got := lists(n); got != want {
			t.Errorf("member %d answers\n%s\nmember 0\n%s", i+1, got, want)
		}
	}
}

// doQuiet sends a write and reports whether it was acknowledged (200); a
// transport error (a member going down) is not a failure of the test.
func doQuiet(n *servertest.Node, method, path string, q url.Values) bool {
	req, err := http.NewRequest(method, n.URL(path)+"?"+q.Encode(), nil)
	if err != nil {
		return false
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == 200
}

// hostsOf is the sorted "ip:port" list of an instance list body.
func hostsOf(t *testing.T, body string) string {
	t.Helper()
	var r struct {
		Hosts []struct {
			IP   string `json:"ip"`
			Port int    `json:"port"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return "bad list: " + body
	}
	var out []string
	for _, h := range r.Hosts {
		out = append(out, h.IP+":"+strconv.Itoa(h.Port))
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}
