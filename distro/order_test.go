package distro

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/nacosd/nacosd/compat"
)

// TestDatumOrderIncremental replays random registers and removals (and a
// received list now and then) on the incremental datum order and on the
// direct model of Java's HashMap refill (sort everything every time): the
// orders must stay equal.
func TestDatumOrderIncremental(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	var o order
	var model []string
	for step := range 20000 {
		key := "10.0." + strconv.Itoa(rng.IntN(4)) + "." + strconv.Itoa(rng.IntN(200)) + ":8080:unknown:DEFAULT"
		switch r := rng.IntN(100); {
		case r < 65:
			o.put(key)
			old := len(model)
			if !slices.Contains(model, key) {
				model = append(model, key)
			}
			model = compat.JavaHashOrderStrings(model, compat.JavaHashCapacity(old, len(model)))
		case r < 99:
			o.remove(key)
			old := len(model)
			model = compat.JavaHashOrderStrings(model, compat.JavaHashCapacity(old, old))
			model = slices.DeleteFunc(model, func(k string) bool { return k == key })
		default: // a list received from the owner keeps its order
			got := slices.Clone(model)
			rng.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
			o.set(got)
			model = slices.Clone(got)
		}
		if !slices.Equal(o.keys, model) {
			t.Fatalf("step %d: order %v, Java's refill gives %v", step, o.keys, model)
		}
	}
}
