package distro

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/internal/testlog"
)

// fakeStore is an in-memory ephemeral store.
type fakeStore struct {
	mu      sync.Mutex
	data    map[string][]compat.DistroInstance
	removed []string
	health  map[string]map[string]bool
	sums    map[string]string           // service checksums by ns##svc
	beats   map[string]map[string]int64 // last beats by ns##svc
}

func newFakeStore() *fakeStore {
	return &fakeStore{data: map[string][]compat.DistroInstance{}, health: map[string]map[string]bool{}, sums: map[string]string{}}
}

func (f *fakeStore) Keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.data {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (f *fakeStore) Datum(key string) (compat.Datum, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.data[key]
	return compat.Datum{Key: key, Instances: l, Timestamp: 1}, ok
}

func (f *fakeStore) Checksum(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.data[key]
	return compat.InstancesChecksum(l), ok
}

func (f *fakeStore) Apply(key string, list []compat.DistroInstance) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data[key] = list
	return nil
}

func (f *fakeStore) Remove(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.data, key)
	f.removed = append(f.removed, key)
}

func (f *fakeStore) ServiceChecksums(owned func(string) bool) map[string]map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]map[string]string{}
	for k, v := range f.sums {
		ns, svc, _ := strings.Cut(k, "##")
		if owned(svc) {
			if out[ns] == nil {
				out[ns] = map[string]string{}
			}
			out[ns][svc] = v
		}
	}
	return out
}

func (f *fakeStore) ServiceChecksum(ns, svc string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.sums[ns+"##"+svc]
	return v, ok
}

func (f *fakeStore) BeatTimes(owned func(string) bool, since int64, all bool) []ServiceBeats {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ServiceBeats
	for k, b := range f.beats {
		ns, svc, _ := strings.Cut(k, "##")
		if !owned(svc) {
			continue
		}
		sb := ServiceBeats{NamespaceID: ns, Service: svc, Beats: map[string]int64{}}
		for dk, at := range b {
			if at > since {
				sb.Beats[dk] = at
			}
		}
		if len(sb.Beats) > 0 || all {
			out = append(out, sb)
		}
	}
	return out
}

func (f *fakeStore) ApplyBeatTimes(ns, svc string, beats map[string]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.beats == nil {
		f.beats = map[string]map[string]int64{}
	}
	m := f.beats[ns+"##"+svc]
	if m == nil {
		m = map[string]int64{}
		f.beats[ns+"##"+svc] = m
	}
	for k, v := range beats {
		m[k] = v
	}
}

func (f *fakeStore) ApplyHealth(ns, svc string, h map[string]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.health[ns+"##"+svc] = h
}

type fakeMembers struct {
	self    string
	healthy []string
	all     []string
	java    []string // members that run Java
}

func (m *fakeMembers) IsNacosd(a string) bool {
	return slices.Contains(m.all, a) && !slices.Contains(m.java, a)
}

func (m *fakeMembers) SelfAddress() string { return m.self }
func (m *fakeMembers) Healthy() []string   { return m.healthy }
func (m *fakeMembers) Others() []string {
	return slices.DeleteFunc(slices.Clone(m.all), func(a string) bool { return a == m.self })
}
func (m *fakeMembers) IsMember(a string) bool { return slices.Contains(m.all, a) }

// fakeTransport records requests and answers from a handler.
type fakeTransport struct {
	mu     sync.Mutex
	reqs   []Request
	answer func(Request) (Response, error)
}

func (t *fakeTransport) Do(_ context.Context, r Request) (Response, error) {
	t.mu.Lock()
	t.reqs = append(t.reqs, r)
	ans := t.answer
	t.mu.Unlock()
	if ans == nil {
		return Response{Status: 200, Body: []byte("ok")}, nil
	}
	return ans(r)
}

func (t *fakeTransport) sent(method, path string) []Request {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Request
	for _, r := range t.reqs {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

const (
	nodeA = "127.0.0.1:8848"
	nodeB = "127.0.0.1:8858"
	nodeC = "127.0.0.1:8868"
)

func newDistro(t *testing.T, self string) (*Distro, *fakeStore, *fakeTransport, *clocktest.Fake) {
	t.Helper()
	all := []string{nodeA, nodeB, nodeC}
	st, tr := newFakeStore(), &fakeTransport{}
	clk := clocktest.New(time.Unix(1700000000, 0))
	d, err := New(Config{Store: st, Members: &fakeMembers{self: self, healthy: all, all: all}, Transport: tr, Clock: clk, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d, st, tr, clk
}

// svcOwnedBy finds a grouped service name owned by addr among the three nodes.
func svcOwnedBy(t *testing.T, addr string) string {
	all := []string{nodeA, nodeB, nodeC}
	for i := range 1000 {
		s := "DEFAULT_GROUP@@svc" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		if all[Hash(s)%3] == addr {
			return s
		}
	}
	t.Fatal("no service found")
	return ""
}

// TestHashAndOwner checks Java's distroHash on known values and the owner
// rule over the sorted healthy list.
func TestHashAndOwner(t *testing.T) {
	t.Parallel()
	// Math.abs("…".hashCode() % Integer.MAX_VALUE); the owners the Java
	// cluster of the recordings chose (three members, sorted).
	java := []string{"127.0.0.1:41848", "127.0.0.1:41858", "127.0.0.1:41868"}
	for svc, owner := range map[string]string{"DEFAULT_GROUP@@rec.a": java[1], "DEFAULT_GROUP@@rec.b": java[0],
		"DEFAULT_GROUP@@rec.c": java[2], "DEFAULT_GROUP@@rec.d": java[1]} {
		if got := java[Hash(svc)%3]; got != owner {
			t.Errorf("owner of %s: %s, Java %s", svc, got, owner)
		}
	}
	if got := Hash("polygenelubricants"); got != 1 {
		t.Errorf("Integer.MIN_VALUE hash: got %d, want 1 (abs(MIN_VALUE %% MAX_VALUE))", got)
	}
	d, _, _, _ := newDistro(t, nodeB)
	svc := svcOwnedBy(t, nodeB)
	if !d.Responsible(svc) || d.MapSrv(svc) != nodeB {
		t.Fatalf("%s: responsible=%v mapSrv=%s", svc, d.Responsible(svc), d.MapSrv(svc))
	}
	other := svcOwnedBy(t, nodeC)
	if d.Responsible(other) || d.MapSrv(other) != nodeC {
		t.Fatalf("%s: responsible=%v mapSrv=%s", other, d.Responsible(other), d.MapSrv(other))
	}
}

// TestSyncBatchesAndRetries: changes are coalesced per key, batched per
// member after the delays, and a failed sync is retried after RetryDelay.
func TestSyncBatchesAndRetries(t *testing.T) {
	t.Parallel()
	d, st, tr, clk := newDistro(t, nodeA)
	d.Start(t.Context())
	key := compat.EphemeralKey("public", "DEFAULT_GROUP@@s1")
	st.Apply(key, []compat.DistroInstance{{IP: "127.0.0.9", Port: 80, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: "DEFAULT"}})
	var failB sync.Once
	tr.answer = func(r Request) (Response, error) {
		if r.Addr == nodeB && r.Path == "/v1/ns/distro/datum" {
			var err error
			failB.Do(func() { err = errors.New("connection refused") })
			if err != nil {
				return Response{}, err
			}
		}
		return Response{Status: 200, Body: []byte("ok")}, nil
	}
	for range 5 {
		d.EphemeralChanged("public", "DEFAULT_GROUP@@s1")
	}
	clk.Advance(500 * time.Millisecond)
	d.wg.Wait()
	puts := tr.sent(http.MethodPut, "/v1/ns/distro/datum")
	if len(puts) != 2 {
		t.Fatalf("%d datum PUTs, want one per other member", len(puts))
	}
	for _, p := range puts {
		if !strings.Contains(string(p.Body), key) || p.Header.Get("Content-Type") != "application/json;charset=UTF-8" {
			t.Fatalf("sync %+v", p)
		}
	}
	clk.Advance(6 * time.Second) // RetryDelay 5 s, then the batch delay
	d.wg.Wait()
	if n := len(tr.sent(http.MethodPut, "/v1/ns/distro/datum")); n != 3 {
		t.Fatalf("%d datum PUTs after the retry, want 3", n)
	}
	if d.Stats().SyncFailed.Load() != 1 || d.Pending() != 0 {
		t.Fatalf("failed=%d pending=%d", d.Stats().SyncFailed.Load(), d.Pending())
	}
}

// TestChecksumRules is onReceiveChecksums: a different or missing list is
// fetched from the source, a list the source owns but no longer lists is
// removed, and a round naming a key this node owns is aborted.
func TestChecksumRules(t *testing.T) {
	t.Parallel()
	d, st, tr, _ := newDistro(t, nodeA)
	ownedByB := svcOwnedBy(t, nodeB)
	kStale := compat.EphemeralKey("public", ownedByB)
	kGone := compat.EphemeralKey("ns1", ownedByB)
	kMissing := compat.EphemeralKey("ns2", ownedByB)
	old := []compat.DistroInstance{{IP: "127.0.0.1", Port: 1, Weight: 1, Healthy: true, Enabled: true, ClusterName: "DEFAULT"}}
	fresh := []compat.DistroInstance{{IP: "127.0.0.2", Port: 2, Weight: 1, Healthy: true, Enabled: true, ClusterName: "DEFAULT"}}
	st.Apply(kStale, old)
	st.Apply(kGone, old)
	tr.answer = func(r Request) (Response, error) {
		return Response{Status: 200, Body: compat.DatumsJSON([]compat.Datum{{Key: kStale, Instances: fresh, Timestamp: 1},
			{Key: kMissing, Instances: fresh, Timestamp: 1}}, compat.DatumBatchCapacity)}, nil
	}
	d.processChecksums(t.Context(), nodeB, map[string]string{kStale: compat.InstancesChecksum(fresh), kMissing: compat.InstancesChecksum(fresh)})
	gets := tr.sent(http.MethodGet, "/v1/ns/distro/datum")
	if len(gets) != 1 || gets[0].Addr != nodeB || string(gets[0].Body) != `{"keys":"`+kMissing+","+kStale+`"}` {
		t.Fatalf("fetch %+v", gets)
	}
	if l, _ := st.Datum(kStale); l.Instances[0].IP != "127.0.0.2" {
		t.Fatal("stale list not replaced")
	}
	if _, ok := st.Datum(kMissing); !ok {
		t.Fatal("missing list not fetched")
	}
	if _, ok := st.Datum(kGone); ok || !slices.Contains(st.removed, kGone) {
		t.Fatal("a list the owner dropped was kept")
	}
	mine := compat.EphemeralKey("public", svcOwnedBy(t, nodeA))
	tr.reqs = nil
	d.processChecksums(t.Context(), nodeB, map[string]string{mine: "x", kStale: "different"})
	if len(tr.sent(http.MethodGet, "/v1/ns/distro/datum")) != 0 {
		t.Fatal("a round naming an owned key was not aborted")
	}
}

// TestVerifySendsOwnedChecksums: only owned keys, to every other member.
func TestVerifySendsOwnedChecksums(t *testing.T) {
	t.Parallel()
	d, st, tr, _ := newDistro(t, nodeA)
	own := compat.EphemeralKey("public", svcOwnedBy(t, nodeA))
	notOwn := compat.EphemeralKey("public", svcOwnedBy(t, nodeB))
	st.Apply(own, nil)
	st.Apply(notOwn, nil)
	d.verifyRound()
	d.wg.Wait()
	puts := tr.sent(http.MethodPut, "/v1/ns/distro/checksum")
	if len(puts) != 2 {
		t.Fatalf("%d checksum PUTs", len(puts))
	}
	want := `{"` + own + `":"d41d8cd98f00b204e9800998ecf8427e"}`
	for _, p := range puts {
		if string(p.Body) != want || p.Query.Get("source") != nodeA {
			t.Fatalf("checksum %s ?%v", p.Body, p.Query)
		}
	}
}

// TestServiceStatusAsJava writes the status body a Java node sent
// (compat/testdata/distro/java148/service-status) and applies a received
// one: a differing checksum fetches the sender's statuses.
func TestServiceStatusAsJava(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "compat", "testdata", "distro", "java148", "service-status.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(b), "\n\n")
	recorded, _, _ := strings.Cut(rest, "\n=== response")
	got := statusBody("127.0.0.1:41858", "public", map[string]string{
		"DEFAULT_GROUP@@rec.p": "b459d2c35308ea065ab27c3211cd95a5",
		"DEFAULT_GROUP@@rec.a": "a5bc0fd0cc31f94b8f6e246548e1bdcb",
		"DEFAULT_GROUP@@rec.d": "a1a78b4097aefb99e8fc38e02118f05b",
	})
	if string(got) != recorded {
		t.Fatalf("status body\n got %s\nwant %s", got, recorded)
	}

	d, st, tr, _ := newDistro(t, nodeA)
	st.sums["public##DEFAULT_GROUP@@rec.a"] = "local"
	tr.answer = func(r Request) (Response, error) {
		return Response{Status: 200, Body: []byte(`{"ips":["127.0.9.1:8080_true","127.0.9.2:8080_false"]}`)}, nil
	}
	res, err := d.OnServiceStatus([]byte(recorded), func(a string) bool { return a == "127.0.0.1:41858" })
	if err != nil || res != "ok" {
		t.Fatalf("OnServiceStatus: %v %v", res, err)
	}
	d.wg.Wait()
	if h := st.health["public##DEFAULT_GROUP@@rec.a"]; !h["127.0.9.1:8080"] || h["127.0.9.2:8080"] {
		t.Fatalf("health %v", h)
	}
	if q := tr.sent(http.MethodGet, "/v1/ns/instance/statuses"); len(q) != 1 || q[0].Query.Get("key") != "public##DEFAULT_GROUP@@rec.a" {
		t.Fatalf("statuses fetch %+v", q)
	}
	if _, err := d.OnServiceStatus([]byte(recorded), func(string) bool { return false }); err == nil || err.Error() != "ip: 127.0.0.1:41858 is not in serverlist" {
		t.Fatalf("unknown sender: %v", err)
	}
}

// TestLoadOnceStartingPeers: members that are starting themselves (their
// answer carries HeaderStarting) or refuse the connection hold no lists,
// so a load among them completes at once; a member that answers something
// else (or times out) may hold lists and keeps the load pending.
func TestLoadOnceStartingPeers(t *testing.T) {
	t.Parallel()
	startingAnswer := func(Request) (Response, error) {
		return Response{Status: http.StatusServiceUnavailable, Header: http.Header{HeaderStarting: {"true"}}, Body: []byte("member is starting")}, nil
	}
	cases := map[string]struct {
		answer func(Request) (Response, error)
		want   bool
	}{
		"all starting": {startingAnswer, true},
		"starting and refused": {func(r Request) (Response, error) {
			if r.Addr == nodeC {
				return Response{}, errors.New("dial tcp 127.0.0.1:8868: connect: connection refused")
			}
			return startingAnswer(r)
		}, true},
		"one times out": {func(r Request) (Response, error) {
			if r.Addr == nodeC {
				return Response{}, context.DeadlineExceeded
			}
			return startingAnswer(r)
		}, false},
		"plain 503": {func(Request) (Response, error) {
			return Response{Status: http.StatusServiceUnavailable, Body: []byte("busy")}, nil
		}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d, _, tr, _ := newDistro(t, nodeA)
			tr.mu.Lock()
			tr.answer = tc.answer
			tr.mu.Unlock()
			if got := d.LoadOnce(context.Background()); got != tc.want || d.Initialized() != tc.want {
				t.Fatalf("LoadOnce = %v, initialized %v; want %v", got, d.Initialized(), tc.want)
			}
		})
	}
}
