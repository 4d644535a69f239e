package naming

import "hash/maphash"

// tombstones are a service's explicit deregistrations of ephemeral
// instances (datum key → ms), remembered deregisterKeep for the beats that
// crossed them (deregisteredSince). They are also kept in the order they
// were made, so the sweep (every 250 ms) forgets the expired ones from the
// front instead of scanning them all: a 2.x client moving its instance to
// a new port 18 000 times a second left a million of them, and each sweep
// walked every one under the service's lock.
//
// Keys are kept as 64-bit hashes (seeded per service), so neither the map
// nor the queue holds a pointer for the GC to scan: a million key strings
// made the collector a tenth of a registration's cost. Two datum keys of
// one service sharing a hash (odds ~n²/2⁶⁵: 3·10⁻⁸ for a million) would
// only make a beat of the one wait out the other's deregisterQuiet.
type tombstones struct {
	seed  maphash.Seed
	at    map[uint64]int64
	order []tombstone
	head  int // order[:head] are forgotten
}

type tombstone struct {
	key uint64
	at  int64
}

func (t *tombstones) hash(key string) uint64 { return maphash.String(t.seed, key) }

// add records a deregistration of key at ms.
func (t *tombstones) add(key string, ms int64) {
	if t.at == nil { // empty (prune drops the map with the last entry)
		t.seed, t.at = maphash.MakeSeed(), map[uint64]int64{}
	}
	h := t.hash(key)
	t.at[h] = ms
	t.order = append(t.order, tombstone{h, ms})
}

// remove forgets key's deregistration (it was registered again); its entry
// in the order is skipped when it expires.
func (t *tombstones) remove(key string) {
	if t.at != nil {
		delete(t.at, t.hash(key))
	}
}

// get returns when key was last deregistered.
func (t *tombstones) get(key string) (int64, bool) {
	if t.at == nil {
		return 0, false
	}
	ms, ok := t.at[t.hash(key)]
	return ms, ok
}

// len is the number of remembered deregistrations.
func (t *tombstones) len() int { return len(t.at) }

// prune forgets the deregistrations made deregisterKeep or more before now.
// Entries are in the order they were made; a clock that stepped back only
// delays the ones behind a later entry.
func (t *tombstones) prune(now int64) {
	for t.head < len(t.order) && now-t.order[t.head].at >= deregisterKeep {
		e := t.order[t.head]
		if ms, ok := t.at[e.key]; ok && ms == e.at { // not deregistered again since
			delete(t.at, e.key)
		}
		t.order[t.head] = tombstone{}
		t.head++
	}
	switch {
	case t.head == len(t.order):
		// none left: drop the storage (a map does not shrink after a burst)
		if len(t.at) == 0 {
			t.at = nil
		}
		t.order, t.head = nil, 0
	case t.head > len(t.order)/2: // compact: amortised O(1) per deregistration
		t.order = append(t.order[:0], t.order[t.head:]...)
		t.head = 0
	}
}
