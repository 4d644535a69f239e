package cluster_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stop sends SIGTERM (a node snapshots at a graceful stop) and waits for
// the process, killing it after 30 s.
func (n *node) stop() {
	if n.cmd == nil || n.cmd.Process == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(30 * time.Second):
		n.t.Errorf("node %s did not stop within 30 s of SIGTERM", n.addr())
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		<-n.done
	}
	n.cmd = nil
}

func publish(t *testing.T, n *node, dataID, content string) {
	t.Helper()
	form := url.Values{"dataId": {dataID}, "group": {"SHIP"}, "content": {content}}
	eventually(t, 20*time.Second, "publish "+dataID, func() error {
		r, err := do(n, "POST", "/nacos/v1/cs/configs", nil, form)
		if err != nil {
			return err
		}
		if r.status != 200 || r.body != "true" {
			return fmt.Errorf("%d %s", r.status, r.body)
		}
		return nil
	})
}

func historyPage(n *node, dataID string) (resp, error) {
	q := url.Values{"search": {"accurate"}, "dataId": {dataID}, "group": {"SHIP"}, "pageNo": {"1"}, "pageSize": {"100"}}
	return do(n, "GET", "/nacos/v1/cs/history", q, nil)
}

// TestWipedMemberGetsHistory: a node's own snapshots leave config history
// in its fsm.db; when the leader's log no longer reaches back to the start,
// a member whose data directory was wiped receives a snapshot with the
// history read into it, and serves the same history pages as the leader.
func TestWipedMemberGetsHistory(t *testing.T) {
	c := newCluster(t)
	c.startAll()
	c.membersUp(60 * time.Second)
	li := c.leader()
	for v := range 5 {
		publish(t, c.nodes[li], "ship.hist", "version "+strconv.Itoa(v))
	}
	// ~10 MB of log, then small entries: after the snapshot each node takes
	// at a graceful stop, raft keeps at most ~4 MiB of trailing log, so the
	// first entries are gone
	big := strings.Repeat("b", 100<<10)
	for i := range 100 {
		publish(t, c.nodes[li], "ship.big."+strconv.Itoa(i), big+strconv.Itoa(i))
	}
	for i := range 80 {
		publish(t, c.nodes[li], "ship.small."+strconv.Itoa(i), "s"+strconv.Itoa(i))
	}
	for _, n := range c.nodes {
		n.stop()
	}
	c.startAll()
	c.membersUp(60 * time.Second)
	li = c.leader()
	want, err := historyPage(c.nodes[li], "ship.hist")
	if err != nil || want.status != 200 || !strings.Contains(want.body, `"totalCount":5,`) {
		t.Fatalf("leader's history of ship.hist: %v %+v", err, want)
	}
	wantBig, err := historyPage(c.nodes[li], "ship.big.7")
	if err != nil || wantBig.status != 200 || !strings.Contains(wantBig.body, `"totalCount":1,`) {
		t.Fatalf("leader's history of ship.big.7: %v %+v", err, wantBig)
	}

	fi := (li + 1) % 3
	t.Logf("wiping node %d's data directory", fi)
	c.nodes[fi].kill()
	if err := os.RemoveAll(filepath.Join(c.nodes[fi].home, "data")); err != nil {
		t.Fatal(err)
	}
	c.start(fi)
	c.membersUp(60 * time.Second)
	took := eventually(t, 60*time.Second, "the wiped member's history", func() error {
		for _, w := range []struct {
			id   string
			want resp
		}{{"ship.hist", want}, {"ship.big.7", wantBig}} {
			got, err := historyPage(c.nodes[fi], w.id)
			if err != nil {
				return err
			}
			if got != w.want {
				return fmt.Errorf("%s: %d %.300s\nleader: %.300s", w.id, got.status, got.body, w.want.body)
			}
		}
		return nil
	})
	t.Logf("wiped member serves the leader's history pages after %v", took)
	shipped := false
	for _, n := range c.nodes {
		if n.out == nil {
			continue
		}
		for _, line := range strings.Split(n.out.String(), "\n") {
			if strings.Contains(line, "snapshot written for sending with fsm.db") {
				shipped = true
				t.Logf("node %s: %s", n.addr(), line)
			}
		}
	}
	if !shipped {
		t.Error(errors.New("no node sent a snapshot with fsm.db read in: the wiped member caught up from the log, so this test did not exercise what it is for"))
	}
	if out := c.nodes[fi].out.String(); !strings.Contains(out, "version=2") {
		t.Errorf("the wiped member did not restore a format 2 snapshot; its log:\n%s", tail(out, 3000))
	}
	eventually(t, 10*time.Second, "the sent copies removed", func() error {
		for _, n := range c.nodes {
			if left, _ := filepath.Glob(filepath.Join(n.home, "data", "raft", "ship-*")); len(left) > 0 {
				return fmt.Errorf("copies left: %v", left)
			}
		}
		return nil
	})
}
