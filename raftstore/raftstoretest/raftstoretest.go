// Package raftstoretest opens real one-node raftstore stores for tests of
// the packages built on raftstore: bolt in t.TempDir(), raft on
// 127.0.0.1:0, 50 ms timings, logs routed to t.Log.
package raftstoretest

import (
	"github.com/nacosd/nacosd/internal/testlog"
	"log/slog"
	"testing"
	"time"

	"github.com/nacosd/nacosd/raftstore"
)

// New opens a fresh one-node store in a temporary directory. It is the
// leader when New returns and is closed when the test ends.
func New(t testing.TB) *raftstore.Store {
	t.Helper()
	return Open(t, Config(t, t.TempDir()))
}

// Config returns a one-node, bootstrapping config for dir with test
// timings and a logger writing to t.Log.
func Config(t testing.TB, dir string) raftstore.Config {
	t.Helper()
	cfg := raftstore.DefaultConfig()
	cfg.Dir = dir
	cfg.NodeID = "node0"
	cfg.BindAddr = "127.0.0.1:0"
	cfg.Bootstrap = true
	cfg.HeartbeatTimeout = 50 * time.Millisecond
	cfg.ElectionTimeout = 50 * time.Millisecond
	cfg.LeaderLeaseTimeout = 50 * time.Millisecond
	cfg.CommitTimeout = 5 * time.Millisecond
	cfg.OpenTimeout = 10 * time.Second
	cfg.Logger = Logger(t)
	return cfg
}

// Open opens cfg, failing the test on error, and closes the store when the
// test ends (Close is idempotent, so a test may also Close it and Open the
// same Config again to simulate a restart).
func Open(t testing.TB, cfg raftstore.Config) *raftstore.Store {
	t.Helper()
	s, err := raftstore.Open(cfg)
	if err != nil {
		t.Fatalf("raftstoretest: open %s: %v", cfg.Dir, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Logger returns a debug-level logger that writes to t.Log until the test
// ends and drops lines after that (raft goroutines may log while shutting
// down, and t.Log after the test panics). Create it before anything whose
// cleanup must run while it still logs.
func Logger(t testing.TB) *slog.Logger { return testlog.New(t) }
