package push

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestCountersAndOnAck(t *testing.T) {
	var mu sync.Mutex
	var costs []time.Duration
	h := newHarness(t, func(c *Config) {
		c.OnAck = func(d time.Duration) { mu.Lock(); costs = append(costs, d); mu.Unlock() }
	})
	c := newClient(t)
	h.subscribe(c, ns, svc, ua)
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	p := c.read()
	if got := h.svc.Counters(); got.Total != 1 || got.Pending != 1 || got.Acked != 0 || got.Sends != 1 {
		t.Fatalf("before ack: %+v", got)
	}
	h.clk.Advance(250 * time.Millisecond) // the fake clock is the ack latency
	c.send(h.svc.Addr(), javaAck(p.LastRef))
	h.waitAcks(1)
	eventually(t, 5*time.Second, func() error {
		if got := h.svc.Counters(); got.Acked != 1 || got.Pending != 0 || got.Failed != 0 {
			return fmt.Errorf("after ack: %+v", got)
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if len(costs) != 1 || costs[0] != 250*time.Millisecond {
		t.Fatalf("OnAck costs %v, want [250ms]", costs)
	}
}
