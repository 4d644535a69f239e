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

// fakeStore is an in-memory ephemeral store that reports its changes as
// the naming registry does (changed, in the order applied).
type fakeStore struct {
	emitMu  sync.Mutex // orders the changes, as the registry's emitMu
	mu      sync.Mutex
	data    map[ServiceRef]map[string]compat.DistroInstance // by datum key
	removed []ServiceRef
	health  map[ServiceRef]map[string]bool
	sums    map[ServiceRef]string           // service checksums
	beats   map[ServiceRef]map[string]int64 // last beats
	changed func(ListChange)                // the Distro's Changed
}

func newFakeStore() *fakeStore {
	return &fakeStore{data: map[ServiceRef]map[string]compat.DistroInstance{}, health: map[ServiceRef]map[string]bool{},
		sums: map[ServiceRef]string{}}
}

func (f *fakeStore) emit(c ListChange) {
	if f.changed != nil {
		f.changed(c)
	}
}

// register writes an instance as the service's owner (a client's register
// or beat): the change is shipped.
func (f *fakeStore) register(ref ServiceRef, in compat.DistroInstance) {
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	f.mu.Lock()
	m := f.data[ref]
	if m == nil {
		m = map[string]compat.DistroInstance{}
		f.data[ref] = m
	}
	k := DatumKey(in)
	m[k] = in
	f.mu.Unlock()
	f.emit(ListChange{Ref: ref, Op: EditPut, Key: k, Ship: true})
}

// deregister removes an instance as the service's owner.
func (f *fakeStore) deregister(ref ServiceRef, key string) {
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	f.mu.Lock()
	_, ok := f.data[ref][key]
	delete(f.data[ref], key)
	f.mu.Unlock()
	if ok {
		f.emit(ListChange{Ref: ref, Op: EditRemove, Key: key, Ship: true, Deregistered: true})
	}
}

// keys returns the datum keys of a service's instances, sorted.
func (f *fakeStore) keys(ref ServiceRef) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.data[ref] {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (f *fakeStore) Instances(ref ServiceRef) ([]compat.DistroInstance, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.data[ref]
	if !ok {
		return nil, false
	}
	out := make([]compat.DistroInstance, 0, len(m))
	for _, in := range m {
		out = append(out, in)
	}
	return out, true
}

func (f *fakeStore) Apply(ref ServiceRef, list []compat.DistroInstance) error {
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	f.mu.Lock()
	m := map[string]compat.DistroInstance{}
	var order []string
	for _, in := range list {
		k := DatumKey(in)
		if _, dup := m[k]; !dup {
			order = append(order, k)
		}
		m[k] = in
	}
	f.data[ref] = m
	f.mu.Unlock()
	f.emit(ListChange{Ref: ref, Op: EditReplace, Keys: order})
	return nil
}

func (f *fakeStore) Remove(ref ServiceRef) {
	f.emitMu.Lock()
	defer f.emitMu.Unlock()
	f.mu.Lock()
	if _, ok := f.data[ref]; ok {
		f.data[ref] = map[string]compat.DistroInstance{} // the service stays
	}
	f.removed = append(f.removed, ref)
	f.mu.Unlock()
	f.emit(ListChange{Ref: ref, Op: EditClear})
}

func (f *fakeStore) ServiceChecksums(owned func(string) bool) map[string]map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]map[string]string{}
	for r, v := range f.sums {
		if owned(r.Service) {
			if out[r.NamespaceID] == nil {
				out[r.NamespaceID] = map[string]string{}
			}
			out[r.NamespaceID][r.Service] = v
		}
	}
	return out
}

func (f *fakeStore) ServiceChecksum(ref ServiceRef) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.sums[ref]
	return v, ok
}

func (f *fakeStore) BeatTimes(owned func(string) bool, since int64, all bool) []ServiceBeats {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ServiceBeats
	for r, b := range f.beats {
		if !owned(r.Service) {
			continue
		}
		sb := ServiceBeats{ServiceRef: r, Beats: map[string]int64{}}
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

func (f *fakeStore) ApplyBeatTimes(ref ServiceRef, beats map[string]int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.beats == nil {
		f.beats = map[ServiceRef]map[string]int64{}
	}
	m := f.beats[ref]
	if m == nil {
		m = map[string]int64{}
		f.beats[ref] = m
	}
	for k, v := range beats {
		m[k] = v
	}
}

func (f *fakeStore) ApplyHealth(ref ServiceRef, h map[string]bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.health[ref] = h
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
	st.changed = d.Changed
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
	ref := ServiceRef{"public", svcOwnedBy(t, nodeA)}
	key := ref.key()
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
	for i := range 5 {
		st.register(ref, compat.DistroInstance{IP: "127.0.0.9", Port: 80 + i%2, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: "DEFAULT"})
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
// removed once two rounds a round apart omitted it (a round from a member
// whose owner mapping differs counts for nothing), and a round naming a
// key this node owns is aborted.
func TestChecksumRules(t *testing.T) {
	t.Parallel()
	d, st, tr, clk := newDistro(t, nodeA)
	ownedByB := svcOwnedBy(t, nodeB)
	rStale, rGone, rMissing := ServiceRef{"public", ownedByB}, ServiceRef{"ns1", ownedByB}, ServiceRef{"ns2", ownedByB}
	kStale, kMissing := rStale.key(), rMissing.key()
	old := []compat.DistroInstance{{IP: "127.0.0.1", Port: 1, Weight: 1, Healthy: true, Enabled: true, ClusterName: "DEFAULT"}}
	fresh := []compat.DistroInstance{{IP: "127.0.0.2", Port: 2, Weight: 1, Healthy: true, Enabled: true, ClusterName: "DEFAULT"}}
	st.Apply(rStale, old)
	st.Apply(rGone, old)
	tr.answer = func(r Request) (Response, error) {
		return Response{Status: 200, Body: compat.DatumsJSON([]compat.Datum{{Key: kStale, Instances: fresh, Timestamp: 1},
			{Key: kMissing, Instances: fresh, Timestamp: 1}}, compat.DatumBatchCapacity)}, nil
	}
	round := map[string]string{kStale: compat.InstancesChecksum(fresh), kMissing: compat.InstancesChecksum(fresh)}
	d.processChecksums(t.Context(), nodeB, "", round)
	gets := tr.sent(http.MethodGet, "/v1/ns/distro/datum")
	if len(gets) != 1 || gets[0].Addr != nodeB || string(gets[0].Body) != `{"keys":"`+kMissing+","+kStale+`"}` {
		t.Fatalf("fetch %+v", gets)
	}
	if l, _ := d.Datum(rStale); l.Instances[0].IP != "127.0.0.2" {
		t.Fatal("stale list not replaced")
	}
	if _, ok := d.Datum(rMissing); !ok {
		t.Fatal("missing list not fetched")
	}
	if _, ok := d.Datum(rGone); !ok {
		t.Fatal("a list the owner omitted once was dropped")
	}
	own := d.mapping.Load().digest
	clk.Advance(5 * time.Second)
	d.processChecksums(t.Context(), nodeB, "other-mapping", round) // views differ: no evidence, and the chain breaks
	clk.Advance(5 * time.Second)
	d.processChecksums(t.Context(), nodeB, own, round)
	if _, ok := d.Datum(rGone); !ok {
		t.Fatal("dropped on a round after one from another mapping")
	}
	clk.Advance(4 * time.Second)
	d.processChecksums(t.Context(), nodeB, own, round)
	if _, ok := d.Datum(rGone); !ok {
		t.Fatal("dropped on two rounds less than a round apart")
	}
	clk.Advance(time.Second)
	d.processChecksums(t.Context(), nodeB, own, round)
	if _, ok := d.Datum(rGone); ok || !slices.Contains(st.removed, rGone) {
		t.Fatal("a list the owner dropped was kept")
	}
	mine := ServiceRef{"public", svcOwnedBy(t, nodeA)}.key()
	tr.reqs = nil
	d.processChecksums(t.Context(), nodeB, "", map[string]string{mine: "x", kStale: "different"})
	if len(tr.sent(http.MethodGet, "/v1/ns/distro/datum")) != 0 {
		t.Fatal("a round naming an owned key was not aborted")
	}
}

// TestVerifySendsOwnedChecksums: only owned keys, to every other member,
// with this node's owner mapping; nothing before the start-up load.
func TestVerifySendsOwnedChecksums(t *testing.T) {
	t.Parallel()
	all := []string{nodeA, nodeB, nodeC}
	st, tr := newFakeStore(), &fakeTransport{}
	d, err := New(Config{Store: st, Members: &fakeMembers{self: nodeA, healthy: all, all: all, java: []string{nodeC}}, Transport: tr,
		Clock: clocktest.New(time.Unix(1700000000, 0)), Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	st.changed = d.Changed
	t.Cleanup(d.Close)
	ownRef := ServiceRef{"public", svcOwnedBy(t, nodeA)}
	own := ownRef.key()
	st.Apply(ownRef, nil)
	st.Apply(ServiceRef{"public", svcOwnedBy(t, nodeB)}, nil)
	d.verifyRound()
	d.wg.Wait()
	if puts := tr.sent(http.MethodPut, "/v1/ns/distro/checksum"); len(puts) != 0 {
		t.Fatalf("%d checksum PUTs before the start-up load", len(puts))
	}
	d.loaded.Store(true)
	d.verifyRound()
	d.wg.Wait()
	puts := tr.sent(http.MethodPut, "/v1/ns/distro/checksum")
	if len(puts) != 2 {
		t.Fatalf("%d checksum PUTs", len(puts))
	}
	want := `{"` + own + `":"d41d8cd98f00b204e9800998ecf8427e"}`
	for _, p := range puts {
		if string(p.Body) != want || p.Query.Get("source") != nodeA || p.Query.Get(ViewParam) != d.mapping.Load().digest {
			t.Fatalf("checksum to %s: %s ?%v", p.Addr, p.Body, p.Query)
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
	st.sums[ServiceRef{"public", "DEFAULT_GROUP@@rec.a"}] = "local"
	tr.answer = func(r Request) (Response, error) {
		return Response{Status: 200, Body: []byte(`{"ips":["127.0.9.1:8080_true","127.0.9.2:8080_false"]}`)}, nil
	}
	res, err := d.OnServiceStatus([]byte(recorded), func(a string) bool { return a == "127.0.0.1:41858" })
	if err != nil || res != "ok" {
		t.Fatalf("OnServiceStatus: %v %v", res, err)
	}
	d.wg.Wait()
	if h := st.health[ServiceRef{"public", "DEFAULT_GROUP@@rec.a"}]; !h["127.0.9.1:8080"] || h["127.0.9.2:8080"] {
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

// TestPartialSyncs: before its start-up load a member's syncs carry
// HeaderPartial to nacosd members and wait for the load to reach a Java
// member; a member that receives a partial sync adds its instances to its
// list (an instance in both takes the sender's copy), a whole sync
// replaces the list.
func TestPartialSyncs(t *testing.T) {
	t.Parallel()
	all := []string{nodeA, nodeB, nodeC}
	st, tr := newFakeStore(), &fakeTransport{}
	clk := clocktest.New(time.Unix(1700000000, 0))
	d, err := New(Config{Store: st, Members: &fakeMembers{self: nodeA, healthy: all, all: all, java: []string{nodeC}}, Transport: tr,
		Clock: clk, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	st.changed = d.Changed
	t.Cleanup(d.Close)
	d.run = func(f func()) { f() }
	ref := ServiceRef{"public", svcOwnedBy(t, nodeA)}
	in := func(ip string, w float64) compat.DistroInstance {
		return compat.DistroInstance{IP: ip, Port: 80, Weight: w, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: "DEFAULT", ServiceName: ref.Service}
	}
	st.register(ref, in("10.0.0.1", 1))
	for range 3 {
		clk.Advance(100 * time.Millisecond)
		d.tick()
	}
	puts := tr.sent(http.MethodPut, "/v1/ns/distro/datum")
	if len(puts) != 1 || puts[0].Addr != nodeB || puts[0].Header.Get(HeaderPartial) != "true" {
		t.Fatalf("syncs before the load: %+v", puts)
	}
	if d.Pending() != 1 {
		t.Fatalf("the Java member's sync is not waiting: %d pending", d.Pending())
	}

	recv, rst, _, _ := newDistro(t, nodeB)
	rst.Apply(ref, []compat.DistroInstance{in("10.0.0.1", 2), in("10.0.0.2", 1)})
	if err := recv.OnDatums(puts[0].Body, Sender{Addr: nodeA, Partial: true}); err != nil {
		t.Fatal(err)
	}
	dt, _ := recv.Datum(ref)
	if len(dt.Instances) != 2 || dt.Instances[0].Weight != 1 {
		t.Fatalf("after a partial sync: %+v", dt.Instances)
	}
	if err := recv.OnDatums(puts[0].Body, Sender{Addr: nodeA}); err != nil {
		t.Fatal(err)
	}
	if keys := rst.keys(ref); len(keys) != 1 {
		t.Fatalf("a whole sync did not replace the list: %v", keys)
	}
}

// TestRefusedListsAndRetries: a nacosd member refuses a sync's list of a
// service it maps to a third member (409, the other lists applied); the
// sender retries a failed sync of a service it owns or that the target
// owns by its mapping, and drops one a third member owns.
func TestRefusedListsAndRetries(t *testing.T) {
	t.Parallel()
	recv, rst, _, _ := newDistro(t, nodeB)
	toC := ServiceRef{"public", svcOwnedBy(t, nodeC)}
	toA := ServiceRef{"public", svcOwnedBy(t, nodeA)}
	one := []compat.DistroInstance{{IP: "10.0.0.1", Port: 80, Weight: 1, Healthy: true, Enabled: true, ClusterName: "DEFAULT"}}
	body := compat.DatumsJSON([]compat.Datum{{Key: toC.key(), Instances: one, Timestamp: 1}, {Key: toA.key(), Instances: one, Timestamp: 1}}, compat.DatumBatchCapacity)
	var refused ErrRefused
	if err := recv.OnDatums(body, Sender{Addr: nodeA}); !errors.As(err, &refused) || len(refused.Keys) != 1 || refused.Keys[0] != toC.key() {
		t.Fatalf("OnDatums from a: %v", err)
	}
	if rst.keys(toA) == nil || rst.keys(toC) != nil {
		t.Fatalf("applied %v / %v", rst.keys(toA), rst.keys(toC))
	}
	if err := recv.OnDatums(body, Sender{}); err != nil { // a Java member's: taken as Java takes it
		t.Fatal(err)
	}

	d, st, tr, _ := newDistro(t, nodeA)
	d.run = func(f func()) { f() }
	d.loaded.Store(true)
	tr.answer = func(r Request) (Response, error) {
		return Response{Status: http.StatusConflict, Body: []byte("refused")}, nil
	}
	mine, theirs, third := ServiceRef{"public", svcOwnedBy(t, nodeA)}, ServiceRef{"public", svcOwnedBy(t, nodeB)}, toC
	for _, r := range []ServiceRef{mine, theirs, third} {
		st.Apply(r, one)
	}
	d.sync(nodeB, []ServiceRef{mine, theirs, third})
	d.mu.Lock()
	_, m := d.pending[nodeB][mine]
	_, th := d.pending[nodeB][theirs]
	_, x := d.pending[nodeB][third]
	d.mu.Unlock()
	if !m || !th || x {
		t.Fatalf("retries: own %v, target's %v, third's %v", m, th, x)
	}
}
