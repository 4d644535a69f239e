package naming

import (
	"fmt"
	"testing"
)

func TestTombstonesPruneInOrder(t *testing.T) {
	var ts tombstones
	ts.add("a", 1_000)
	ts.add("b", 2_000)
	ts.add("c", 3_000)
	ts.add("a", 2_500) // deregistered again: the later time counts
	ts.remove("b")     // registered again
	ts.add("b", 4_000) // and deregistered again

	ts.prune(1_000 + deregisterKeep) // a's first entry expires, but a was deregistered again since
	if ms, ok := ts.get("a"); !ok || ms != 2_500 {
		t.Fatalf("a = %d, %v; want 2500 kept", ms, ok)
	}
	ts.prune(2_000 + deregisterKeep) // b's first entry: b was removed and added again
	if ms, ok := ts.get("b"); !ok || ms != 4_000 {
		t.Fatalf("b = %d, %v; want 4000 kept", ms, ok)
	}
	ts.prune(3_000 + deregisterKeep - 1)
	if _, ok := ts.get("c"); !ok {
		t.Fatal("c forgotten before deregisterKeep")
	}
	ts.prune(3_000 + deregisterKeep)
	if _, ok := ts.get("a"); ok {
		t.Fatal("a kept past deregisterKeep")
	}
	if _, ok := ts.get("c"); ok {
		t.Fatal("c kept past deregisterKeep")
	}
	if ts.len() != 1 {
		t.Fatalf("%d remembered, want b only", ts.len())
	}
	ts.prune(4_000 + deregisterKeep)
	if ts.len() != 0 || ts.at != nil || ts.order != nil {
		t.Fatalf("storage kept after every deregistration expired: %d, %v, %d", ts.len(), ts.at != nil, len(ts.order))
	}
}

// TestTombstonesBounded: under steady churn the order queue holds about
// one deregisterKeep of deregistrations, whatever ran before.
func TestTombstonesBounded(t *testing.T) {
	var ts tombstones
	const perMs = 3
	for ms := int64(0); ms < 5*deregisterKeep; ms++ {
		for i := range perMs {
			ts.add(fmt.Sprintf("10.0.0.1:%d:unknown:DEFAULT", (ms*perMs+int64(i))%50_000), ms)
		}
		if ms%250 == 0 {
			ts.prune(ms)
		}
	}
	if n := len(ts.order) - ts.head; n > perMs*(deregisterKeep+500) {
		t.Fatalf("%d live entries in the order, want at most ~%d", n, perMs*deregisterKeep)
	}
	if cap(ts.order) > 4*perMs*deregisterKeep {
		t.Fatalf("order capacity %d: not compacted", cap(ts.order))
	}
}
