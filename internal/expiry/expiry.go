// Package expiry remembers keys with the time each was last added and
// forgets them oldest first. Entries are also kept in the order they were
// added, so forgetting the expired ones takes them from the front instead
// of scanning every key: amortised O(1) per Add however many are kept.
// Times are whatever int64 the caller counts in (ms, ns); the caller adds
// them in non-decreasing order (a clock that stepped back only delays the
// entries behind a later one). Not safe for concurrent use.
package expiry

// Log is a set of keys with their times. The zero value is empty.
type Log[K comparable] struct {
	at    map[K]int64
	order []entry[K]
	head  int // order[:head] are forgotten
}

type entry[K comparable] struct {
	key K
	at  int64
}

// Add records key at t (replacing an earlier time).
func (l *Log[K]) Add(key K, t int64) {
	if l.at == nil {
		l.at = map[K]int64{}
	}
	l.at[key] = t
	l.order = append(l.order, entry[K]{key, t})
}

// Remove forgets key now; its entry in the order is skipped when it
// expires.
func (l *Log[K]) Remove(key K) {
	if l.at != nil {
		delete(l.at, key)
	}
}

// Get returns key's time.
func (l *Log[K]) Get(key K) (int64, bool) {
	t, ok := l.at[key]
	return t, ok
}

// Len is the number of keys remembered.
func (l *Log[K]) Len() int { return len(l.at) }

// Queued is the number of entries in the order, forgotten keys' included
// (what Prune walks through; tests of the bound).
func (l *Log[K]) Queued() int { return len(l.order) - l.head }

// Prune forgets the keys last added at or before cutoff.
func (l *Log[K]) Prune(cutoff int64) {
	for l.head < len(l.order) && l.order[l.head].at <= cutoff {
		e := l.order[l.head]
		if t, ok := l.at[e.key]; ok && t == e.at { // not added again since
			delete(l.at, e.key)
		}
		l.order[l.head] = entry[K]{}
		l.head++
	}
	switch {
	case l.head == len(l.order):
		// none left: drop the storage (a map does not shrink after a burst)
		if len(l.at) == 0 {
			l.at = nil
		}
		l.order, l.head = nil, 0
	case l.head > len(l.order)/2: // compact: amortised O(1) per Add
		l.order = append(l.order[:0], l.order[l.head:]...)
		l.head = 0
	}
}
