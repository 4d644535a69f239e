package server_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/servertest"
)

// redoClient is a 2.x client that does what the Java client's redo does:
// when its connection ends it connects to another live member and
// registers its instances again (Java retries every 3 s; this one every
// 200 ms until it succeeds).
type redoClient struct {
	t     *testing.T
	nodes func() []*servertest.Node
	svcs  []string
	mu    sync.Mutex
	c     *remoteclient.Client
	on    *servertest.Node
	moves atomic.Int32
}

func (r *redoClient) connect(avoid *servertest.Node) {
	for {
		for _, n := range r.nodes() {
			if n == avoid {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			c, err := remoteclient.Dial(ctx, n.GRPCAddr(), namingOpts())
			cancel()
			if err != nil {
				continue
			}
			if r.registerAll(c) {
				r.mu.Lock()
				r.c, r.on = c, n
				r.mu.Unlock()
				return
			}
			c.Close()
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (r *redoClient) registerAll(c *remoteclient.Client) bool {
	for i, svc := range r.svcs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, d, err := c.Do(ctx, gRegister("public", "G", svc, gInstance("10.8.0.1", 7000+i, "DEFAULT", 1, map[string]string{"app": "redo"})))
		cancel()
		if err != nil || !d.Success() {
			r.t.Logf("register %s through a member: %v %+v", svc, err, d)
			return false
		}
	}
	return true
}

// watch reconnects when the connection ends, until stop.
func (r *redoClient) watch(stop <-chan struct{}) {
	for {
		r.mu.Lock()
		c, on := r.c, r.on
		r.mu.Unlock()
		select {
		case <-stop:
			return
		case <-c.Done():
			c.Close()
			r.moves.Add(1)
			r.connect(on)
		}
	}
}

// listed reports which of svcs list the client's instance healthy on n.
func listed(n *servertest.Node, svcs []string) (missing []string) {
	for i, svc := range svcs {
		body := n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"G@@" + svc}}, nil, nil).Body
		want := fmt.Sprintf(`"ip":"10.8.0.1","port":%d,"valid":true,"healthy":true`, 7000+i)
		if !strings.Contains(body, want) {
			missing = append(missing, svc)
		}
	}
	return missing
}

// TestGRPCNamingMemberDies is issue 24's cluster promise for 2.x
// instances: a client's instances, held by the member of its connection
// and written on each service's owner, are listed healthy on every member;
// when that member dies the client moves to another member and registers
// them there (its redo), and no instance leaves any surviving member's
// list at any moment, through the 1.x expiry of the dead holder's beats
// (30 s). When the client dies, its instances leave every member within
// the drop grace plus a Distro sync.
func TestGRPCNamingMemberDies(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test: 40 s
	cfgs := servertest.ClusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].GRPC.HeldDropGrace = time.Second
	}
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	var alive sync.Map
	for _, n := range nodes {
		alive.Store(n, true)
	}
	live := func() []*servertest.Node {
		var out []*servertest.Node
		for _, n := range nodes {
			if _, ok := alive.Load(n); ok {
				out = append(out, n)
			}
		}
		return out
	}
	svcs := []string{"m1", "m2", "m3", "m4", "m5", "m6"} // owned by every member among them
	rc := &redoClient{t: t, nodes: live, svcs: svcs}
	rc.connect(nil)
	holder := rc.on
	for _, n := range nodes {
		servertest.Eventually(t, 10*time.Second, func() error {
			if m := listed(n, svcs); len(m) > 0 {
				return fmt.Errorf("%s misses %v", n.HTTPAddr(), m)
			}
			return nil
		})
	}
	stop := make(chan struct{})
	watching := make(chan struct{})
	go func() { rc.watch(stop); close(watching) }()

	// the holder dies; sample every surviving member's lists for 40 s
	alive.Delete(holder)
	killed := time.Now()
	if err := holder.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	var gaps []string
	for time.Since(killed) < 40*time.Second {
		for _, n := range live() {
			if m := listed(n, svcs); len(m) > 0 {
				gaps = append(gaps, fmt.Sprintf("%v: %s missed %v", time.Since(killed).Round(time.Millisecond), n.HTTPAddr(), m))
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(gaps) > 0 {
		t.Fatalf("instances of a live client left a list %d times: %v", len(gaps), gaps[:min(len(gaps), 10)])
	}
	if rc.moves.Load() == 0 {
		t.Fatal("the client never moved")
	}
	rc.mu.Lock()
	t.Logf("client moved to %s; every surviving member listed every instance healthy at every 100 ms sample for 40 s", rc.on.HTTPAddr())
	c := rc.c
	rc.mu.Unlock()

	// the client dies: its instances leave every surviving member
	close(stop)
	<-watching
	c.Close()
	died := time.Now()
	for _, n := range live() {
		servertest.Eventually(t, 10*time.Second, func() error {
			for _, svc := range svcs {
				if body := n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"G@@" + svc}}, nil, nil).Body; strings.Contains(body, "10.8.0.1") {
					return fmt.Errorf("%s still lists %s", n.HTTPAddr(), svc)
				}
			}
			return nil
		})
	}
	t.Logf("a dead client's instances left every member %v after its connection closed (drop grace 1 s)", time.Since(died).Round(time.Millisecond))
}
