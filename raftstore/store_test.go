package raftstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestPutGetDeleteScan(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	if !s.IsLeader() {
		t.Fatal("one-node store is not leader after Open")
	}
	i1 := mustApply(t, s, Batch{Ops: []Op{put("svc", "ns@@a", "1"), put("svc", "ns@@b", "2"), put("svc", "other", "3"), put("cfg", "x", "4")}})
	r, ok := s.Get("svc", "ns@@a")
	if !ok || string(r.Value) != "1" || r.Rev != i1 {
		t.Fatalf("Get = %+v %v, want 1@%d", r, ok, i1)
	}
	if _, ok := s.Get("svc", "missing"); ok {
		t.Error("Get(missing) found")
	}
	if _, ok := s.Get("nobucket", "ns@@a"); ok {
		t.Error("Get(other bucket) found")
	}
	if n := s.Len("svc"); n != 3 {
		t.Errorf("Len(svc) = %d", n)
	}

	got := map[string]string{}
	s.Scan("svc", "ns@@", func(k string, r Record) bool { got[k] = string(r.Value); return true })
	if want := map[string]string{"ns@@a": "1", "ns@@b": "2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Scan(prefix) = %v, want %v", got, want)
	}
	calls := 0
	s.Scan("svc", "", func(string, Record) bool { calls++; return false })
	if calls != 1 {
		t.Errorf("Scan kept going after false: %d calls", calls)
	}
	// fn may write: Scan holds no lock while calling it.
	s.Scan("cfg", "", func(k string, r Record) bool {
		mustApply(t, s, Batch{Ops: []Op{put("cfg", k+"-copy", string(r.Value))}})
		return true
	})

	i2 := mustApply(t, s, Batch{Ops: []Op{del("svc", "ns@@a"), put("svc", "ns@@b", "22")}})
	if i2 <= i1 {
		t.Errorf("index %d not after %d", i2, i1)
	}
	want := map[string]map[string]string{
		"svc": {"ns@@b": fmt.Sprintf("22@%d", i2), "other": fmt.Sprintf("3@%d", i1)},
		"cfg": {"x": fmt.Sprintf("4@%d", i1), "x-copy": fmt.Sprintf("4@%d", i1+1)},
	}
	if got := dump(s, "svc", "cfg"); !reflect.DeepEqual(got, want) {
		t.Errorf("state = %v, want %v", got, want)
	}
}

func TestApplyCopiesValue(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	v := []byte("abc")
	mustApply(t, s, Batch{Ops: []Op{{Kind: OpPut, Bucket: "b", Key: "k", Value: v}}})
	v[0] = 'X'
	if r, _ := s.Get("b", "k"); string(r.Value) != "abc" {
		t.Errorf("stored value changed with the caller's slice: %q", r.Value)
	}
}

func TestApplyConds(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	ctx := context.Background()
	i1 := mustApply(t, s, Batch{Ops: []Op{put("b", "k", "1")}})

	var events []Event
	var mu sync.Mutex
	defer s.Watch(func(ev Event) { mu.Lock(); events = append(events, ev); mu.Unlock() })()

	before := dump(s, "b", "c")
	_, err := s.Apply(ctx, Batch{
		Conds: []Cond{{Kind: CondExists, Bucket: "b", Key: "k"}, {Kind: CondRev, Bucket: "b", Key: "k", Rev: i1 + 100}},
		Ops:   []Op{put("b", "k", "2"), put("c", "new", "x")},
	})
	var ce *CondError
	if !errors.Is(err, ErrCondFailed) || !errors.As(err, &ce) || ce.Index != 1 {
		t.Fatalf("Apply = %v, want CondError at 1", err)
	}
	if got := dump(s, "b", "c"); !reflect.DeepEqual(got, before) {
		t.Errorf("rejected batch changed state: %v", got)
	}
	_, err = s.Apply(ctx, Batch{Conds: []Cond{{Kind: CondAbsent, Bucket: "b", Key: "k"}}, Ops: []Op{put("b", "k", "x")}})
	if !errors.Is(err, ErrCondFailed) {
		t.Fatalf("CondAbsent on existing key: %v", err)
	}
	// Compare-and-set succeeds with the right rev, then the old rev fails.
	i2 := mustApply(t, s, Batch{Conds: []Cond{{Kind: CondRev, Bucket: "b", Key: "k", Rev: i1}}, Ops: []Op{put("b", "k", "2")}})
	if _, err := s.Apply(ctx, Batch{Conds: []Cond{{Kind: CondRev, Bucket: "b", Key: "k", Rev: i1}}, Ops: []Op{put("b", "k", "3")}}); !errors.Is(err, ErrCondFailed) {
		t.Fatalf("stale CAS: %v", err)
	}
	if r, _ := s.Get("b", "k"); string(r.Value) != "2" || r.Rev != i2 {
		t.Errorf("after CAS: %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 1 || events[0].Index != i2 {
		t.Errorf("events = %+v, want only the CAS at %d", events, i2)
	}
}

func TestApplyErrors(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	if _, err := s.Apply(context.Background(), Batch{Ops: []Op{{Kind: 9, Bucket: "b"}}}); !errors.Is(err, ErrInvalidBatch) {
		t.Errorf("bad kind: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Apply(ctx, Batch{Ops: []Op{put("b", "k", "v")}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: %v", err)
	}
	if _, ok := s.Get("b", "k"); ok {
		t.Error("write with a cancelled context was applied")
	}
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.Apply(ctx, Batch{Ops: []Op{put("b", "k", "v")}}); err != nil {
		t.Errorf("apply with deadline: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Apply(context.Background(), Batch{Ops: []Op{put("b", "k", "v")}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Apply after Close: %v", err)
	}
	if err := s.WaitApplied(context.Background(), 1<<60); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitApplied after Close: %v", err)
	}
	if err := s.WaitLeader(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
		t.Errorf("WaitLeader after Close: %v", err)
	}
	// Reads still work on the last state.
	if _, ok := s.Get("b", "k"); !ok {
		t.Error("Get after Close lost the state")
	}
}

func TestWatchOrder(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	var mu sync.Mutex
	var seen []uint64
	var visibleErr error
	cancel := s.Watch(func(ev Event) {
		// The change is visible to Get when the watcher runs.
		for _, op := range ev.Ops {
			r, ok := s.Get(op.Bucket, op.Key)
			if op.Kind == OpPut && (!ok || r.Rev < ev.Index) && visibleErr == nil {
				visibleErr = fmt.Errorf("event %d: %s not visible (%+v %v)", ev.Index, op.Key, r, ok)
			}
		}
		mu.Lock()
		seen = append(seen, ev.Index)
		mu.Unlock()
	})
	const writers, each = 4, 25
	var wg sync.WaitGroup
	acked := make(chan uint64, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				idx, err := s.Apply(context.Background(), Batch{Ops: []Op{put("b", fmt.Sprintf("w%d-%d", w, i), "v")}})
				if err != nil {
					t.Error(err)
					return
				}
				acked <- idx
			}
		})
	}
	wg.Wait()
	close(acked)
	cancel()
	mustApply(t, s, Batch{Ops: []Op{put("b", "after-cancel", "v")}})

	mu.Lock()
	defer mu.Unlock()
	if visibleErr != nil {
		t.Error(visibleErr)
	}
	if len(seen) != writers*each {
		t.Fatalf("saw %d events, want %d", len(seen), writers*each)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("events out of log order: %v", seen)
		}
	}
	for idx := range acked {
		if !containsIndex(seen, idx) {
			t.Errorf("acked index %d not seen by watcher", idx)
		}
	}
}

func containsIndex(xs []uint64, x uint64) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestWaitApplied(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	idx := mustApply(t, s, Batch{Ops: []Op{put("b", "k", "v")}})
	if err := s.WaitApplied(context.Background(), idx); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.WaitApplied(ctx, idx+1000); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitApplied(future) = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.WaitApplied(context.Background(), idx+1) }()
	next := mustApply(t, s, Batch{Ops: []Op{put("b", "k", "w")}})
	if next != idx+1 {
		t.Fatalf("next index %d, want %d", next, idx+1)
	}
	if err := <-done; err != nil {
		t.Errorf("WaitApplied(%d) = %v", idx+1, err)
	}
}

func TestLeaderInfoAndStats(t *testing.T) {
	t.Parallel()
	s, cfg := newTestStore(t)
	if err := s.WaitLeader(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.LeaderAddr() != s.Addr() || s.LeaderID() != cfg.NodeID {
		t.Errorf("leader %q/%q, want %q/%q", s.LeaderAddr(), s.LeaderID(), s.Addr(), cfg.NodeID)
	}
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") || strings.HasSuffix(s.Addr(), ":0") {
		t.Errorf("Addr = %q", s.Addr())
	}
	if err := s.VerifyLeader(); err != nil {
		t.Errorf("VerifyLeader = %v", err)
	}
	st := s.Stats()
	if st["state"] != "Leader" || st["fsm_applied_index"] == "" {
		t.Errorf("Stats = %v", st)
	}
	servers, err := s.Servers()
	if err != nil || len(servers) != 1 || servers[0].ID != cfg.NodeID || !servers[0].Voter {
		t.Errorf("Servers = %+v, %v", servers, err)
	}
}

func TestRestartKeepsWrites(t *testing.T) {
	t.Parallel()
	log := testLogger(t)
	cfg := testConfig(t, log, t.TempDir())
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i := range 50 {
		last = mustApply(t, s, Batch{Ops: []Op{put("b", fmt.Sprint(i), fmt.Sprint(i)), del("b", fmt.Sprint(i-10))}})
	}
	want := dump(s, "b")
	cfg.BindAddr = s.Addr() // same address, as a real restart
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := mustOpen(t, cfg)
	// Open returns with the log replayed: no waiting needed.
	if got := dump(s2, "b"); !reflect.DeepEqual(got, want) {
		t.Errorf("after restart: %v\nwant %v", got, want)
	}
	if s2.AppliedIndex() != last {
		t.Errorf("applied = %d, want %d", s2.AppliedIndex(), last)
	}
	idx := mustApply(t, s2, Batch{Ops: []Op{put("b", "new", "x")}})
	if idx <= last {
		t.Errorf("index after restart %d <= %d", idx, last)
	}
}

func TestRestartOnNewAddress(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, testLogger(t), t.TempDir())
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, Batch{Ops: []Op{put("b", "k", "v")}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := mustOpen(t, cfg) // 127.0.0.1:0 again: a different port
	if _, ok := s2.Get("b", "k"); !ok {
		t.Error("lost write")
	}
	mustApply(t, s2, Batch{Ops: []Op{put("b", "k2", "v")}})
}

func TestSnapshotRestart(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t, testLogger(t), t.TempDir())
	cfg.TrailingLogs = 5 // the snapshot must carry most of the state
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		mustApply(t, s, Batch{Ops: []Op{put(fmt.Sprintf("b%d", i%3), fmt.Sprint(i), strings.Repeat("x", i))}})
	}
	mustApply(t, s, Batch{Ops: []Op{del("b0", "0"), put("b1", "empty", "")}})
	if err := s.Snapshot(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	// Entries after the snapshot come from the log on restart.
	last := mustApply(t, s, Batch{Ops: []Op{put("b2", "after", "snap"), del("b1", "1")}})
	want := dump(s, "b0", "b1", "b2")
	cfg.BindAddr = s.Addr()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if snaps, _ := filepath.Glob(filepath.Join(cfg.Dir, "snapshots", "*", "state.bin")); len(snaps) != 1 {
		t.Fatalf("snapshot files: %v", snaps)
	}

	s2 := mustOpen(t, cfg)
	if got := dump(s2, "b0", "b1", "b2"); !reflect.DeepEqual(got, want) {
		t.Errorf("after restore: %v\nwant %v", got, want)
	}
	if s2.AppliedIndex() != last {
		t.Errorf("applied = %d, want %d", s2.AppliedIndex(), last)
	}
	if r, ok := s2.Get("b1", "empty"); !ok || len(r.Value) != 0 {
		t.Errorf("empty value: %+v %v", r, ok)
	}
}

func TestOpenFailures(t *testing.T) {
	// Not parallel: it counts goroutines.
	log := testLogger(t)
	base := runtime.NumGoroutine()

	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	freeDir := t.TempDir()

	tests := []struct {
		name string
		cfg  func() Config
		want string
	}{
		{"dir is a file", func() Config { return testConfig(t, log, file) }, "raftstore: create dir"},
		{"dir under a file", func() Config { return testConfig(t, log, filepath.Join(file, "sub")) }, "raftstore: create dir"},
		{"port in use", func() Config {
			c := testConfig(t, log, freeDir)
			c.BindAddr = busy.Addr().String()
			return c
		}, "raftstore: listen " + busy.Addr().String()},
		{"unresolvable bind", func() Config {
			c := testConfig(t, log, freeDir)
			c.BindAddr = "256.0.0.1:0"
			return c
		}, "raftstore: listen"},
		{"invalid config", func() Config {
			c := testConfig(t, log, freeDir)
			c.LeaderLeaseTimeout = time.Second
			return c
		}, "LeaderLeaseTimeout 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.cfg())
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
	// The failed opens released the bolt lock and the goroutines.
	s := mustOpen(t, testConfig(t, log, freeDir))
	mustApply(t, s, Batch{Ops: []Op{put("b", "k", "v")}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, func() error {
		if n := runtime.NumGoroutine(); n > base {
			return fmt.Errorf("%d goroutines, %d before", n, base)
		}
		return nil
	})
}

func TestOpenLockedDir(t *testing.T) {
	t.Parallel()
	s, cfg := newTestStore(t)
	_ = s
	_, err := Open(cfg)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || !strings.Contains(err.Error(), "already open in this process") {
		t.Fatalf("second Open on a used dir: %v", err)
	}
	// once the first store is closed the directory opens again
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, cfg)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := DefaultConfig()
	ok.Dir, ok.NodeID = "/tmp/x", "n"
	tests := []struct {
		name   string
		modify func(*Config)
		want   string // "" = valid
	}{
		{"default", func(*Config) {}, ""},
		{"no dir", func(c *Config) { c.Dir = "" }, "Dir must be set"},
		{"no id", func(c *Config) { c.NodeID = "" }, "NodeID must be set"},
		{"bad bind", func(c *Config) { c.BindAddr = "nope" }, `BindAddr "nope"`},
		{"bad advertise", func(c *Config) { c.AdvertiseAddr = "0.0.0.0:7848" }, `AdvertiseAddr "0.0.0.0:7848"`},
		{"bind all without advertise", func(c *Config) { c.BindAddr = "0.0.0.0:7848" }, `BindAddr "0.0.0.0:7848" binds all interfaces`},
		{"bind all, empty host", func(c *Config) { c.BindAddr = ":7848" }, `BindAddr ":7848" binds all interfaces`},
		{"bind all with advertise", func(c *Config) { c.BindAddr = ":7848"; c.AdvertiseAddr = "10.0.0.1:7848" }, ""},
		{"advertise ok", func(c *Config) { c.AdvertiseAddr = "10.0.0.1:7848" }, ""},
		{"negative", func(c *Config) { c.ApplyTimeout = -1 }, "ApplyTimeout -1ns must not be negative"},
		{"election < heartbeat", func(c *Config) { c.HeartbeatTimeout = time.Second; c.ElectionTimeout = 50 * time.Millisecond }, "ElectionTimeout 50ms must be at least HeartbeatTimeout 1s"},
		{"lease > heartbeat", func(c *Config) { c.HeartbeatTimeout = 50 * time.Millisecond; c.LeaderLeaseTimeout = time.Second }, "LeaderLeaseTimeout 1s"},
		{"short heartbeat keeps lease valid", func(c *Config) { c.HeartbeatTimeout = 50 * time.Millisecond; c.ElectionTimeout = 50 * time.Millisecond }, ""},
		{"commit", func(c *Config) { c.CommitTimeout = time.Microsecond }, "CommitTimeout 1µs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.modify(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestNoPipelinedReplication: the transport replicates synchronously. With
// raft's pipelining a follower answering Success=false can leave the
// leader's pipeline parked for good (replication to that follower stops
// while its heartbeats go on; the leader's shutdown hangs: hashicorp/raft#612).
func TestNoPipelinedReplication(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t)
	p, err := s.trans.AppendEntriesPipeline("other", "127.0.0.1:1")
	if !errors.Is(err, raft.ErrPipelineReplicationNotSupported) {
		if p != nil {
			_ = p.Close()
		}
		t.Fatalf("AppendEntriesPipeline: %v, want ErrPipelineReplicationNotSupported", err)
	}
}
