package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
)

var t0 = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestService(t *testing.T, st Store, clk *clocktest.Fake) *Service {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Store, cfg.Clock, cfg.Logger = st, clk, slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func pub(t *testing.T, s *Service, r PublishRequest) {
	t.Helper()
	if r.Type == "" {
		r.Type = "text"
	}
	if err := s.CheckPublish(&r); err != nil {
		t.Fatalf("check %+v: %v", r, err)
	}
	if err := s.Publish(context.Background(), r); err != nil {
		t.Fatalf("publish %+v: %v", r, err)
	}
}

func entry(dataID, group, md5, tenant string) compat.ListenEntry {
	return compat.ListenEntry{DataID: dataID, Group: group, MD5: md5, Tenant: tenant}
}

func done(p *Poll) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

func TestValidateConfig(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mut  func(*Config)
		want string
	}{
		{func(c *Config) { c.Store = nil }, "config: Config.Store is nil"},
		{func(c *Config) { c.WorkerID = 1024 }, "config: WorkerID must be 0..1023, got 1024"},
		{func(c *Config) { c.MaxContent = -1 }, "config: MaxContent must be >= 0, got -1"},
	} {
		cfg := DefaultConfig()
		cfg.Store = newFakeStore()
		c.mut(&cfg)
		if err := cfg.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("Validate = %v, want %q", err, c.want)
		}
	}
}

// TestRebuildFromStore restarts the service on the same store: contents,
// MD5s, variants, namespaces and the history counter come back.
func TestRebuildFromStore(t *testing.T) {
	t.Parallel()
	st := newFakeStore()
	clk := clocktest.New(t0)
	s1 := newTestService(t, st, clk)
	pub(t, s1, PublishRequest{DataID: "a", Group: "G", Content: "v1", Type: "yaml"})
	pub(t, s1, PublishRequest{DataID: "a", Group: "G", Content: "v2", Type: "yaml"})
	pub(t, s1, PublishRequest{DataID: "a", Group: "G", Content: "beta", BetaIps: "1.1.1.1"})
	pub(t, s1, PublishRequest{DataID: "a", Group: "G", Content: "tag", Tag: "t1"})
	pub(t, s1, PublishRequest{DataID: "b", Group: "G", Tenant: "dev", Content: "b"})
	if ok, err := s1.CreateNamespace(context.Background(), "dev", "Dev", nil); err != nil || !ok {
		t.Fatal(ok, err)
	}
	id := s1.Info("a", "G", "").ID
	_ = s1.Close()

	s2 := newTestService(t, st, clk)
	if got := s2.Get("a", "G", "", "", "", "9.9.9.9"); got.Content != "v2" || got.Type != "yaml" || got.MD5 != MD5Hex("v2") {
		t.Fatalf("main after restart %+v", got)
	}
	if got := s2.Get("a", "G", "", "", "", "1.1.1.1"); got.Content != "beta" || !got.Beta {
		t.Fatalf("beta after restart %+v", got)
	}
	if got := s2.MD5(compat.GroupKey("a", "G", ""), "2.2.2.2", "t1"); got != MD5Hex("tag") {
		t.Fatalf("tag md5 after restart %q", got)
	}
	if in := s2.InfoByID(id); in == nil || in.DataID != "a" {
		t.Fatalf("id index after restart: %+v", in)
	}
	if !s2.NamespaceExists("dev") || s2.CountTenant("dev") != 1 {
		t.Fatal("namespace after restart")
	}
	pub(t, s2, PublishRequest{DataID: "a", Group: "G", Content: "v3"})
	total, rows := s2.HistoryPage("a", "G", "", 1, 10)
	if total != 3 || rows[0].Nid != 4 || rows[0].Op != "U" || rows[0].Content != "v2" || rows[2].Op != "I" {
		t.Fatalf("history after restart: %d %+v", total, rows[0])
	}
}

func TestLongPollWakeRules(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(t0)
	s := newTestService(t, newFakeStore(), clk)
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	m1 := MD5Hex("v1")
	listen := func(ip string, entries ...compat.ListenEntry) *Poll {
		return s.Listen(ListenRequest{Entries: entries, IP: ip, Timeout: 30000})
	}

	// Up to date → held; tag publish wakes every holder of the key.
	p1 := listen("10.0.0.1", entry("a", "G", m1, ""), entry("other", "G", "", ""))
	p2 := listen("10.0.0.2", entry("a", "G", m1, ""))
	if done(p1) || done(p2) || s.Holders() != 2 {
		t.Fatal("up-to-date polls answered")
	}
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "t", Tag: "blue"})
	for _, p := range []*Poll{p1, p2} {
		if !done(p) || len(p.Result()) != 1 || p.Result()[0] != (compat.ChangedKey{DataID: "a", Group: "G"}) {
			t.Fatalf("tag publish: %v %v", done(p), p.Result())
		}
	}
	if s.Holders() != 0 {
		t.Fatalf("holders %d", s.Holders())
	}

	// Beta publish and stop wake only the listed IPs.
	p1 = listen("10.0.0.1", entry("a", "G", m1, ""))
	p2 = listen("10.0.0.2", entry("a", "G", m1, ""))
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "b", BetaIps: "10.0.0.1"})
	if !done(p1) || done(p2) {
		t.Fatalf("beta publish woke p1=%v p2=%v", done(p1), done(p2))
	}
	p1 = listen("10.0.0.1", entry("a", "G", MD5Hex("b"), ""))
	if done(p1) {
		t.Fatal("beta client with beta md5 answered")
	}
	if err := s.StopBeta(context.Background(), "a", "G", ""); err != nil {
		t.Fatal(err)
	}
	if !done(p1) || done(p2) {
		t.Fatalf("stop beta woke p1=%v p2=%v", done(p1), done(p2))
	}

	// Republishing the same content wakes nobody; a delete wakes.
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	if done(p2) {
		t.Fatal("identical republish woke a holder")
	}
	if err := s.Delete(context.Background(), DeleteRequest{DataID: "a", Group: "G"}); err != nil {
		t.Fatal(err)
	}
	if !done(p2) {
		t.Fatal("delete did not wake")
	}

	// Hold time: max(10 s, timeout - 500 ms).
	p3 := s.Listen(ListenRequest{Entries: []compat.ListenEntry{entry("a", "G", "", "")}, IP: "x", Timeout: 5000})
	clk.Advance(9999 * time.Millisecond)
	if done(p3) {
		t.Fatal("released before 10 s")
	}
	clk.Advance(time.Millisecond)
	if !done(p3) || p3.Result() != nil {
		t.Fatal("not released at 10 s")
	}
	if clk.Pending() != 1 { // only the retention timer is left
		t.Fatalf("pending timers %d", clk.Pending())
	}

	// Several stale keys are answered at once in Java HashMap order.
	p4 := listen("x", entry("a", "G", "stale", ""), entry("b", "G", "stale", "ns"), entry("c", "G", "", ""))
	got := p4.Result()
	want := compat.ListenOrder([]string{"a+G", "b+G+ns"})
	if len(got) != 2 || compat.GroupKey(got[0].DataID, got[0].Group, got[0].Tenant) != want[0] {
		t.Fatalf("immediate answer %v, want order %v", got, want)
	}

	// No-hangup answers at once with nothing.
	p5 := s.Listen(ListenRequest{Entries: []compat.ListenEntry{entry("c", "G", "", "")}, IP: "x", Timeout: 30000, NoHangup: true})
	if !done(p5) || p5.Result() != nil {
		t.Fatal("no-hangup")
	}
}

// TestResetReloads replaces the store state (snapshot restore): the cache
// follows and holders whose MD5 changed are answered.
func TestResetReloads(t *testing.T) {
	t.Parallel()
	st := newFakeStore()
	s := newTestService(t, st, clocktest.New(t0))
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	snap := st.snapshot()
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v2"})
	pub(t, s, PublishRequest{DataID: "b", Group: "G", Content: "b"})
	pa := s.Listen(ListenRequest{Entries: []compat.ListenEntry{entry("a", "G", MD5Hex("v2"), "")}, IP: "x", Timeout: 30000})
	pc := s.Listen(ListenRequest{Entries: []compat.ListenEntry{entry("c", "G", "", "")}, IP: "x", Timeout: 30000})
	st.reset(snap)
	if got := s.Get("a", "G", "", "", "", ""); got.Content != "v1" {
		t.Fatalf("after reset %+v", got)
	}
	if s.Exists("b", "G", "") {
		t.Fatal("b survived the reset")
	}
	if !done(pa) || len(pa.Result()) != 1 {
		t.Fatal("holder of a changed key not answered after reset")
	}
	if done(pc) {
		t.Fatal("holder of an unchanged key answered after reset")
	}
}

func TestConcurrentPublishSameKey(t *testing.T) {
	t.Parallel()
	s := newTestService(t, newFakeStore(), clocktest.New(t0))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				pub(t, s, PublishRequest{DataID: "race", Group: "G", Content: fmt.Sprintf("g%d-%d", g, i)})
			}
		}()
	}
	wg.Wait()
	total, rows := s.HistoryPage("race", "G", "", 1, 500)
	if total != 160 {
		t.Fatalf("history rows %d", total)
	}
	inserts := 0
	for _, r := range rows {
		if r.Op == "I" {
			inserts++
		}
	}
	if inserts != 1 {
		t.Fatalf("%d insert rows", inserts)
	}
}

func TestFailedApplyChangesNothing(t *testing.T) {
	t.Parallel()
	st := newFakeStore()
	s := newTestService(t, st, clocktest.New(t0))
	boom := errors.New("disk on fire")
	st.failNext = boom
	err := s.Publish(context.Background(), PublishRequest{DataID: "a", Group: "G", Content: "v", Type: "text"})
	if !errors.Is(err, boom) {
		t.Fatalf("publish err %v", err)
	}
	if s.Exists("a", "G", "") {
		t.Fatal("failed publish visible")
	}
}

func TestHistoryRetention(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(t0)
	s := newTestService(t, newFakeStore(), clk)
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	clk.Advance(20 * 24 * time.Hour)
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v2"})
	clk.Advance(11 * 24 * time.Hour) // the periodic sweep ran on the fake clock
	total, rows := s.HistoryPage("a", "G", "", 1, 10)
	if total != 1 || rows[0].Op != "U" {
		t.Fatalf("after retention: %d %+v", total, rows)
	}
}

func TestLikeMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"%abc%", "xabcx", true}, {"abc", "abc", true}, {"abc", "abcd", false}, {"a_c", "abc", true},
		{"a_c", "ac", false}, {"%", "", true}, {"", "", true}, {"", "a", false}, {"a%b%c", "aXbYc", true}, {"a%b", "ab", true},
		{"%b", "abc", false}, {"中_", "中文", true},
	} {
		if got := likeMatch(c.p, c.s); got != c.ok {
			t.Errorf("likeMatch(%q, %q) = %v", c.p, c.s, got)
		}
	}
}

func TestSwitches(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(t0)
	s := newTestService(t, newFakeStore(), clk)
	if got := s.HoldTimeout(30000); got != 29500*time.Millisecond {
		t.Fatalf("default hold %s", got)
	}
	pub(t, s, PublishRequest{DataID: SwitchDataID, Group: "DEFAULT_GROUP", Content: "# c\nfixedDelayTime = 2000\nbad=line=x\n"})
	if got := s.HoldTimeout(30000); got != 28*time.Second {
		t.Fatalf("hold with fixedDelayTime %s", got)
	}
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	pub(t, s, PublishRequest{DataID: SwitchDataID, Group: "DEFAULT_GROUP", Content: "isFixedPolling=true\nfixedPollingInertval=15000"})
	p := s.Listen(ListenRequest{Entries: []compat.ListenEntry{entry("a", "G", "stale", "")}, IP: "x", Timeout: 30000})
	if done(p) {
		t.Fatal("fixed polling answered at once")
	}
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v2"})
	if done(p) {
		t.Fatal("fixed polling woken by a change")
	}
	clk.Advance(15 * time.Second)
	if !done(p) || len(p.Result()) != 1 || p.Result()[0].DataID != "a" {
		t.Fatalf("fixed polling result %v %v", done(p), p.Result())
	}
	if err := s.Delete(context.Background(), DeleteRequest{DataID: SwitchDataID, Group: "DEFAULT_GROUP"}); err != nil {
		t.Fatal(err)
	}
	if got := s.HoldTimeout(30000); got != 29500*time.Millisecond {
		t.Fatalf("hold after switch delete %s", got)
	}
}

func TestAggrWhitelist(t *testing.T) {
	t.Parallel()
	s := newTestService(t, newFakeStore(), clocktest.New(t0))
	pub(t, s, PublishRequest{DataID: AggrDataID, Group: "DEFAULT_GROUP", Content: "# c\nagg.*\nx?y"})
	for id, aggr := range map[string]bool{"agg.1": true, "aggx": false, "xzy": true, "xy": false, "b": false} {
		r := PublishRequest{DataID: id, Group: "G", Content: "c", Type: "text"}
		err := s.CheckPublish(&r)
		var ce *compat.Error
		if aggr != (err != nil) || aggr && (!errors.As(err, &ce) || ce.Body != "caused: dataId:"+id+" is aggr;" || ce.Status != 500) {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// BenchmarkWake10k measures, in the domain only, the time from a committed
// publish to 10 000 answered holders of the changed key.
func BenchmarkWake10k(b *testing.B) {
	s := newBenchService(b)
	ctx := context.Background()
	for i := range b.N {
		content := fmt.Sprintf("v%d", i)
		polls := make([]*Poll, 10000)
		old := s.MD5(compat.GroupKey("hot", "G", ""), "", "")
		for j := range polls {
			polls[j] = s.Listen(ListenRequest{Entries: []compat.ListenEntry{entry("hot", "G", old, "")}, IP: "10.0.0.1", Timeout: 30000})
		}
		b.StartTimer()
		if err := s.Publish(ctx, PublishRequest{DataID: "hot", Group: "G", Content: content, Type: "text"}); err != nil {
			b.Fatal(err)
		}
		for _, p := range polls {
			<-p.Done()
		}
		b.StopTimer()
	}
}

func newBenchService(b *testing.B) *Service {
	cfg := DefaultConfig()
	// The real clock: clocktest.Fake's Stop is linear in pending timers.
	cfg.Store, cfg.Clock, cfg.Logger = newFakeStore(), clock.Real{}, slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	b.StopTimer()
	return s
}

func TestHistoryPrevious(t *testing.T) {
	t.Parallel()
	s := newTestService(t, newFakeStore(), clocktest.New(t0))
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	id := s.Info("a", "G", "").ID
	if h := s.HistoryPrevious(id); h != nil {
		t.Fatalf("previous of a new config: %+v", h)
	}
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v2"})
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v3"})
	if h := s.HistoryPrevious(id); h == nil || h.Content != "v2" || h.Op != "U" {
		t.Fatalf("previous: %+v", h)
	}
	if err := s.Delete(context.Background(), DeleteRequest{DataID: "a", Group: "G"}); err != nil {
		t.Fatal(err)
	}
	if h := s.HistoryPrevious(id); h == nil || h.Content != "v3" || h.Op != "D" {
		t.Fatalf("previous after delete: %+v", h)
	}
	if h := s.HistoryByNid(2); h == nil || h.Content != "v1" {
		t.Fatalf("by nid: %+v", h)
	}
}

func TestCloseReleasesHolders(t *testing.T) {
	t.Parallel()
	s := newTestService(t, newFakeStore(), clocktest.New(t0))
	p := s.Listen(ListenRequest{Entries: []compat.ListenEntry{entry("a", "G", "", "")}, IP: "x", Timeout: 30000})
	if done(p) {
		t.Fatal("answered at once")
	}
	_ = s.Close()
	if !done(p) || p.Result() != nil {
		t.Fatal("Close did not release the holder")
	}
	if p2 := s.Listen(ListenRequest{Entries: []compat.ListenEntry{entry("a", "G", "", "")}, IP: "x", Timeout: 30000}); !done(p2) {
		t.Fatal("poll after Close held")
	}
}

func TestLastModifiedMovesWithMD5(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(t0)
	s := newTestService(t, newFakeStore(), clk)
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	clk.Advance(time.Hour)
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v1"})
	if got := s.Get("a", "G", "", "", "", "").Modified; got != t0.UnixMilli() {
		t.Fatalf("identical republish moved Last-Modified to %d", got)
	}
	pub(t, s, PublishRequest{DataID: "a", Group: "G", Content: "v2"})
	if got := s.Get("a", "G", "", "", "", "").Modified; got != t0.Add(time.Hour).UnixMilli() {
		t.Fatalf("Last-Modified after change %d", got)
	}
}
