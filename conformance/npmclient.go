package conformance

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// NPMClient runs the npm `nacos` 2.6.x scenarios of conformance/npm as a
// Node.js process (also in container mode: the JRE image has no Node).
type NPMClient struct {
	// Dir is conformance/npm.
	Dir string
	// WorkDir receives the program's stderr.
	WorkDir string
}

// Install runs `npm install` when node_modules is missing.
func (n *NPMClient) Install(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(n.Dir, "node_modules", "nacos")); err == nil {
		return nil
	}
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund")
	cmd.Dir = n.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("conformance: npm install in %s: %w\n%s", n.Dir, err, out)
	}
	return nil
}

// Run runs every npm scenario against s and adds the results.
func (n *NPMClient) Run(ctx context.Context, s *Server, rs *Results) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	// nacos-config shares connections between processes through
	// cluster-client, leader on 127.0.0.1:7777 by default: two runs at once
	// (one per target) would route one target's calls through the other.
	port, err := FreePort()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "node", "scenarios.js", s.Addr(), "all")
	cmd.Dir = n.Dir
	cmd.Env = append(os.Environ(), "NODE_CLUSTER_CLIENT_PORT="+strconv.Itoa(port))
	cmd.WaitDelay = 5 * time.Second
	logf, err := os.Create(filepath.Join(n.WorkDir, "npm-"+s.Name+".stderr"))
	if err != nil {
		return fmt.Errorf("conformance: npm log: %w", err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("conformance: npm stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("conformance: start node: %w", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if r, ok := parseResult(sc.Text(), "npm/", s.Name); ok {
			rs.Add(r)
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("conformance: npm scenarios on %s: %w", s.Name, err)
	}
	return nil
}
