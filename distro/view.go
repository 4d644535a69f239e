package distro

import (
	"slices"
	"sync"

	"github.com/nacosd/nacosd/compat"
)

// ServiceRef names a service: its namespace and grouped name
// (group@@service). Java's ephemeral key strings
// (com.alibaba.nacos.naming.iplist.ephemeral.<ns>##<group@@svc>) exist only
// in the bodies Distro sends and reads.
type ServiceRef struct {
	NamespaceID string
	Service     string
}

// key is the ref's Java ephemeral instance-list key (the wire edge).
func (r ServiceRef) key() string { return compat.EphemeralKey(r.NamespaceID, r.Service) }

// parseKey reads a Java ephemeral instance-list key; ok is false for any
// other key.
func parseKey(key string) (ServiceRef, bool) {
	ns, svc, ok := compat.ParseEphemeralKey(key)
	return ServiceRef{ns, svc}, ok
}

// EditOp says how a change edited the datum keys of a service's ephemeral
// instance list.
type EditOp uint8

// Edits, as the registry applied them.
const (
	// EditNone: the keys did not change (a health flip, metadata).
	EditNone EditOp = iota
	// EditPut: Key was written (registered, or registered again).
	EditPut
	// EditRemove: Key, or Keys, were removed (deregistration, expiry), in
	// order.
	EditRemove
	// EditReplace: the list was replaced by the one its owner sent; Keys
	// is that list's order.
	EditReplace
	// EditClear: the list is gone (its owner no longer has it); the
	// service stays.
	EditClear
	// EditDropped: the service left the registry, and its lists with it.
	EditDropped
)

// ListChange is one committed change of a service, from the registry's
// change stream. Changes of one service arrive in the order the registry
// applied them.
type ListChange struct {
	Ref ServiceRef
	Op  EditOp
	// Key is the datum key of an edit of one instance, Keys those of an
	// edit of several.
	Key  string
	Keys []string
	// Ship: this node changed the list as the service's owner, and the
	// other members get it.
	Ship bool
	// Deregistered: Key was removed by an explicit deregistration
	// (removed.go keeps it from coming back).
	Deregistered bool
}

// view is this node's Distro view of the ephemeral lists it holds (Java's
// DataStore keys): which services hold a datum, the order Java's HashMap
// gives each list (order), and each list's cached Instances checksum. It is
// fed by the registry's change stream only; the instances themselves stay
// in the registry (Store.Instances).
type view struct {
	mu   sync.RWMutex
	svcs map[ServiceRef]*held
}

// held is one service's datum.
type held struct {
	mu    sync.Mutex
	order order
	gen   uint64 // bumped by every change of the service
	sum   string // the checksum computed at gen sumAt
	sumAt uint64
	sumOK bool
}

func newView() *view { return &view{svcs: map[ServiceRef]*held{}} }

// apply records one change. For EditDropped st says whether the registry
// holds the service again (removed and created again under the same name,
// it keeps its datum, which the new service's changes edit).
func (v *view) apply(c ListChange, st Store) {
	switch c.Op {
	case EditNone:
		if h := v.get(c.Ref); h != nil {
			h.mu.Lock()
			h.gen++
			h.mu.Unlock()
		}
		return
	case EditClear:
		v.mu.Lock()
		delete(v.svcs, c.Ref)
		v.mu.Unlock()
		return
	case EditDropped:
		if _, ok := st.Instances(c.Ref); ok {
			if h := v.get(c.Ref); h != nil {
				h.mu.Lock()
				h.gen++
				h.mu.Unlock()
			}
			return
		}
		v.mu.Lock()
		delete(v.svcs, c.Ref)
		v.mu.Unlock()
		return
	}
	h := v.getOrCreate(c.Ref)
	h.mu.Lock()
	switch c.Op {
	case EditPut:
		if c.Key != "" {
			h.order.put(c.Key)
		}
		for _, k := range c.Keys {
			h.order.put(k)
		}
	case EditRemove:
		if c.Key != "" {
			h.order.remove(c.Key)
		}
		for _, k := range c.Keys {
			h.order.remove(k)
		}
	case EditReplace:
		h.order.set(c.Keys)
	}
	h.gen++
	h.mu.Unlock()
}

func (v *view) get(ref ServiceRef) *held {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return v.svcs[ref]
}

func (v *view) getOrCreate(ref ServiceRef) *held {
	if h := v.get(ref); h != nil {
		return h
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	h := v.svcs[ref]
	if h == nil {
		h = &held{}
		v.svcs[ref] = h
	}
	return h
}

// refs lists the services holding a datum, sorted.
func (v *view) refs() []ServiceRef {
	v.mu.RLock()
	out := make([]ServiceRef, 0, len(v.svcs))
	for r := range v.svcs {
		out = append(out, r)
	}
	v.mu.RUnlock()
	slices.SortFunc(out, compareRefs)
	return out
}

func compareRefs(a, b ServiceRef) int {
	if a.NamespaceID != b.NamespaceID {
		if a.NamespaceID < b.NamespaceID {
			return -1
		}
		return 1
	}
	switch {
	case a.Service < b.Service:
		return -1
	case a.Service > b.Service:
		return 1
	}
	return 0
}

// forget drops a datum whose service the registry no longer holds.
func (v *view) forget(ref ServiceRef, h *held) {
	v.mu.Lock()
	if v.svcs[ref] == h {
		delete(v.svcs, ref)
	}
	v.mu.Unlock()
}

// datum returns a held service's list in the order a Java node's datum
// lists it: the instances (in any order, from the registry) ordered by the
// view; instances the order does not know yet (a change still on its way)
// follow, in HashMap order. ok is false when the service holds no datum.
func (v *view) datum(ref ServiceRef, st Store) (compat.Datum, bool) {
	h := v.get(ref)
	if h == nil {
		return compat.Datum{}, false
	}
	list, ok := st.Instances(ref)
	if !ok {
		v.forget(ref, h)
		return compat.Datum{}, false
	}
	h.mu.Lock()
	keys := slices.Clone(h.order.keys) // put and remove edit it in place
	h.mu.Unlock()
	return compat.Datum{Key: ref.key(), Instances: arrange(list, keys), Timestamp: 1}, true
}

// arrange orders list by keys (datum keys); instances keys does not name
// follow in HashMap order.
func arrange(list []compat.DistroInstance, keys []string) []compat.DistroInstance {
	if len(list) == 0 {
		return []compat.DistroInstance{}
	}
	byKey := make(map[string]int, len(list))
	for i := range list {
		byKey[DatumKey(list[i])] = i
	}
	out := make([]compat.DistroInstance, 0, len(list))
	for _, k := range keys {
		if i, ok := byKey[k]; ok {
			out = append(out, list[i])
			delete(byKey, k)
		}
	}
	if len(byKey) > 0 {
		rest := make([]string, 0, len(byKey))
		for k := range byKey {
			rest = append(rest, k)
		}
		slices.Sort(rest)
		for _, k := range compat.JavaHashOrderStrings(rest, 16) {
			out = append(out, list[byKey[k]])
		}
	}
	return out
}

// checksum is the Instances checksum (naming-v1.md §2.6) of a held list,
// cached until the service changes. ok is false when it holds no datum.
func (v *view) checksum(ref ServiceRef, st Store) (string, bool) {
	h := v.get(ref)
	if h == nil {
		return "", false
	}
	h.mu.Lock()
	if h.sumOK && h.sumAt == h.gen {
		sum := h.sum
		h.mu.Unlock()
		return sum, true
	}
	gen := h.gen
	h.mu.Unlock()
	list, ok := st.Instances(ref)
	if !ok {
		v.forget(ref, h)
		return "", false
	}
	sum := compat.InstancesChecksum(list)
	h.mu.Lock()
	if h.gen == gen { // no change since the read: cache it
		h.sum, h.sumAt, h.sumOK = sum, gen, true
	}
	h.mu.Unlock()
	return sum, true
}
