package httpapi

import (
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

// TestAppendHTTPDate: the hand-written HTTP date equals AppendFormat's
// http.TimeFormat for random instants over four centuries, the edges of
// the fast path's range, and the epoch.
func TestAppendHTTPDate(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	lo, hi := time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	ms := []int64{0, -1, 1, time.Date(999, 12, 31, 23, 59, 59, 999e6, time.UTC).UnixMilli(), time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).UnixMilli(), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()}
	for range 100000 {
		ms = append(ms, lo+rng.Int64N(hi-lo))
	}
	for _, m := range ms {
		want := time.UnixMilli(m).UTC().Format(http.TimeFormat)
		if got := string(appendHTTPDate(nil, m)); got != want {
			t.Fatalf("appendHTTPDate(%d) = %q, want %q", m, got, want)
		}
	}
}
