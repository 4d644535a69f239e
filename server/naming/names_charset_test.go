package naming

import (
	"math/rand/v2"
	"regexp"
	"testing"
)

// TestNameCharsets: the byte loops accept exactly what Java's patterns
// (as Go regexps) accept, over random strings drawn from the allowed
// bytes, their neighbours, and multi-byte runes.
func TestNameCharsets(t *testing.T) {
	t.Parallel()
	service := regexp.MustCompile(`^[0-9a-zA-Z@\.:_-]+$`)
	cluster := regexp.MustCompile(`^[0-9a-zA-Z-]+$`)
	alphabet := []string{"a", "Z", "0", "9", "-", "@", ".", ":", "_", "/", " ", "`", "{", "[", "\x00", "é", "服", "\xff", "+", "#"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		s := ""
		for range rng.IntN(6) {
			s += alphabet[rng.IntN(len(alphabet))]
		}
		if got, want := serviceNameOK(s), service.MatchString(s); got != want {
			t.Fatalf("serviceNameOK(%q) = %v, pattern says %v", s, got, want)
		}
		if got, want := clusterNameOK(s), cluster.MatchString(s); got != want {
			t.Fatalf("clusterNameOK(%q) = %v, pattern says %v", s, got, want)
		}
	}
}
