package cluster

import (
	"fmt"
	"testing"
)

// TestPlanRebalance: smartReloadCluster's limits (avg × 1.1 kept, members
// under avg × 0.9 take the excess), for one member.
func TestPlanRebalance(t *testing.T) {
	for _, c := range []struct {
		counts map[string]int
		want   string
	}{
		{map[string]int{"A": 30, "B": 0, "C": 0}, "map[B:10 C:9]"}, // a restarted B and a fresh C
		{map[string]int{"A": 15, "B": 0, "C": 15}, "map[B:4]"},     // C sheds its own 4 in its own check
		{map[string]int{"A": 11, "B": 8, "C": 11}, "map[]"},        // within the limits
		{map[string]int{"A": 2, "B": 0, "C": 0}, "map[]"},          // avg 0: nothing (Java's int division)
		{map[string]int{"A": 0, "B": 30, "C": 0}, "map[]"},         // A is not over
	} {
		got := planRebalance("A", c.counts)
		if got == nil {
			got = map[string]int{}
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("%v: %v, want %s", c.counts, got, c.want)
		}
	}
}
