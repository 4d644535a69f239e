package push

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
)

// testLogger sends logs to t.Log so only failing tests print them.
type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// renderer is a switchable Renderer for tests.
type renderer struct {
	mu    sync.Mutex
	fn    func(Subscriber) ([]byte, error)
	calls atomic.Int64
}

func (r *renderer) set(fn func(Subscriber) ([]byte, error)) {
	r.mu.Lock()
	r.fn = fn
	r.mu.Unlock()
}

func (r *renderer) render(sub Subscriber) ([]byte, error) {
	r.calls.Add(1)
	r.mu.Lock()
	fn := r.fn
	r.mu.Unlock()
	return fn(sub)
}

type harness struct {
	t   *testing.T
	clk *clocktest.Fake
	svc *Service
	r   *renderer
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newHarness starts a Service on 127.0.0.1:0 with a fake clock and a
// renderer that returns a small JSON naming the subscriber.
func newHarness(t *testing.T, mutate func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, clk: clocktest.New(epoch), r: &renderer{}}
	h.r.set(func(sub Subscriber) ([]byte, error) {
		return fmt.Appendf(nil, `{"name":%q,"clusters":%q,"cacheMillis":10000}`, sub.Service, sub.Clusters), nil
	})
	cfg := DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.Clock = h.clk
	cfg.Render = h.r.render
	cfg.Logger = testLogger(t)
	if mutate != nil {
		mutate(&cfg)
	}
	svc, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := svc.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	h.svc = svc
	return h
}

func (h *harness) sends() int64 {
	h.svc.mu.Lock()
	defer h.svc.mu.Unlock()
	return h.svc.sends
}

func (h *harness) pendingLen() int {
	h.svc.mu.Lock()
	defer h.svc.mu.Unlock()
	return len(h.svc.pending)
}

// subscribe registers c as a subscriber of ns/svc with agent.
func (h *harness) subscribe(c *client, ns, svc, agent string) Subscriber {
	sub := Subscriber{NamespaceID: ns, Service: svc, Agent: agent, IP: "127.0.0.1", Port: c.port()}
	h.svc.Subscribe(sub)
	return sub
}

// waitAcks waits until the ack reader has handled n datagrams in total.
func (h *harness) waitAcks(n int64) {
	h.t.Helper()
	eventually(h.t, 5*time.Second, func() error {
		if got := h.svc.acksRead.Load(); got < n {
			return fmt.Errorf("ack reader handled %d datagrams, want %d", got, n)
		}
		return nil
	})
}

// client is a fake Nacos client push receiver on 127.0.0.1.
type client struct {
	t    *testing.T
	conn *net.UDPConn
}

func newClient(t *testing.T) *client {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatalf("client listen: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn}
}

func (c *client) port() int { return c.conn.LocalAddr().(*net.UDPAddr).Port }

// packet is a received push.
type packet struct {
	raw     []byte // datagram as received
	plain   []byte // gunzipped when needed
	from    *net.UDPAddr
	Type    string `json:"type"`
	Data    string `json:"data"`
	LastRef int64  `json:"lastRefTime"`
}

// read waits for the next datagram, gunzips it like the Java client (magic
// 1f 8b) and decodes the envelope.
func (c *client) read() packet {
	c.t.Helper()
	buf := make([]byte, 70000)
	if err := c.conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		c.t.Fatal(err)
	}
	n, from, err := c.conn.ReadFromUDP(buf)
	if err != nil {
		c.t.Fatalf("client read: %v", err)
	}
	p := c.readFrom(buf[:n])
	p.from = from
	return p
}

// readFrom decodes a received datagram.
func (c *client) readFrom(b []byte) packet {
	c.t.Helper()
	n := len(b)
	buf := b
	p := packet{raw: append([]byte(nil), b...)}
	p.plain = p.raw
	if n >= 2 && buf[0] == 0x1f && buf[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(p.raw))
		if err != nil {
			c.t.Fatalf("gunzip: %v", err)
		}
		if p.plain, err = io.ReadAll(zr); err != nil {
			c.t.Fatalf("gunzip: %v", err)
		}
	}
	if err := json.Unmarshal(p.plain, &p); err != nil {
		c.t.Fatalf("decode packet %q: %v", p.plain, err)
	}
	return p
}

// noPacket asserts that nothing is queued on the socket. Sends happen inside
// clocktest.Fake.Advance, and loopback delivery is synchronous, so a short
// read deadline is enough; the send counter is the primary assertion.
func (c *client) noPacket() {
	c.t.Helper()
	if err := c.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		c.t.Fatal(err)
	}
	buf := make([]byte, 70000)
	n, _, err := c.conn.ReadFromUDP(buf)
	var ne net.Error
	if err == nil {
		c.t.Fatalf("unexpected datagram %q", buf[:n])
	} else if !errors.As(err, &ne) || !ne.Timeout() {
		c.t.Fatalf("client read: %v", err)
	}
}

// send writes an ack (or anything) to the push service.
func (c *client) send(to *net.UDPAddr, b []byte) {
	c.t.Helper()
	if _, err := c.conn.WriteToUDP(b, to); err != nil {
		c.t.Fatalf("client send: %v", err)
	}
}

// javaAck is what the Java client sends (§3.7).
func javaAck(ref int64) []byte {
	return fmt.Appendf(nil, `{"type": "push-ack", "lastRefTime":"%d", "data":""}`, ref)
}

// eventually polls cond until it returns nil, failing with its last error.
func eventually(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("condition not met within %v: %v", timeout, err)
		case <-tick.C:
		}
	}
}

func wantState(t *testing.T, got State, succeed, total, failed int64) {
	t.Helper()
	if got.Succeed != succeed || got.Total != total || got.Failed != failed {
		t.Fatalf("state = succeed %d total %d failed %d, want %d %d %d",
			got.Succeed, got.Total, got.Failed, succeed, total, failed)
	}
}
