// Package servertest starts real nacosd servers for tests: HTTP on
// 127.0.0.1:0, raft on 127.0.0.1:0 with short timings, UDP push on
// 127.0.0.1:0, data in t.TempDir(), logs to t.Log.
package servertest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testlog"
	"github.com/nacosd/nacosd/server"
)

// Node is a running test server.
type Node struct {
	*server.Server
	Cfg server.Config
	t   testing.TB
}

// Logger returns a slog.Logger writing to t.Log (silenced after cleanup).
func Logger(t testing.TB) *slog.Logger { return testlog.New(t) }

// Config returns a test configuration with its own data directory.
func Config(t testing.TB) server.Config {
	cfg := server.DefaultConfig()
	cfg.Host, cfg.Port, cfg.IP = "127.0.0.1", 0, "127.0.0.1"
	cfg.DataDir = t.TempDir()
	cfg.Push.ListenAddr = "127.0.0.1:0"
	cfg.FastRaft = true
	cfg.Naming.DisableHealthCheck = true
	cfg.Logger = Logger(t)
	// NACOSD_TEST_GRPC_TRANSPORT runs the suite's 2.x edge on another
	// transport (make test-root runs the gRPC tests on grpc-go this way)
	cfg.GRPC.Transport = os.Getenv("NACOSD_TEST_GRPC_TRANSPORT")
	return cfg
}

// Start starts a server with cfg and closes it at cleanup.
func Start(t testing.TB, cfg server.Config) *Node {
	t.Helper()
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := &Node{Server: srv, Cfg: cfg, t: t}
	t.Cleanup(func() { _ = srv.Close() })
	return n
}

// URL returns the full URL of path (which includes the context path).
func (n *Node) URL(path string) string { return "http://" + n.HTTPAddr() + path }

// Response is a completed HTTP exchange.
type Response struct {
	Status int
	Body   string
	Header http.Header
}

// Do sends a request with the query and (for non-GET) form body given.
func (n *Node) Do(method, path string, query, form url.Values, header map[string]string) Response {
	n.t.Helper()
	u := n.URL(path)
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		n.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded;charset=UTF-8")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	c := &http.Client{Timeout: 30 * time.Second} // bcrypt logins are slow under -race on a loaded machine
	resp, err := c.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Body: string(b), Header: resp.Header}
}

// Eventually polls cond until it returns nil or timeout passes, then fails
// with the last error.
func Eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var err error
	for {
		if err = cond(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FreePortPair returns a free TCP port p on ip such that p-1000 (the raft
// port of a Nacos member) and p+1000 (its 2.x gRPC port) are free too.
func FreePortPair(t testing.TB, ip string) int {
	t.Helper()
	for range 500 {
		// below the kernel's ephemeral range (32768-60999): a port from
		// it, free when picked, can become the source port of an outgoing
		// connection of a parallel test before the node binds it
		p := 11000 + rand.IntN(20700)
		l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p)))
		if err != nil {
			continue
		}
		r, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p-1000)))
		if err != nil {
			l.Close()
			continue
		}
		g, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(p+1000)))
		l.Close()
		r.Close()
		if err == nil {
			g.Close()
			return p
		}
	}
	t.Fatal("servertest: no free port pair")
	return 0
}

// ClusterConfigs returns the configurations of an n-node cluster on
// 127.0.0.1 (HTTP on free ports, raft on port-1000, members given as
// NACOS_SERVERS would give them) with short protocol timings.
func ClusterConfigs(t testing.TB, n int) []server.Config {
	t.Helper()
	var addrs []string
	var ports []int
	for range n {
		p := FreePortPair(t, "127.0.0.1")
		ports = append(ports, p)
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(p))
	}
	cfgs := make([]server.Config, n)
	for i := range cfgs {
		cfg := Config(t)
		cfg.Logger = Logger(t).With("node", i)
		cfg.Standalone = false
		cfg.Port = ports[i]
		cfg.NacosServers = addrs
		cfg.RaftTimeout = 300 * time.Millisecond // 50 ms lost the leader every few 100 ms under -race on 2 cores
		cfg.ClusterTimings = server.ClusterTimings{ReportDelay: 50 * time.Millisecond, ReportInterval: 100 * time.Millisecond,
			SyncDelay: 20 * time.Millisecond, VerifyInterval: 300 * time.Millisecond, LoadWait: time.Second,
			BootstrapWait: time.Second}
		cfgs[i] = cfg
	}
	return cfgs
}

// StartCluster starts the nodes of cfgs at once (a member waits for a
// quorum when it starts) and closes them at cleanup.
func StartCluster(t testing.TB, cfgs []server.Config) []*Node {
	t.Helper()
	nodes := make([]*Node, len(cfgs))
	errs := make(chan error, len(cfgs))
	for i, cfg := range cfgs {
		go func() {
			srv, err := server.New(cfg)
			if err == nil {
				err = srv.Start(context.Background())
			}
			if err == nil {
				nodes[i] = &Node{Server: srv, Cfg: cfg, t: t}
			}
			errs <- err
		}()
	}
	for range cfgs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			if n != nil {
				_ = n.Close()
			}
		}
	})
	return nodes
}

// WaitMembersUp waits until every node sees every node UP (the members have
// reported to each other, so they agree on the owners of services) and
// every node knows the same raft leader (a fresh cluster answers its first
// requests before its first election ends).
func WaitMembersUp(t testing.TB, nodes []*Node) {
	t.Helper()
	Eventually(t, 20*time.Second, func() error {
		leader := ""
		for _, n := range nodes {
			for _, m := range n.Members() {
				if m.State != "UP" {
					return fmt.Errorf("%s sees %s %s", n.Self().Address(), m.Address(), m.State)
				}
			}
			l := n.RaftLeaderID()
			if l == "" || (leader != "" && l != leader) {
				return fmt.Errorf("%s knows raft leader %q (others %q)", n.Self().Address(), l, leader)
			}
			leader = l
		}
		return nil
	})
}

// DoURL sends a request to an absolute URL with a raw body (may be empty)
// and the headers given.
func DoURL(t testing.TB, method, u, body string, header map[string]string) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Body: string(b), Header: resp.Header}
}
