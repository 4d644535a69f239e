// Package cluster_test is the cluster fault suite (`make cluster-test`):
// three nacosd processes on 127.0.0.11-13 (each bound to its own loopback
// address, so that iptables can cut one off from the others while clients
// on 127.0.0.1 still reach it), real raft on real disks, real Go and Java
// clients, and the faults that kill Java clusters: kill -9 (the raft leader
// included), a partition, a full restart, a client losing its server.
package cluster_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
)

var nacosdBin string

func TestMain(m *testing.M) {
	if !testtier.On(testtier.Cluster) {
		fmt.Println("cluster fault suite skipped: go test -tags cluster (make cluster-test)")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "nacosd-cluster-bin")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	nacosdBin = filepath.Join(dir, "nacosd")
	// built in the product module (the repository root), whose go.sum
	// has the server's dependencies
	build := exec.Command("go", "build", "-o", nacosdBin, "./server/cmd/nacosd")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Println("build nacosd:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// node is one nacosd process.
type node struct {
	t    *testing.T
	ip   string
	port int
	home string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

func (n *node) addr() string { return net.JoinHostPort(n.ip, strconv.Itoa(n.port)) }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// cluster is three nodes on 127.0.0.11..13, same port.
type cluster struct {
	t     *testing.T
	nodes []*node
}

// freeClusterPort finds a port p free (with p-1000) on each IP.
func freeClusterPort(t *testing.T, ips []string) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", net.JoinHostPort(ips[0], "0"))
		if err != nil {
			t.Fatalf("listen on %s (is 127.0.0.0/8 on lo?): %v", ips[0], err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p < 2000 {
			continue
		}
		ok := true
		for _, ip := range ips {
			for _, q := range []int{p, p - 1000} {
				if l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(q))); err != nil {
					ok = false
				} else {
					l.Close()
				}
			}
		}
		if ok {
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	ips := []string{"127.0.0.11", "127.0.0.12", "127.0.0.13"}
	port := freeClusterPort(t, ips)
	c := &cluster{t: t}
	var members []string
	for _, ip := range ips {
		members = append(members, net.JoinHostPort(ip, strconv.Itoa(port)))
	}
	base := t.TempDir()
	for i, ip := range ips {
		home := filepath.Join(base, "n"+strconv.Itoa(i))
		if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
			t.Fatal(err)
		}
		conf := "# three nacosd nodes on loopback\n" + strings.Join(members, "\n") + "\n"
		if err := os.WriteFile(filepath.Join(home, "conf", "cluster.conf"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, &node{t: t, ip: ip, port: port, home: home})
	}
	t.Cleanup(func() {
		heal(t)
		for _, n := range c.nodes {
			n.kill()
		}
		if t.Failed() {
			for i, n := range c.nodes {
				if n.out != nil {
					t.Logf("---- node %d (%s) log tail:\n%s", i, n.addr(), tail(n.out.String(), 6000))
				}
			}
		}
	})
	return c
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// start starts node i (keeping its data) and waits for its HTTP port.
func (c *cluster) start(i int) {
	c.t.Helper()
	n := c.nodes[i]
	n.out = &syncBuffer{}
	n.cmd = exec.Command(nacosdBin, "-mode", "cluster", "-home", n.home, "-host", n.ip, "-ip", n.ip,
		"-port", strconv.Itoa(n.port), "-push-addr", net.JoinHostPort(n.ip, "0"), "-log-level", "info")
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	n.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := n.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	n.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(n.cmd, n.done)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if r, err := get(n, "/nacos/v1/console/health/liveness"); err == nil && r.status == 200 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("node %d did not start:\n%s", i, tail(n.out.String(), 4000))
}

// startAll starts every node at once.
func (c *cluster) startAll() {
	var wg sync.WaitGroup
	for i := range c.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); c.start(i) }()
	}
	wg.Wait()
}

// kill sends SIGKILL and waits for the process.
func (n *node) kill() {
	if n.cmd == nil || n.cmd.Process == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	<-n.done
	n.cmd = nil
}

type resp struct {
	status int
	body   string
}

var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}

func do(n *node, method, path string, q url.Values, form url.Values) (resp, error) {
	u := "http://" + n.addr() + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return resp{}, err
	}
	req.Header.Set("User-Agent", "Nacos-Java-Client:v1.4.8")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	r, err := httpClient.Do(req)
	if err != nil {
		return resp{}, err
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, string(b)}, nil
}

func get(n *node, path string) (resp, error) { return do(n, "GET", path, nil, nil) }

// eventually polls cond every 100 ms until it holds or d passes; it returns
// how long it took.
func eventually(t *testing.T, d time.Duration, what string, cond func() error) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < d {
		if err = cond(); err == nil {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v: %v", what, d, err)
	return 0
}

// leader returns the index of the raft leader according to the running
// nodes' /v1/core/cluster/nodes raftMetaData.
func (c *cluster) leader() int {
	c.t.Helper()
	idx := -1
	eventually(c.t, 20*time.Second, "a raft leader", func() error {
		for _, n := range c.nodes {
			if n.cmd == nil {
				continue
			}
			r, err := get(n, "/nacos/v1/core/cluster/self")
			if err != nil || r.status != 200 {
				continue
			}
			var self struct {
				Data struct {
					ExtendInfo struct {
						RaftMetaData struct {
							MetaDataMap map[string]struct {
								Leader string `json:"leader"`
							} `json:"metaDataMap"`
						} `json:"raftMetaData"`
					} `json:"extendInfo"`
				} `json:"data"`
			}
			if json.Unmarshal([]byte(r.body), &self) != nil {
				continue
			}
			l := self.Data.ExtendInfo.RaftMetaData.MetaDataMap["nacos_config"].Leader
			for i, m := range c.nodes {
				if m.cmd != nil && l == net.JoinHostPort(m.ip, strconv.Itoa(m.port-1000)) {
					idx = i
					return nil
				}
			}
		}
		return errors.New("no node names a running leader")
	})
	return idx
}

// membersUp waits until every running node sees every running node UP.
func (c *cluster) membersUp(d time.Duration) time.Duration {
	return eventually(c.t, d, "members UP", func() error {
		for _, n := range c.nodes {
			if n.cmd == nil {
				continue
			}
			r, err := get(n, "/nacos/v1/core/cluster/nodes")
			if err != nil {
				return err
			}
			for _, m := range c.nodes {
				if m.cmd == nil {
					continue
				}
				want := `"address":"` + m.addr() + `"`
				i := strings.Index(r.body, want)
				if i < 0 {
					return fmt.Errorf("%s does not list %s", n.addr(), m.addr())
				}
				start := strings.LastIndex(r.body[:i], `"state":"`)
				if start < 0 || !strings.HasPrefix(r.body[start:], `"state":"UP"`) {
					return fmt.Errorf("%s sees %s not UP", n.addr(), m.addr())
				}
			}
		}
		return nil
	})
}

// iptables runs iptables with args (root only).
func iptables(args ...string) error {
	out, err := exec.Command("iptables", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

const chain = "NACOSD_CLUSTER_TEST"

// partition cuts node n off from the other nodes' addresses (both ways);
// clients on 127.0.0.1 still reach every node.
func (c *cluster) partition(i int) {
	c.t.Helper()
	_ = iptables("-N", chain)
	if err := iptables("-C", "INPUT", "-j", chain); err != nil {
		if err := iptables("-I", "INPUT", "-j", chain); err != nil {
			c.t.Fatal(err)
		}
	}
	for j, m := range c.nodes {
		if j == i {
			continue
		}
		for _, r := range [][2]string{{c.nodes[i].ip, m.ip}, {m.ip, c.nodes[i].ip}} {
			if err := iptables("-A", chain, "-s", r[0], "-d", r[1], "-j", "DROP"); err != nil {
				c.t.Fatal(err)
			}
		}
	}
}

// heal removes every rule of the suite: the chain's rules, the jump to it
// and the chain (partition adds them again).
func heal(t *testing.T) {
	_ = iptables("-F", chain)
	for iptables("-D", "INPUT", "-j", chain) == nil {
	}
	_ = iptables("-X", chain)
}

// sortedLines returns a canonical text of a JSON list for comparisons.
func sortedLines(items []string) string {
	s := append([]string(nil), items...)
	sort.Strings(s)
	return strings.Join(s, "\n")
}
