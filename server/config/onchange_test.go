package config

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
)

// TestOnChangeFollowsLongPollWakeRules: the 2.x push hook hears exactly the
// changes that wake a 1.x long poll (a changed MD5 of main, tag or beta, a
// beta IP change, removals), not a republish of the same content, and ""
// after a snapshot restore.
func TestOnChangeFollowsLongPollWakeRules(t *testing.T) {
	t.Parallel()
	st := newFakeStore()
	s := newTestService(t, st, clocktest.New(t0))
	var mu sync.Mutex
	var got []string
	cancel := s.OnChange(func(gk string) { mu.Lock(); got = append(got, gk); mu.Unlock() })
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = nil
		return out
	}
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	if g := take(); len(g) != 1 || g[0] != "a+G" {
		t.Fatalf("publish: %v", g)
	}
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	if g := take(); len(g) != 0 {
		t.Fatalf("the same content again: %v", g)
	}
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "beta", BetaIps: "1.1.1.1"})
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "beta", BetaIps: "1.1.1.1,2.2.2.2"})
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Tenant: "ns", Content: "tagged", Tag: "t"})
	if g := take(); len(g) != 3 || g[2] != "a+G+ns" {
		t.Fatalf("beta, beta IPs, tag: %v", g)
	}
	snap := st.snapshot()
	if err := s.Delete(context.Background(), DeleteRequest{DataID: "a", Group: "G"}); err != nil {
		t.Fatal(err)
	}
	if g := take(); len(g) != 1 || g[0] != "a+G" {
		t.Fatalf("delete: %v", g)
	}
	st.reset(snap)
	if g := take(); len(g) != 1 || g[0] != "" {
		t.Fatalf("restore: %v", g)
	}
	cancel()
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v9"})
	if g := take(); len(g) != 0 {
		t.Fatalf("after cancel: %v", g)
	}
}

// TestPublishCas: a conditional publish writes when the stored MD5 (of the
// main config, or of the beta or tag variant it writes) is the given one or
// nothing is stored, and otherwise changes nothing and says so.
func TestPublishCas(t *testing.T) {
	t.Parallel()
	s := newTestService(t, newFakeStore(), clocktest.New(t0))
	ctx := context.Background()
	if err := s.Publish(ctx, PublishRequest{DataID: "c", Group: "G", Content: "one", Type: "text", CasMD5: "anything"}); err != nil {
		t.Fatalf("cas on an absent config: %v", err)
	}
	if err := s.Publish(ctx, PublishRequest{DataID: "c", Group: "G", Content: "two", Type: "text", CasMD5: MD5Hex("other")}); !errors.Is(err, ErrCasMismatch) {
		t.Fatalf("cas with a wrong md5: %v", err)
	}
	if got := s.Get("c", "G", "", "", "", ""); got.Content != "one" {
		t.Fatalf("a refused cas wrote: %q", got.Content)
	}
	if err := s.Publish(ctx, PublishRequest{DataID: "c", Group: "G", Content: "two", Type: "text", CasMD5: MD5Hex("one")}); err != nil {
		t.Fatalf("cas with the right md5: %v", err)
	}
	for _, v := range []PublishRequest{{BetaIps: "1.1.1.1"}, {Tag: "t"}} {
		v.DataID, v.Group, v.Type = "c", "G", "text"
		v.Content = "g1"
		if err := s.Publish(ctx, v); err != nil {
			t.Fatal(err)
		}
		v.Content, v.CasMD5 = "g2", MD5Hex("two") // the main config's md5, not the variant's
		if err := s.Publish(ctx, v); !errors.Is(err, ErrCasMismatch) {
			t.Fatalf("%+v: cas against the main md5: %v", v, err)
		}
		v.CasMD5 = MD5Hex("g1")
		if err := s.Publish(ctx, v); err != nil {
			t.Fatalf("%+v: cas against the variant's md5: %v", v, err)
		}
	}
}
