package leakcheck

import (
	"strings"
	"testing"
	"time"
)

// fakeT records what a check reported.
type fakeT struct {
	testing.TB
	errs []string
}

func (f *fakeT) Helper()                           {}
func (f *fakeT) Errorf(format string, args ...any) { f.errs = append(f.errs, format) }

// TestFindsALeak: a goroutine started after IgnoreCurrent and still
// blocked is reported (naming its function); one that ends within Wait,
// or that an option ignores, is not.
func TestFindsALeak(t *testing.T) {
	before := IgnoreCurrent()
	stop := make(chan struct{})
	go leaky(stop)
	done := make(chan struct{})
	go func() { time.Sleep(50 * time.Millisecond); close(done) }()
	left := find([]Option{before})
	close(stop)
	if len(left) != 1 || !strings.Contains(left[0], "leakcheck.leaky") {
		t.Fatalf("found %d: %v", len(left), left)
	}
	<-done

	stop2 := make(chan struct{})
	defer close(stop2)
	go leaky(stop2)
	ft := &fakeT{}
	VerifyNone(ft, before, IgnoreFunction("github.com/nacosd/nacosd/internal/leakcheck.leaky"))
	if len(ft.errs) != 0 {
		t.Fatalf("an ignored function was reported: %v", ft.errs)
	}
}

func leaky(stop chan struct{}) { <-stop }

// TestNothingLeftWhenClean: with nothing started, nothing is reported.
func TestNothingLeftWhenClean(t *testing.T) {
	ft := &fakeT{}
	VerifyNone(ft, IgnoreCurrent())
	if len(ft.errs) != 0 {
		t.Fatalf("reported %v", ft.errs)
	}
}
