package distro

import (
	"encoding/json"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// Removals keep a deregistration from coming back after a partition.
//
// While a member is cut off, the others own its services and take their
// deregistrations; the cut-off member still lists those instances, and
// when the links heal its list (it owns the service again) reaches the
// others, whose union with their own lists (OnDatums: neither side may
// drop what the other took) brought the deregistered instances back until
// they expired, ~30 s later (checker seed 908). So the owner that takes a
// deregistration records when, sends the deregistrations of the services
// it syncs along with them (HeaderRemoved, to nacosd members), and every
// member drops, from any list it applies, a copy of an instance
// deregistered after that copy's last beat. (Expiries are not recorded: a
// member whose view differs may hold a copy that still beats there, whose
// list carries an older beat time.) A copy that beat (or registered)
// after the removal is newer and stays: a client that registers again
// comes back at once.
//
// Removals are kept for RemovedKeep, longer than a copy outlives its
// owner's last beat (an instance nobody beats expires on its owner 30 s
// after the last beat).

// HeaderRemoved carries, on a nacosd member's sync, the instances the
// sender removed from the lists it sends: a JSON map of datum map key
// (compat.EphemeralKey) to datum key to removal time (unix ms).
const HeaderRemoved = "X-Nacosd-Removed"

// RemovedKeep is how long a removal is remembered.
const RemovedKeep = 2 * time.Minute

// removals records the instances this node removed as an owner, or heard
// another owner removed (guarded by Distro.mu).
type removals map[ServiceRef]map[string]int64

// noteRemoved records keys of ref removed at ms (the later time wins).
// Caller holds d.mu.
func (d *Distro) noteRemovedLocked(ref ServiceRef, ms int64, keys ...string) {
	if d.removed == nil {
		d.removed = removals{}
	}
	m := d.removed[ref]
	if m == nil {
		m = map[string]int64{}
		d.removed[ref] = m
	}
	for _, k := range keys {
		if k != "" && m[k] < ms {
			m[k] = ms
		}
	}
}

// removedHeader returns HeaderRemoved's value for refs ("" when none of
// them had removals).
func (d *Distro) removedHeader(refs []ServiceRef) string {
	out := map[string]map[string]int64{}
	d.mu.Lock()
	for _, r := range refs {
		if m := d.removed[r]; len(m) > 0 {
			c := make(map[string]int64, len(m))
			for k, v := range m {
				c[k] = v
			}
			out[compat.EphemeralKey(r.NamespaceID, r.Service)] = c
		}
	}
	d.mu.Unlock()
	if len(out) == 0 {
		return ""
	}
	b, err := json.Marshal(out)
	if err != nil {
		return ""
	}
	return string(b)
}

// takeRemovedHeader records the removals a sync carried.
func (d *Distro) takeRemovedHeader(v string) {
	if v == "" {
		return
	}
	var in map[string]map[string]int64
	if err := json.Unmarshal([]byte(v), &in); err != nil {
		d.log.Warn("distro: bad removals header", "err", err)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for key, m := range in {
		ref, ok := parseKey(key)
		if !ok {
			continue
		}
		for k, ms := range m {
			d.noteRemovedLocked(ref, ms, k)
		}
	}
}

// withoutRemoved returns list without the instances removed after their
// last beat.
func (d *Distro) withoutRemoved(ref ServiceRef, list []compat.DistroInstance) []compat.DistroInstance {
	d.mu.Lock()
	m := d.removed[ref]
	if len(m) == 0 {
		d.mu.Unlock()
		return list
	}
	var out []compat.DistroInstance
	for i, in := range list {
		if at, ok := m[DatumKey(in)]; ok && in.LastBeat < at {
			if out == nil {
				out = append(make([]compat.DistroInstance, 0, len(list)), list[:i]...)
			}
			continue
		}
		if out != nil {
			out = append(out, in)
		}
	}
	d.mu.Unlock()
	if out == nil {
		return list
	}
	d.stats.RemovedDropped.Add(int64(len(list) - len(out)))
	return out
}

// apply applies ref's list to the store, without the instances removed
// after their last beat.
func (d *Distro) apply(ref ServiceRef, list []compat.DistroInstance) error {
	return d.cfg.Store.Apply(ref, d.withoutRemoved(ref, list))
}

// forgetRemovals drops removals older than RemovedKeep.
func (d *Distro) forgetRemovals() {
	cutoff := d.cfg.Clock.Now().Add(-RemovedKeep).UnixMilli()
	d.mu.Lock()
	defer d.mu.Unlock()
	for ref, m := range d.removed {
		for k, ms := range m {
			if ms < cutoff {
				delete(m, k)
			}
		}
		if len(m) == 0 {
			delete(d.removed, ref)
		}
	}
}
