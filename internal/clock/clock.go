// Package clock abstracts time so that expiry, debounce and retry logic can be
// tested with a fake clock (see clocktest) and run with the real one.
package clock

import "time"

// Clock is the source of time for time-driven behaviour. Implementations are
// safe for concurrent use.
type Clock interface {
	// Now returns the current wall-clock time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine once d has elapsed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not run yet; it reports whether it did.
	Stop() bool
}

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
