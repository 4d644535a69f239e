package naming

import (
	"math"
	"testing"

	"github.com/nacosd/nacosd/server/switches"
)

// TestReEvaluateCheckRT follows HealthCheckCommon.reEvaluateCheckRT: the next
// delay converges on the response time, clamped to the switch's bounds.
func TestReEvaluateCheckRT(t *testing.T) {
	tcp := switches.HealthParams{Max: 5000, Min: 1000, Factor: 0.75}
	http := switches.HealthParams{Max: 5000, Min: 500, Factor: 0.85}
	task := &clusterTask{best: math.MaxInt64, worst: 0, normalized: 2000}
	for _, want := range []int64{1500, 1125, 1000, 1000} { // rt 0 on loopback: TCP settles at its 1 s minimum
		task.reEvaluate(0, tcp)
		if task.normalized != want {
			t.Fatalf("tcp: normalized %d, want %d", task.normalized, want)
		}
	}
	task.reEvaluate(20000, tcp) // a slow probe pushes it to the 5 s maximum
	if task.normalized != 5000 || task.worst != 20000 || task.best != 0 {
		t.Fatalf("slow probe: %+v", task)
	}
	h := &clusterTask{best: math.MaxInt64, worst: 0, normalized: 600}
	h.reEvaluate(3, http) // 0.85*600 + 0.15*3 = 510.45
	if h.normalized != 510 {
		t.Fatalf("http: %d", h.normalized)
	}
	h.reEvaluate(3, http)
	if h.normalized != 500 {
		t.Fatalf("http min: %d", h.normalized)
	}
}

// TestIdleRT: a cluster without a probe task answers Java's initCheckRT
// values, the random first delay the same on every call.
func TestIdleRT(t *testing.T) {
	b, w, n := idleRT("public##DEFAULT_GROUP@@a", "DEFAULT")
	if b != math.MaxInt64 || w != 0 || n < 2000 || n > 7000 {
		t.Fatalf("idleRT = %d %d %d", b, w, n)
	}
	if _, _, n2 := idleRT("public##DEFAULT_GROUP@@a", "DEFAULT"); n2 != n {
		t.Fatalf("not stable: %d then %d", n, n2)
	}
}
