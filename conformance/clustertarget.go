package conformance

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ClusterSize is the number of members of the TargetCluster cluster.
const ClusterSize = 3

// NewNacosdCluster describes a cluster of n nacosd processes on 127.0.0.1
// (ports chosen at start, raft on port-1000), each with its own home under
// dir holding conf/cluster.conf and data/, as `make run-cluster` runs one.
// Clients get every member's address (Addr), so requests spread over the
// members as the clients choose: the Java and Node clients pick a member
// per request or per connection, nacos-sdk-go and Dubbo rotate through
// them. Checks the harness makes itself go to the first member.
func NewNacosdCluster(bin, dir string, n int, logger *slog.Logger) *Server {
	c := &Server{Name: TargetCluster, logPath: filepath.Join(dir, "n0", "nacosd.log"), logger: logger}
	for i := range n {
		home := filepath.Join(dir, "n"+strconv.Itoa(i))
		c.nodes = append(c.nodes, &Server{
			Name: TargetCluster + "-" + strconv.Itoa(i), logPath: filepath.Join(home, "nacosd.log"), logger: logger,
			argv: func(port int) []string {
				return []string{bin, "-mode", "cluster", "-home", home, "-port", strconv.Itoa(port), "-host", "127.0.0.1",
					"-ip", "127.0.0.1", "-push-addr", "127.0.0.1:0", "-context-path", "/nacos"}
			},
		})
	}
	return c
}

// startCluster writes every member's cluster.conf (ports kept across
// restarts), starts the members together and waits until each answers
// ready: a raft leader is known and the Distro data is loaded.
func (s *Server) startCluster(ctx context.Context, timeout time.Duration) error {
	start := time.Now()
	var conf strings.Builder
	conf.WriteString("# conformance cluster\n")
	for _, n := range s.nodes {
		if n.Port == 0 {
			p, err := FreePort()
			if err != nil {
				return err
			}
			n.Port = p
		}
		conf.WriteString(n.Addr() + "\n")
	}
	for _, n := range s.nodes {
		home := filepath.Dir(n.logPath)
		if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
			return fmt.Errorf("conformance: cluster home: %w", err)
		}
		if err := os.WriteFile(filepath.Join(home, "conf", "cluster.conf"), []byte(conf.String()), 0o644); err != nil {
			return fmt.Errorf("conformance: cluster.conf: %w", err)
		}
	}
	errs := make([]error, len(s.nodes))
	var wg sync.WaitGroup
	for i, n := range s.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = n.Start(ctx, timeout) }()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	deadline := time.Now().Add(timeout)
	for _, n := range s.nodes {
		for {
			code, body, err := httpGetString(n.URL("/nacos/v1/console/health/readiness"))
			if err == nil && code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("conformance: cluster member %s not ready after %s: %d %s %v", n.Addr(), timeout, code, body, err)
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	s.mu.Lock()
	s.Port, s.StartTime = s.nodes[0].Port, time.Since(start)
	s.mu.Unlock()
	s.logger.Info("cluster up", "target", s.Name, "members", s.Addr(), "start", s.StartTime)
	return nil
}
