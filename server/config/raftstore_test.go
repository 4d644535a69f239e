package config_test

import (
	"context"
	"testing"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/raftstore/raftstoretest"
	"github.com/nacosd/nacosd/server/config"
)

// TestRaftstoreRestart publishes through a real raftstore, closes it, opens
// the same directory again (log replay) and once more after a snapshot
// (restore), and finds every acknowledged write.
func TestRaftstoreRestart(t *testing.T) {
	log := raftstoretest.Logger(t)
	rc := raftstoretest.Config(t, t.TempDir())
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

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
