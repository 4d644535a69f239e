package conformance

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// PythonClient runs the nacos-sdk-python scenarios of conformance/python
// (its v2.nacos API, gRPC) as a Python process from a virtualenv
// conformance/ci.sh makes: nacos-sdk-python 2.x in conformance/python/.venv
// (rows "python2/…"), 3.x in .venv3 (rows "python3/…").
type PythonClient struct {
	// Dir is conformance/python.
	Dir string
	// Venv is the virtualenv's directory under Dir (".venv", ".venv3").
	Venv string
	// Prefix is the runner name of the table ("python2", "python3").
	Prefix string
	// WorkDir receives the SDK's logs and caches and the program's stderr.
	WorkDir string
}

// Python is the interpreter of the virtualenv.
func (p *PythonClient) Python() string { return filepath.Join(p.Dir, p.Venv, "bin", "python") }

// Available reports whether the virtualenv has the SDK.
func (p *PythonClient) Available() error {
	out, err := exec.Command(p.Python(), "-c", "import v2.nacos").CombinedOutput()
	if err != nil {
		return fmt.Errorf("conformance: no nacos-sdk-python in %s (conformance/ci.sh installs it): %v %s", p.Python(), err, out)
	}
	return nil
}

// Run runs the scenarios ("all" or "auth") against s; user and password,
// when set, log the clients in.
func (p *PythonClient) Run(ctx context.Context, s *Server, rs *Results, which, user, password string) error {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	dir := filepath.Join(p.WorkDir, p.Prefix+"-"+s.Name+"-"+which)
	cmd := exec.CommandContext(ctx, p.Python(), "scenarios.py", s.Addr(), dir, which)
	cmd.Dir = p.Dir
	cmd.Env = append(os.Environ(), "NACOS_USERNAME="+user, "NACOS_PASSWORD="+password, "PYTHONUNBUFFERED=1")
	cmd.WaitDelay = 5 * time.Second
	logf, err := os.Create(dir + ".stderr")
	if err != nil {
		return fmt.Errorf("conformance: python log: %w", err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("conformance: python stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("conformance: start python: %w", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if r, ok := parseResult(sc.Text(), p.Prefix+"/", s.Name); ok {
			rs.Add(r)
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("conformance: python scenarios on %s: %w", s.Name, err)
	}
	return nil
}
