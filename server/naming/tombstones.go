package naming

import (
	"hash/maphash"

	"github.com/nacosd/nacosd/internal/expiry"
)

// tombstones are a service's explicit deregistrations of ephemeral
// instances (datum key → ms), remembered deregisterKeep for the beats that
// crossed them (deregisteredSince). The sweep (every 250 ms) forgets the
// expired ones from the front of an expiry.Log instead of scanning them
// all: a 2.x client moving its instance to a new port 18 000 times a second
// left a million of them, and each sweep walked every one under the
// service's lock.
//
// Keys are kept as 64-bit hashes (seeded per service), so nothing in them
// holds a pointer for the GC to scan: a million key strings made the
// collector a tenth of a registration's cost. Two datum keys of one
// service sharing a hash (odds ~n²/2⁶⁵: 3·10⁻⁸ for a million) would only
// make a beat of the one wait out the other's deregisterQuiet.
type tombstones struct {
	seed maphash.Seed
	log  expiry.Log[uint64]
}

func (t *tombstones) hash(key string) uint64 { return maphash.String(t.seed, key) }

// add records a deregistration of key at ms.
func (t *tombstones) add(key string, ms int64) {
	if t.log.Len() == 0 && t.log.Queued() == 0 { // empty: nothing hashed with the old seed is left
		t.seed = maphash.MakeSeed()
	}
	t.log.Add(t.hash(key), ms)
}

// remove forgets key's deregistration (it was registered again).
func (t *tombstones) remove(key string) {
	if t.log.Len() > 0 {
		t.log.Remove(t.hash(key))
	}
}

// get returns when key was last deregistered.
func (t *tombstones) get(key string) (int64, bool) {
	if t.log.Len() == 0 {
		return 0, false
	}
	return t.log.Get(t.hash(key))
}

// prune forgets the deregistrations made deregisterKeep or more before now.
func (t *tombstones) prune(now int64) { t.log.Prune(now - deregisterKeep) }
