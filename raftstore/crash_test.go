package raftstore

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
)

const crashDirEnv = "RAFTSTORE_CRASH_DIR"

// TestHelperProcess is not a test: TestCrashKeepsAckedWrites re-executes
// the test binary to run it as a child that writes until it is killed.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("helper process for TestCrashKeepsAckedWrites")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := crashConfig(testConfig(t, log, dir))
	s, err := Open(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		t.FailNow()
	}
	deadline := time.Now().Add(30 * time.Second) // the parent should kill us long before
	for i := 0; time.Now().Before(deadline); i++ {
		key := strconv.Itoa(i)
		idx, err := s.Apply(context.Background(), Batch{
			Conds: []Cond{{Kind: CondAbsent, Bucket: "crash", Key: key}},
			Ops:   []Op{put("crash", key, "v"+key), put("last", "", key), put("hist", key, "h"+key)},
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "apply:", err)
			t.FailNow()
		}
		// One write(2) per ack: the line is out of the process once Apply
		// has returned.
		if _, err := fmt.Fprintf(os.Stdout, "ACK %d %d\n", i, idx); err != nil {
			t.FailNow()
		}
	}
	_ = s.Close()
}

// crashConfig snapshots often so the kill can land during a snapshot or a
// log compaction too.
func crashConfig(cfg Config) Config {
	cfg.SnapshotThreshold = 64
	cfg.SnapshotInterval = 20 * time.Millisecond
	cfg.TrailingLogs = 16
	cfg.DiskBuckets = []string{"hist"}
	return cfg
}

func TestCrashKeepsAckedWrites(t *testing.T) {
	testtier.Require(t, testtier.Process) // spawns a child process
	t.Parallel()
	dir := t.TempDir()
	for round, killAfter := range []int{150, 400} {
		acked := runAndKill(t, dir, killAfter)
		if len(acked) < killAfter {
			t.Fatalf("round %d: child acked only %d writes", round, len(acked))
		}
		s, err := Open(crashConfig(testConfig(t, testLogger(t), dir)))
		if err != nil {
			t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
		}
		for key, idx := range acked {
			r, ok := s.Get("crash", key)
			if !ok || string(r.Value) != "v"+key || r.Rev != idx {
				t.Errorf("round %d: acked write %s@%d: got %+v %v", round, key, idx, r, ok)
			}
			if h, ok := s.Get("hist", key); !ok || string(h.Value) != "h"+key || h.Rev != idx {
				t.Errorf("round %d: acked disk-bucket write %s@%d: got %+v %v", round, key, idx, h, ok)
			}
		}
		// Writes are sequential: the state holds a prefix 0..n-1 with no gaps.
		n := s.Len("crash")
		for i := range n {
			if _, ok := s.Get("crash", strconv.Itoa(i)); !ok {
				t.Errorf("round %d: gap at %d of %d", round, i, n)
				break
			}
		}
		if h := s.Len("hist"); h != n {
			t.Errorf("round %d: %d disk-bucket records, want %d", round, h, n)
		}
		if last, _ := s.Get("last", ""); string(last.Value) != strconv.Itoa(n-1) {
			t.Errorf("round %d: last = %q, want %d", round, last.Value, n-1)
		}
		t.Logf("round %d: %d acked, %d present after crash", round, len(acked), n)
		// The next round's child appends after these keys: clear them.
		var ops []Op
		s.Scan("crash", "", func(k string, _ Record) bool { ops = append(ops, del("crash", k), del("hist", k)); return true })
		mustApply(t, s, Batch{Ops: ops})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// runAndKill runs the helper child on dir, SIGKILLs it after killAfter
// acks, and returns every acked key with its index.
func runAndKill(t *testing.T, dir string, killAfter int) map[string]uint64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]uint64{}
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "ACK" {
			continue
		}
		idx, err := strconv.ParseUint(f[2], 10, 64)
		if err != nil {
			t.Fatalf("bad ack line %q", sc.Text())
		}
		acked[f[1]] = idx
		if !killed && len(acked) >= killAfter {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child exited before %d acks (%d): %v\n%s", killAfter, len(acked), err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("child stderr:\n%s", stderr.String())
	}
	return acked
}
