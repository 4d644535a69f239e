package naming

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// Persistent instances live in the CP store one record per instance:
//
//	BucketInstance  instKey(ServiceKey, DatumKey) → recordV1 + Instance JSON
//
// so a register writes one instance, not the service's whole list (which
// made the log, and the disk, grow with the square of a service's
// instances). Data written before that keeps one record per service,
//
//	BucketPersist   ServiceKey → recordV1 + []Instance JSON
//
// which is still read; the first write to such a service converts it in
// one batch (delete the list, put every instance).

// BucketInstance holds one record per persistent instance. The name lives
// on disk: never rename.
const BucketInstance = "ns.inst"

// instKey is the BucketInstance key of an instance: the service key's
// length, ':', the service key, the datum key. The length makes the split
// unambiguous whatever the names contain.
func instKey(serviceKey, datumKey string) string {
	return strconv.Itoa(len(serviceKey)) + ":" + serviceKey + datumKey
}

// instKeyPrefix is the key prefix of a service's instances.
func instKeyPrefix(serviceKey string) string { return instKey(serviceKey, "") }

// splitInstKey undoes instKey.
func splitInstKey(k string) (serviceKey, datumKey string, ok bool) {
	i := strings.IndexByte(k, ':')
	if i <= 0 {
		return "", "", false
	}
	n, err := strconv.Atoi(k[:i])
	if err != nil || n < 0 || i+1+n > len(k) {
		return "", "", false
	}
	return k[i+1 : i+1+n], k[i+1+n:], true
}

// decodeInstance decodes one stored instance as Java's Instance would
// deserialise it.
func decodeInstance(value []byte) (*Instance, error) {
	var in Instance
	if len(value) == 0 || value[0] != recordV1 || !decodeInstanceFast(value[1:], &in) {
		in = Instance{}
		if err := decodeRecord(value, &in); err != nil {
			return nil, err
		}
	}
	if in.Metadata == nil { // Java's Instance deserialises an omitted (null) map as {}
		in.Metadata = map[string]string{}
	}
	return &in, nil
}

// scanPersistent reads every persistent instance from the store, by
// service key: the old per-service lists and the per-instance records.
// Instances get their seq in record order (oldest write first).
func (r *Registry) scanPersistent() map[string]map[string]*Instance {
	type rec struct {
		svc, datum string
		in         *Instance
		rev        uint64
		ord        int // scan order: a legacy list's instances share a rev
	}
	var recs []rec
	r.cfg.Store.Scan(BucketPersist, "", func(key string, rr raftstore.Record) bool {
		var list []*Instance
		if err := decodeRecord(rr.Value, &list); err != nil {
			r.log.Error("bad persistent instance record", "key", key, "err", err)
			return true
		}
		for _, in := range list {
			if in.Metadata == nil {
				in.Metadata = map[string]string{}
			}
			in.rev, in.legacy = rr.Rev, true
			recs = append(recs, rec{key, in.DatumKey(), in, rr.Rev, len(recs)})
		}
		return true
	})
	r.cfg.Store.Scan(BucketInstance, "", func(key string, rr raftstore.Record) bool {
		svc, datum, ok := splitInstKey(key)
		in, err := decodeInstance(rr.Value)
		if !ok || err != nil {
			r.log.Error("bad persistent instance record", "key", key, "err", err)
			return true
		}
		in.rev = rr.Rev
		recs = append(recs, rec{svc, datum, in, rr.Rev, len(recs)})
		return true
	})
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Or(cmp.Compare(a.rev, b.rev), cmp.Compare(a.ord, b.ord)) })
	out := map[string]map[string]*Instance{}
	for _, x := range recs {
		m := out[x.svc]
		if m == nil {
			m = map[string]*Instance{}
			out[x.svc] = m
		}
		x.in.seq = r.seq.Add(1)
		m[x.datum] = x.in
	}
	return out
}

// setPersistent replaces a service's persistent instances (rebuild),
// keeping the live health state of instances that stay.
func (r *Registry) setPersistent(key string, next map[string]*Instance) {
	ns, name := SplitServiceKey(key)
	s, _ := r.serviceForStore(ns, name)
	s.mu.Lock()
	for datum, in := range next {
		r.adoptLocked(s, datum, in)
	}
	// the writer's HashMap<datumKey, Instance>: new HashMap<>(old size),
	// filled with the old list, then changed (see javaSetOrder)
	s.persistentCap = compat.JavaHashCapacity(len(s.persistent), max(len(s.persistent), len(next)))
	s.persistent = next
	s.touch(r.nowMillis())
	s.mu.Unlock()
	r.emit(ns, name, ChangedPersistent)
}

// adoptLocked prepares a freshly decoded instance to replace the live one
// under the same datum key: live health state is kept (probes are in
// memory only; a changed instance keeps its health unless marked, as
// §3.1.10 says) and its cluster exists. Caller holds s.mu.
func (r *Registry) adoptLocked(s *Service, datum string, in *Instance) {
	if old, ok := s.persistent[datum]; ok {
		if old.JavaString() != in.JavaString() && !in.Marked {
			in.Healthy = old.Healthy
		}
		in.checkOK, in.checkFail, in.mockValid = old.checkOK, old.checkFail, old.mockValid
		in.seq = old.seq
	} else if in.seq == 0 {
		in.seq = r.seq.Add(1)
	}
	if _, ok := s.meta.Clusters[in.ClusterName]; !ok {
		s.meta.addCluster(NewClusterMeta(in.ClusterName))
	}
}

// applyInstanceOps applies one batch's changes of persistent instances
// (both buckets), service by service, in log order.
func (r *Registry) applyInstanceOps(index uint64, ops []raftstore.Op) {
	bySvc := map[string][]raftstore.Op{}
	var order []string
	for _, op := range ops {
		svc := op.Key
		if op.Bucket == BucketInstance {
			var ok bool
			if svc, _, ok = splitInstKey(op.Key); !ok {
				r.log.Error("bad persistent instance key", "key", op.Key)
				continue
			}
		}
		if _, ok := bySvc[svc]; !ok {
			order = append(order, svc)
		}
		bySvc[svc] = append(bySvc[svc], op)
	}
	for _, key := range order {
		ns, name := SplitServiceKey(key)
		s := r.service(ns, name)
		if s == nil {
			if !hasPut(bySvc[key]) {
				continue
			}
			s, _ = r.serviceForStore(ns, name)
		}
		s.mu.Lock()
		oldLen := len(s.persistent)
		var gone map[string]*Instance // removed earlier in this batch: health carries over
		for _, op := range bySvc[key] {
			switch {
			case op.Bucket == BucketPersist && op.Kind == raftstore.OpPut:
				var list []*Instance
				if err := decodeRecord(op.Value, &list); err != nil {
					r.log.Error("bad persistent instance record", "key", op.Key, "err", err)
					continue
				}
				next := make(map[string]*Instance, len(list))
				for _, in := range list {
					if in.Metadata == nil {
						in.Metadata = map[string]string{}
					}
					in.rev, in.legacy = index, true
					datum := in.DatumKey()
					r.adoptLocked(s, datum, in)
					next[datum] = in
				}
				s.persistent = next
			case op.Bucket == BucketPersist: // the old list goes (converted or service deleted)
				for datum, in := range s.persistent {
					if in.legacy {
						if gone == nil {
							gone = map[string]*Instance{}
						}
						gone[datum] = in
						delete(s.persistent, datum)
					}
				}
			case op.Kind == raftstore.OpPut:
				_, datum, _ := splitInstKey(op.Key)
				in, err := decodeInstance(op.Value)
				if err != nil {
					r.log.Error("bad persistent instance record", "key", op.Key, "err", err)
					continue
				}
				in.rev = index
				if old, ok := gone[datum]; ok {
					s.persistent[datum] = old
				}
				r.adoptLocked(s, datum, in)
				s.persistent[datum] = in
			default:
				_, datum, _ := splitInstKey(op.Key)
				delete(s.persistent, datum)
			}
		}
		s.persistentCap = compat.JavaHashCapacity(oldLen, max(oldLen, len(s.persistent)))
		s.touch(r.nowMillis())
		s.mu.Unlock()
		r.emit(ns, name, ChangedPersistent)
	}
}

func hasPut(ops []raftstore.Op) bool {
	for _, op := range ops {
		if op.Kind == raftstore.OpPut {
			return true
		}
	}
	return false
}

// writePersistent read-modify-writes the persistent instances of a
// service through the CP store, creating the persisted service meta when
// needed. It holds the store's per-key lock of the service while it reads,
// so concurrent writers of one service queue instead of failing (every
// one lands, the last writer wins as in Java).
//
// mutate gets the service (nil when new) and a copy of the instance map
// (datum key → instance). It adds, replaces or deletes entries and must
// not modify the instances it finds there: it replaces them with a changed
// clone (Instance.clone), which is how the entries to write are found
// without comparing the whole map. It runs under the service's read lock,
// may run twice and on a partial map (mutateView), so it must depend only
// on its inputs. Only the entries it changed are written, one record each.
func (r *Registry) writePersistent(ctx context.Context, ns, grouped string, mutate func(s *Service, list map[string]*Instance) error) error {
	if err := r.rules.serviceName(grouped); err != nil && r.service(ns, grouped) == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.WriteTimeout)
	defer cancel()
	key := ServiceKey(ns, grouped)
	locks := []raftstore.Key{{Bucket: BucketPersist, Key: key}, {Bucket: BucketMeta, Key: key}}
	_, err := r.cfg.Store.Update(ctx, locks, func() (raftstore.Batch, error) {
		var b raftstore.Batch
		s := r.service(ns, grouped)
		meta, persisted := newServiceMeta(ns, grouped), false
		cur := map[string]*Instance{}
		if s != nil {
			s.mu.RLock()
			defer s.mu.RUnlock()
			meta, persisted, cur = s.meta.clone(), s.persisted, s.persistent
		}
		if !persisted {
			if _, ok := r.cfg.Store.Get(BucketMeta, key); !ok {
				meta.prepareWrite(s != nil && s.linkedClusters())
				v, err := encodeRecord(meta)
				if err != nil {
					return b, err
				}
				b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketMeta, Key: key})
				b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: key, Value: v})
			}
		}
		convert := false
		if old, ok := r.cfg.Store.Get(BucketPersist, key); ok { // the old whole-list record
			convert = true
			b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondRev, Bucket: BucketPersist, Key: key, Rev: old.Rev})
			b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpDelete, Bucket: BucketPersist, Key: key})
		}
		before, list, err := mutateView(s, cur, convert, mutate)
		if err != nil {
			return raftstore.Batch{}, err
		}
		// Stored instances carry their record's revision; what mutate put
		// in is a clone without one. Only those are written, sorted for a
		// deterministic batch.
		var changed []string
		added := 0
		for datum, in := range list {
			if convert || in.rev == 0 {
				changed = append(changed, datum)
				if _, had := before[datum]; !had {
					added++
				}
			}
		}
		slices.Sort(changed)
		for _, datum := range changed {
			in := list[datum]
			old, had := before[datum]
			v, err := encodeRecord(in)
			if err != nil {
				return raftstore.Batch{}, err
			}
			ik := instKey(key, datum)
			switch {
			case convert:
			case had:
				b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondRev, Bucket: BucketInstance, Key: ik, Rev: old.rev})
			default:
				b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketInstance, Key: ik})
			}
			b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: BucketInstance, Key: ik, Value: v})
		}
		if deleted := len(before) - len(list) + added; deleted > 0 {
			for datum, old := range before {
				if _, ok := list[datum]; !ok && !old.legacy {
					b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpDelete, Bucket: BucketInstance, Key: instKey(key, datum)})
				}
			}
		}
		return b, nil
	})
	if err != nil {
		return fmt.Errorf("naming: write persistent instances of %s: %w", key, err)
	}
	return nil
}

// mutateView runs mutate on the smallest map that gives the same result
// and returns the map it started from (before) and the result (list).
//
// A register touches one datum key, and copying and scanning a service of
// 10 000 instances for it made a register cost grow with the service. So
// mutate runs first on an empty map: the keys it puts there are the ones
// it writes, and it then runs again on a map of just those keys with their
// current instances. That tells nothing when mutate puts nothing (a
// delete), fails, or reads every instance (the snowflake id generator,
// which picks the lowest unused id); then, as when an old list record is
// being converted, it runs on a copy of the whole service. mutate must
// therefore be deterministic in its inputs and may run twice.
func mutateView(s *Service, cur map[string]*Instance, convert bool, mutate func(*Service, map[string]*Instance) error) (before, list map[string]*Instance, err error) {
	if !convert {
		probe := map[string]*Instance{}
		partial := mutate(s, probe) == nil && len(probe) > 0
		for _, in := range probe {
			if g, _ := in.IDGenerator(); compat.JavaEqualsIgnoreCase(g, "snowflake") {
				partial = false
			}
		}
		if partial {
			before = make(map[string]*Instance, len(probe))
			for datum := range probe {
				if in, ok := cur[datum]; ok {
					before[datum] = in
				}
			}
			list = maps.Clone(before)
			if err := mutate(s, list); err != nil {
				return nil, nil, err
			}
			same := true
			for datum := range list {
				if _, ok := probe[datum]; !ok {
					same = false // it wrote another key once it saw the instance: do it on everything
				}
			}
			if same {
				return before, list, nil
			}
		}
	}
	list = maps.Clone(cur)
	if err := mutate(s, list); err != nil {
		return nil, nil, err
	}
	return cur, list, nil
}

// deleteServiceCP deletes a service's meta and persistent instances.
func (r *Registry) deleteServiceCP(ctx context.Context, ns, grouped string) error {
	key := ServiceKey(ns, grouped)
	locks := []raftstore.Key{{Bucket: BucketPersist, Key: key}, {Bucket: BucketMeta, Key: key}}
	_, err := r.cfg.Store.Update(ctx, locks, func() (raftstore.Batch, error) {
		b := raftstore.Batch{Ops: []raftstore.Op{{Kind: raftstore.OpDelete, Bucket: BucketPersist, Key: key}}}
		r.cfg.Store.Scan(BucketInstance, instKeyPrefix(key), func(k string, _ raftstore.Record) bool {
			b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpDelete, Bucket: BucketInstance, Key: k})
			return true
		})
		b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpDelete, Bucket: BucketMeta, Key: key})
		return b, nil
	})
	if err != nil {
		return fmt.Errorf("naming: delete service %s: %w", key, err)
	}
	// a service that was never persisted is dropped from memory directly
	if s := r.service(ns, grouped); s != nil {
		r.dropService(ns, grouped, s)
	}
	return nil
}
