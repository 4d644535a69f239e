package naming

import (
	"github.com/nacosd/nacosd/compat"
)

// Replicator is the AP side of a cluster (Distro): it decides which member
// owns a service's ephemeral instances. It ships this node's changes to the
// others by consuming the change stream (Changes, Change.Ships). A
// standalone registry has none: it owns every service.
//
// Only the owner runs beat expiry, the empty-service clean and health
// checks of a service; the other members hold copies that the owner's
// changes replace (ApplyRemote, RemoveRemote).
type Replicator interface {
	// Responsible is DistroMapper.responsible(groupedService).
	Responsible(groupedService string) bool
}

// responsible reports whether this node owns the grouped service.
func (r *Registry) responsible(grouped string) bool {
	return r.cfg.Replicator == nil || r.cfg.Replicator.Responsible(grouped)
}

// EphemeralInstances returns a service's ephemeral instances as Distro
// carries them, in no particular order (Distro keeps the order a Java node
// sends them in, from the change stream's edits); ok is false when the
// service does not exist.
func (r *Registry) EphemeralInstances(ns, grouped string) ([]compat.DistroInstance, bool) {
	s := r.service(ns, grouped)
	if s == nil {
		return nil, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]compat.DistroInstance, 0, len(s.ephemeral))
	for _, in := range s.ephemeral {
		out = append(out, in.distro())
	}
	return out, true
}

func (in *Instance) distro() compat.DistroInstance {
	return compat.DistroInstance{InstanceID: in.InstanceID, IP: in.IP, Port: in.Port, Weight: in.Weight, Healthy: in.Healthy,
		Enabled: in.Enabled, Ephemeral: in.Ephemeral, ClusterName: in.ClusterName, ServiceName: in.ServiceName,
		Metadata: cloneMap(in.Metadata), LastBeat: in.LastBeat, Marked: in.Marked, App: in.App}
}

// ApplyRemote replaces a service's ephemeral instances with a list its
// owner sent (DistroController.onSyncDatum, the verify fetch, the start-up
// load), as Service.onChange applies a datum: weights clamped, a missing
// cluster name is DEFAULT, clusters created for unseen names (an instance
// with an invalid cluster name is skipped, as Java logs and skips it), and
// an instance already present whose text changed keeps its local health
// unless marked (the owner's health arrives through the status sync).
// The service is created when absent (its name is validated). Subscribers
// of this node are pushed; nothing is sent back to the replicator. The
// change carries the list's keys in the owner's order (EditReplace).
func (r *Registry) ApplyRemote(ns, grouped string, list []compat.DistroInstance) error {
	s, err := r.lockLive(ns, grouped)
	if err != nil {
		return err
	}
	defer s.emitMu.Unlock()
	now := r.nowMillis()
	next := make(map[string]*Instance, len(list))
	order := make([]string, 0, len(list))
	for _, d := range list {
		in := &Instance{InstanceID: d.InstanceID, IP: d.IP, Port: d.Port, Weight: clampWeight(d.Weight), Healthy: d.Healthy,
			Enabled: d.Enabled, Ephemeral: true, ClusterName: d.ClusterName, ServiceName: grouped, Metadata: cloneMap(d.Metadata),
			LastBeat: d.LastBeat, Marked: d.Marked, App: d.App}
		if in.ClusterName == "" {
			in.ClusterName = DefaultCluster
		}
		if _, ok := s.meta.Clusters[in.ClusterName]; !ok {
			if r.rules.clusterName(in.ClusterName) != nil {
				r.log.Warn("distro: instance with an invalid cluster name skipped", "service", grouped, "ip", in.IP, "cluster", in.ClusterName)
				continue
			}
			s.meta.addCluster(NewClusterMeta(in.ClusterName))
		}
		key := in.DatumKey()
		if old, ok := s.ephemeral[key]; ok {
			if old.JavaString() != in.JavaString() && !in.Marked {
				in.Healthy = old.Healthy
			}
			in.seq, in.checkOK, in.checkFail, in.mockValid = old.seq, old.checkOK, old.checkFail, old.mockValid
		} else {
			in.seq = r.seq.Add(1)
		}
		if _, dup := next[key]; !dup {
			order = append(order, key)
		}
		next[key] = in
	}
	s.ephemeral = next
	s.touch(now)
	s.mu.Unlock()
	r.emitEdit(ns, grouped, ChangedEphemeral|ChangedRemote, EditReplace, "", order) // the owner's order, as Java keeps the received list
	return nil
}

// RemoveRemote drops a service's ephemeral datum (DistroConsistencyService
// onRemove: the owner no longer has the key; Service.onDelete empties the
// ephemeral list in every cluster). The service itself stays.
func (r *Registry) RemoveRemote(ns, grouped string) {
	s := r.service(ns, grouped)
	if s == nil {
		return
	}
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	if len(s.ephemeral) > 0 {
		s.ephemeral = map[string]*Instance{}
		s.touch(r.nowMillis())
	}
	s.mu.Unlock()
	r.emitEdit(ns, grouped, ChangedEphemeral|ChangedRemote, EditClear, "", nil)
}

// acquire gives the ephemeral instances of a service this node has just
// become the owner of a fresh heartbeat window: the copies it held carry
// the last beat their previous owner synced, which can be long past, and
// expiring them at once would drop every instance whose client simply has
// not beaten the new owner yet (Java does that; clients then re-register).
// Caller holds s.mu (write).
func (s *Service) acquire(now int64) {
	for _, in := range s.ephemeral {
		if in.LastBeat < now {
			in.LastBeat = now
		}
	}
}

// StatusChecksums returns, per namespace, the checksum (§2.6) of every
// non-empty service that owned accepts: what the service status sync
// reports to the other members.
func (r *Registry) StatusChecksums(owned func(grouped string) bool) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, ref := range r.servicesUnordered() { // the answer is a map
		if !owned(ref.name) {
			continue
		}
		s := ref.svc
		s.mu.Lock()
		if len(s.ephemeral)+len(s.persistent) > 0 {
			if out[ref.ns] == nil {
				out[ref.ns] = map[string]string{}
			}
			out[ref.ns][ref.name] = s.checksumLocked()
		}
		s.mu.Unlock()
	}
	return out
}

// StatusChecksum returns one service's checksum; ok is false when the
// service does not exist here.
func (r *Registry) StatusChecksum(ns, grouped string) (string, bool) {
	s := r.service(ns, grouped)
	if s == nil {
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checksumLocked(), true
}

// ApplyHealth is ServiceManager.updatedHealthStatus: every local instance
// (both kinds) takes the health its owner reports for its ip:port, and an
// instance the owner does not list becomes unhealthy. Subscribers are
// pushed when anything changed.
func (r *Registry) ApplyHealth(ns, grouped string, healthy map[string]bool) {
	s := r.service(ns, grouped)
	if s == nil {
		return
	}
	changed := false
	s.mu.Lock()
	for _, list := range []map[string]*Instance{s.ephemeral, s.persistent} {
		for _, in := range list {
			if v := healthy[in.Addr()]; v != in.Healthy {
				in.Healthy = v
				changed = true
			}
		}
	}
	if changed {
		s.touch(r.nowMillis())
	}
	s.mu.Unlock()
	if changed {
		r.log.Info("instance health synced from the owner", "service", grouped)
		r.emit(ns, grouped, ChangedHealth|ChangedRemote)
	}
}

// ServiceBeats are the last beats of a service's ephemeral instances (datum
// key → ms), what its owner tells the other members every second.
type ServiceBeats struct {
	NamespaceID, Service string
	Beats                map[string]int64
}

// BeatTimes lists, for every service owned (the filter) that holds a
// datum, the last beat of each instance that beat after since (ms); with
// all, also the owned services where none did (an empty map: the members
// keep knowing that this node reports the service).
func (r *Registry) BeatTimes(owned func(grouped string) bool, since int64, all bool) []ServiceBeats {
	var out []ServiceBeats
	for _, ref := range r.servicesUnordered() {
		s := ref.svc
		s.mu.RLock()
		if len(s.ephemeral) == 0 {
			s.mu.RUnlock()
			continue
		}
		var beats map[string]int64
		for k, in := range s.ephemeral {
			if in.LastBeat > since {
				if beats == nil {
					beats = map[string]int64{}
				}
				beats[k] = in.LastBeat
			}
		}
		s.mu.RUnlock()
		if (beats != nil || all) && owned(ref.name) {
			if beats == nil {
				beats = map[string]int64{}
			}
			out = append(out, ServiceBeats{NamespaceID: ref.ns, Service: ref.name, Beats: beats})
		}
	}
	return out
}

// ApplyBeatTimes records the last beats the service's owner reported: the
// copies here then know when each instance last beat, and a member that
// becomes the owner (the previous one died or left) expires exactly the
// instances that stopped beating instead of giving every copy a fresh
// heartbeat window (acquire). No push: nothing a client sees changed.
func (r *Registry) ApplyBeatTimes(ns, grouped string, beats map[string]int64) {
	s := r.service(ns, grouped)
	if s == nil {
		return
	}
	s.mu.Lock()
	s.beatsReported = true
	for k, at := range beats {
		if in, ok := s.ephemeral[k]; ok && at > in.LastBeat {
			in.LastBeat = at
		}
	}
	s.mu.Unlock()
}
