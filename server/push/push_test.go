package push

import (
	"github.com/nacosd/nacosd/compat"

	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock"
)

const (
	ns  = "public"
	svc = "DEFAULT_GROUP@@demo"
	ua  = "Nacos-Java-Client:v1.4.8"
)

func TestDebounceOnePacketPerWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)

	var version atomic.Int64
	h.r.set(func(Subscriber) ([]byte, error) {
		return fmt.Appendf(nil, `{"v":%d}`, version.Load()), nil
	})
	for i := 0; i < 3; i++ { // three changes inside one second
		version.Add(1)
		h.svc.ServiceChanged(ns, svc)
		h.clk.Advance(300 * time.Millisecond)
	}
	if got := h.sends(); got != 0 {
		t.Fatalf("sent %d packets before the debounce delay, want 0", got)
	}
	h.clk.Advance(100 * time.Millisecond) // t = 1000 ms after the first change
	if got := h.sends(); got != 1 {
		t.Fatalf("sent %d packets, want 1", got)
	}
	p := c.read()
	if p.Type != "dom" || p.Data != `{"v":3}` {
		t.Fatalf("packet type %q data %q, want dom with the state at push time", p.Type, p.Data)
	}
	if !p.from.IP.Equal(net.IPv4(127, 0, 0, 1)) || p.from.Port != h.svc.Addr().Port {
		t.Fatalf("packet from %v, want the service socket %v", p.from, h.svc.Addr())
	}
	c.noPacket()

	// The marker is gone after the round: a new change schedules a new push
	// with a new, larger lastRefTime.
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	if got := h.sends(); got != 2 {
		t.Fatalf("sent %d packets after the second change, want 2", got)
	}
	if p2 := c.read(); p2.LastRef <= p.LastRef {
		t.Fatalf("second lastRefTime %d not after first %d", p2.LastRef, p.LastRef)
	}
}

func TestOtherServiceNotDebouncedTogether(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	h.subscribe(c, ns, "DEFAULT_GROUP@@other", ua)
	h.subscribe(c, "dev", svc, ua)
	h.svc.ServiceChanged(ns, svc)
	h.svc.ServiceChanged(ns, "DEFAULT_GROUP@@other")
	h.clk.Advance(time.Second)
	if got := h.sends(); got != 2 {
		t.Fatalf("sent %d packets, want 2 (one per changed service, none for namespace dev)", got)
	}
}

func TestRetransmitOnceThenGiveUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	first := c.read()

	h.clk.Advance(10*time.Second - time.Millisecond)
	if got := h.sends(); got != 1 {
		t.Fatalf("sends before the ack timeout = %d, want 1", got)
	}
	wantState(t, h.svc.State(false, false), 0, 1, 1) // un-acked counts as failed
	h.clk.Advance(time.Millisecond)
	if got := h.sends(); got != 2 {
		t.Fatalf("sends after 10s = %d, want 2", got)
	}
	second := c.read()
	if !bytes.Equal(first.raw, second.raw) {
		t.Fatalf("resend differs:\n%q\n%q", first.raw, second.raw)
	}
	// Still subscribed, still refreshed: the give-up does not depend on it.
	h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: svc, Agent: ua, IP: "127.0.0.1", Port: c.port()})

	h.clk.Advance(10 * time.Second)
	if got := h.sends(); got != 2 {
		t.Fatalf("sends after 20s = %d, want 2 (given up)", got)
	}
	if n := h.pendingLen(); n != 0 {
		t.Fatalf("pending after give-up = %d, want 0", n)
	}
	wantState(t, h.svc.State(false, false), 0, 1, 1)
	h.clk.Advance(time.Minute)
	if got := h.sends(); got != 2 {
		t.Fatalf("sends after a minute = %d, want 2", got)
	}
	c.noPacket() // nothing but the two pushes arrived
}

func TestAckStopsRetransmit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ack  func(ref int64) []byte
	}{
		{"java string", javaAck},
		{"go sorted keys", func(ref int64) []byte {
			return fmt.Appendf(nil, `{"data":"","lastRefTime":"%d","type":"push-ack"}`, ref)
		}},
		{"number", func(ref int64) []byte {
			return fmt.Appendf(nil, `{"type":"push-ack","lastRefTime":%d}`, ref)
		}},
		{"padded with unknown fields", func(ref int64) []byte {
			return fmt.Appendf(nil, "\n {\"x\":{\"y\":[1,2]},\"lastRefTime\":\" %d \",\"type\":\"unknow-ack\"}\x00\x00", ref)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			c := newClient(t)
			h.subscribe(c, ns, svc, ua)
			h.svc.ServiceChanged(ns, svc)
			h.clk.Advance(time.Second)
			p := c.read()
			c.send(h.svc.Addr(), tc.ack(p.LastRef))
			h.waitAcks(1)
			if n := h.pendingLen(); n != 0 {
				t.Fatalf("pending after ack = %d, want 0", n)
			}
			h.clk.Advance(30 * time.Second)
			if got := h.sends(); got != 1 {
				t.Fatalf("sends = %d, want 1 (no retransmit after ack)", got)
			}
			st := h.svc.State(false, false)
			wantState(t, st, 1, 1, 0)
			if got := string(h.svc.RenderState(st, false)); got != `{"succeed":1,"total":1,"ratio":1.0,"reset":false}` {
				t.Fatalf("RenderState = %s", got)
			}
		})
	}
}

func TestAckIgnored(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ack  func(h *harness, c *client, ref int64)
	}{
		{"from another port", func(h *harness, c *client, ref int64) {
			other := newClient(h.t)
			other.send(h.svc.Addr(), javaAck(ref))
		}},
		{"wrong lastRefTime", func(h *harness, c *client, ref int64) {
			c.send(h.svc.Addr(), javaAck(ref+1))
		}},
		{"not JSON", func(h *harness, c *client, ref int64) {
			c.send(h.svc.Addr(), fmt.Appendf(nil, "lastRefTime=%d", ref))
		}},
		{"lastRefTime not a long", func(h *harness, c *client, ref int64) {
			c.send(h.svc.Addr(), fmt.Appendf(nil, `{"lastRefTime":"%d.0"}`, ref))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			c := newClient(t)
			h.subscribe(c, ns, svc, ua)
			h.svc.ServiceChanged(ns, svc)
			h.clk.Advance(time.Second)
			p := c.read()
			tc.ack(h, c, p.LastRef)
			h.waitAcks(1)
			if n := h.pendingLen(); n != 1 {
				t.Fatalf("pending after a non-matching ack = %d, want 1", n)
			}
			h.clk.Advance(10 * time.Second)
			if got := h.sends(); got != 2 {
				t.Fatalf("sends = %d, want 2 (retransmitted)", got)
			}
			// The real ack still works for the resend.
			c.read()
			c.send(h.svc.Addr(), javaAck(p.LastRef))
			h.waitAcks(2)
			h.clk.Advance(20 * time.Second)
			wantState(t, h.svc.State(false, false), 1, 1, 0)
		})
	}
}

func TestZombieExpiry(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)

	h.clk.Advance(10 * time.Second) // now - lastRef == TTL: still alive
	if got := len(h.svc.Subscribers(ns, svc)); got != 1 {
		t.Fatalf("subscribers at exactly 10s = %d, want 1", got)
	}
	h.clk.Advance(time.Millisecond)
	if got := len(h.svc.Subscribers(ns, svc)); got != 0 {
		t.Fatalf("subscribers after 10s = %d, want 0", got)
	}
	if got := len(h.svc.All()); got != 0 {
		t.Fatalf("All after 10s = %d, want 0", got)
	}
	if got := len(h.svc.Stored()); got != 1 {
		t.Fatalf("Stored before the sweep = %d, want 1 (Java lists zombies until swept)", got)
	}
	h.clk.Advance(10*time.Second - time.Millisecond) // sweep at 20s
	if got := len(h.svc.Stored()); got != 0 {
		t.Fatalf("Stored after the sweep = %d, want 0", got)
	}
}

func TestZombieSkippedAtPushAndRefreshKeepsAlive(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.SweepInterval = time.Hour })
	stale, fresh := newClient(t), newClient(t)
	h.subscribe(stale, ns, svc, ua)
	h.subscribe(fresh, ns, svc, ua)
	h.clk.Advance(9 * time.Second)
	h.subscribe(fresh, ns, svc, ua) // refresh (same key)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(2 * time.Second) // push at 10s: stale is exactly at its TTL, still alive
	if got := h.sends(); got != 2 {
		t.Fatalf("sends at 10s = %d, want 2", got)
	}
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second) // change at 11s, push at 12s: stale is a zombie
	if got := h.sends(); got != 3 {
		t.Fatalf("sends at 12s = %d, want 3 (zombie skipped)", got)
	}
	if n := len(h.svc.Stored()); n != 1 {
		t.Fatalf("subscribers stored after push = %d, want 1 (zombie removed at push time)", n)
	}
	fresh.read()
	fresh.read()
	stale.read()
	stale.noPacket()
}

func TestGzipThreshold(t *testing.T) {
	t.Parallel()
	const ref = 1_000_000_000_000 // 13 digits
	envelopeLen := func(payload int) int {
		return len(`{"type":"dom","data":"`) + payload + len(`","lastRefTime":`) + 13 + 1
	}
	for _, size := range []int{1022, 1023, 1024, 1025} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel()
			payloadLen := size - envelopeLen(0)
			h := newHarness(t, func(c *Config) { c.Nano = func() int64 { return ref } })
			h.r.set(func(Subscriber) ([]byte, error) {
				return bytes.Repeat([]byte("a"), payloadLen), nil
			})
			c := newClient(t)
			h.subscribe(c, ns, svc, ua)
			h.svc.ServiceChanged(ns, svc)
			h.clk.Advance(time.Second)
			p := c.read()
			if len(p.plain) != size || envelopeLen(payloadLen) != size {
				t.Fatalf("envelope is %d bytes, want %d", len(p.plain), size)
			}
			gz := bytes.HasPrefix(p.raw, []byte{0x1f, 0x8b})
			if want := size >= 1024; gz != want {
				t.Fatalf("%d-byte datagram gzipped = %v, want %v", size, gz, want)
			}
			if p.LastRef != ref || p.Data != strings.Repeat("a", payloadLen) {
				t.Fatalf("decoded packet lastRefTime %d data %d bytes", p.LastRef, len(p.Data))
			}
		})
	}
}

func TestPacketBytes(t *testing.T) {
	t.Parallel()
	payload := "{\"name\":\"g@@s\",\"m\":{\"k\":\"a\\\"b/<>&é中\x01\x1f\x7f\"}}\t\n\r\b\f"
	want := `{"type":"dom","data":"{\"name\":\"g@@s\",\"m\":{\"k\":\"a\\\"b/<>&é中\u0001\u001F` + "\x7f" +
		`\"}}\t\n\r\b\f","lastRefTime":42}`
	h := newHarness(t, func(c *Config) { c.Nano = func() int64 { return 42 } })
	h.r.set(func(Subscriber) ([]byte, error) { return []byte(payload), nil })
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	p := c.read()
	if string(p.raw) != want {
		t.Fatalf("datagram:\n got %s\nwant %s", p.raw, want)
	}
	if p.Data != payload {
		t.Fatalf("data does not round-trip: %q", p.Data)
	}
}

func TestOneLastRefTimePerRound(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	var clients []*client
	for _, agent := range []string{ua, "Nacos-Go-Client:v1.1.6"} {
		c := newClient(t)
		clients = append(clients, c)
		h.subscribe(c, ns, svc, agent)
	}
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	a, b := clients[0].read(), clients[1].read()
	if a.LastRef != b.LastRef {
		t.Fatalf("lastRefTime differs within a round: %d vs %d", a.LastRef, b.LastRef)
	}
	// Each ack is keyed by its own address.
	clients[1].send(h.svc.Addr(), javaAck(b.LastRef))
	h.waitAcks(1)
	if n := h.pendingLen(); n != 1 {
		t.Fatalf("pending = %d, want 1", n)
	}
}

func TestSameAddressTwoKeysShareAckKey(t *testing.T) {
	// Two subscribers on one address (different clusters) get two datagrams
	// with the same ack key; Java counts one push and one ack clears both.
	t.Parallel()
	h := newHarness(t, nil)
	c := newClient(t)
	for _, cl := range []string{"", "c1"} {
		h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: svc, Clusters: cl, Agent: ua, IP: "127.0.0.1", Port: c.port()})
	}
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	p1, p2 := c.read(), c.read()
	if p1.Data == p2.Data {
		t.Fatalf("both subscribers got the same payload %q", p1.Data)
	}
	wantState(t, h.svc.State(false, false), 0, 1, 1)
	c.send(h.svc.Addr(), javaAck(p1.LastRef))
	h.waitAcks(1)
	h.clk.Advance(30 * time.Second)
	if got := h.sends(); got != 2 {
		t.Fatalf("sends = %d, want 2", got)
	}
	wantState(t, h.svc.State(false, false), 1, 1, 0)
}

func TestRenderErrorSkipsSubscriber(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	bad, good := newClient(t), newClient(t)
	h.subscribe(bad, ns, svc, "bad")
	h.subscribe(good, ns, svc, ua)
	h.r.set(func(sub Subscriber) ([]byte, error) {
		if sub.Agent == "bad" {
			return nil, errors.New("boom")
		}
		return []byte(`{}`), nil
	})
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	if got := h.sends(); got != 1 {
		t.Fatalf("sends = %d, want 1", got)
	}
	good.read()
	bad.noPacket()
	wantState(t, h.svc.State(false, false), 0, 1, 1)
}

func TestSendErrorCountsFailed(t *testing.T) {
	t.Parallel()
	// An incompressible payload larger than a UDP datagram can carry makes
	// the kernel reject the send (EMSGSIZE).
	rnd := rand.New(rand.NewPCG(1, 2))
	big := make([]byte, 200_000)
	for i := range big {
		big[i] = byte('a' + rnd.IntN(26))
	}
	h := newHarness(t, nil)
	h.r.set(func(Subscriber) ([]byte, error) { return big, nil })
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	wantState(t, h.svc.State(false, false), 0, 1, 1)
	if n := h.pendingLen(); n != 0 {
		t.Fatalf("pending after send error = %d, want 0", n)
	}
	h.clk.Advance(30 * time.Second)
	wantState(t, h.svc.State(false, false), 0, 1, 1)
}

func TestMaxPendingOverflowCountsFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.MaxPending = 1 })
	a, b := newClient(t), newClient(t)
	h.subscribe(a, ns, svc, ua)
	h.subscribe(b, ns, svc, ua)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	if got := h.sends(); got != 1 {
		t.Fatalf("sends = %d, want 1 (second dropped by the cap)", got)
	}
	wantState(t, h.svc.State(false, false), 0, 2, 2)
	h.clk.Advance(20 * time.Second)
	wantState(t, h.svc.State(false, false), 0, 2, 2)
	if n := h.pendingLen(); n != 0 {
		t.Fatalf("pending = %d, want 0", n)
	}
}

func TestStateDetailAndReset(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Nano = func() int64 { return 7 } })
	h.r.set(func(Subscriber) ([]byte, error) { return []byte(`{"a":"x"}`), nil })
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)

	st := h.svc.State(true, false)
	if len(st.Data) != 1 || st.Data[0] != `{"type":"dom","data":"{\"a\":\"x\"}","lastRefTime":7}` {
		t.Fatalf("detail data = %q", st.Data)
	}
	want := `{"succeed":0,"total":1,"ratio":0.0,"data":["{\"type\":\"dom\",\"data\":\"{\\\"a\\\":\\\"x\\\"}\",\"lastRefTime\":7}"],"reset":false}`
	if got := string(h.svc.RenderState(st, true)); got != want {
		t.Fatalf("RenderState:\n got %s\nwant %s", got, want)
	}

	st = h.svc.State(false, true)
	if got := string(h.svc.RenderState(st, false)); got != `{"succeed":0,"total":1,"ratio":0.0,"reset":true}` {
		t.Fatalf("RenderState with reset = %s", got)
	}
	// Reset forgets the un-acked push: it counts as succeeded and is not resent.
	wantState(t, h.svc.State(false, false), 1, 1, 0)
	h.clk.Advance(30 * time.Second)
	if got := h.sends(); got != 1 {
		t.Fatalf("sends after reset = %d, want 1", got)
	}
}

func TestRenderStateTable(t *testing.T) {
	t.Parallel()
	var s Service
	cases := []struct {
		st     State
		detail bool
		want   string
	}{
		{State{}, false, `{"succeed":0,"total":0,"ratio":0,"reset":false}`},
		{State{Data: []string{}}, true, `{"succeed":0,"total":0,"ratio":0,"data":[],"reset":false}`},
		{State{Succeed: 1, Total: 2, Failed: 1, Ratio: 0.5}, false, `{"succeed":1,"total":2,"ratio":0.5,"reset":false}`},
		{State{Succeed: 2, Total: 3, Failed: 1, Ratio: float64(float32(2) / float32(3))}, false, `{"succeed":2,"total":3,"ratio":0.6666667,"reset":false}`},
		{State{Succeed: 1, Total: 10000, Failed: 9999, Ratio: float64(float32(1) / float32(10000))}, false, `{"succeed":1,"total":10000,"ratio":1.0E-4,"reset":false}`},
		{State{Succeed: -1, Total: 1, Failed: 2, Ratio: -1}, false, `{"succeed":-1,"total":1,"ratio":-1.0,"reset":false}`},
		{State{Data: []string{"a\x00\"\\"}, Reset: true}, true, `{"succeed":0,"total":0,"ratio":0,"data":["a\u0000\"\\"],"reset":true}`},
	}
	for _, tc := range cases {
		if got := string(s.RenderState(tc.st, tc.detail)); got != tc.want {
			t.Errorf("RenderState(%+v, %v) = %s, want %s", tc.st, tc.detail, got, tc.want)
		}
	}
}

func TestStateRatioIsJavaFloat(t *testing.T) {
	t.Parallel()
	var s Service
	s.total, s.failed = 3, 1
	st := s.State(false, false)
	if got := string(s.RenderState(st, false)); got != `{"succeed":2,"total":3,"ratio":0.6666667,"reset":false}` {
		t.Fatalf("RenderState = %s", got)
	}
}

func TestJavaFloat(t *testing.T) {
	t.Parallel()
	cases := []struct {
		f    float32
		want string
	}{
		{0, "0.0"}, {1, "1.0"}, {0.5, "0.5"}, {2.0 / 3, "0.6666667"}, {0.1, "0.1"},
		{1e-3, "0.001"}, {9.999e-4, "9.999E-4"}, {1e-4, "1.0E-4"}, {1.5e-5, "1.5E-5"},
		{1e7, "1.0E7"}, {9999999, "9999999.0"}, {1.234e8, "1.234E8"}, {-0.25, "-0.25"},
	}
	for _, tc := range cases {
		if got := javaFloat(tc.f); got != tc.want {
			t.Errorf("javaFloat(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}

func TestJacksonEscape(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"", ""},
		{"plain/<>&'", "plain/<>&'"},
		{`"\`, `\"\\`},
		{"\b\t\n\f\r", `\b\t\n\f\r`},
		{"\x00\x01\x0b\x1f\x20\x7f", `\u0000\u0001\u000B\u001F ` + "\x7f"},
		{"é中😀\u2028", "é中😀\u2028"},
	}
	for _, tc := range cases {
		if got := string(compat.AppendJavaString(nil, tc.in)); got != `"`+tc.want+`"` {
			t.Errorf("escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSubscribeKeysAndNormalisation(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	base := Subscriber{NamespaceID: ns, Service: svc, Clusters: "c1", Agent: ua, App: "app1", IP: "127.0.0.1", Port: 5000}
	h.svc.Subscribe(base)
	h.clk.Advance(5 * time.Second)
	again := base
	again.App = "app2" // same key: refresh only, app kept
	h.svc.Subscribe(again)
	for _, mut := range []func(*Subscriber){
		func(s *Subscriber) { s.Agent = "Nacos-Go-Client:v1.1.6" },
		func(s *Subscriber) { s.Clusters = "" },
		func(s *Subscriber) { s.Port = 5001 },
		func(s *Subscriber) { s.IP = "" }, // loopback 127.0.0.1; port changed below
	} {
		s := base
		mut(&s)
		if s.IP == "" {
			s.Port = 5002
		}
		h.svc.Subscribe(s)
	}
	h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: svc, IP: "::1", Port: 5003})
	h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: svc, IP: "::ffff:127.0.0.3", Port: 5004})
	h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: svc, IP: "127.0.0.1", Port: 0})     // ignored
	h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: svc, IP: "127.0.0.1", Port: 70000}) // ignored

	subs := h.svc.Subscribers(ns, svc)
	sort.Slice(subs, func(i, j int) bool { return pushClientString(subs[i]) < pushClientString(subs[j]) })
	var addrs []string
	for _, s := range subs {
		addrs = append(addrs, s.AddrStr()+"|"+s.Clusters+"|"+s.Agent+"|"+s.App)
	}
	want := []string{
		"0:0:0:0:0:0:0:1:5003|||",
		"127.0.0.1:5000||" + ua + "|app1",
		"127.0.0.3:5004|||",
		"127.0.0.1:5000|c1|Nacos-Go-Client:v1.1.6|app1",
		"127.0.0.1:5000|c1|" + ua + "|app1",
		"127.0.0.1:5001|c1|" + ua + "|app1",
		"127.0.0.1:5002|c1|" + ua + "|app1",
	}
	if strings.Join(addrs, "\n") != strings.Join(want, "\n") {
		t.Fatalf("subscribers:\n%s\nwant\n%s", strings.Join(addrs, "\n"), strings.Join(want, "\n"))
	}
	if subs[3].LastRef != epoch.Add(5*time.Second) || subs[4].LastRef != epoch.Add(5*time.Second) {
		t.Fatalf("refreshed LastRef = %v, new one %v", subs[3].LastRef, subs[4].LastRef)
	}
	if got := len(h.svc.Subscribers(ns, "DEFAULT_GROUP@@none")); got != 0 {
		t.Fatalf("unknown service has %d subscribers", got)
	}
	if got := len(h.svc.All()); got != len(want) {
		t.Fatalf("All = %d, want %d", got, len(want))
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := DefaultConfig()
	ok.Render = func(Subscriber) ([]byte, error) { return nil, nil }
	if err := ok.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	// zero fields mean the defaults
	zero := Config{Render: ok.Render}
	if err := zero.Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	got, want := zero.withDefaults(), ok
	got.Render, want.Render, got.Logger = nil, nil, nil
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("zero config with defaults %+v, want %+v", got, want)
	}
	for name, mut := range map[string]func(*Config){
		"Debounce":      func(c *Config) { c.Debounce = -1 },
		"AckTimeout":    func(c *Config) { c.AckTimeout = -1 },
		"MaxRetry":      func(c *Config) { c.MaxRetry = -1 },
		"SubscriberTTL": func(c *Config) { c.SubscriberTTL = -1 },
		"SweepInterval": func(c *Config) { c.SweepInterval = -1 },
		"MaxPending":    func(c *Config) { c.MaxPending = -1 },
		"Render":        func(c *Config) { c.Render = nil },
	} {
		c := ok
		mut(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: Validate() = %v, want an error naming the field", name, err)
		}
		if _, err := New(c); err == nil {
			t.Errorf("%s: New accepted an invalid config", name)
		}
	}
}

func TestCloseStopsEverything(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second) // one pending ack with its retransmit timer
	if err := h.svc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	h.svc.ServiceChanged(ns, svc)
	h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: svc, IP: "127.0.0.1", Port: 1})
	if n := h.clk.Pending(); n != 0 {
		t.Fatalf("%d timers left after Close", n)
	}
	h.clk.Advance(time.Minute)
	if got := h.sends(); got != 1 {
		t.Fatalf("sends after Close = %d, want 1", got)
	}
}

// TestRealTime runs with the real clock: change → packet → ack → counters.
func TestRealTime(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.Debounce = 50 * time.Millisecond
	cfg.Clock = clock.Real{}
	cfg.Logger = testLogger(t)
	cfg.Render = func(sub Subscriber) ([]byte, error) {
		return fmt.Appendf(nil, `{"name":%q,"cacheMillis":10000}`, sub.Service), nil
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := newClient(t)
	s.Subscribe(Subscriber{NamespaceID: ns, Service: svc, Agent: ua, IP: "127.0.0.1", Port: c.port()})
	s.ServiceChanged(ns, svc)
	s.ServiceChanged(ns, svc)
	p := c.read()
	if p.Type != "dom" || p.Data != `{"name":"DEFAULT_GROUP@@demo","cacheMillis":10000}` || p.LastRef <= nanoBase {
		t.Fatalf("packet %+v", p)
	}
	c.send(s.Addr(), javaAck(p.LastRef))
	eventually(t, 5*time.Second, func() error {
		st := s.State(false, false)
		if st.Succeed != 1 || st.Total != 1 || st.Failed != 0 {
			return fmt.Errorf("state %+v", st)
		}
		return nil
	})
	if got := string(s.RenderState(s.State(false, false), false)); got != `{"succeed":1,"total":1,"ratio":1.0,"reset":false}` {
		t.Fatalf("RenderState = %s", got)
	}
}

func TestDefaultNanoStrictlyIncreasing(t *testing.T) {
	t.Parallel()
	n := defaultNano()
	prev := n()
	if prev < nanoBase {
		t.Fatalf("first value %d below base", prev)
	}
	for i := 0; i < 10000; i++ {
		v := n()
		if v <= prev {
			t.Fatalf("value %d not after %d", v, prev)
		}
		prev = v
	}
}

func TestSubscriberTTLFunc(t *testing.T) {
	t.Parallel()
	var ttl atomic.Int64
	ttl.Store(int64(30 * time.Second))
	h := newHarness(t, func(c *Config) {
		c.SubscriberTTLFunc = func() time.Duration { return time.Duration(ttl.Load()) }
	})
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	h.clk.Advance(25 * time.Second) // past the static 10s, sweep ran at 20s
	if got := len(h.svc.Stored()); got != 1 {
		t.Fatalf("Stored at 25s with a 30s TTL = %d, want 1", got)
	}
	ttl.Store(int64(10 * time.Second)) // switch changed back
	if got := len(h.svc.All()); got != 0 {
		t.Fatalf("All after the TTL dropped = %d, want 0", got)
	}
}
