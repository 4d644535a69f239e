package push

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestLeadingEdgePushesAtOnceThenOncePerWindow(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.LeadingEdge = true })
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	var version atomic.Int64
	h.r.set(func(Subscriber) ([]byte, error) { return fmt.Appendf(nil, `{"v":%d}`, version.Load()), nil })

	version.Add(1)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(0)
	if got := h.sends(); got != 1 {
		t.Fatalf("first change of a quiet service: sent %d packets, want 1 at once", got)
	}
	if p := c.read(); p.Data != `{"v":1}` {
		t.Fatalf("first packet %q", p.Data)
	}
	for i := 0; i < 2; i++ { // two more changes inside the window
		h.clk.Advance(300 * time.Millisecond)
		version.Add(1)
		h.svc.ServiceChanged(ns, svc)
	}
	h.clk.Advance(399 * time.Millisecond) // t = 999 ms
	if got := h.sends(); got != 1 {
		t.Fatalf("sent %d packets inside the window, want 1", got)
	}
	h.clk.Advance(time.Millisecond) // t = 1000 ms: the coalesced push
	if got := h.sends(); got != 2 {
		t.Fatalf("sent %d packets at the window end, want 2", got)
	}
	if p := c.read(); p.Data != `{"v":3}` {
		t.Fatalf("coalesced packet %q, want the state at push time", p.Data)
	}
	h.clk.Advance(5 * time.Second) // quiet again: next change goes out at once
	version.Add(1)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(0)
	if p := c.read(); p.Data != `{"v":4}` {
		t.Fatalf("after quiet period %q", p.Data)
	}
}

func TestLeadingEdgeChangeDuringRoundIsNotLost(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.LeadingEdge = true })
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	var version atomic.Int64
	h.r.set(func(Subscriber) ([]byte, error) {
		v := version.Add(1)
		if v == 1 { // a change arrives while the first round renders
			h.svc.ServiceChanged(ns, svc)
		}
		return fmt.Appendf(nil, `{"v":%d}`, v), nil
	})
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(0)
	if p := c.read(); p.Data != `{"v":1}` {
		t.Fatalf("first packet %q", p.Data)
	}
	h.clk.Advance(time.Second)
	if p := c.read(); p.Data != `{"v":2}` {
		t.Fatalf("the change during the round was not pushed: %q", p.Data)
	}
}
