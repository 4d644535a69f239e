package naming

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
)

// TestSchedulesHoldOneTimerEach runs the registry's real schedules (beat
// sweep, empty-service clean, health-check rounds every 100 ms) on the fake
// clock for a simulated day (6 hours under -race): the number of timer handles the registry keeps
// must not grow with the number of ticks.
func TestSchedulesHoldOneTimerEach(t *testing.T) {
	store := openStore(t, t.TempDir())
	defer store.Close()
	clk := clocktest.New(time.Unix(1700000000, 0))
	cfg := DefaultConfig()
	cfg.Store, cfg.Clock = store, clk
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	start := reg.timerHandles()
	hours := 24
	if raceEnabled { // 864 000 health-check ticks a day cost a minute under -race; a quarter day shows the same
		hours = 6
	}
	for h := 0; h < hours; h++ {
		clk.Advance(time.Hour)
		if n := reg.timerHandles(); n != start {
			t.Fatalf("after %d simulated hours the registry holds %d timer handles, %d at start", h+1, n, start)
		}
	}
	if clk.Pending() != start {
		t.Fatalf("fake clock has %d pending timers, want %d", clk.Pending(), start)
	}
}

// TestCloseWaitsForRunningSweep: Close must not return while a scheduled
// callback (here a beat sweep blocked on a service lock) is still running.
func TestCloseWaitsForRunningSweep(t *testing.T) {
	e := newEnv(t)
	e.register("DEFAULT_GROUP@@slow", "10.0.0.1", 1, nil)
	s := e.reg.service(DefaultNamespace, "DEFAULT_GROUP@@slow")
	s.mu.Lock() // the next sweep blocks here
	advanced := make(chan struct{})
	go func() { e.clk.Advance(e.reg.cfg.BeatCheckInterval); close(advanced) }()
	// wait until the sweep is running (the clock moved and Advance is inside the callback)
	for e.clk.Now().Before(time.Unix(1700000000, 0).Add(e.reg.cfg.BeatCheckInterval)) {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { e.reg.Close(); close(closed) }()
	select {
	case <-closed:
		s.mu.Unlock()
		t.Fatal("Close returned while a sweep was still running")
	case <-time.After(200 * time.Millisecond):
	}
	s.mu.Unlock()
	<-advanced
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return after the sweep ended")
	}
}
