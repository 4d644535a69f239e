package cluster

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/internal/testlog"
)

// peer is a fake member answering reports with a settable status.
type peer struct {
	srv    *httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    []string // report bodies
	hdr    http.Header
}

func newPeer(t *testing.T) *peer {
	p := &peer{}
	p.status.Store(200)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.got = append(p.got, r.URL.Path+" "+string(b))
		p.hdr = r.Header.Clone()
		p.mu.Unlock()
		st := int(p.status.Load())
		w.WriteHeader(st)
		if st == 200 {
			io.WriteString(w, `{"code":200,"message":null,"data":"true"}`)
		}
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *peer) addr() string { return strings.TrimPrefix(p.srv.URL, "http://") }

// deadAddr is an address where nothing listens (connections are refused).
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := ln.Addr().String()
	ln.Close()
	return a
}

func newManager(t *testing.T, conf string, members ...string) (*Manager, *clocktest.Fake) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "cluster.conf")
	if err := os.WriteFile(path, []byte(strings.Join(members, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clk := clocktest.New(time.Unix(1700000000, 0))
	m, err := New(Config{Self: conf, Version: "1.4.8", ConfPath: path, Peers: NewPeers(PeersConfig{ContextPath: "/nacos", Version: "1.4.8"}),
		Clock: clk, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, clk
}

func states(m *Manager) map[string]string {
	out := map[string]string{}
	for _, mem := range m.Members() {
		out[mem.Address()] = mem.State
	}
	return out
}

// TestReportStates follows Java's MemberUtil.onSuccess/onFail: members start
// DOWN, a successful report makes them UP, failures SUSPICIOUS and DOWN after
// more than three, a refused connection DOWN at once; the healthy list
// (Distro's) holds UP and SUSPICIOUS members.
func TestReportStates(t *testing.T) {
	t.Parallel()
	a, b := newPeer(t), newPeer(t)
	dead := deadAddr(t)
	self := "127.0.0.1:1"
	m, clk := newManager(t, self, self, a.addr(), b.addr(), dead)
	var events atomic.Int32
	m.Subscribe(func() { events.Add(1) })
	if got := states(m); got[a.addr()] != compat.MemberDown || got[self] != compat.MemberUp {
		t.Fatalf("initial states %v", got)
	}
	if h := m.Healthy(); len(h) != 4 {
		t.Fatalf("initial healthy list is every member, got %v", h)
	}
	m.Start(t.Context())
	clk.Advance(5*time.Second + 3*2*time.Second) // first report, then two more: a, b, dead in address order after the cursor
	got := states(m)
	if got[a.addr()] != compat.MemberUp || got[b.addr()] != compat.MemberUp || got[dead] != compat.MemberDown {
		t.Fatalf("after one round: %v", got)
	}
	if events.Load() == 0 {
		t.Fatal("no change event")
	}
	want := []string{self, a.addr(), b.addr()}
	slices.Sort(want)
	if h := m.Healthy(); !slices.Equal(h, want) {
		t.Fatalf("healthy %v, want %v", h, want)
	}
	if up := m.UpAddresses(); !slices.Equal(up, want) {
		t.Fatalf("up %v, want %v", up, want)
	}
	a.mu.Lock()
	hdr := a.hdr
	body := a.got[0]
	a.mu.Unlock()
	if hdr.Get("User-Agent") != "Nacos-Server:1.4.8" || hdr.Get("Nacos-Server") != "1.4.8" || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Fatalf("report headers %v", hdr)
	}
	if !strings.HasPrefix(body, "/nacos/v1/core/cluster/report {\"ip\":\"127.0.0.1\",\"port\":1,\"state\":\"UP\",\"extendInfo\":{\"lastRefreshTime\":1700000000000,\"raftPort\":\"-999\",\"version\":\"1.4.8\"}") {
		t.Fatalf("report body %s", body)
	}

	a.status.Store(500) // answered, but not ok: SUSPICIOUS, then DOWN after more than 3
	for i := 1; i <= 4; i++ {
		clk.Advance(3 * 2 * time.Second)
		want := compat.MemberSuspicious
		if i == 4 {
			want = compat.MemberDown
		}
		if st := m.State(a.addr()); st != want {
			t.Fatalf("after %d failures a is %s, want %s", i, st, want)
		}
	}
	a.status.Store(200)
	clk.Advance(3 * 2 * time.Second)
	if st := m.State(a.addr()); st != compat.MemberUp {
		t.Fatalf("a recovered to %s", st)
	}
	b.status.Store(404) // "version too low": no state change
	clk.Advance(3 * 2 * time.Second)
	if st := m.State(b.addr()); st != compat.MemberUp {
		t.Fatalf("b after 404 is %s", st)
	}
}

// TestUpdateFromReport is the receiving side: a known member's report
// replaces its information and adds lastRefreshTime; an unknown one is
// refused.
func TestUpdateFromReport(t *testing.T) {
	t.Parallel()
	m, clk := newManager(t, "127.0.0.1:8848", "127.0.0.1:8848", "127.0.0.1:8858")
	r, _, err := compat.ParseReportedMember([]byte(`{"ip":"127.0.0.1","port":8858,"state":"UP","extendInfo":{"raftPort":"7858","version":"1.4.8"},"address":"127.0.0.1:8858"}`))
	if err != nil {
		t.Fatal(err)
	}
	var events atomic.Int32
	m.Subscribe(func() { events.Add(1) })
	if !m.Update(r) {
		t.Fatal("known member refused")
	}
	if events.Load() != 1 {
		t.Fatalf("events %d, want 1 (DOWN to UP)", events.Load())
	}
	for _, mem := range m.Members() {
		if mem.Address() == "127.0.0.1:8858" {
			if mem.State != compat.MemberUp || mem.ExtendInfo["lastRefreshTime"] != clk.Now().UnixMilli() || mem.ExtendInfo["version"] != "1.4.8" {
				t.Fatalf("updated member %+v", mem)
			}
		}
	}
	m.Update(r)
	if events.Load() != 1 {
		t.Fatalf("an unchanged report published an event")
	}
	r.Address, r.Port = "127.0.0.1:9999", 9999
	if m.Update(r) {
		t.Fatal("unknown member accepted")
	}
}

// TestClusterConfReread applies an edited cluster.conf, keeps the list when
// the new file is invalid, and adds self when it is missing.
func TestClusterConfReread(t *testing.T) {
	t.Parallel()
	m, clk := newManager(t, "127.0.0.1:8848", "127.0.0.1:8848", "127.0.0.1:8858")
	m.Start(t.Context())
	path := m.cfg.ConfPath
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		clk.Advance(time.Second)
	}
	write("127.0.0.1:8848\n127.0.0.1:8858\n127.0.0.1:8868 # new node\n")
	if got := m.Addresses(); !slices.Equal(got, []string{"127.0.0.1:8848", "127.0.0.1:8858", "127.0.0.1:8868"}) {
		t.Fatalf("after edit: %v", got)
	}
	if m.State("127.0.0.1:8868") != compat.MemberDown {
		t.Fatal("a new member must start DOWN")
	}
	write("127.0.0.1:8848\n1.2.3.4:8848?raft_port=7848\n")
	if got := m.Addresses(); len(got) != 3 {
		t.Fatalf("invalid file changed the list: %v", got)
	}
	write("127.0.0.1:8858\n")
	if got := m.Addresses(); !slices.Equal(got, []string{"127.0.0.1:8848", "127.0.0.1:8858"}) || m.InIPList() {
		t.Fatalf("self missing: %v inIPList=%v", got, m.InIPList())
	}
}

// TestStartupErrors: cluster mode needs a member source, and an invalid
// cluster.conf at start is an error (not a silent cluster of one).
func TestStartupErrors(t *testing.T) {
	t.Parallel()
	peers := NewPeers(PeersConfig{Version: "1.4.8"})
	if _, err := New(Config{Self: "127.0.0.1:8848", Peers: peers, ConfPath: filepath.Join(t.TempDir(), "cluster.conf")}); err != ErrNoMembers {
		t.Fatalf("no members: %v", err)
	}
	path := filepath.Join(t.TempDir(), "cluster.conf")
	os.WriteFile(path, []byte("10.0.0.1:x\n"), 0o644)
	if _, err := New(Config{Self: "127.0.0.1:8848", Peers: peers, ConfPath: path}); err == nil || !strings.Contains(err.Error(), "cluster.conf") {
		t.Fatalf("bad file: %v", err)
	}
	m, err := New(Config{Self: "127.0.0.1:8848", Peers: peers, Fixed: []string{"127.0.0.1:8848", "127.0.0.1:8858"}, ConfPath: path})
	if err != nil || len(m.Addresses()) != 2 {
		t.Fatalf("NACOS_SERVERS wins over the file: %v %v", err, m)
	}
	s, err := New(Config{Self: "127.0.0.1:8848", Standalone: true})
	if err != nil || !slices.Equal(s.Addresses(), []string{"127.0.0.1:8848"}) {
		t.Fatalf("standalone: %v %v", err, s)
	}
}

// TestStartAnnouncesToEveryMember: a starting node reports to every other
// member at once (not one member per 2 s after 5 s, as Java), so that they
// all count it UP, and agree on Distro's owners, within moments of its
// start.
func TestStartAnnouncesToEveryMember(t *testing.T) {
	t.Parallel()
	a, b := newPeer(t), newPeer(t)
	self := "127.0.0.1:1"
	m, _ := newManager(t, self, self, a.addr(), b.addr())
	m.Start(t.Context()) // the fake clock does not move: no scheduled report runs
	deadline := time.Now().Add(5 * time.Second)
	for {
		a.mu.Lock()
		na := len(a.got)
		a.mu.Unlock()
		b.mu.Lock()
		nb := len(b.got)
		b.mu.Unlock()
		if na > 0 && nb > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("reports at start: %d to a, %d to b; want one to each", na, nb)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		if m.State(a.addr()) == compat.MemberUp && m.State(b.addr()) == compat.MemberUp {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the announcement: a %s, b %s", m.State(a.addr()), m.State(b.addr()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
