package naming

import (
	"sync"
	"time"

	"github.com/nacosd/nacosd/internal/clock"
)

// schedules runs the registry's periodic work on the injectable clock. Each
// schedule holds exactly one timer handle, replaced at every tick; close
// stops them and waits for callbacks already running.
type schedules struct {
	clk clock.Clock

	mu      sync.Mutex
	closed  bool
	timers  []clock.Timer // one per schedule, the next tick of each
	running sync.WaitGroup
}

func newSchedules(clk clock.Clock) *schedules { return &schedules{clk: clk} }

// every runs f after initial and then every period (measured from the end
// of the previous run, like Java's scheduleWithFixedDelay) until close.
func (s *schedules) every(initial, period time.Duration, f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	i := len(s.timers)
	var run func()
	run = func() {
		if !s.enter() {
			return
		}
		defer s.running.Done()
		f()
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.closed {
			s.timers[i] = s.clk.AfterFunc(period, run)
		}
	}
	s.timers = append(s.timers, s.clk.AfterFunc(initial, run))
}

// enter registers a running callback unless the schedules are closed.
func (s *schedules) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.running.Add(1)
	return true
}

// stopped reports whether close was called (long callbacks stop early).
func (s *schedules) stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// handles is the number of timer handles held (one per schedule).
func (s *schedules) handles() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.timers)
}

// close stops every schedule and waits for running callbacks.
func (s *schedules) close() {
	s.mu.Lock()
	s.closed = true
	for _, t := range s.timers {
		t.Stop()
	}
	s.mu.Unlock()
	s.running.Wait()
}
