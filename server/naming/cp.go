package naming

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
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
	live := DefaultSwitches()
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
	r.cfg.Store.Scan(BucketPersist, "", func(key string, rec raftstore.Record) bool {
		r.applyPersistent(key, rec.Value)
		seen[key] = true
		return true
	})
	// services that were persisted but are gone from the restored state
	for _, ref := range r.allServices() {
		key := ServiceKey(ref.ns, ref.name)
		ref.svc.mu.Lock()
		if !seen[key] && ref.svc.persisted {
			ref.svc.persisted = false
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
			r.changed(ref.ns, ref.name)
		}
		return
	}
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
		case BucketPersist:
			if op.Kind == raftstore.OpPut {
				r.applyPersistent(op.Key, op.Value)
			} else {
				r.applyPersistent(op.Key, nil)
			}
		case BucketSwitches:
			if op.Kind == raftstore.OpPut {
				live := r.Switches().Clone()
				r.applySwitches(&live, op.Value)
				r.switches.Store(&live)
			}
		}
	}
}

// applySwitches records a stored switch domain and copies it into live the
// way SwitchManager.update does (some fields never reach the live domain).
func (r *Registry) applySwitches(live *Switches, value []byte) {
	if len(value) == 0 || value[0] != recordV1 {
		r.log.Error("bad switches record: unknown version")
		return
	}
	sw, err := UnmarshalSwitches(value[1:])
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
	r.mu.Lock()
	m := r.namespaces[ns]
	if m == nil {
		m = r.newNamespaceLocked(ns)
	}
	s := m[name]
	if s == nil {
		// Java puts the deserialised Service itself in its map: its
		// clusterMap is the LinkedHashMap Jackson built
		s = newService(meta, r.nowMillis())
		s.linked = rebuilt || meta.Linked
		m[name] = s
	}
	r.mu.Unlock()
	s.mu.Lock()
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
	r.changed(ns, name)
}

func (r *Registry) applyPersistent(key string, value []byte) {
	var list []*Instance
	if value != nil {
		if err := decodeRecord(value, &list); err != nil {
			r.log.Error("bad persistent instance record", "key", key, "err", err)
			return
		}
	}
	ns, name := SplitServiceKey(key)
	s := r.service(ns, name)
	if s == nil {
		if value == nil {
			return
		}
		r.mu.Lock()
		m := r.namespaces[ns]
		if m == nil {
			m = r.newNamespaceLocked(ns)
		}
		if s = m[name]; s == nil {
			s = newService(newServiceMeta(ns, name), r.nowMillis())
			m[name] = s
		}
		r.mu.Unlock()
	}
	s.mu.Lock()
	next := make(map[string]*Instance, len(list))
	for _, in := range list {
		if in.Metadata == nil { // Java's Instance deserialises an omitted (null) map as {}
			in.Metadata = map[string]string{}
		}
		key := in.DatumKey()
		if old, ok := s.persistent[key]; ok {
			// keep live health state (probes are in memory only)
			if old.JavaString() != in.JavaString() && !in.Marked {
				in.Healthy = old.Healthy
			}
			in.checkOK, in.checkFail, in.mockValid = old.checkOK, old.checkFail, old.mockValid
		}
		if _, ok := s.meta.Clusters[in.ClusterName]; !ok {
			s.meta.addCluster(NewClusterMeta(in.ClusterName))
		}
		next[key] = in
	}
	// the writer's HashMap<datumKey, Instance>: new HashMap<>(old size),
	// filled with the old list, then changed (see javaSetOrder)
	s.persistentCap = compat.JavaHashCapacity(len(s.persistent), max(len(s.persistent), len(next)))
	s.persistent = next
	s.touch(r.nowMillis())
	s.mu.Unlock()
	r.changed(ns, name)
}

const maxCASAttempts = 16

// writePersistent read-modify-writes the persistent instance list of a
// service through the CP store, creating the persisted service meta when
// needed. mutate gets the service (read-only) and a copy of the stored list.
func (r *Registry) writePersistent(ctx context.Context, ns, grouped string, mutate func(s *Service, list map[string]*Instance) error) error {
	if err := r.rules.serviceName(grouped); err != nil && r.service(ns, grouped) == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.WriteTimeout)
	defer cancel()
	key := ServiceKey(ns, grouped)
	for attempt := 0; attempt < maxCASAttempts; attempt++ {
		var b raftstore.Batch
		s := r.service(ns, grouped)
		var meta ServiceMeta
		persisted := false
		if s != nil {
			s.mu.RLock()
			meta, persisted = s.meta.clone(), s.persisted
			s.mu.RUnlock()
		} else {
			meta = newServiceMeta(ns, grouped)
		}
		if !persisted {
			if _, ok := r.cfg.Store.Get(BucketMeta, key); !ok {
				meta.prepareWrite(s != nil && s.linkedClusters())
				v, err := encodeRecord(meta)
				if err != nil {
					return err
				}
				b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketMeta, Key: key})
				b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: key, Value: v})
			}
		}
		list := map[string]*Instance{}
		rec, ok := r.cfg.Store.Get(BucketPersist, key)
		if ok {
			var stored []*Instance
			if err := decodeRecord(rec.Value, &stored); err != nil {
				return err
			}
			for _, in := range stored {
				list[in.DatumKey()] = in
			}
			b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondRev, Bucket: BucketPersist, Key: key, Rev: rec.Rev})
		} else {
			b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketPersist, Key: key})
		}
		if s != nil { // overwrite healthy/lastBeat from memory (§3.1.10)
			s.mu.RLock()
			for k, in := range list {
				if live, ok := s.persistent[k]; ok {
					in.Healthy, in.LastBeat = live.Healthy, live.LastBeat
				}
			}
			s.mu.RUnlock()
		}
		if err := mutate(s, list); err != nil {
			return err
		}
		out := make([]*Instance, 0, len(list))
		for _, in := range list {
			out = append(out, in)
		}
		v, err := encodeRecord(out)
		if err != nil {
			return err
		}
		b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: BucketPersist, Key: key, Value: v})
		_, err = r.cfg.Store.Apply(ctx, b)
		if errors.Is(err, raftstore.ErrCondFailed) {
			continue
		}
		if err != nil {
			return fmt.Errorf("naming: write persistent instances of %s: %w", key, err)
		}
		return nil
	}
	return compat.ServerError("too many concurrent writes to " + grouped)
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

// deleteServiceCP deletes a service's meta and persistent instances.
func (r *Registry) deleteServiceCP(ctx context.Context, ns, grouped string) error {
	key := ServiceKey(ns, grouped)
	b := raftstore.Batch{Ops: []raftstore.Op{
		{Kind: raftstore.OpDelete, Bucket: BucketPersist, Key: key},
		{Kind: raftstore.OpDelete, Bucket: BucketMeta, Key: key},
	}}
	if _, err := r.cfg.Store.Apply(ctx, b); err != nil {
		return fmt.Errorf("naming: delete service %s: %w", key, err)
	}
	// a service that was never persisted is dropped from memory directly
	if s := r.service(ns, grouped); s != nil {
		r.dropService(ns, grouped, s)
	}
	return nil
}

// UpdateSwitch is PUT /operator/switches (§9.2). Like SwitchManager.update
// (which holds a lock) concurrent updates all land: each applies its entry
// to the stored domain it read and writes it back under a CondRev,
// retrying when another update came first.
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
	return r.retryCAS(ctx, "write switches", func(ctx context.Context) error {
		var cur Switches
		cond := raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketSwitches, Key: switchesKey}
		if rec, ok := r.cfg.Store.Get(BucketSwitches, switchesKey); ok {
			if len(rec.Value) == 0 || rec.Value[0] != recordV1 {
				return errors.New("naming: stored switches: unknown record version")
			}
			stored, err := UnmarshalSwitches(rec.Value[1:])
			if err != nil {
				return err
			}
			cur = stored
			cond = raftstore.Cond{Kind: raftstore.CondRev, Bucket: BucketSwitches, Key: switchesKey, Rev: rec.Rev}
		} else {
			cur = r.Switches().Clone()
		}
		if err := cur.Apply(entry, value); err != nil {
			return err
		}
		raw, err := cur.Marshal()
		if err != nil {
			return err
		}
		b := raftstore.Batch{Conds: []raftstore.Cond{cond},
			Ops: []raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketSwitches, Key: switchesKey, Value: append([]byte{recordV1}, raw...)}}}
		_, err = r.cfg.Store.Apply(ctx, b)
		return err
	})
}

// retryCAS runs attempt until it does not lose a CondRev race (another
// write to the same record came first), bounded by Config.WriteTimeout.
// Every attempt re-reads what it writes, so the last writer wins as in Java
// and no concurrent change is lost.
func (r *Registry) retryCAS(ctx context.Context, what string, attempt func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.WriteTimeout)
	defer cancel()
	for {
		err := attempt(ctx)
		if !errors.Is(err, raftstore.ErrCondFailed) {
			var ce *compat.Error
			if err != nil && !errors.As(err, &ce) {
				return fmt.Errorf("naming: %s: %w", what, err)
			}
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("naming: %s: %w", what, ctx.Err())
		}
	}
}

// updateMeta read-modify-writes a service's stored metadata under a CondRev
// (CondAbsent when the service was never persisted), retrying lost races.
// mutate gets the stored meta plus the clusters that exist only in memory
// (created by ephemeral instances), as Java's in-memory Service has them.
func (r *Registry) updateMeta(ctx context.Context, s *Service, ns, grouped string, mutate func(*ServiceMeta) error) error {
	key := ServiceKey(ns, grouped)
	return r.retryCAS(ctx, "write service meta "+key, func(ctx context.Context) error {
		cond := raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketMeta, Key: key}
		s.mu.RLock()
		meta := s.meta.clone()
		s.mu.RUnlock()
		if rec, ok := r.cfg.Store.Get(BucketMeta, key); ok {
			var stored ServiceMeta
			if err := decodeRecord(rec.Value, &stored); err != nil {
				return err
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
			return err
		}
		meta.prepareWrite(s.linkedClusters())
		v, err := encodeRecord(meta)
		if err != nil {
			return err
		}
		_, err = r.cfg.Store.Apply(ctx, raftstore.Batch{Conds: []raftstore.Cond{cond},
			Ops: []raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: key, Value: v}}})
		return err
	})
}
