package config_test

import (
	"context"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/raftstore/raftstoretest"
	"github.com/nacosd/nacosd/server/config"
)

// TestRaftstoreRestart publishes through a real raftstore, closes it, opens
// the same directory again (log replay) and once more after a snapshot
// (restore), and finds every acknowledged write.
func TestRaftstoreRestart(t *testing.T) {
	log := raftstoretest.Logger(t)
	rc := raftstoretest.Config(t, t.TempDir())
	rc.DiskBuckets = config.DiskBuckets()
	open := func() (*config.Service, func()) {
		st := raftstoretest.Open(t, rc)
		cfg := config.DefaultConfig()
		cfg.Store, cfg.Clock, cfg.Logger = st, clock.Real{}, log
		s, err := config.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return s, func() {
			_ = s.Close()
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	ctx := context.Background()
	s, closeFn := open()
	const n = 50
	for i := range n {
		r := config.PublishRequest{DataID: "d" + compat.JavaURLEncode(string(rune('a'+i%26))) + itoa(i), Group: "G", Content: "v" + itoa(i), Type: "text"}
		if err := s.Publish(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Publish(ctx, config.PublishRequest{DataID: "beta", Group: "G", Content: "b", BetaIps: "1.1.1.1", Type: "text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateNamespace(ctx, "dev", "Dev", nil); err != nil {
		t.Fatal(err)
	}
	check := func(s *config.Service) {
		t.Helper()
		for i := range n {
			id := "d" + compat.JavaURLEncode(string(rune('a'+i%26))) + itoa(i)
			if got := s.Get(id, "G", "", "", "", ""); got.Content != "v"+itoa(i) || got.MD5 != config.MD5Hex("v"+itoa(i)) {
				t.Fatalf("%s after restart: %+v", id, got)
			}
		}
		if got := s.Get("beta", "G", "", "", "", "1.1.1.1"); !got.Beta {
			t.Fatalf("beta after restart: %+v", got)
		}
		if !s.NamespaceExists("dev") {
			t.Fatal("namespace lost")
		}
		if total, rows := s.HistoryPage("d"+compat.JavaURLEncode("a")+"0", "G", "", 1, 10); total != 1 || len(rows) != 1 || rows[0].Op != "I" {
			t.Fatalf("history after restart: %d %+v", total, rows)
		}
		if h := s.HistoryByNid(int64(n)); h == nil || h.Content != "v"+itoa(n-1) {
			t.Fatalf("history nid %d after restart: %+v", n, h)
		}
	}
	closeFn()
	s, closeFn = open()
	check(s)
	closeFn()
	st := raftstoretest.Open(t, rc)
	if err := st.Snapshot(); err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	s, closeFn = open()
	check(s)
	closeFn()
}

// TestHistoryOnDisk keeps history in raftstore's disk buckets: pages newest
// first, lookups by nid and by config id, and retention of old rows (with
// their nid index entries), on a real store and a fake clock.
func TestHistoryOnDisk(t *testing.T) {
	log := raftstoretest.Logger(t)
	rc := raftstoretest.Config(t, t.TempDir())
	rc.DiskBuckets = config.DiskBuckets()
	st := raftstoretest.Open(t, rc)
	clk := clocktest.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg := config.DefaultConfig()
	cfg.Store, cfg.Clock, cfg.Logger = st, clk, log
	s, err := config.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	pub := func(id, content string) {
		t.Helper()
		if err := s.Publish(ctx, config.PublishRequest{DataID: id, Group: "G", Content: content, Type: "text"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		pub("a", "v"+itoa(i))
		pub("a-other", "x") // a key sharing the prefix "a"
	}
	total, rows := s.HistoryPage("a", "G", "", 1, 10)
	if total != 30 || len(rows) != 10 || rows[0].Content != "v28" || rows[0].Op != "U" || rows[9].Content != "v19" {
		t.Fatalf("page 1: total %d, %d rows, first %+v", total, len(rows), rows[0])
	}
	for i := 1; i < len(rows); i++ {
		if rows[i-1].Nid <= rows[i].Nid {
			t.Fatalf("page 1 not newest first: %d then %d", rows[i-1].Nid, rows[i].Nid)
		}
	}
	if _, rows = s.HistoryPage("a", "G", "", 3, 10); len(rows) != 10 || rows[9].Op != "I" || rows[9].Content != "v0" {
		t.Fatalf("page 3: %+v", rows)
	}
	if total, rows = s.HistoryPage("a", "G", "", 4, 10); total != 30 || len(rows) != 0 {
		t.Fatalf("page 4: %d %d", total, len(rows))
	}
	_, newest := s.HistoryPage("a", "G", "", 1, 1)
	_, first := s.HistoryPage("a", "G", "", 3, 10)
	if h := s.HistoryByNid(first[9].Nid); h == nil || h.Content != "v0" {
		t.Fatalf("by nid: %+v", h)
	}
	if h := s.HistoryByNid(1 << 40); h != nil {
		t.Fatalf("unknown nid found: %+v", h)
	}
	if h := s.HistoryPrevious(newest[0].ID); h == nil || h.Content != "v28" { // U rows carry the config's id
		t.Fatalf("previous: %+v", h)
	}
	// retention: rows older than 30 days go, with their index entries
	clk.Advance(31 * 24 * time.Hour)
	pub("a", "new")
	s.RunRetention()
	total, rows = s.HistoryPage("a", "G", "", 1, 10)
	if total != 1 || rows[0].Content != "v29" {
		t.Fatalf("after retention: %d %+v", total, rows)
	}
	if h := s.HistoryByNid(first[9].Nid); h != nil {
		t.Fatalf("expired row still found by nid: %+v", h)
	}
	if n, m := st.Len(config.BucketHistory), st.Len(config.BucketHistoryNid); n != 1 || m != 1 {
		t.Fatalf("after retention: %d history rows, %d index entries", n, m)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
