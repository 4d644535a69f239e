package naming

import "sort"

// Typed reads for edges that render their own wire format (the Nacos 2.x
// gRPC edge): copies of the domain's state, no JSON.

// ServiceView is what a read of one service returns: its instances and
// the service metadata a 2.x answer needs.
type ServiceView struct {
	NamespaceID, Service string // Service is grouped
	ProtectThreshold     float32
	// HasMeta: the service's metadata is stored (created through the
	// service API or by a persistent instance), which Java 2.x consults
	// for the protect threshold.
	HasMeta bool
	// Metadata, Selector and Clusters are the service's (copies).
	Metadata map[string]string
	Selector Selector
	Clusters []ClusterMeta
	// Instances are copies: the persistent ones, then the ephemeral ones.
	Instances []Instance
}

// View returns a copy of a service's instances; ok is false when the
// service does not exist.
func (r *Registry) View(ns, grouped string) (v ServiceView, ok bool) {
	s := r.service(ns, grouped)
	if s == nil {
		return v, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v = ServiceView{NamespaceID: ns, Service: grouped, ProtectThreshold: s.meta.ProtectThreshold, HasMeta: s.persisted,
		Metadata: cloneMap(s.meta.Metadata), Selector: s.meta.Selector, Instances: make([]Instance, 0, len(s.persistent)+len(s.ephemeral))}
	for _, c := range s.clusters() {
		c.Metadata = cloneMap(c.Metadata)
		v.Clusters = append(v.Clusters, c)
	}
	for _, list := range [2]map[string]*Instance{s.persistent, s.ephemeral} {
		for _, in := range list {
			c := *in
			c.Metadata = cloneMap(in.Metadata)
			c.holder = ""
			v.Instances = append(v.Instances, c)
		}
	}
	return v, true
}

// GroupedNames returns the grouped names of a namespace's services in the
// order they were created here.
func (r *Registry) GroupedNames(ns string) []string {
	r.mu.RLock()
	m := r.namespaces[ns]
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return m[names[i]].created < m[names[j]].created })
	r.mu.RUnlock()
	return names
}

// HasKinds reports whether a service holds ephemeral and persistent
// instances (Java 2.x types a service as one or the other).
func (r *Registry) HasKinds(ns, grouped string) (ephemeral, persistent bool) {
	s := r.service(ns, grouped)
	if s == nil {
		return false, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ephemeral) > 0, len(s.persistent) > 0
}
