package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
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
	"github.com/nacosd/nacosd/server/servertest"
)

func noEnv(string) (string, bool) { return "", false }

func TestHelpListsFlags(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		var out, errOut bytes.Buffer
		err := dispatch(context.Background(), args, noEnv, &out, &errOut)
		if !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%v: %v", args, err)
		}
		for _, f := range []string{"-port", "-context-path", "-data-dir", "-mode", "-log-level", "NACOS_SERVER_PORT", "gen-secrets", "version"} {
			if !strings.Contains(out.String(), f) {
				t.Errorf("%v: help on stdout lacks %s:\n%s", args, f, out.String())
			}
		}
		if errOut.Len() > 0 {
			t.Errorf("%v: help wrote to stderr: %s", args, errOut.String())
		}
	}
}

func TestRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-log-level", "loud"}, {"-mode", "cluster", "-data-dir", t.TempDir()}, {"-port", "70000"}, {"extra"}, {"-nosuch"}} {
		var out, errOut bytes.Buffer
		err := dispatch(context.Background(), args, noEnv, &out, &errOut)
		if err == nil {
			t.Errorf("%v: no error", args)
		}
		if out.Len() > 0 {
			t.Errorf("%v: wrote to stdout: %s", args, out.String())
		}
	}
	err := dispatch(context.Background(), []string{"-nosuch"}, noEnv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -nosuch (nacosd --help lists the flags)") {
		t.Errorf("unknown flag: %v", err)
	}
}

// freePort is a free port p (p-1000 free too, for raft) below the
// ephemeral range.
func freePort(t *testing.T) int { return servertest.FreePortPair(t, "127.0.0.1") }

type proc struct {
	cmd  *exec.Cmd
	base string
	log  *bytes.Buffer
}

func startBinary(t *testing.T, bin, dir string, port int) *proc {
	t.Helper()
	var log bytes.Buffer
	cmd := exec.Command(bin, "-port", strconv.Itoa(port), "-host", "127.0.0.1", "-ip", "127.0.0.1",
		"-data-dir", dir, "-raft-addr", "127.0.0.1:0", "-push-addr", "127.0.0.1:0", "-log-level", "warn")
	cmd.Dir = filepath.Dir(dir) // logs/ (the audit trail) beside the data, never in the source tree
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, base: "http://127.0.0.1:" + strconv.Itoa(port) + "/nacos", log: &log}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.base + "/v1/console/health/readiness")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("nacosd not ready: %v\n%s", err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKill9KeepsAcknowledgedWrites registers persistent instances and
// publishes configs as fast as it can, SIGKILLs nacosd mid-stream and checks
// that every registration answered "ok" and every publish answered "true" is
// there after a restart.
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	testtier.Require(t, testtier.Process) // builds and runs the binary
	bin := filepath.Join(t.TempDir(), "nacosd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	dir := t.TempDir()
	port := freePort(t)
	p := startBinary(t, bin, dir, port)

	var mu sync.Mutex
	acked := map[int]bool{}
	published := map[int]bool{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	client := &http.Client{Timeout: 5 * time.Second}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; ; i += 4 {
				select {
				case <-stop:
					return
				default:
				}
				q := url.Values{"serviceName": {"DEFAULT_GROUP@@crash"}, "ip": {"127.0.0.1"}, "port": {strconv.Itoa(10000 + i)}, "ephemeral": {"false"}}
				resp, err := client.Post(p.base+"/v1/ns/instance?"+q.Encode(), "", nil)
				if err != nil {
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && string(b) == "ok" {
					mu.Lock()
					acked[i] = true
					mu.Unlock()
				}
			}
		}(w)
	}
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; ; i += 2 {
				select {
				case <-stop:
					return
				default:
				}
				form := url.Values{"dataId": {"crash-" + strconv.Itoa(i)}, "group": {"DEFAULT_GROUP"}, "content": {"v=" + strconv.Itoa(i)}}
				resp, err := client.PostForm(p.base+"/v1/cs/configs", form)
				if err != nil {
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && string(b) == "true" {
					mu.Lock()
					published[i] = true
					mu.Unlock()
				}
			}
		}(w)
	}
	for {
		mu.Lock()
		n, m := len(acked), len(published)
		mu.Unlock()
		if n >= 300 && m >= 100 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	close(stop)
	wg.Wait()

	p2 := startBinary(t, bin, dir, port)
	defer func() { _ = p2.cmd.Process.Signal(syscall.SIGTERM); _ = p2.cmd.Wait() }()
	resp, err := http.Get(p2.base + "/v1/ns/instance/statuses?key=public%23%23DEFAULT_GROUP%40%40crash")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	missing := 0
	for i := range acked {
		if !bytes.Contains(body, []byte(fmt.Sprintf(`"127.0.0.1:%d_`, 10000+i))) {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of %d acknowledged registrations lost after kill -9", missing, len(acked))
	}
	for i := range published {
		resp, err := http.Get(p2.base + "/v1/cs/configs?dataId=crash-" + strconv.Itoa(i) + "&group=DEFAULT_GROUP")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "v="+strconv.Itoa(i) {
			t.Errorf("acknowledged publish crash-%d after kill -9: %d %q", i, resp.StatusCode, b)
		}
	}
	t.Logf("%d acknowledged persistent registrations and %d acknowledged publishes all present after kill -9 and restart", len(acked), len(published))
}

// TestSIGTERMShutsDownGracefully checks the exit code and that data stays.
func TestSIGTERMShutsDownGracefully(t *testing.T) {
	testtier.Require(t, testtier.Process) // builds and runs the binary
	bin := filepath.Join(t.TempDir(), "nacosd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	p := startBinary(t, bin, t.TempDir(), freePort(t))
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.log.String())
		}
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("no exit 20 s after SIGTERM\n%s", p.log.String())
	}
	_ = os.Remove(bin)
}
