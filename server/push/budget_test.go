package push

import (
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/netip"
	"testing"
	"time"
)

// clientOn is a push receiver bound to ip:port (port 0: any).
func clientOn(t *testing.T, ip string, port int) *client {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip), Port: port})
	if err != nil {
		t.Fatalf("client listen %s:%d: %v", ip, port, err)
	}
	t.Cleanup(func() { conn.Close() })
	return &client{t: t, conn: conn}
}

// Issue 26 item 9: a subscription naming a third party's clientIP is
// pushed to its own source address, unless that source is trusted.
func TestPushGoesToTheSource(t *testing.T) {
	t.Parallel()
	for _, trusted := range []bool{false, true} {
		h := newHarness(t, func(c *Config) {
			if trusted {
				c.TrustedSources = []netip.Prefix{netip.MustParsePrefix("127.0.0.3/32")}
			}
		})
		victim := clientOn(t, "127.0.0.2", 0)
		requester := clientOn(t, "127.0.0.3", victim.port()) // same port, the requester's address
		h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: svc, Agent: ua, IP: "127.0.0.2", Port: victim.port(), Source: "127.0.0.3"})
		h.svc.ServiceChanged(ns, svc)
		h.clk.Advance(time.Second)
		if got := h.sends(); got != 1 {
			t.Fatalf("trusted=%v: sent %d, want 1", trusted, got)
		}
		if trusted {
			victim.read() // Java's behaviour for a trusted source (a proxy)
			requester.noPacket()
		} else {
			requester.read()
			victim.noPacket()
		}
		// the subscriber is listed with the clientIP it named, as in Java
		if subs := h.svc.Subscribers(ns, svc); len(subs) != 1 || subs[0].IP != "127.0.0.2" {
			t.Fatalf("subscribers %+v", subs)
		}
	}
}

// Issue 26 item 9: the push bytes sent to one target are capped (a token
// bucket); a push past the budget is not sent and counted, and pushes
// resume as the budget refills.
func TestPushBytesCappedPerTarget(t *testing.T) {
	t.Parallel()
	noise := make([]byte, 2000)
	rand.Read(noise)
	payload := `{"noise":"` + hex.EncodeToString(noise) + `"}` // ~4 KB, gzips to ~2.2 KB
	h := newHarness(t, func(c *Config) {
		c.TargetBurst = 10_000
		c.TargetBytesPerSecond = 1_000
		c.SubscriberTTL = time.Hour
	})
	h.r.set(func(Subscriber) ([]byte, error) { return []byte(payload), nil })
	c := newClient(t)
	other := newClient(t)
	h.subscribe(c, ns, svc, ua)
	// one change a second for 10 s, each push acked at once (no resends)
	received, acks := 0, int64(0)
	for i := 0; i < 10; i++ {
		h.svc.ServiceChanged(ns, svc)
		h.clk.Advance(time.Second)
		if err := c.conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 70000)
		if n, _, err := c.conn.ReadFromUDP(buf); err == nil {
			received += n
			p := c.readFrom(buf[:n])
			c.send(h.svc.Addr(), javaAck(p.LastRef))
			acks++
			h.waitAcks(acks)
		}
	}
	ct := h.svc.Counters()
	if ct.Capped == 0 || received > 10_000+10*1_000 || received == 0 {
		t.Fatalf("%d bytes pushed to one target in 10 s, %d pushes capped; want some, at most the burst plus 10 s of refill", received, ct.Capped)
	}
	if ct.Failed != ct.Capped || ct.Total != 10 {
		t.Fatalf("counters %+v: want every change counted and the capped ones failed", ct)
	}
	// another target has its own budget
	h.subscribe(other, ns, "DEFAULT_GROUP@@other", ua)
	h.svc.ServiceChanged(ns, "DEFAULT_GROUP@@other")
	h.clk.Advance(time.Second)
	other.read()
	// after a quiet spell the budget is back
	h.clk.Advance(30 * time.Second)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	c.read()
}
