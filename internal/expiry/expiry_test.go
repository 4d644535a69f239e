package expiry

import "testing"

func TestPruneInOrder(t *testing.T) {
	var l Log[string]
	l.Add("a", 1_000)
	l.Add("b", 2_000)
	l.Add("c", 3_000)
	l.Add("a", 2_500) // added again: the later time counts
	l.Remove("b")     // removed
	l.Add("b", 4_000) // and added again

	l.Prune(1_000) // a's first entry expires, but a was added again since
	if at, ok := l.Get("a"); !ok || at != 2_500 {
		t.Fatalf("a = %d, %v; want 2500 kept", at, ok)
	}
	l.Prune(2_000) // b's first entry: b was removed and added again
	if at, ok := l.Get("b"); !ok || at != 4_000 {
		t.Fatalf("b = %d, %v; want 4000 kept", at, ok)
	}
	l.Prune(2_999)
	if _, ok := l.Get("c"); !ok {
		t.Fatal("c forgotten before its time")
	}
	l.Prune(3_000)
	if _, ok := l.Get("a"); ok {
		t.Fatal("a kept past its time")
	}
	if _, ok := l.Get("c"); ok {
		t.Fatal("c kept past its time")
	}
	if l.Len() != 1 {
		t.Fatalf("%d remembered, want b only", l.Len())
	}
	l.Prune(4_000)
	if l.Len() != 0 || l.at != nil || l.order != nil {
		t.Fatalf("storage kept after every key expired: %d, %v, %d", l.Len(), l.at != nil, len(l.order))
	}
}

// TestBounded: under steady churn the order holds about one window of
// entries, whatever ran before, and its storage is compacted.
func TestBounded(t *testing.T) {
	var l Log[int64]
	const perMs, window = 3, 60_000
	for ms := int64(0); ms < 5*window; ms++ {
		for i := range int64(perMs) {
			l.Add((ms*perMs+i)%50_000, ms)
		}
		if ms%250 == 0 {
			l.Prune(ms - window)
		}
	}
	if n := l.Queued(); n > perMs*(window+500) {
		t.Fatalf("%d live entries in the order, want at most ~%d", n, perMs*window)
	}
	if cap(l.order) > 4*perMs*window {
		t.Fatalf("order capacity %d: not compacted", cap(l.order))
	}
}
