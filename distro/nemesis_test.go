package distro

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNemesis runs seeded fault schedules over the hub: three members,
// beating clients (some knowing every member, some one), and every 10 to
// 20 s one fault for 8 to 16 s, the members' views of the membership
// catching up one by one, 0 to 6 s apart: a member cut off both ways, a
// member killed and restarted with an empty store, or one direction of a
// link lost. No member may stop listing a beating instance at any 100 ms
// sample, and after the last fault heals every member lists every
// instance. A failure names its seed and the fault log.
func TestNemesis(t *testing.T) {
	t.Parallel()
	for seed := range uint64(16) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			nemesis(t, seed, 3*time.Minute)
		})
	}
}

func nemesis(t *testing.T, seed uint64, d time.Duration) {
	rng := rand.New(rand.NewPCG(seed, 23))
	h := newHub(t, 3)
	svcs := h.services(6, func(s string) bool { return rng.IntN(3) == 0 })
	for i, svc := range svcs {
		for j := range 3 {
			h.client(ref(svc), fmt.Sprintf("10.%d.0.%d", i, j+1), rng.IntN(3))
		}
		h.pinnedClient(ref(svc), fmt.Sprintf("10.%d.1.1", i), h.addrs[rng.IntN(3)])
	}
	h.eventually(time.Second, h.converged)
	var log []string
	note := func(f string, args ...any) {
		log = append(log, fmt.Sprintf("%v ", h.clk.Now().Sub(time.Unix(1700000000, 0)).Round(100*time.Millisecond))+fmt.Sprintf(f, args...))
	}
	// views moves each member's view to its target in turn, lag apart
	views := func(target map[string][]string) {
		order := slices.Clone(h.addrs)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, m := range order {
			if h.node(m).down {
				continue
			}
			h.setView(m, target[m]...)
			note("%s sees %v", m, target[m])
			h.run(time.Duration(rng.IntN(61)) * 100 * time.Millisecond)
		}
	}
	all := func() map[string][]string {
		v := map[string][]string{}
		for _, m := range h.addrs {
			v[m] = h.addrs
		}
		return v
	}
	without := func(x string) []string {
		return slices.DeleteFunc(slices.Clone(h.addrs), func(a string) bool { return a == x })
	}
	for end := h.clk.Now().Add(d); h.clk.Now().Before(end); {
		h.run(time.Duration(10+rng.IntN(11)) * time.Second)
		x := h.addrs[rng.IntN(3)]
		hold := time.Duration(8+rng.IntN(9)) * time.Second
		switch rng.IntN(3) {
		case 0:
			note("isolate %s", x)
			h.isolate(x)
			v := map[string][]string{x: {x}}
			for _, m := range without(x) {
				v[m] = without(x)
			}
			views(v)
			h.run(hold)
			note("heal")
			h.heal()
			views(all())
		case 1:
			note("kill %s", x)
			h.stop(x)
			v := map[string][]string{}
			for _, m := range without(x) {
				v[m] = without(x)
			}
			views(v)
			h.run(hold)
			note("restart %s", x)
			h.start(x)
			views(all())
		case 2:
			y := without(x)[rng.IntN(2)]
			note("cut %s -> %s", x, y)
			h.cutLink(x, y)
			h.run(hold)
			note("heal")
			h.heal()
		}
	}
	h.heal()
	for _, m := range h.addrs {
		h.setView(m, h.addrs...)
	}
	h.mu.Lock()
	blinks := slices.Clone(h.blinks)
	h.mu.Unlock()
	if len(blinks) > 0 {
		t.Fatalf("seed %d: %d disappearances of beating instances:\n%s\nfaults:\n%s", seed, len(blinks),
			strings.Join(blinks, "\n"), strings.Join(log, "\n"))
	}
	start := h.clk.Now()
	for {
		err := h.converged()
		if err == nil {
			t.Logf("seed %d: converged %v after the last heal", seed, h.clk.Now().Sub(start))
			break
		}
		if h.clk.Now().Sub(start) > 15*time.Second {
			t.Fatalf("seed %d: not converged 15 s after the last heal: %v\nfaults:\n%s", seed, err, strings.Join(log, "\n"))
		}
		h.run(100 * time.Millisecond)
	}
	h.noBlinks()
}
