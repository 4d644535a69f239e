package main

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
)

// Helpers for the tests that build and run the real binary.

var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// nacosdBinary builds the binary once per test process; NACOSD_TEST_BIN
// names another build to test instead (e.g. an older commit's).
func nacosdBinary(t *testing.T) string {
	t.Helper()
	testtier.Require(t, testtier.Process) // builds and runs the binary
	if bin := os.Getenv("NACOSD_TEST_BIN"); bin != "" {
		return bin
	}
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "nacosd-bin-")
		if build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "nacosd")
		build.out, build.err = exec.Command("go", "build", "-o", build.bin, ".").CombinedOutput()
	})
	if build.err != nil {
		t.Fatalf("build nacosd: %v\n%s", build.err, build.out)
	}
	return build.bin
}

// syncBuffer is a bytes.Buffer safe for the process's output copier and
// the test reading it at the same time.
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

// node is a running nacosd process.
type node struct {
	t      *testing.T
	cmd    *exec.Cmd
	base   string
	log    *syncBuffer
	client *http.Client
	done   chan struct{}
	err    error // exit status, set when done is closed
}

// startNode runs the binary on dir and port and waits for readiness. The
// process is stopped in t.Cleanup if the test did not stop it.
func startNode(t *testing.T, dir string, port int, extra ...string) *node {
	t.Helper()
	n := launch(t, dir, port, extra...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, _, err := n.try(http.MethodGet, "/v1/console/health/readiness", nil)
		if err == nil && code == 200 {
			return n
		}
		select {
		case <-n.done:
			t.Fatalf("nacosd exited before it was ready: %v\n%s", n.err, n.log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nacosd not ready: %v\n%s", err, n.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// launch starts the binary without waiting.
func launch(t *testing.T, dir string, port int, extra ...string) *node {
	t.Helper()
	return launchWith(t, "", dir, port, extra...)
}

// launchWith is launch with an address-space cap (ulimit -v, e.g.
// "2000000" KiB) when memLimitKiB is set, so a runaway allocation fails
// the process instead of the machine.
func launchWith(t *testing.T, memLimitKiB, dir string, port int, extra ...string) *node {
	t.Helper()
	bin := nacosdBinary(t)
	args := append([]string{"-port", strconv.Itoa(port), "-host", "127.0.0.1", "-ip", "127.0.0.1",
		"-data-dir", dir, "-raft-addr", "127.0.0.1:0", "-push-addr", "127.0.0.1:0", "-log-level", "warn"}, extra...)
	cmd := exec.Command(bin, args...)
	if memLimitKiB != "" {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `ulimit -v ` + memLimitKiB + ` && exec "$0" "$@"`, bin}, args...)...)
	}
	cmd.Dir = filepath.Dir(dir) // logs/ (the audit trail) beside the data, never in the source tree
	n := &node{t: t, cmd: cmd, base: "http://127.0.0.1:" + strconv.Itoa(port) + "/nacos",
		log: &syncBuffer{}, client: &http.Client{Timeout: 20 * time.Second}, done: make(chan struct{})}
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { n.err = n.cmd.Wait(); close(n.done) }()
	t.Cleanup(func() { n.kill() })
	return n
}

// wait waits for the process to exit by itself.
func (n *node) wait(d time.Duration) (exited bool) {
	select {
	case <-n.done:
		return true
	default:
	}
	select {
	case <-n.done:
		return true
	case <-time.After(d):
		return false
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (n *node) stop() {
	n.t.Helper()
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	if !n.wait(30 * time.Second) {
		n.kill()
		n.t.Fatalf("no exit 30 s after SIGTERM\n%s", n.log.String())
	}
	if n.err != nil {
		n.t.Fatalf("exit after SIGTERM: %v\n%s", n.err, n.log.String())
	}
}

func (n *node) kill() {
	select {
	case <-n.done:
	default:
		_ = n.cmd.Process.Kill()
		<-n.done
	}
}

// try sends a request with form (query for GET/PUT/DELETE, body for POST).
func (n *node) try(method, path string, form url.Values) (int, string, error) {
	var body io.Reader
	u := n.base + path
	if method == http.MethodPost {
		body = strings.NewReader(form.Encode())
	} else if len(form) > 0 {
		u += "?" + form.Encode()
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return 0, "", err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// do is try that fails the test on a transport error.
func (n *node) do(method, path string, form url.Values) (int, string) {
	n.t.Helper()
	code, body, err := n.try(method, path, form)
	if err != nil {
		n.t.Fatalf("%s %s: %v\n%s", method, path, err, n.log.String())
	}
	return code, body
}

// eventually retries f until it returns nil, failing with its last error.
func eventually(t *testing.T, d time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", d, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
