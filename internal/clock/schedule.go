package clock

import (
	"sync"
	"time"
)

// Schedules runs a component's periodic work on an injectable clock. Each
// schedule holds exactly one timer handle, replaced at every tick; Close
// stops them and waits for callbacks already running. The zero value is not
// usable: build one with NewSchedules.
type Schedules struct {
	clk Clock

	mu      sync.Mutex
	closed  bool
	timers  []Timer // one per schedule, the next tick of each
	running sync.WaitGroup
}

// NewSchedules returns an empty set of schedules on clk.
func NewSchedules(clk Clock) *Schedules { return &Schedules{clk: clk} }

// Every runs f after initial and then every period (measured from the end
// of the previous run, like Java's scheduleWithFixedDelay) until Close.
func (s *Schedules) Every(initial, period time.Duration, f func()) {
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
func (s *Schedules) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.running.Add(1)
	return true
}

// Stopped reports whether Close was called (long callbacks stop early).
func (s *Schedules) Stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Handles is the number of timer handles held (one per schedule).
func (s *Schedules) Handles() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.timers)
}

// Close stops every schedule and waits for running callbacks.
func (s *Schedules) Close() {
	s.mu.Lock()
	s.closed = true
	for _, t := range s.timers {
		t.Stop()
	}
	s.mu.Unlock()
	s.running.Wait()
}
