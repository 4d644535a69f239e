package push

import (
	"bytes"
	"fmt"
	"net"
	"testing"
	"time"
)

// BenchmarkPushRound1000 measures one push round (render, encode, gzip, send,
// pending bookkeeping) to 1000 subscribers; it reports pushes/s. Subscribers
// share one receiving socket (distinct agents make distinct keys); the socket
// is drained by a goroutine so the kernel is not the bottleneck.
func BenchmarkPushRound1000(b *testing.B) {
	for _, bc := range []struct {
		size     int
		distinct bool // every subscriber renders different bytes (no memoisation)
	}{{300, false}, {3000, false}, {300, true}, {3000, true}} {
		b.Run(fmt.Sprintf("payload%d/distinct=%v", bc.size, bc.distinct), func(b *testing.B) {
			payload := bytes.Repeat([]byte(`{"ip":"10.0.0.1","port":8080,"weight":1.0},`), bc.size/40+1)[:bc.size]
			cfg := DefaultConfig()
			cfg.ListenAddr = "127.0.0.1:0"
			cfg.AckTimeout = time.Hour
			cfg.MaxPending = 1 << 30
			cfg.Render = func(sub Subscriber) ([]byte, error) {
				if bc.distinct {
					return append([]byte(sub.Agent), payload...), nil
				}
				return payload, nil
			}
			s, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			c := newBenchClient(b)
			for i := 0; i < 1000; i++ {
				sub := Subscriber{NamespaceID: ns, Service: svc, Agent: fmt.Sprint("agent-", i), IP: "127.0.0.1", Port: c}
				s.Subscribe(sub)
			}
			targets := s.Subscribers(ns, svc)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				s.pushTo(targets, s.nano())
			}
			b.ReportMetric(float64(b.N*len(targets))/time.Since(start).Seconds(), "pushes/s")
		})
	}
}

// newBenchClient opens a draining UDP receiver and returns its port.
func newBenchClient(b *testing.B) int {
	b.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 70000)
		for {
			if _, _, err := conn.ReadFromUDP(buf); err != nil {
				return
			}
		}
	}()
	return conn.LocalAddr().(*net.UDPAddr).Port
}
