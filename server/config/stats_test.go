package config

import (
	"testing"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
)

func TestStats(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(t0)
	s := newTestService(t, newFakeStore(), clk)
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	pub(t, s, PublishRequest{DataID: "b", Group: "G", Content: "t", Tag: "blue"}) // tag-only item
	p := s.Listen(ListenRequest{Entries: []compat.ListenEntry{entry("a", "G", MD5Hex("v1"), "")}, IP: "10.0.0.1", Timeout: 30000})
	if st := s.Stats(); st != (Stats{Items: 2, Holders: 1}) {
		t.Fatalf("held: %+v", st)
	}
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v2"})
	if !done(p) {
		t.Fatal("not woken")
	}
	if st := s.Stats(); st != (Stats{Items: 2, Holders: 0, Wakeups: 1}) {
		t.Fatalf("after wake-up: %+v", st)
	}
}
