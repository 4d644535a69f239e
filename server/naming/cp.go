package naming

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/switches"
)

// Stored records carry a version byte so the disk format can evolve.
const recordV1 = 1

func encodeRecord(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("naming: encode record: %w", err)
	}
	return append([]byte{recordV1}, b...), nil
}

func decodeRecord(b []byte, v any) error {
	if len(b) == 0 || b[0] != recordV1 {
		return fmt.Errorf("naming: decode record: unknown version")
	}
	if err := json.Unmarshal(b[1:], v); err != nil {
		return fmt.Errorf("naming: decode record: %w", err)
	}
	return nil
}

// rebuild loads services, persistent instances and switches from the store
// (at start and after a snapshot restore). Ephemeral data is kept.
func (r *Registry) rebuild() {
	r.stored.Store(nil)
	live := switches.Default()
	if rec, ok := r.cfg.Store.Get(BucketSwitches, switchesKey); ok {
		r.applySwitches(&live, rec.Value)
	}
	r.switches.Store(&live)
	seen := map[string]bool{}
	r.cfg.Store.Scan(BucketMeta, "", func(key string, rec raftstore.Record) bool {
		r.applyMeta(key, rec.Value, true)
		seen[key] = true
		return true
	})
	for key, list := range r.scanPersistent() {
		r.setPersistent(key, list)
		seen[key] = true
	}
	// services that were persisted but are gone from the restored state
	for _, ref := range r.allServices() {
		key := ServiceKey(ref.ns, ref.name)
		ref.svc.mu.Lock()
		if !seen[key] && ref.svc.persisted {
			ref.svc.persisted = false
		}
		if !seen[key] && len(ref.svc.persistent) > 0 {
			ref.svc.persistent = map[string]*Instance{}
			ref.svc.touch(r.nowMillis())
		}
		ref.svc.mu.Unlock()
	}
}

// onEvent applies committed CP writes to the in-memory view. It runs on the
// FSM goroutine: no blocking, no store writes.
func (r *Registry) onEvent(ev raftstore.Event) {
	if ev.Reset {
		r.rebuild()
		for _, ref := range r.allServices() {
			r.emit(ref.ns, ref.name, ChangedPersistent|ChangedMeta)
		}
		return
	}
	var inst []raftstore.Op // persistent instance changes, applied per service below
	for _, op := range ev.Ops {
		switch op.Bucket {
		case BucketMeta:
			if op.Kind == raftstore.OpPut {
				r.applyMeta(op.Key, op.Value, false)
			} else {
				ns, name := SplitServiceKey(op.Key)
				if s := r.service(ns, name); s != nil {
					r.dropService(ns, name, s)
				}
			}
		case BucketPersist, BucketInstance:
			inst = append(inst, op)
		case BucketSwitches:
			if op.Kind == raftstore.OpPut {
				live := r.Switches().Clone()
				r.applySwitches(&live, op.Value)
				r.switches.Store(&live)
			}
		}
	}
	if len(inst) > 0 {
		r.applyInstanceOps(ev.Index, inst)
	}
}

// applySwitches records a stored switch domain and copies it into live the
// way SwitchManager.update does (some fields never reach the live domain).
func (r *Registry) applySwitches(live *switches.Domain, value []byte) {
	if len(value) == 0 || value[0] != recordV1 {
		r.log.Error("bad switches record: unknown version")
		return
	}
	sw, err := switches.Unmarshal(value[1:])
	if err != nil {
		r.log.Error("bad switches record", "err", err)
		return
	}
	r.stored.Store(&sw)
	live.UpdateFrom(sw)
}

// applyMeta applies a service's CP record; rebuilt says it is read back at
// start or after a restore (Java deserialises every persisted service then).
func (r *Registry) applyMeta(key string, value []byte, rebuilt bool) {
	var meta ServiceMeta
	if err := decodeRecord(value, &meta); err != nil {
		r.log.Error("bad service meta record", "key", key, "err", err)
		return
	}
	ns, name := SplitServiceKey(key)
	meta.NamespaceID, meta.Name = ns, name
	if meta.Metadata == nil {
		meta.Metadata = map[string]string{}
	}
	if meta.Clusters == nil {
		meta.Clusters = map[string]ClusterMeta{}
	}
	s, created := r.serviceForStore(ns, name)
	s.mu.Lock()
	if created {
		// Java puts the deserialised Service itself in its map: its
		// clusterMap is the LinkedHashMap Jackson built
		s.linked = rebuilt || meta.Linked
	}
	// clusters that only exist in memory (created by instances) are kept
	for cname, c := range s.meta.Clusters {
		if _, ok := meta.Clusters[cname]; !ok {
			meta.Clusters[cname] = c
		}
	}
	s.meta = meta
	s.persisted = true
	s.touch(r.nowMillis())
	s.mu.Unlock()
	r.emit(ns, name, ChangedMeta)
}

// serviceForStore returns the service, creating it for data the store
// holds (no name validation: it was validated when written).
func (r *Registry) serviceForStore(ns, name string) (s *Service, created bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.namespaces[ns]
	if m == nil {
		m = r.newNamespaceLocked(ns)
	}
	if s = m[name]; s == nil {
		s = newService(newServiceMeta(ns, name), r.nowMillis())
		r.svcSeq++
		s.created = r.svcSeq
		m[name] = s
		created = true
	}
	return s, created
}

// createMeta stores a new service's metadata (CondAbsent: ErrCondFailed
// when it exists).
func (r *Registry) createMeta(ctx context.Context, meta ServiceMeta) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.WriteTimeout)
	defer cancel()
	key := ServiceKey(meta.NamespaceID, meta.Name)
	meta.Linked = true // POST /service: Java's map gets the deserialised copy
	meta.prepareWrite(true)
	v, err := encodeRecord(meta)
	if err != nil {
		return err
	}
	b := raftstore.Batch{Conds: []raftstore.Cond{{Kind: raftstore.CondAbsent, Bucket: BucketMeta, Key: key}},
		Ops: []raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: key, Value: v}}}
	if _, err := r.cfg.Store.Apply(ctx, b); err != nil {
		return fmt.Errorf("naming: write service meta %s: %w", key, err)
	}
	return nil
}

// UpdateSwitch is PUT /operator/switches (§9.2). Like SwitchManager.update
// (which holds a lock) concurrent updates all land: each holds the store's
// lock of the switch record while it applies its entry to the stored
// domain and writes it back (under a CondRev on what it read).
func (r *Registry) UpdateSwitch(ctx context.Context, entry, value string, debug bool) error {
	if debug {
		cur := r.Switches().Clone()
		if r.stored.Load() != nil {
			cur = r.stored.Load().Clone()
		}
		if err := cur.Apply(entry, value); err != nil {
			return err
		}
		r.switches.Store(&cur)
		return nil
	}
	return r.update(ctx, "write switches", []raftstore.Key{{Bucket: BucketSwitches, Key: switchesKey}}, func() (raftstore.Batch, error) {
		var cur switches.Domain
		cond := raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketSwitches, Key: switchesKey}
		if rec, ok := r.cfg.Store.Get(BucketSwitches, switchesKey); ok {
			if len(rec.Value) == 0 || rec.Value[0] != recordV1 {
				return raftstore.Batch{}, errors.New("naming: stored switches: unknown record version")
			}
			stored, err := switches.Unmarshal(rec.Value[1:])
			if err != nil {
				return raftstore.Batch{}, err
			}
			cur = stored
			cond = raftstore.Cond{Kind: raftstore.CondRev, Bucket: BucketSwitches, Key: switchesKey, Rev: rec.Rev}
		} else {
			cur = r.Switches().Clone()
		}
		if err := cur.Apply(entry, value); err != nil {
			return raftstore.Batch{}, err
		}
		raw, err := cur.Marshal()
		if err != nil {
			return raftstore.Batch{}, err
		}
		return raftstore.Batch{Conds: []raftstore.Cond{cond},
			Ops: []raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketSwitches, Key: switchesKey, Value: append([]byte{recordV1}, raw...)}}}, nil
	})
}

// update runs a read-compute-apply through Store.Update, bounded by
// Config.WriteTimeout: writers of the same records queue on the store's
// per-key locks, so the last writer wins as in Java and no concurrent
// change is lost. Domain errors (*compat.Error) pass through unwrapped.
func (r *Registry) update(ctx context.Context, what string, keys []raftstore.Key, build func() (raftstore.Batch, error)) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.WriteTimeout)
	defer cancel()
	_, err := r.cfg.Store.Update(ctx, keys, build)
	var ce *compat.Error
	if err != nil && !errors.As(err, &ce) {
		return fmt.Errorf("naming: %s: %w", what, err)
	}
	return err
}

// updateMeta read-modify-writes a service's stored metadata under a CondRev
// (CondAbsent when the service was never persisted), holding the store's
// lock of the record. mutate gets the stored meta plus the clusters that
// exist only in memory (created by ephemeral instances), as Java's
// in-memory Service has them.
func (r *Registry) updateMeta(ctx context.Context, s *Service, ns, grouped string, mutate func(*ServiceMeta) error) error {
	key := ServiceKey(ns, grouped)
	return r.update(ctx, "write service meta "+key, []raftstore.Key{{Bucket: BucketMeta, Key: key}}, func() (raftstore.Batch, error) {
		cond := raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketMeta, Key: key}
		s.mu.RLock()
		meta := s.meta.clone()
		s.mu.RUnlock()
		if rec, ok := r.cfg.Store.Get(BucketMeta, key); ok {
			var stored ServiceMeta
			if err := decodeRecord(rec.Value, &stored); err != nil {
				return raftstore.Batch{}, err
			}
			stored.NamespaceID, stored.Name = ns, grouped
			if stored.Clusters == nil {
				stored.Clusters = map[string]ClusterMeta{}
			}
			for name, c := range meta.Clusters { // memory-only clusters
				if _, ok := stored.Clusters[name]; !ok {
					stored.Clusters[name] = c
				}
			}
			meta = stored
			cond = raftstore.Cond{Kind: raftstore.CondRev, Bucket: BucketMeta, Key: key, Rev: rec.Rev}
		}
		if err := mutate(&meta); err != nil {
			return raftstore.Batch{}, err
		}
		meta.prepareWrite(s.linkedClusters())
		v, err := encodeRecord(meta)
		if err != nil {
			return raftstore.Batch{}, err
		}
		return raftstore.Batch{Conds: []raftstore.Cond{cond},
			Ops: []raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: key, Value: v}}}, nil
	})
}
