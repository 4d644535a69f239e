package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

// movingClient follows ConnectResetRequest as the Java client does: it
// connects to the server named (ip and HTTP port; the gRPC port is +1000)
// and then closes the old connection.
type movingClient struct {
	mu   sync.Mutex
	c    *remoteclient.Client
	addr string // HTTP address of the member it is on
}

func (m *movingClient) follow(t *testing.T, stop <-chan struct{}) {
	for {
		m.mu.Lock()
		c := m.c
		m.mu.Unlock()
		select {
		case <-stop:
			return
		case <-c.Done():
			return
		case p := <-c.Pushes():
			if p.Metadata.Type != remote.TypeConnectResetRequest {
				continue
			}
			var r struct{ ServerIP, ServerPort string }
			json.Unmarshal(p.Body, &r)
			port, err := strconv.Atoi(r.ServerPort)
			if err != nil {
				t.Errorf("reset without a server: %s", p.Body)
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			nc, err := remoteclient.Dial(ctx, net.JoinHostPort(r.ServerIP, strconv.Itoa(port+1000)), namingOpts())
			cancel()
			if err != nil {
				t.Logf("move to %s:%s: %v", r.ServerIP, r.ServerPort, err)
				continue
			}
			m.mu.Lock()
			m.c, m.addr = nc, net.JoinHostPort(r.ServerIP, r.ServerPort)
			m.mu.Unlock()
			c.Close()
		}
	}
}

// TestGRPCRebalanceOnJoin: a member that restarts gets 2.x clients back.
// While member B is down its clients sit on A; when B joins again, A
// (over avg × 1.1) sends its excess connections ConnectResetRequest
// naming the members under avg × 0.9, and they move.
func TestGRPCRebalanceOnJoin(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].GRPC.RebalanceDelay = 500 * time.Millisecond
		cfgs[i].GRPC.RebalanceInterval = -1 // the join alone must do it
	}
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	a, b := nodes[0], nodes[1]
	if err := b.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	servertest.Eventually(t, 10*time.Second, func() error { // A saw B leave
		for _, m := range a.Members() {
			if m.Address() == b.Self().Address() && m.State == "UP" {
				return fmt.Errorf("B still UP on A")
			}
		}
		return nil
	})
	clients := make([]*movingClient, 12)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range clients {
		clients[i] = &movingClient{c: dial(t, a, namingOpts()), addr: a.HTTPAddr()}
		wg.Go(func() { clients[i].follow(t, stop) })
	}
	defer func() {
		close(stop)
		wg.Wait()
		for _, c := range clients {
			c.mu.Lock()
			c.c.Close()
			c.mu.Unlock()
		}
	}()
	// B comes back on its address and data
	srv, err := server.New(cfgs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	b = &servertest.Node{Server: srv, Cfg: cfgs[1]}
	count := func(n *servertest.Node) int {
		c := 0
		for _, conn := range n.Connections().List() {
			if conn.SDK() {
				c++
			}
		}
		return c
	}
	servertest.Eventually(t, 20*time.Second, func() error {
		ca, cb, cc := count(a), count(b), count(nodes[2])
		if cb < 3 || ca > 5 {
			return fmt.Errorf("connections A %d, restarted B %d, C %d", ca, cb, cc)
		}
		return nil
	})
	t.Logf("after B rejoined: A %d, B %d, C %d connections (avg 4: A keeps at most 4)", count(a), count(b), count(nodes[2]))
}

// TestGRPCRebalancePeriodic: without any membership change, a member that
// holds more than avg × 1.1 sheds its excess at the periodic comparison
// (a member restarted between two reports never looked down).
func TestGRPCRebalancePeriodic(t *testing.T) {
	testtier.Require(t, testtier.Integration) // cluster test
	cfgs := servertest.ClusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].GRPC.RebalanceInterval = 500 * time.Millisecond
	}
	nodes := servertest.StartCluster(t, cfgs)
	servertest.WaitMembersUp(t, nodes)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	clients := make([]*movingClient, 9)
	for i := range clients {
		clients[i] = &movingClient{c: dial(t, nodes[0], namingOpts())}
		wg.Go(func() { clients[i].follow(t, stop) })
	}
	defer func() {
		close(stop)
		wg.Wait()
		for _, c := range clients {
			c.mu.Lock()
			c.c.Close()
			c.mu.Unlock()
		}
	}()
	servertest.Eventually(t, 15*time.Second, func() error {
		var counts []int
		for _, n := range nodes {
			c := 0
			for _, conn := range n.Connections().List() {
				if conn.SDK() {
					c++
				}
			}
			counts = append(counts, c)
		}
		if counts[0] != 3 || counts[1] != 3 || counts[2] != 3 {
			return fmt.Errorf("connections %v", counts)
		}
		return nil
	})
}
