package naming

import "testing"

// The tombstones' own part: the window is deregisterKeep, keys are found
// through their hash, and a key registered again is forgotten at once.
// (Ordering and the bound under churn: internal/expiry.)
func TestTombstonesKeepWindow(t *testing.T) {
	var ts tombstones
	if _, ok := ts.get("a"); ok {
		t.Fatal("an empty set has a")
	}
	ts.add("a", 1_000)
	ts.add("b", 2_000)
	ts.remove("b") // registered again
	if _, ok := ts.get("b"); ok {
		t.Fatal("b kept after it was registered again")
	}
	ts.prune(1_000 + deregisterKeep - 1)
	if at, ok := ts.get("a"); !ok || at != 1_000 {
		t.Fatalf("a = %d, %v; want 1000 kept before deregisterKeep", at, ok)
	}
	if _, ok := ts.get("c"); ok {
		t.Fatal("has a key never added")
	}
	ts.prune(1_000 + deregisterKeep)
	if _, ok := ts.get("a"); ok {
		t.Fatal("a kept past deregisterKeep")
	}
	ts.add("a", 5_000) // a fresh seed once empty
	if at, ok := ts.get("a"); !ok || at != 5_000 {
		t.Fatalf("a = %d, %v after adding it again", at, ok)
	}
}
