package raftstore

import (
	"context"
	"fmt"
	"github.com/nacosd/nacosd/internal/testlog"
	"log/slog"
	"testing"
	"time"
)

// testLogger returns a logger writing to t.Log. Call it before opening
// stores so its cleanup runs after theirs.
func testLogger(t testing.TB) *slog.Logger { return testlog.New(t) }

// testConfig is a one-node config with 50 ms timings in dir.
func testConfig(t testing.TB, log *slog.Logger, dir string) Config {
	cfg := DefaultConfig()
	cfg.Dir = dir
	cfg.NodeID = "node0"
	cfg.BindAddr = "127.0.0.1:0"
	cfg.Bootstrap = true
	cfg.HeartbeatTimeout = 50 * time.Millisecond
	cfg.ElectionTimeout = 50 * time.Millisecond
	cfg.LeaderLeaseTimeout = 50 * time.Millisecond
	cfg.CommitTimeout = 5 * time.Millisecond
	cfg.OpenTimeout = 10 * time.Second
	cfg.Logger = log
	return cfg
}

// mustOpen opens cfg and closes the store at cleanup.
func mustOpen(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open(%s): %v", cfg.Dir, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newTestStore opens a fresh one-node store in a temp dir.
func newTestStore(t testing.TB) (*Store, Config) {
	t.Helper()
	cfg := testConfig(t, testLogger(t), t.TempDir())
	return mustOpen(t, cfg), cfg
}

// eventually polls cond until it returns nil, failing with its last error.
func eventually(t testing.TB, d time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %v", d, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func put(bucket, key, value string) Op {
	return Op{Kind: OpPut, Bucket: bucket, Key: key, Value: []byte(value)}
}

func del(bucket, key string) Op { return Op{Kind: OpDelete, Bucket: bucket, Key: key} }

func mustApply(t testing.TB, s *Store, b Batch) uint64 {
	t.Helper()
	idx, err := s.Apply(context.Background(), b)
	if err != nil {
		t.Fatalf("Apply(%+v): %v", b, err)
	}
	return idx
}

// dump returns the whole state as bucket -> key -> "value@rev".
func dump(s *Store, buckets ...string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, b := range buckets {
		m := map[string]string{}
		s.Scan(b, "", func(k string, r Record) bool {
			m[k] = fmt.Sprintf("%s@%d", r.Value, r.Rev)
			return true
		})
		out[b] = m
	}
	return out
}

// fsmDump is dump for a bare fsm.
func fsmDump(f *fsm) map[string]map[string]string {
	out := map[string]map[string]string{}
	f.mu.RLock()
	defer f.mu.RUnlock()
	for b, m := range f.data {
		mm := map[string]string{}
		for k, r := range m {
			mm[k] = fmt.Sprintf("%s@%d", r.Value, r.Rev)
		}
		out[b] = mm
	}
	return out
}
