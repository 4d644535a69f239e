// Package conformance runs real Nacos 1.x clients (the Java nacos-client
// 1.4.8 scenarios in javatest/client, nacos-sdk-go v1.1.6 in process) and a
// raw HTTP request corpus against nacosd and, when one is available, the Java
// Nacos 1.4.8 reference server, and compares the outcomes.
//
// The tests live in conformance_test.go and run only with -tags
// conformance (see docs/conformance.md, docs/testing.md); `conformance/ci.sh` installs
// what they need and runs them.
package conformance

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Target names used in result tables.
const (
	TargetNacosd    = "nacosd"
	TargetReference = "java-nacos"
	// TargetCluster is a three-node nacosd cluster, clients given every
	// member's address (clustertarget.go).
	TargetCluster = "nacosd-cluster"
)

// Server is one server under test, reachable on 127.0.0.1.
type Server struct {
	// Name is TargetNacosd or TargetReference.
	Name string
	// Port is the HTTP port; the context path is always /nacos.
	Port int
	// StartTime is how long the last start took until the server answered.
	StartTime time.Duration

	argv    func(port int) []string
	env     []string
	logPath string
	logger  *slog.Logger

	ctr *containerSpec // non-nil: run as a container (Containerise)

	nodes []*Server // non-nil: a cluster of these (NewNacosdCluster)

	mu   sync.Mutex
	cmd  *exec.Cmd
	pid  int
	done chan struct{}
}

// Addr returns "127.0.0.1:port"; for a cluster, every member's address
// separated by commas (the server list clients take).
func (s *Server) Addr() string {
	if s.nodes != nil {
		addrs := make([]string, len(s.nodes))
		for i, n := range s.nodes {
			addrs[i] = n.Addr()
		}
		return strings.Join(addrs, ",")
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
}

// Ports returns the HTTP port of every member (one for a single server).
func (s *Server) Ports() []int {
	if s.nodes == nil {
		return []int{s.Port}
	}
	out := make([]int, len(s.nodes))
	for i, n := range s.nodes {
		out[i] = n.Port
	}
	return out
}

// URL returns the absolute URL of path (which starts with /nacos); for a
// cluster, on its first member.
func (s *Server) URL(path string) string {
	if s.nodes != nil {
		return s.nodes[0].URL(path)
	}
	return "http://" + s.Addr() + path
}

// FreePort returns a free TCP port p on 127.0.0.1 such that p-1000, p+1000
// and p+1001 are free too (nacosd and Java Nacos bind raft on port-1000;
// nacosd and Java Nacos 2.x serve gRPC on port+1000, Java 2.x its cluster
// gRPC on port+1001).
func FreePort() (int, error) {
	for i := 0; i < 200; i++ {
		// below the kernel's ephemeral range (32768-60999 here): a port
		// from that range, free when picked, can become the source port of
		// one of the suite's many outgoing connections before its server
		// binds it (a Spring app then failed with "Port … already in use")
		p := freePortLow + rand.IntN(freePortHigh-freePortLow)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		var others []net.Listener
		for _, q := range []int{p - 1000, p + 1000, p + 1001} {
			o, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q))
			if err != nil {
				break
			}
			others = append(others, o)
		}
		l.Close()
		for _, o := range others {
			o.Close()
		}
		if len(others) == 3 {
			return p, nil
		}
	}
	return 0, errors.New("conformance: no free port pair found")
}

// The range FreePort picks from (the raft port p-1000 stays above 10000,
// the gRPC ports p+1000 and p+1001 below 32768).
const freePortLow, freePortHigh = 11000, 31700

// NewNacosd describes a nacosd process from the binary bin keeping its data
// in dataDir. Call Start to run it.
func NewNacosd(bin, dataDir, logPath string, logger *slog.Logger) *Server {
	return &Server{
		Name: TargetNacosd, logPath: logPath, logger: logger,
		argv: func(port int) []string {
			return []string{bin, "-port", strconv.Itoa(port), "-host", "127.0.0.1", "-ip", "127.0.0.1",
				"-push-addr", "127.0.0.1:0", "-context-path", "/nacos", "-data-dir", dataDir, "-standalone"}
		},
	}
}

// NewReference describes Java Nacos 1.4.8 started standalone (embedded
// Derby) by javatest/reference/run.sh from the distribution in home.
func NewReference(script, home, workDir, logPath string, logger *slog.Logger) *Server {
	return &Server{
		Name: TargetReference, logPath: logPath, logger: logger,
		env: []string{"NACOS_REFERENCE_HOME=" + home, "NACOS_REFERENCE_WORK=" + workDir},
		argv: func(port int) []string {
			return []string{"bash", script, strconv.Itoa(port)}
		},
	}
}

// Start picks a port (keeping the previous one on a restart), starts the
// process and waits until /nacos/v1/ns/operator/metrics answers 200.
func (s *Server) Start(ctx context.Context, timeout time.Duration) error {
	if s.nodes != nil {
		return s.startCluster(ctx, timeout)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Port == 0 {
		p, err := FreePort()
		if err != nil {
			return err
		}
		s.Port = p
	}
	if s.ctr != nil {
		return s.startContainer(ctx, timeout)
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("conformance: %s log: %w", s.Name, err)
	}
	argv := s.argv(s.Port)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), s.env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("conformance: start %s: %w", s.Name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(done) }()
	s.cmd, s.done, s.pid = cmd, done, cmd.Process.Pid
	s.logger.Info("server starting", "target", s.Name, "port", s.Port, "pid", cmd.Process.Pid)
	return s.waitUp(ctx, start, timeout, func() bool {
		select {
		case <-done:
			return false
		default:
			return true
		}
	})
}

func (s *Server) startContainer(ctx context.Context, timeout time.Duration) error {
	start := time.Now()
	pid, err := s.ctr.start(ctx, s.Port)
	if err != nil {
		return err
	}
	s.pid = pid
	s.logger.Info("server container starting", "target", s.Name, "image", s.ctr.image, "port", s.Port, "pid", pid)
	return s.waitUp(ctx, start, timeout, func() bool { return s.ctr.running(ctx) })
}

// waitUp polls /nacos/v1/ns/operator/metrics until it answers 200.
func (s *Server) waitUp(ctx context.Context, start time.Time, timeout time.Duration, alive func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if !alive() {
			return fmt.Errorf("conformance: %s exited during start, see %s", s.Name, s.logPath)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		resp, err := http.Get(s.URL("/nacos/v1/ns/operator/metrics"))
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				s.StartTime = time.Since(start)
				s.logger.Info("server up", "target", s.Name, "start", s.StartTime, "rssKiB", rssKiB(s.pid))
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("conformance: %s not up after %s (last error %v), see %s", s.Name, timeout, err, s.logPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// RSSKiB returns the resident set size of the server process (for Java: the
// JVM that run.sh execs; in a container: its init process), or -1.
func (s *Server) RSSKiB() int {
	if s.nodes != nil {
		sum := 0
		for _, n := range s.nodes {
			sum += max(n.RSSKiB(), 0)
		}
		return sum
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pid == 0 {
		return -1
	}
	return rssKiB(s.pid)
}

func rssKiB(pid int) int {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return -1
}

// Stop sends SIGTERM to the process group and waits up to 15 s, then kills it.
func (s *Server) Stop() error {
	for _, n := range s.nodes {
		n.Stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ctr != nil {
		s.ctr.stop(context.Background(), s.logPath)
		s.pid = 0
		return nil
	}
	if s.cmd == nil {
		return nil
	}
	pgid := s.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
	s.cmd, s.pid = nil, 0
	return nil
}

// Restart stops the server and starts it again on the same port and data.
func (s *Server) Restart(ctx context.Context, timeout time.Duration) error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.Start(ctx, timeout)
}
