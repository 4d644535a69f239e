package naming

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nacosd/nacosd/raftstore"
)

// CheckStore compares the in-memory view of the CP data (persistent
// instances and persisted services) with the store, and returns every
// difference. Call it while the store applies nothing
// (raftstore.Store.Quiesced), or differences in flight show up.
func (r *Registry) CheckStore() []string {
	var diffs []string
	want := r.scanPersistentView()
	have := map[string]map[string]string{}
	metaKeys := map[string]bool{}
	r.cfg.Store.Scan(BucketMeta, "", func(key string, _ raftstore.Record) bool {
		metaKeys[key] = true
		return true
	})
	for _, ref := range r.servicesUnordered() {
		key := ServiceKey(ref.ns, ref.name)
		ref.svc.mu.RLock()
		if len(ref.svc.persistent) > 0 {
			m := make(map[string]string, len(ref.svc.persistent))
			for k, in := range ref.svc.persistent {
				m[k] = instanceDigest(in)
			}
			have[key] = m
		}
		persisted := ref.svc.persisted
		ref.svc.mu.RUnlock()
		if persisted != metaKeys[key] {
			diffs = append(diffs, fmt.Sprintf("service %s: persisted=%v in the view, stored=%v", key, persisted, metaKeys[key]))
		}
		delete(metaKeys, key)
	}
	for key := range metaKeys {
		diffs = append(diffs, fmt.Sprintf("service %s: stored but not in the view", key))
	}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		if !maps.Equal(want[key], have[key]) {
			diffs = append(diffs, fmt.Sprintf("persistent instances of %s: view %v, store %v", key, have[key], want[key]))
		}
		delete(have, key)
	}
	for key, m := range have {
		diffs = append(diffs, fmt.Sprintf("persistent instances of %s: view %v, none stored", key, m))
	}
	return diffs
}

// scanPersistentView is the store's persistent instances as digests.
func (r *Registry) scanPersistentView() map[string]map[string]string {
	out := map[string]map[string]string{}
	for key, list := range r.scanPersistent() {
		if len(list) == 0 {
			continue
		}
		m := make(map[string]string, len(list))
		for k, in := range list {
			m[k] = instanceDigest(in)
		}
		out[key] = m
	}
	return out
}

// instanceDigest is what a persistent instance's record decides (health
// is live state, not stored).
func instanceDigest(in *Instance) string {
	return fmt.Sprintf("%s:%d %s w=%v en=%v md=%v id=%s", in.IP, in.Port, in.ClusterName, in.Weight, in.Enabled, in.Metadata, in.InstanceID)
}
