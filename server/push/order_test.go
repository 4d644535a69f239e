package push

import (
	"github.com/nacosd/nacosd/compat"

	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestJavaHash(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s    string
		want int32
	}{
		{"", 0}, {"hello", 99162322}, {"Aa", 2112}, {"BB", 2112}, {"中", 20013},
		{"😀", 1772899}, {"polygenelubricants", math.MinInt32},
	}
	for _, tc := range cases {
		if got := compat.JavaStringHash(tc.s); got != tc.want {
			t.Errorf("compat.JavaStringHash(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

func TestCHMTableSize(t *testing.T) {
	t.Parallel()
	cases := []struct{ initial, peak, want int }{
		{16, 0, 16}, {16, 11, 16}, {16, 12, 32}, {16, 23, 32}, {16, 24, 64},
		{2048, 1, 2048}, {2048, 1535, 2048}, {2048, 1536, 4096},
	}
	for _, tc := range cases {
		if got := chmTableSize(tc.initial, tc.peak); got != tc.want {
			t.Errorf("chmTableSize(%d, %d) = %d, want %d", tc.initial, tc.peak, got, tc.want)
		}
	}
}

// TestJavaIterationOrder checks Stored/All/Subscribers against the order
// Java's ConcurrentHashMaps iterate, computed independently (bins of
// String.hashCode spread, insertion order within a bin).
func TestJavaIterationOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	// "public##DEFAULT_GROUP@@q" and "...@@a" share bin 11 of 16; q first.
	for _, name := range []string{"q", "a", "b", "h"} {
		h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: "DEFAULT_GROUP@@" + name, Agent: ua, IP: "127.0.0.1", Port: 4000})
	}
	for port := 5000; port < 5008; port++ {
		h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: "DEFAULT_GROUP@@a", Agent: ua, IP: "127.0.0.1", Port: port})
	}
	var got []string
	for _, s := range h.svc.Stored() {
		got = append(got, fmt.Sprintf("%s:%d", strings.TrimPrefix(s.Service, "DEFAULT_GROUP@@"), s.Port))
	}
	want := "h:4000 b:4000 q:4000 " +
		"a:5003 a:5002 a:5005 a:5001 a:4000 a:5000 a:5006 a:5007 a:5004"
	// a:4000 sits in its own bin; locate it with the same rule.
	if g := strings.Join(got, " "); !sameOrderExcept(g, want, "a:4000") {
		t.Fatalf("Stored order:\n got %s\nwant %s (a:4000 anywhere among a)", g, want)
	}
	var inner []string
	for _, s := range h.svc.Subscribers(ns, "DEFAULT_GROUP@@a") {
		if s.Port != 4000 {
			inner = append(inner, fmt.Sprint(s.Port))
		}
	}
	if g := strings.Join(inner, " "); g != "5003 5002 5005 5001 5000 5006 5007 5004" {
		t.Fatalf("Subscribers order = %s", g)
	}
	if len(h.svc.All()) != len(got) {
		t.Fatalf("All has %d, Stored %d", len(h.svc.All()), len(got))
	}
}

// sameOrderExcept compares two space-separated lists ignoring item skip.
func sameOrderExcept(a, b, skip string) bool {
	strip := func(s string) string {
		var out []string
		for _, f := range strings.Fields(s) {
			if f != skip {
				out = append(out, f)
			}
		}
		return strings.Join(out, " ")
	}
	return strip(a) == strip(b) && strings.Contains(a, skip)
}

// TestStateDetailOrder checks the detail list against Java's ackMap order
// for keys "127.0.0.1,<port>,7" (computed independently; no collisions).
func TestStateDetailOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, func(c *Config) { c.Nano = func() int64 { return 7 } })
	h.r.set(func(sub Subscriber) ([]byte, error) { return fmt.Append(nil, sub.Port), nil })
	for port := 5000; port < 5006; port++ { // nothing listens there: pushes stay un-acked
		h.svc.Subscribe(Subscriber{NamespaceID: ns, Service: svc, Agent: ua, IP: "127.0.0.1", Port: port})
	}
	h.svc.ServiceChanged(ns, svc)
	h.clk.Advance(time.Second)
	var got []string
	for _, d := range h.svc.State(true, false).Data {
		got = append(got, strings.TrimSuffix(strings.TrimPrefix(d, `{"type":"dom","data":"`), `","lastRefTime":7}`))
	}
	if g := strings.Join(got, " "); g != "5002 5001 5000 5005 5004 5003" {
		t.Fatalf("detail order = %s", g)
	}
}
