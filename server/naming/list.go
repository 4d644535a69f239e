package naming

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"sort"
	"strconv"
	"strings"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/push"
)

// ListQuery is a parsed GET /instance/list (§3.2).
type ListQuery struct {
	NamespaceID string
	ServiceName string // grouped
	Clusters    string
	ClientIP    string
	UDPPort     int
	Env         string
	IsCheck     bool
	App         string
	Tenant      string
	HealthyOnly bool
	Agent       string
	// Source is the address the request came from: a subscription is
	// pushed there unless it is a trusted source (push.Config.TrustedSources).
	Source string
}

// CanEnablePush is PushService.canEnablePush for an agent string.
func (r *Registry) CanEnablePush(agent string) bool {
	sw := r.Switches()
	if !sw.PushEnabled {
		return false
	}
	ci := ParseAgent(agent)
	if !ci.Valid {
		return false
	}
	var min string
	switch ci.Type {
	case ClientJava:
		min = sw.PushJavaVersion
	case ClientDNS:
		min = sw.PushPythonVersion
	case ClientC:
		min = sw.PushCVersion
	case ClientGo:
		min = sw.PushGoVersion
	case ClientCSharp:
		min = sw.PushCSharpVersion
	default:
		return false
	}
	return versionAtLeast(ci.Version, min)
}

// List answers instance/list, registering the UDP subscriber when asked.
func (r *Registry) List(q ListQuery) ([]byte, error) {
	b, err := r.ListBody(q)
	if err != nil {
		return nil, err
	}
	return b.AppendTo(nil), nil
}

// ListBody is an instance/list answer: a body rendered once per change of
// the service and per query shape (renderKey), and the lastRefTime of this
// answer that goes in it. It shares the rendered bytes: never modify them.
type ListBody struct {
	pre, post []byte // around the lastRefTime digits (or the whole body in pre, refTime < 0)
	refTime   int64
}

// Parts returns the bytes before lastRefTime's value, the value (-1 when
// the body has none) and the bytes after it.
func (b ListBody) Parts() (pre []byte, refTime int64, post []byte) { return b.pre, b.refTime, b.post }

// AppendTo appends the body to dst.
func (b ListBody) AppendTo(dst []byte) []byte {
	dst = append(dst, b.pre...)
	if b.refTime >= 0 {
		dst = strconv.AppendInt(dst, b.refTime, 10)
	}
	return append(dst, b.post...)
}

// ListBody is List without copying the cached body (the HTTP handler
// writes the parts straight into its response). Strings of q are only
// looked at, except where a subscriber is registered (copied there).
func (r *Registry) ListBody(q ListQuery) (ListBody, error) {
	sw := r.Switches()
	cacheMillis := sw.DefaultCacheMillis
	if q.UDPPort > 0 && q.UDPPort <= 65535 && r.cfg.Pusher != nil && r.CanEnablePush(q.Agent) {
		ip := q.ClientIP
		if ip == "" {
			ip = "127.0.0.1"
		}
		r.cfg.Pusher.Subscribe(push.Subscriber{NamespaceID: q.NamespaceID, Service: q.ServiceName, Clusters: q.Clusters,
			Agent: q.Agent, App: q.App, Tenant: q.Tenant, IP: ip, Port: q.UDPPort, Source: q.Source})
		cacheMillis = sw.DefaultPushCacheMillis
	}
	return r.render(q, cacheMillis)
}

// RenderPush builds the push payload for one subscriber (§5.3 step 3).
func (r *Registry) RenderPush(sub push.Subscriber) ([]byte, error) {
	q := ListQuery{NamespaceID: sub.NamespaceID, ServiceName: sub.Service, Clusters: sub.Clusters, ClientIP: sub.IP, Agent: sub.Agent}
	b, err := r.render(q, r.Switches().DefaultPushCacheMillis)
	if err != nil {
		return nil, err
	}
	return b.AppendTo(nil), nil
}

func splitClusters(s string) []string {
	var out []string
	for _, c := range strings.Split(s, ",") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

// renderKey is everything besides the service state that shapes an
// instance/list body.
type renderKey struct {
	clusters, env        string
	healthyOnly, grouped bool
	cacheMillis          int64
}

// renderEntry is a rendered body split around its lastRefTime value.
type renderEntry struct{ pre, post []byte }

const maxRenderEntries = 16

func (r *Registry) render(q ListQuery, cacheMillis int64) (ListBody, error) {
	s := r.service(q.NamespaceID, q.ServiceName)
	if s == nil || q.IsCheck { // isCheck bodies depend on emptiness: not cached
		body, err := r.renderFull(q, cacheMillis)
		return ListBody{pre: body, refTime: -1}, err
	}
	key := renderKey{clusters: q.Clusters, env: q.Env, healthyOnly: q.HealthyOnly, grouped: GroupedForAgent(q.Agent), cacheMillis: cacheMillis}
	s.mu.RLock()
	e, ok := s.renders[key]
	version := s.version
	s.mu.RUnlock()
	now := r.nowMillis()
	if !ok {
		body, err := r.renderFull(q, cacheMillis)
		if err != nil {
			return ListBody{}, err
		}
		// split around the lastRefTime value written by renderFull
		marker := []byte(`"lastRefTime":`)
		i := bytes.LastIndex(body, marker)
		if i < 0 {
			return ListBody{pre: body, refTime: -1}, nil
		}
		i += len(marker)
		j := i
		for j < len(body) && body[j] >= '0' && body[j] <= '9' {
			j++
		}
		e = renderEntry{pre: body[:i:i], post: body[j:]}
		// the key's strings may share the request's memory: keep copies
		key.clusters, key.env = strings.Clone(key.clusters), strings.Clone(key.env)
		s.mu.Lock()
		if s.version == version { // nothing changed while rendering
			if s.renders == nil || len(s.renders) >= maxRenderEntries {
				s.renders = map[renderKey]renderEntry{}
			}
			s.renders[key] = e
		}
		s.mu.Unlock()
	}
	return ListBody{pre: e.pre, refTime: now, post: e.post}, nil
}

func (r *Registry) renderFull(q ListQuery, cacheMillis int64) ([]byte, error) {
	s := r.service(q.NamespaceID, q.ServiceName)
	w := compat.NewJSON(512)
	if s == nil {
		compat.AppendAbsentServiceInfo(w, q.ServiceName, q.Clusters, cacheMillis)
		return w.Bytes(), nil
	}
	s.mu.Lock() // checksum may be recomputed
	defer s.mu.Unlock()
	if !s.meta.Enabled {
		return nil, compat.ErrServiceDisabled()
	}
	ips := s.instancesOf(splitClusters(q.Clusters))
	if q.IsCheck && len(ips) > 0 { // Java answers an empty list before looking at isCheck
		return []byte("{}"), nil
	}
	grouped := GroupedForAgent(q.Agent)
	si := compat.ServiceInfo{Dom: q.ServiceName, Name: q.ServiceName, CacheMillis: cacheMillis, LastRefTime: r.nowMillis(),
		Checksum: s.checksumLocked(), Clusters: q.Clusters, Env: q.Env, Metadata: s.meta.Metadata}
	if !grouped {
		si.Dom = BareName(q.ServiceName)
	}
	var healthy, unhealthy []*Instance
	for _, in := range ips {
		if in.Healthy {
			healthy = append(healthy, in)
		} else {
			unhealthy = append(unhealthy, in)
		}
	}
	if len(ips) > 0 && float32(len(healthy))/float32(len(ips)) <= s.meta.ProtectThreshold {
		healthy = append(healthy, unhealthy...)
		unhealthy = nil
	}
	emit := func(list []*Instance, valid bool) {
		for _, in := range list {
			if !in.Enabled {
				continue
			}
			sn := in.ServiceName
			if !grouped {
				sn = BareName(sn)
			}
			si.Hosts = append(si.Hosts, compat.Host{IP: in.IP, Port: in.Port, Valid: valid, Marked: in.Marked, InstanceID: in.InstanceID,
				Metadata: in.Metadata, Enabled: in.Enabled, Weight: in.Weight, ClusterName: in.ClusterName, ServiceName: sn, Ephemeral: in.Ephemeral})
		}
	}
	// ipMap is a HashMap<Boolean, List>(2) holding TRUE then FALSE: grown
	// to 4 buckets, FALSE (hash 1237) iterates before TRUE (1231), as the
	// 1.4.8 reference shows
	if !q.HealthyOnly {
		emit(unhealthy, false)
	}
	emit(healthy, true)
	if len(ips) > 0 && si.Hosts == nil {
		si.Hosts = []compat.Host{} // all disabled or unhealthy: hosts stays first
	}
	compat.AppendServiceInfo(w, si)
	return w.Bytes(), nil
}

// instancesOf returns the instances of the named clusters (all when none)
// in Java's order (Service.allIPs): cluster by cluster — requested order, or
// clusterMap's order (Service.clusters) — persistent before ephemeral, each set in
// HashSet<Instance> order (Instance.hashCode is ip.hashCode(); the set is
// new HashSet<>(list), the list a HashMap<datumKey,...>'s values).
// Registration history that Java's tables depend on is approximated by
// assuming instances were added one at a time.
func (s *Service) instancesOf(clusters []string) []*Instance {
	if len(clusters) == 0 {
		for _, c := range s.clusters() {
			clusters = append(clusters, c.Name)
		}
	}
	var out []*Instance
	for _, c := range clusters {
		for k, list := range []map[string]*Instance{s.persistent, s.ephemeral} {
			var set []*Instance
			for _, in := range list {
				if in.ClusterName == c {
					set = append(set, in)
				}
			}
			mapCap := compat.JavaHashCapacity(len(list)-1, len(list)) // one added at a time
			if k == 0 && s.persistentCap > 0 {
				mapCap = s.persistentCap
			}
			out = append(out, javaSetOrder(set, mapCap)...)
		}
	}
	return out
}

// javaSetOrder orders one cluster's instances as HashSet iteration does.
// The set is filled from the service's stored instance list (all clusters
// of one kind), which a HashMap by datum key of capacity mapCap built: its
// capacity follows the whole list, not the cluster.
func javaSetOrder(set []*Instance, mapCap int) []*Instance {
	n := len(set)
	if n < 2 {
		return set
	}
	setCap := compat.JavaHashCapacity(max(int(float32(n)/.75)+1, 16), n)
	type keyed struct {
		in             *Instance
		setBin, mapBin int
	}
	ks := make([]keyed, n)
	for i, in := range set {
		ks[i] = keyed{in, compat.JavaHashBucket(compat.JavaStringHash(in.IP), setCap), compat.JavaHashBucket(compat.JavaStringHash(in.DatumKey()), mapCap)}
	}
	sort.Slice(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.setBin != b.setBin {
			return a.setBin < b.setBin
		}
		if a.mapBin != b.mapBin {
			return a.mapBin < b.mapBin
		}
		return a.in.seq < b.in.seq
	})
	for i := range ks {
		set[i] = ks[i].in
	}
	return set
}

// checksumLocked is Service.recalculateChecksum (naming-v1.md §2.6): MD5
// of getServiceString() and, for every instance sorted by toString,
// "ip:port_weight_healthy_cluster,". Recomputed lazily after a change.
// Caller holds s.mu (write). The service string is reproduced exactly
// (checked against the checksums Java 1.4.8 nodes exchange in
// /v1/ns/service/status), so a mixed cluster's status sync agrees.
func (s *Service) checksumLocked() string {
	if !s.dirty && s.checksum != "" {
		return s.checksum
	}
	all := s.instancesOf(nil)
	sort.Slice(all, func(i, j int) bool { return all[i].JavaString() < all[j].JavaString() })
	b := s.appendServiceString(make([]byte, 0, 256+48*len(all)), all)
	for _, in := range all {
		b = append(b, in.Addr()...)
		b = append(b, '_')
		b = append(b, compat.FormatJavaDouble(in.Weight)...)
		b = append(b, '_')
		b = strconv.AppendBool(b, in.Healthy)
		b = append(b, '_')
		b = append(b, in.ClusterName...)
		b = append(b, ',')
	}
	sum := md5.Sum(b)
	s.checksum = hex.EncodeToString(sum[:])
	s.dirty = false
	return s.checksum
}

// appendServiceString is Service.getServiceString: Jackson's JSON of a
// HashMap (iteration order below; the null token is dropped) whose clusters
// are HashMaps too, with the health checker serialised without its type
// (an untyped map value: Tcp and None have no other property).
func (s *Service) appendServiceString(b []byte, all []*Instance) []byte {
	invalid := 0
	for _, in := range all {
		if !in.Healthy {
			invalid++
		}
	}
	b = append(b, `{"invalidIPCount":`...)
	b = strconv.AppendInt(b, int64(invalid), 10)
	b = append(b, `,"name":`...)
	b = compat.AppendJavaString(b, s.meta.Name)
	b = append(b, `,"ipCount":`...)
	b = strconv.AppendInt(b, int64(len(all)), 10)
	b = append(b, `,"owners":[],"protectThreshold":`...)
	b = compat.AppendJavaFloat(b, s.meta.ProtectThreshold)
	b = append(b, `,"clusters":[`...)
	names := make([]string, 0, len(s.meta.Clusters))
	for n := range s.meta.Clusters {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range compat.JavaHashOrderStrings(names, 16) { // clusterMap is a HashMap
		c := s.meta.Clusters[n]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"healthChecker":`...)
		b = appendUntypedChecker(b, c.HealthChecker)
		b = append(b, `,"defIPPort":`...)
		b = strconv.AppendInt(b, int64(c.EffectiveIPPort()), 10)
		b = append(b, `,"defCkport":`...)
		b = strconv.AppendInt(b, int64(c.DefCkport), 10)
		b = append(b, `,"name":`...)
		b = compat.AppendJavaString(b, c.Name)
		b = append(b, `,"useIPPort4Check":`...)
		b = strconv.AppendBool(b, c.UseIPPort4Check)
		b = append(b, `,"sitegroup":""}`...)
	}
	return append(b, "]}"...)
}

// appendUntypedChecker writes a health checker as Jackson writes it as an
// Object map value: its own properties only.
func appendUntypedChecker(b []byte, h HealthChecker) []byte {
	switch h.Type {
	case "HTTP":
		b = append(b, `{"path":`...)
		b = compat.AppendJavaString(b, h.Path)
		b = append(b, `,"headers":`...)
		b = compat.AppendJavaString(b, h.Headers)
		b = append(b, `,"expectedResponseCode":`...)
		b = strconv.AppendInt(b, int64(h.ExpectedResponseCode), 10)
		return append(b, '}')
	case "MYSQL":
		b = append(b, `{"user":`...)
		b = compat.AppendJavaString(b, h.User)
		b = append(b, `,"pwd":`...)
		b = compat.AppendJavaString(b, h.Pwd)
		b = append(b, `,"cmd":`...)
		b = compat.AppendJavaString(b, h.Cmd)
		return append(b, '}')
	}
	return append(b, "{}"...)
}

// Statuses answers GET /instance/statuses?key=... (§3.1.9).
func (r *Registry) Statuses(key string) ([]byte, error) {
	ns, name := DefaultNamespace, key
	if strings.Contains(key, "##") {
		ns, name = SplitServiceKey(key)
	}
	if err := CheckServiceNameFormat(name); err != nil {
		return nil, err
	}
	s := r.service(ns, name)
	if s == nil {
		return nil, compat.ServerError("service: " + name + " not found.")
	}
	s.mu.RLock()
	all := s.instancesOf(nil)
	w := compat.NewJSON(64 + 24*len(all))
	w.BeginObject().Key("ips").BeginArray()
	for _, in := range all {
		w.Str(in.Addr() + "_" + strconv.FormatBool(in.Healthy))
	}
	s.mu.RUnlock()
	return w.EndArray().EndObject().Bytes(), nil
}
