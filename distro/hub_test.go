package distro

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/internal/testlog"
)

// hub is an in-memory network of Distro members (hashicorp/raft's test
// cluster with Disconnect and Partition, NATS's raftTransportHub with
// partition and heal): each member has its own store, its own view of the
// membership and a transport that delivers a request by calling the target
// member's handlers. A test cuts links one way or both, takes members down
// and brings them back with an empty store, and sets each member's view of
// which members are healthy (the membership protocol's job, which takes a
// report round per member to propagate). Every member runs its background
// work inline on one fake clock, so a run is deterministic: Advance is the
// whole schedule.
//
// Clients register instances and beat them as Nacos's Java client does:
// every 5 s, through the members in turn (the client picks a server per
// request), the member proxying to the service's owner by its own view
// (DistroFilter, which refuses a request proxied to a member that does not
// own the service); a beat the owner does not know answers 20404 and the
// client registers again. After every step the hub records, per member,
// which client instances it lists, and flags a live instance that a member
// listed and no longer lists (issue 23 defect 6).
type hub struct {
	t     *testing.T
	clk   *clocktest.Fake
	addrs []string
	cfg   Config // timings of every member

	mu    sync.Mutex
	nodes map[string]*hubNode
	cut   map[[2]string]bool // from → to: requests (and answers) dropped
	// drop, when set, loses the requests it returns true for (the
	// caller times out)
	drop    func(from string, r Request) bool
	clients []*hubClient
	seen    map[string]map[ServiceRef]map[string]bool // member → service → instance listed at some sample
	blinks  []string
}

type hubNode struct {
	addr string
	d    *Distro
	st   *fakeStore
	mem  *hubMembers
	down bool
}

// hubMembers is one member's view of the membership.
type hubMembers struct {
	self string
	all  []string

	mu      sync.Mutex
	healthy []string
}

func (m *hubMembers) SelfAddress() string { return m.self }
func (m *hubMembers) Healthy() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.healthy)
}
func (m *hubMembers) Others() []string {
	return slices.DeleteFunc(slices.Clone(m.all), func(a string) bool { return a == m.self })
}
func (m *hubMembers) IsMember(a string) bool { return slices.Contains(m.all, a) }
func (m *hubMembers) IsNacosd(a string) bool { return slices.Contains(m.all, a) }

// hubClient is an application instance beating through the members.
type hubClient struct {
	ref     ServiceRef
	in      compat.DistroInstance
	next    int    // the member its next request goes to
	only    string // the one member it knows, if set
	stopped bool
}

var (
	errRefused = errors.New("dial tcp: connect: connection refused")
	errTimeout = errors.New("read tcp: i/o timeout")
)

// newHub starts n members (127.0.0.1:9501…) with the default timings,
// 1.7 s apart.
func newHub(t *testing.T, n int) *hub {
	t.Helper()
	h := &hub{t: t, clk: clocktest.New(time.Unix(1700000000, 0)), nodes: map[string]*hubNode{}, cut: map[[2]string]bool{},
		seen: map[string]map[ServiceRef]map[string]bool{}}
	for i := range n {
		h.addrs = append(h.addrs, fmt.Sprintf("127.0.0.1:95%02d", i+1))
	}
	for _, a := range h.addrs {
		h.start(a)
		h.clk.Advance(1700 * time.Millisecond) // the members' rounds run out of step
	}
	t.Cleanup(func() {
		for _, a := range h.addrs {
			h.stop(a)
		}
	})
	return h
}

// start runs a member with an empty store; it loads the lists of the
// others before it runs (as a starting node does before it serves).
func (h *hub) start(addr string) *hubNode {
	h.t.Helper()
	st := newFakeStore()
	mem := &hubMembers{self: addr, all: h.addrs, healthy: slices.Clone(h.addrs)}
	cfg := h.cfg
	cfg.Store, cfg.Members, cfg.Transport, cfg.Clock = st, mem, hubTransport{h, addr}, h.clk
	cfg.Logger = testlog.New(h.t).With("member", addr)
	d, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	d.run = func(f func()) { f() }
	st.changed = d.Changed
	n := &hubNode{addr: addr, d: d, st: st, mem: mem}
	h.mu.Lock()
	h.nodes[addr] = n
	delete(h.seen, addr)
	h.mu.Unlock()
	d.LoadOnce(context.Background())
	d.Start(context.Background())
	return n
}

// stop kills a member (its address refuses connections).
func (h *hub) stop(addr string) {
	h.mu.Lock()
	n := h.nodes[addr]
	if n == nil || n.down {
		h.mu.Unlock()
		return
	}
	n.down = true
	delete(h.seen, addr)
	h.mu.Unlock()
	n.d.Close()
}

func (h *hub) node(addr string) *hubNode {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nodes[addr]
}

// setView sets which members addr sees healthy (UP or SUSPICIOUS) and
// tells its Distro (a membership change event).
func (h *hub) setView(addr string, healthy ...string) {
	n := h.node(addr)
	n.mem.mu.Lock()
	n.mem.healthy = slices.Sorted(slices.Values(healthy))
	n.mem.mu.Unlock()
	n.d.MembersChanged()
}

// isolate cuts addr off from every other member, both ways; heal restores
// every link.
func (h *hub) isolate(addr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, o := range h.addrs {
		if o != addr {
			h.cut[[2]string{addr, o}] = true
			h.cut[[2]string{o, addr}] = true
		}
	}
}

// cutLink drops what from sends to to (one way).
func (h *hub) cutLink(from, to string) {
	h.mu.Lock()
	h.cut[[2]string{from, to}] = true
	h.mu.Unlock()
}

func (h *hub) heal() {
	h.mu.Lock()
	h.cut = map[[2]string]bool{}
	h.mu.Unlock()
}

type hubTransport struct {
	h    *hub
	from string
}

// Do delivers r: a member that is down refuses it, a cut link loses it
// (the caller times out), and an answer on a link cut the other way is
// lost after the target handled the request.
func (tr hubTransport) Do(_ context.Context, r Request) (Response, error) {
	return tr.h.deliver(tr.from, r)
}

func (h *hub) deliver(from string, r Request) (Response, error) {
	h.mu.Lock()
	to := h.nodes[r.Addr]
	lost, back := h.cut[[2]string{from, r.Addr}], h.cut[[2]string{r.Addr, from}]
	drop := h.drop
	h.mu.Unlock()
	if drop != nil && drop(from, r) {
		lost = true
	}
	if to == nil || to.down {
		return Response{}, errRefused
	}
	if lost {
		return Response{}, errTimeout
	}
	resp := to.handle(r)
	if back {
		return Response{}, errTimeout
	}
	return resp, nil
}

// handle is the member's side of the node-to-node endpoints
// (server/httpapi/distro.go).
func (n *hubNode) handle(r Request) Response {
	ok := Response{Status: http.StatusOK, Body: []byte("ok")}
	fail := func(err error) Response {
		return Response{Status: http.StatusInternalServerError, Body: []byte(err.Error())}
	}
	switch r.Method + " " + r.Path {
	case "PUT /v1/ns/distro/datum":
		if err := n.d.OnDatums(r.Body, Sender{Addr: r.Header.Get(HeaderSource), Partial: r.Header.Get(HeaderPartial) != "", Removed: r.Header.Get(HeaderRemoved)}); err != nil {
			var refused ErrRefused
			if errors.As(err, &refused) {
				return Response{Status: http.StatusConflict, Body: []byte(err.Error())}
			}
			return fail(err)
		}
		return ok
	case "PUT /v1/ns/distro/checksum":
		var sums map[string]string
		if err := json.Unmarshal(r.Body, &sums); err != nil {
			return fail(err)
		}
		n.d.OnChecksums(r.Query.Get("source"), r.Query.Get(ViewParam), sums)
		return ok
	case "GET /v1/ns/distro/datum":
		keys, err := QueryBody(r.Body)
		if err != nil {
			return fail(err)
		}
		return Response{Status: http.StatusOK, Body: n.d.Datums(keys)}
	case "GET /v1/ns/distro/datums":
		return Response{Status: http.StatusOK, Body: n.d.AllDatums()}
	case "PUT " + beatsPath:
		if err := n.d.OnBeats(r.Body); err != nil {
			return fail(err)
		}
		return ok
	case "POST /v1/ns/service/status":
		if _, err := n.d.OnServiceStatus(r.Body, n.mem.IsMember); err != nil {
			return fail(err)
		}
		return ok
	}
	return Response{Status: http.StatusNotFound, Body: []byte("no route " + r.Path)}
}

// client registers an instance of ref (port 8080 at ip) through the
// members in turn and beats it every 5 s from then on, starting at
// member index first.
func (h *hub) client(ref ServiceRef, ip string, first int) *hubClient {
	c := &hubClient{ref: ref, next: first, in: compat.DistroInstance{IP: ip, Port: 8080, Weight: 1, Healthy: true,
		Enabled: true, Ephemeral: true, ClusterName: "DEFAULT", ServiceName: ref.Service}}
	h.startClient(c)
	return c
}

// startClient registers c and beats it every 5 s from then on.
func (h *hub) startClient(c *hubClient) {
	h.mu.Lock()
	h.clients = append(h.clients, c)
	phase := time.Duration(len(h.clients)*733%5000) * time.Millisecond // clients beat out of step
	h.mu.Unlock()
	h.request(c, true)
	var beat func()
	beat = func() {
		h.mu.Lock()
		stopped := c.stopped
		h.mu.Unlock()
		if stopped {
			return
		}
		h.request(c, false)
		h.clk.AfterFunc(5*time.Second, beat)
	}
	h.clk.AfterFunc(phase+time.Millisecond, beat)
}

// request sends one register (or beat) of c, trying the members in turn
// until one takes it. A member proxies to the owner its view names; the
// owner refuses a proxied request for a service it does not own; a beat
// the owner does not know is answered 20404 and followed by a register.
func (h *hub) request(c *hubClient, register bool) {
	for range len(h.addrs) {
		via := h.node(h.addrs[c.next%len(h.addrs)])
		c.next++
		if c.only != "" {
			via = h.node(c.only)
		}
		if via.down {
			continue
		}
		owner := h.node(via.d.MapSrv(c.ref.Service))
		if owner != via {
			h.mu.Lock()
			lost := h.cut[[2]string{via.addr, owner.addr}] || h.cut[[2]string{owner.addr, via.addr}]
			h.mu.Unlock()
			if lost || owner.down || !owner.d.Responsible(c.ref.Service) {
				continue // a 500 (proxy failed) or a 400 (second hop): the client tries the next server
			}
		}
		if register || !slices.Contains(owner.st.keys(c.ref), DatumKey(c.in)) {
			in := c.in
			in.LastBeat = h.clk.Now().UnixMilli() // a registration is a beat
			owner.st.register(c.ref, in)
		}
		return
	}
}

// pinnedClient is client with one member's address (an application
// given one server, or a VIP that keeps sending it to one).
func (h *hub) pinnedClient(ref ServiceRef, ip, member string) *hubClient {
	c := &hubClient{ref: ref, only: member, in: compat.DistroInstance{IP: ip, Port: 8080, Weight: 1, Healthy: true,
		Enabled: true, Ephemeral: true, ClusterName: "DEFAULT", ServiceName: ref.Service}}
	h.startClient(c)
	return c
}

// stopClient deregisters c's instance on its owner and stops its beats.
func (h *hub) stopClient(c *hubClient) {
	h.mu.Lock()
	c.stopped = true
	for a := range h.seen {
		delete(h.seen[a][c.ref], DatumKey(c.in))
	}
	h.mu.Unlock()
	for range len(h.addrs) {
		via := h.node(h.addrs[c.next%len(h.addrs)])
		c.next++
		if via.down {
			continue
		}
		owner := h.node(via.d.MapSrv(c.ref.Service))
		if owner.down {
			continue
		}
		owner.st.deregister(c.ref, DatumKey(c.in))
		return
	}
}

// run advances the clock in 100 ms steps, sampling every member's lists
// after each.
func (h *hub) run(d time.Duration) {
	for end := h.clk.Now().Add(d); h.clk.Now().Before(end); {
		h.clk.Advance(100 * time.Millisecond)
		h.sample()
	}
}

// sample records which live client instances each member lists and flags
// those a member listed before and lists no more.
func (h *hub) sample() {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.clk.Now().Sub(time.Unix(1700000000, 0))
	for _, a := range h.addrs {
		n := h.nodes[a]
		if n.down {
			continue
		}
		if h.seen[a] == nil {
			h.seen[a] = map[ServiceRef]map[string]bool{}
		}
		for _, c := range h.clients {
			if c.stopped {
				continue
			}
			k := DatumKey(c.in)
			listed := slices.Contains(n.st.keys(c.ref), k)
			m := h.seen[a][c.ref]
			if m == nil {
				m = map[string]bool{}
				h.seen[a][c.ref] = m
			}
			switch {
			case listed:
				m[k] = true
			case m[k]:
				delete(m, k)
				h.blinks = append(h.blinks, fmt.Sprintf("%v: %s stopped listing %s of %s", now, a, k, c.ref.Service))
			}
		}
	}
}

// noBlinks fails the test with every disappearance of a beating instance.
func (h *hub) noBlinks() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.blinks) > 0 {
		h.t.Fatalf("%d disappearances of beating instances:\n%s", len(h.blinks), strings.Join(h.blinks, "\n"))
	}
}

// converged reports the first difference between a running member's lists
// and the live client instances (every member lists exactly them), and
// between the members' checksums.
func (h *hub) converged() error {
	h.mu.Lock()
	want := map[ServiceRef][]string{}
	for _, c := range h.clients {
		if _, ok := want[c.ref]; !ok {
			want[c.ref] = []string{}
		}
		if !c.stopped {
			want[c.ref] = append(want[c.ref], DatumKey(c.in))
		}
	}
	var nodes []*hubNode
	for _, a := range h.addrs {
		if !h.nodes[a].down {
			nodes = append(nodes, h.nodes[a])
		}
	}
	h.mu.Unlock()
	for ref, keys := range want {
		slices.Sort(keys)
		var sum0 string
		for i, n := range nodes {
			if got := n.st.keys(ref); !slices.Equal(got, keys) {
				return fmt.Errorf("%s lists %v of %s, want %v", n.addr, got, ref.Service, keys)
			}
			sum, _ := n.d.Checksum(ref)
			if i == 0 {
				sum0 = sum
			} else if sum != sum0 {
				return fmt.Errorf("%s: checksum %s of %s, %s has %s", n.addr, sum, ref.Service, nodes[0].addr, sum0)
			}
		}
	}
	return nil
}

// eventually runs the hub until cond holds, at most d; it fails with
// cond's last error.
func (h *hub) eventually(d time.Duration, cond func() error) time.Duration {
	h.t.Helper()
	start := h.clk.Now()
	for {
		err := cond()
		if err == nil {
			return h.clk.Now().Sub(start)
		}
		if h.clk.Now().Sub(start) >= d {
			h.t.Fatalf("after %v: %v", d, err)
		}
		h.run(100 * time.Millisecond)
	}
}

// services returns n grouped service names that pick accepts.
func (h *hub) services(n int, pick func(svc string) bool) []string {
	var out []string
	for i := 0; len(out) < n && i < 100000; i++ {
		s := fmt.Sprintf("DEFAULT_GROUP@@svc%d", i)
		if pick(s) {
			out = append(out, s)
		}
	}
	if len(out) < n {
		h.t.Fatal("not enough services found")
	}
	return out
}

// ownerIn is the owner of svc among healthy (sorted).
func ownerIn(svc string, healthy ...string) string {
	healthy = slices.Sorted(slices.Values(healthy))
	return healthy[Hash(svc)%len(healthy)]
}

func ref(svc string) ServiceRef { return ServiceRef{NamespaceID: "public", Service: svc} }
