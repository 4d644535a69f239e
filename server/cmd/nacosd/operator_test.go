package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/settings"
)

// What an operator meets first: help, the version, a port or a data
// directory that is taken, turning auth on. Each against the real binary
// where the process boundary matters (exit status, stdout/stderr).

func TestBinaryHelpOnStdout(t *testing.T) {
	bin := nacosdBinary(t)
	for _, arg := range []string{"--help", "-h", "help"} {
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, arg)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("nacosd %s: %v (exit status must be 0)\n%s", arg, err, errOut.String())
		}
		if !strings.Contains(out.String(), "-context-path") || errOut.Len() > 0 {
			t.Errorf("nacosd %s: stdout %d bytes, stderr %q", arg, out.Len(), errOut.String())
		}
	}
}

func TestBinaryVersion(t *testing.T) {
	bin := nacosdBinary(t)
	for _, arg := range []string{"version", "--version", "-version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("nacosd %s: %v", arg, err)
		}
		if !strings.HasPrefix(string(out), "nacosd ") || !strings.Contains(string(out), " go1.") {
			t.Errorf("nacosd %s: %q", arg, out)
		}
	}
}

// TestMakeBuildKeepsRevision: `make build` stamps the commit even with
// -buildvcs=false (as .ci/run builds) and in a git worktree.
func TestMakeBuildKeepsRevision(t *testing.T) {
	testtier.Require(t, testtier.Process) // builds the binary
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	bin := filepath.Join(t.TempDir(), "nacosd")
	cmd := exec.Command("make", "-s", "-C", root, "build", "BIN="+bin)
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	rev := strings.TrimSpace(string(head))
	if !strings.Contains(string(out), "(revision "+rev) || !strings.Contains(string(out), "-"+rev[:12]) {
		t.Errorf("nacosd version = %q, want revision %s", out, rev)
	}
}

func TestPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	n := launch(t, t.TempDir(), port)
	if !n.wait(30 * time.Second) {
		t.Fatalf("nacosd still runs on a taken port\n%s", n.log.String())
	}
	want := "HTTP port " + strconv.Itoa(port) + " is taken: another process listens on 127.0.0.1:" + strconv.Itoa(port)
	if n.err == nil || !strings.Contains(n.log.String(), want) || !strings.Contains(n.log.String(), "-port") {
		t.Errorf("exit %v; output lacks %q:\n%s", n.err, want, n.log.String())
	}
}

// TestSecondNodeOnDataDir: a second nacosd on a data directory in use
// exits at once naming the process that holds it (it said "open log store
// …/raft.db: timeout" after a second).
func TestSecondNodeOnDataDir(t *testing.T) {
	dir := t.TempDir()
	first := startNode(t, dir, freePort(t))
	second := launch(t, dir, freePort(t), "-log-level", "info")
	if !second.wait(30 * time.Second) {
		t.Fatalf("second nacosd still runs on the same data directory\n%s", second.log.String())
	}
	want := "another process (pid " + strconv.Itoa(first.cmd.Process.Pid) + ", nacosd) holds " + filepath.Join(dir, "raft")
	if second.err == nil || !strings.Contains(second.log.String(), want) {
		t.Errorf("exit %v; output lacks %q:\n%s", second.err, want, second.log.String())
	}
	if !strings.Contains(second.log.String(), "msg=nacosd version=") {
		t.Errorf("the version is not logged at start:\n%s", second.log.String())
	}
	// the first one is unharmed
	if code, _ := first.do("GET", "/v1/console/health/readiness", nil); code != 200 {
		t.Errorf("first node readiness: %d", code)
	}
}

// TestGenSecrets: what `nacosd gen-secrets` prints turns auth on: a
// configuration holding it is accepted (the stock conf with auth enabled
// is refused twice), and each run makes new secrets.
func TestGenSecrets(t *testing.T) {
	gen := func(args ...string) string {
		var out, errOut bytes.Buffer
		if err := dispatch(context.Background(), append([]string{"gen-secrets"}, args...), noEnv, &out, &errOut); err != nil {
			t.Fatalf("gen-secrets %v: %v\n%s", args, err, errOut.String())
		}
		return out.String()
	}
	a, b := gen(), gen()
	if a == b {
		t.Fatal("two runs printed the same secrets")
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	load := func(conf string, env map[string]string) error {
		if err := os.WriteFile(filepath.Join(home, "conf", "application.properties"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := settings.Load(settings.Options{Args: []string{"-home", home}, WorkDir: home,
			LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		if err != nil {
			return err
		}
		if !st.Config.Auth.Enabled {
			return errors.New("auth is not on")
		}
		st.Config.DataDir = home
		return st.Config.Validate()
	}
	if err := load("nacos.core.auth.enabled=true\n", nil); err == nil {
		t.Fatal("auth on without secrets accepted")
	}
	if err := load(a, nil); err != nil {
		t.Fatalf("gen-secrets output refused: %v\n%s", err, a)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(gen("-env")), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	if err := load("", env); err != nil {
		t.Fatalf("gen-secrets -env output refused: %v\n%v", err, env)
	}
}

// TestMakeRunPort: `make run PORT=8850` serves on 8850 (the target had
// 8848 written in).
func TestMakeRunPort(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	out, err := exec.Command("make", "-s", "-n", "-C", "../../..", "run", "PORT=8850").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "-port 8850 ") {
		t.Errorf("make run PORT=8850 runs:\n%s", out)
	}
}

// TestCommandAfterEntrypointProperties: `docker run IMAGE version` reaches
// the command though the image's entrypoint passes a Spring property first.
func TestCommandAfterEntrypointProperties(t *testing.T) {
	var out bytes.Buffer
	args := []string{"--spring.config.additional-location=file:/home/nacos/init.d/custom.properties,file:/home/nacos/conf/application.properties", "version"}
	if err := dispatch(context.Background(), args, noEnv, &out, io.Discard); err != nil || !strings.HasPrefix(out.String(), "nacosd ") {
		t.Fatalf("version after a property: %v %q", err, out.String())
	}
	out.Reset()
	if err := dispatch(context.Background(), append(args[:1:1], "gen-secrets", "-env"), noEnv, &out, io.Discard); err != nil || !strings.Contains(out.String(), "NACOS_AUTH_TOKEN=") {
		t.Fatalf("gen-secrets after a property: %v %q", err, out.String())
	}
}
