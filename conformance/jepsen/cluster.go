package jepsen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Node is one nacosd process bound to its own loopback address, so that
// iptables can cut it off from the other members while the clients (on
// another address) still reach it.
type Node struct {
	Index int
	IP    string
	Port  int // HTTP; raft listens on Port-1000
	Home  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{}
	paused bool
	log    *os.File
}

// Addr is the node's HTTP address.
func (n *Node) Addr() string { return net.JoinHostPort(n.IP, strconv.Itoa(n.Port)) }

// RaftAddr is the address its raft transport listens on.
func (n *Node) RaftAddr() string { return net.JoinHostPort(n.IP, strconv.Itoa(n.Port-1000)) }

// GRPCAddr is the address its Nacos 2.x gRPC server listens on.
func (n *Node) GRPCAddr() string { return net.JoinHostPort(n.IP, strconv.Itoa(n.Port+1000)) }

// Running reports whether the process runs (paused counts as running).
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil
}

// Paused reports whether the process is stopped by SIGSTOP.
func (n *Node) Paused() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.paused
}

// Cluster is three (or more) nacosd nodes in cluster mode.
type Cluster struct {
	Bin   string
	Nodes []*Node
	rec   *Recorder
	http  *Client
}

// NewCluster lays out a home (conf/cluster.conf) per node under dir.
func NewCluster(bin, dir string, ips []string, port int, rec *Recorder, probe *Client) (*Cluster, error) {
	c := &Cluster{Bin: bin, rec: rec, http: probe}
	var members []string
	for _, ip := range ips {
		members = append(members, net.JoinHostPort(ip, strconv.Itoa(port)))
	}
	for i, ip := range ips {
		home := filepath.Join(dir, "n"+strconv.Itoa(i+1))
		if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
			return nil, fmt.Errorf("jepsen: node home: %w", err)
		}
		conf := "# the jepsen checker's three nodes\n" + strings.Join(members, "\n") + "\n"
		if err := os.WriteFile(filepath.Join(home, "conf", "cluster.conf"), []byte(conf), 0o644); err != nil {
			return nil, fmt.Errorf("jepsen: cluster.conf: %w", err)
		}
		c.Nodes = append(c.Nodes, &Node{Index: i, IP: ip, Port: port, Home: home})
	}
	return c, nil
}

// FreePort finds an HTTP port p in [from, to] free on every ip, with
// p-1000 (raft) and p+1000 (gRPC) free too.
func FreePort(ips []string, from, to int) (int, error) {
	for p := from; p <= to; p++ {
		ok := true
		for _, ip := range ips {
			for _, q := range []int{p, p - 1000, p + 1000} {
				l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(q)))
				if err != nil {
					ok = false
					continue
				}
				l.Close()
			}
		}
		if ok {
			return p, nil
		}
	}
	return 0, fmt.Errorf("jepsen: no free port in %d-%d on %v (is 127.0.0.0/8 on lo?)", from, to, ips)
}

// Start starts node i on its data directory and waits until it answers
// its liveness probe; the event "ready" is recorded then.
func (c *Cluster) Start(ctx context.Context, i int) error {
	n := c.Nodes[i]
	logf, err := os.OpenFile(filepath.Join(n.Home, "nacosd.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("jepsen: node log: %w", err)
	}
	fmt.Fprintf(logf, "==== jepsen: start at %s\n", fmtT(c.rec.Now()))
	cmd := exec.Command(c.Bin, "-mode", "cluster", "-home", n.Home, "-host", n.IP, "-ip", n.IP,
		"-port", strconv.Itoa(n.Port), "-push-addr", net.JoinHostPort(n.IP, "0"), "-log-level", "info")
	cmd.Stdout, cmd.Stderr = logf, logf
	// the nodes die with the test process, whatever stops it
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("jepsen: start node %d: %w", i+1, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	n.mu.Lock()
	n.cmd, n.done, n.paused, n.log = cmd, done, false, logf
	n.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		select {
		case <-done:
			return fmt.Errorf("jepsen: node %d exited at start (see %s)", i+1, logf.Name())
		default:
		}
		if st, _, err := c.http.Get(ctx, n, "/nacos/v1/console/health/liveness", nil, time.Second); err == nil && st == 200 {
			c.rec.Event(EvReady, i, "")
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("jepsen: node %d did not answer within 60 s (see %s)", i+1, logf.Name())
}

// Kill sends SIGKILL to node i and waits for the process.
func (c *Cluster) Kill(i int) {
	n := c.Nodes[i]
	n.mu.Lock()
	cmd, done, logf := n.cmd, n.done, n.log
	n.cmd, n.paused = nil, false
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	c.rec.Event(EvKill, i, "")
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	if logf != nil {
		fmt.Fprintf(logf, "==== jepsen: killed at %s\n", fmtT(c.rec.Now()))
		logf.Close()
	}
}

// Pause sends SIGSTOP to node i.
func (c *Cluster) Pause(i int) error {
	n := c.Nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return errors.New("jepsen: pause: node not running")
	}
	c.rec.Event(EvStop, i, "")
	n.paused = true
	return n.cmd.Process.Signal(syscall.SIGSTOP)
}

// Resume sends SIGCONT to node i.
func (c *Cluster) Resume(i int) {
	n := c.Nodes[i]
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil || !n.paused {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGCONT)
	n.paused = false
	c.rec.Event(EvCont, i, "")
}

// Close kills every node.
func (c *Cluster) Close() {
	for i := range c.Nodes {
		c.Resume(i)
		c.Kill(i)
	}
}

// selfView is a node's /v1/core/cluster/self: its own view of the raft
// leader and term.
type selfView struct {
	Data struct {
		ExtendInfo struct {
			RaftMetaData struct {
				MetaDataMap map[string]struct {
					Leader string `json:"leader"`
					Term   uint64 `json:"term"`
				} `json:"metaDataMap"`
			} `json:"raftMetaData"`
		} `json:"extendInfo"`
	} `json:"data"`
}

// pollLeader asks node i whom it sees as leader: the node index (-1 for
// none or unknown) and the term.
func (c *Cluster) pollLeader(ctx context.Context, i int) (int, uint64, error) {
	st, body, err := c.http.Get(ctx, c.Nodes[i], "/nacos/v1/core/cluster/self", nil, time.Second)
	if err != nil {
		return -1, 0, err
	}
	if st != 200 {
		return -1, 0, fmt.Errorf("status %d", st)
	}
	var v selfView
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return -1, 0, err
	}
	g := v.Data.ExtendInfo.RaftMetaData.MetaDataMap["nacos_config"]
	for j, m := range c.Nodes {
		if g.Leader == m.RaftAddr() {
			return j, g.Term, nil
		}
	}
	return -1, g.Term, nil
}

// MembersUp waits until every node sees every node UP.
func (c *Cluster) MembersUp(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		last = nil
		for _, n := range c.Nodes {
			st, body, err := c.http.Get(ctx, n, "/nacos/v1/core/cluster/nodes", nil, 2*time.Second)
			if err != nil || st != 200 {
				last = fmt.Errorf("node %d: %v %d", n.Index+1, err, st)
				break
			}
			for _, m := range c.Nodes {
				i := strings.Index(body, `"address":"`+m.Addr()+`"`)
				if i < 0 {
					last = fmt.Errorf("node %d does not list %s", n.Index+1, m.Addr())
					break
				}
				s := strings.LastIndex(body[:i], `"state":"`)
				if s < 0 || !strings.HasPrefix(body[s:], `"state":"UP"`) {
					last = fmt.Errorf("node %d sees %s not UP", n.Index+1, m.Addr())
					break
				}
			}
			if last != nil {
				break
			}
		}
		if last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("jepsen: members not UP within %v: %v", d, last)
}
