package push

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock"
)

// TestConcurrentUse drives every entry point at once with the real clock and
// tiny timings, for the race detector and for deadlocks (Close must return).
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig()
	cfg.ListenAddr = "127.0.0.1:0"
	cfg.Debounce = time.Millisecond
	cfg.AckTimeout = 2 * time.Millisecond
	cfg.SubscriberTTL = 20 * time.Millisecond
	cfg.SweepInterval = 5 * time.Millisecond
	cfg.Clock = clock.Real{}
	cfg.Logger = testLogger(t)
	cfg.Render = func(sub Subscriber) ([]byte, error) {
		return fmt.Appendf(nil, `{"name":%q,"agent":%q}`, sub.Service, sub.Agent), nil
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	clients := []*client{newClient(t), newClient(t)}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, c := range clients { // echo every push back as an ack
		wg.Add(1)
		go func(c *client) {
			defer wg.Done()
			buf := make([]byte, 70000)
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = c.conn.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
				n, _, err := c.conn.ReadFromUDP(buf)
				if err != nil {
					continue
				}
				// Pushes here are small (never gzipped) and carry lastRefTime
				// like an ack, so the ack decoder reads them.
				if p, err := parseAck(buf[:n]); err == nil {
					_, _ = c.conn.WriteToUDP(javaAck(p.LastRefTime), s.Addr())
				}
			}
		}(c)
	}
	var workers sync.WaitGroup
	for w := 0; w < 4; w++ {
		workers.Add(1)
		go func(w int) {
			defer workers.Done()
			for i := 0; i < 300; i++ {
				name := fmt.Sprintf("DEFAULT_GROUP@@svc%d", i%5)
				c := clients[(w+i)%2]
				s.Subscribe(Subscriber{NamespaceID: ns, Service: name, Agent: fmt.Sprint("a", w), IP: "127.0.0.1", Port: c.port()})
				s.ServiceChanged(ns, name)
				switch i % 50 {
				case 0:
					s.RenderState(s.State(true, i%100 == 0), true)
				case 10:
					_ = s.All()
					_ = s.Stored()
					_ = s.Subscribers(ns, name)
				}
				if i%20 == 0 {
					time.Sleep(time.Millisecond) // let timers fire in between (load shaping, not synchronisation)
				}
			}
		}(w)
	}
	workers.Wait()
	eventually(t, 5*time.Second, func() error {
		if st := s.State(false, false); st.Succeed == 0 {
			return fmt.Errorf("no push acked yet: %+v", st)
		}
		return nil
	})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if s.acksRead.Load() == 0 {
		t.Fatal("no ack was read")
	}
}
