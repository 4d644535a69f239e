package jepsen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
)

// TestJepsen runs the fault-injection checker (make jepsen): three nacosd
// processes, the nemesis and the workload for NACOSD_JEPSEN_DURATION
// (default 3m) with NACOSD_JEPSEN_SEED (default: random, printed), then
// every check. Needs root (iptables). The report, the saved run and the
// node logs go to NACOSD_JEPSEN_OUT (default /tmp/nacosd-jepsen-<seed>).
func TestJepsen(t *testing.T) {
	testtier.Require(t, testtier.Jepsen) // make jepsen
	cfg := DefaultConfig()
	if s := os.Getenv("NACOSD_JEPSEN_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("NACOSD_JEPSEN_SEED=%q: %v", s, err)
		}
		cfg.Seed = seed
	} else {
		cfg.Seed = rand.Uint64() % 1_000_000
	}
	if s := os.Getenv("NACOSD_JEPSEN_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("NACOSD_JEPSEN_DURATION=%q: %v", s, err)
		}
		cfg.Duration = d
	}
	if s := os.Getenv("NACOSD_JEPSEN_GRPC"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 100 {
			t.Fatalf("NACOSD_JEPSEN_GRPC=%q: a percent of sessions, 0-100", s)
		}
		cfg.GRPCShare = n
	}
	opt := DefaultOptions()
	if s := os.Getenv("NACOSD_JEPSEN_STALE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("NACOSD_JEPSEN_STALE=%q: %v", s, err)
		}
		opt.Stale = d
	}
	fmt.Printf("jepsen: seed %d, duration %v (reproduce: make jepsen SEED=%d DURATION=%v)\n", cfg.Seed, cfg.Duration, cfg.Seed, cfg.Duration)
	out := os.Getenv("NACOSD_JEPSEN_OUT")
	if out == "" {
		out = filepath.Join(os.TempDir(), "nacosd-jepsen-"+strconv.FormatUint(cfg.Seed, 10))
	}
	if err := os.RemoveAll(out); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Dir = out
	cfg.Bin = filepath.Join(out, "nacosd")
	// built in the product module (the repository root), whose go.sum
	// has the server's dependencies
	build := exec.Command("go", "build", "-o", cfg.Bin, "./server/cmd/nacosd")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		t.Fatalf("build nacosd: %v", err)
	}
	cfg.Logf = func(format string, args ...any) {
		fmt.Printf("jepsen: "+format+"\n", args...)
	}
	// Ctrl-C or SIGTERM end the run early; the nodes are killed and the
	// iptables rules removed on the way out
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	run, err := Execute(ctx, cfg)
	cancel() // from here on a signal stops the test as usual
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if err := run.Save(filepath.Join(out, "run.json")); err != nil {
		t.Error(err)
	}
	opt.Lin.VisualDir = out
	report(t, run, opt, out)
	if !t.Failed() {
		for i := range cfg.IPs {
			_ = os.RemoveAll(filepath.Join(out, "n"+strconv.Itoa(i+1), "data"))
		}
	}
}

// TestJepsenReplay checks a saved run again (NACOSD_JEPSEN_REPLAY=path of
// its run.json), without a cluster: to debug a check or to re-judge a run
// with other bounds (NACOSD_JEPSEN_STALE).
func TestJepsenReplay(t *testing.T) {
	path := os.Getenv("NACOSD_JEPSEN_REPLAY")
	if path == "" {
		t.Skip("set NACOSD_JEPSEN_REPLAY=<out>/run.json to check a saved run again")
	}
	run, err := LoadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	if s := os.Getenv("NACOSD_JEPSEN_STALE"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("NACOSD_JEPSEN_STALE=%q: %v", s, err)
		}
		opt.Stale = d
	}
	out := filepath.Dir(path)
	opt.Lin.VisualDir = out
	opt.Lin.Logf = func(format string, args ...any) { fmt.Printf("jepsen: "+format+"\n", args...) }
	report(t, run, opt, out)
}

func report(t *testing.T, run *Run, opt Options, out string) {
	if s := os.Getenv("NACOSD_JEPSEN_LIN_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("NACOSD_JEPSEN_LIN_TIMEOUT=%q: %v", s, err)
		}
		opt.Lin.Timeout = d
	}
	start := time.Now()
	rep := Check(run, opt)
	md := rep.Markdown()
	path := filepath.Join(out, "report.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Error(err)
	}
	fmt.Println(md)
	fmt.Printf("jepsen: checks took %v; report in %s\n", time.Since(start).Round(time.Millisecond), path)
	if rep.Failed() {
		t.Errorf("jepsen: seed %d: violations in checks %v (report: %s)", run.Seed, rep.FailedChecks(), path)
	}
}
