package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/leakcheck"

	"github.com/nacosd/nacosd/internal/testlog"
)

func testConfig(t *testing.T) Config {
	cfg := DefaultConfig()
	cfg.Host, cfg.Port, cfg.IP = "127.0.0.1", 0, "127.0.0.1"
	cfg.DataDir = t.TempDir()
	cfg.Push.ListenAddr = "127.0.0.1:0"
	cfg.FastRaft = true
	cfg.Naming.DisableHealthCheck = true
	cfg.Logger = testlog.New(t)
	return cfg
}

// TestDeadListenerStopsTheNode: the HTTP listener dying under a running
// node (it used to go unnoticed: the serve error was written to a channel
// nobody read) stops the whole node with that cause.
func TestDeadListenerStopsTheNode(t *testing.T) {
	defer leakcheck.VerifyNone(t, leakOptions(leakcheck.IgnoreCurrent())...)
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = s.ln.Close()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		s.Close()
		t.Fatal("node still running 10 s after its HTTP listener died")
	}
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "http listener") {
		t.Fatalf("Err() = %v, want the listener failure", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close after failure: %v", err)
	}
}

// TestStartHonoursContext: a cancelled context refuses to start, and the
// end of the context given to Start stops the node; either way nothing of
// the node keeps running.
func TestStartHonoursContext(t *testing.T) {
	defer leakcheck.VerifyNone(t, leakOptions(leakcheck.IgnoreCurrent())...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Fatal("Start with a cancelled context succeeded")
	}
	ctx, cancel = context.WithCancel(context.Background())
	s, err = New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-s.Done():
	case <-time.After(10 * time.Second):
		s.Close()
		t.Fatal("node still running 10 s after its context ended")
	}
	if err := s.Err(); err != nil {
		t.Fatalf("Err() = %v after a context stop, want nil", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// leakOptions are the goroutine-leak checks' exceptions: fasthttp's worker
// pool cleaner sleeps 10 s between checks of its stop channel, so it ends up
// to 10 s after the server stopped; fasthttp's Date header updater is one
// goroutine per process, started by the first server.
func leakOptions(more ...leakcheck.Option) []leakcheck.Option {
	return append(more,
		leakcheck.IgnoreFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
		leakcheck.IgnoreFunction("github.com/valyala/fasthttp.updateServerDate.func1"))
}
