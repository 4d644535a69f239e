package naming

import (
	"context"
	"strings"
)

// Held instances are the ephemeral instances of Nacos 2.x clients: they
// live as long as the client's connection, and the member holding that
// connection (the holder) registers, beats and deregisters them on the
// client's behalf on the service's owner (server/connbound). The owner
// records which holder wrote each one (a tag, neither rendered nor
// replicated), so that a holder whose connection closed after the client
// moved to another member cannot remove what the new holder registered.

// HolderOf returns the holder tag of an ephemeral instance ("" when a 1.x
// client or an unknown holder wrote it; ok false when absent).
func (r *Registry) HolderOf(ns, grouped, cluster, ip string, port int) (holder string, ok bool) {
	s := r.service(ns, grouped)
	if s == nil {
		return "", false
	}
	key := appendDatumKey(nil, ip, port, cluster)
	s.mu.RLock()
	defer s.mu.RUnlock()
	in, ok := s.ephemeral[string(key)]
	if !ok {
		return "", false
	}
	return in.holder, true
}

// RegisterHeld registers an ephemeral instance for holder: as Register,
// except that an instance id the client chose is kept (Java 2.x's
// customInstanceId) and the instance records its holder.
func (r *Registry) RegisterHeld(_ context.Context, f InstanceForm, holder string) error {
	in := f.Instance
	in.ServiceName = f.ServiceName
	in.Ephemeral = true
	// Java 2.x takes any weight and checks the cluster name at the edge
	if err := r.rules.clusterName(in.ClusterName); err != nil {
		return err
	}
	custom, weight := in.InstanceID, in.Weight
	now := r.nowMillis()
	in.LastBeat = now
	in.holder = holder
	s, err := r.lockLive(f.NamespaceID, f.ServiceName)
	if err != nil {
		return err
	}
	if _, ok := s.meta.Clusters[in.ClusterName]; !ok {
		s.meta.addCluster(NewClusterMeta(in.ClusterName))
	}
	key := r.addInstance(s.ephemeral, &in, true)
	stored := s.ephemeral[key] // just cloned here: not shared yet
	stored.Weight = weight
	if custom != "" {
		stored.InstanceID = custom
	}
	s.deregistered.remove(key)
	s.touch(now)
	s.mu.Unlock()
	r.emitEdit(f.NamespaceID, f.ServiceName, ChangedEphemeral, EditPut, key, nil)
	s.emitMu.Unlock()
	return nil
}

// DeregisterHeld removes an ephemeral instance for holder, unless another
// holder wrote it since (the client moved to another member and
// registered it there): then nothing changes. An instance whose holder is
// not known here (a 1.x client's, or one this node got as a copy before
// it became the owner) is removed.
func (r *Registry) DeregisterHeld(ctx context.Context, f InstanceForm, holder string) (removed bool, err error) {
	s := r.service(f.NamespaceID, f.ServiceName)
	if s == nil {
		return false, nil
	}
	in := f.Instance
	if err := r.rules.clusterName(in.ClusterName); err != nil {
		return false, err
	}
	key := string(appendDatumKey(nil, in.IP, in.Port, in.ClusterName))
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	old, found := s.ephemeral[key]
	if !found || old.holder != "" && old.holder != holder {
		s.mu.Unlock()
		return false, nil
	}
	delete(s.ephemeral, key)
	now := r.nowMillis()
	s.touch(now)
	s.deregistered.add(key, now)
	s.mu.Unlock()
	r.emitDeregistered(f.NamespaceID, f.ServiceName, key)
	return true, nil
}

// BeatHeld refreshes an instance its holder keeps alive, recording the
// holder; an absent one is registered again (the owner changed and the
// copy expired, or the owner restarted), unless it was deregistered a
// moment ago (a beat that crossed the deregistration).
func (r *Registry) BeatHeld(ctx context.Context, f InstanceForm, holder string) error {
	r.stats.beats.Add(1)
	in := f.Instance
	key := appendDatumKey(nil, in.IP, in.Port, in.ClusterName)
	s := r.service(f.NamespaceID, f.ServiceName)
	now := r.nowMillis()
	if s != nil {
		s.mu.Lock()
		if o, ok := s.ephemeral[string(key)]; ok {
			o.LastBeat = now
			o.holder = holder
			recovered := !o.Marked && !o.Healthy
			if recovered {
				o.Healthy = true
				s.touch(now)
			}
			s.mu.Unlock()
			if recovered {
				r.emit(f.NamespaceID, f.ServiceName, ChangedEphemeral|ChangedHealth)
			}
			return nil
		}
		s.mu.Unlock()
		if s.deregisteredSince(key, now, 0) {
			return nil
		}
	}
	f.Instance.ServiceName = strings.Clone(f.ServiceName)
	return r.RegisterHeld(ctx, f, holder)
}
