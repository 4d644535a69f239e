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
	sw := r.Switches()
	cacheMillis := sw.DefaultCacheMillis
	if q.UDPPort > 0 && q.UDPPort <= 65535 && r.cfg.Pusher != nil && r.CanEnablePush(q.Agent) {
		ip := q.ClientIP
		if ip == "" {
			ip = "127.0.0.1"
		}
		r.cfg.Pusher.Subscribe(push.Subscriber{NamespaceID: q.NamespaceID, Service: q.ServiceName, Clusters: q.Clusters,
			Agent: q.Agent, App: q.App, Tenant: q.Tenant, IP: ip, Port: q.UDPPort})
		cacheMillis = sw.DefaultPushCacheMillis
	}
	return r.render(q, cacheMillis)
}

// RenderPush builds the push payload for one subscriber (§5.3 step 3).
func (r *Registry) RenderPush(sub push.Subscriber) ([]byte, error) {
	q := ListQuery{NamespaceID: sub.NamespaceID, ServiceName: sub.Service, Clusters: sub.Clusters, ClientIP: sub.IP, Agent: sub.Agent}
	return r.render(q, r.Switches().DefaultPushCacheMillis)
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

func (r *Registry) render(q ListQuery, cacheMillis int64) ([]byte, error) {
	s := r.service(q.NamespaceID, q.ServiceName)
	if s == nil || q.IsCheck { // isCheck bodies depend on emptiness: not cached
		return r.renderFull(q, cacheMillis)
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
			return nil, err
		}
		// split around the lastRefTime value written by renderFull
		marker := []byte(`"lastRefTime":`)
		i := bytes.LastIndex(body, marker)
		if i < 0 {
			return body, nil
		}
		i += len(marker)
		j := i
		for j < len(body) && body[j] >= '0' && body[j] <= '9' {
			j++
		}
		e = renderEntry{pre: body[:i:i], post: body[j:]}
		s.mu.Lock()
		if s.version == version { // nothing changed while rendering
			if s.renders == nil || len(s.renders) >= maxRenderEntries {
				s.renders = map[renderKey]renderEntry{}
			}
			s.renders[key] = e
		}
		s.mu.Unlock()
	}
	out := make([]byte, 0, len(e.pre)+len(e.post)+16)
	out = append(out, e.pre...)
	out = strconv.AppendInt(out, now, 10)
	return append(out, e.post...), nil
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

// checksumLocked is Service.recalculateChecksum: MD5 of the service string
// and every instance "ip:port_weight_healthy_cluster," sorted by toString.
// Recomputed lazily after a change. Caller holds s.mu (write).
func (s *Service) checksumLocked() string {
	if !s.dirty && s.checksum != "" {
		return s.checksum
	}
	all := s.instancesOf(nil)
	sort.Slice(all, func(i, j int) bool { return all[i].JavaString() < all[j].JavaString() })
	var sb strings.Builder
	sb.WriteString(`{"name":`)
	sb.Write(compat.AppendJavaString(nil, s.meta.Name))
	sb.WriteString(`,"protectThreshold":`)
	sb.Write(compat.AppendJavaFloat(nil, s.meta.ProtectThreshold))
	sb.WriteString(`,"ipCount":`)
	sb.WriteString(strconv.Itoa(len(all)))
	sb.WriteString("}")
	for _, in := range all {
		sb.WriteString(in.Addr())
		sb.WriteByte('_')
		sb.WriteString(compat.FormatJavaDouble(in.Weight))
		sb.WriteByte('_')
		sb.WriteString(strconv.FormatBool(in.Healthy))
		sb.WriteByte('_')
		sb.WriteString(in.ClusterName)
		sb.WriteByte(',')
	}
	sum := md5.Sum([]byte(sb.String()))
	s.checksum = hex.EncodeToString(sum[:])
	s.dirty = false
	return s.checksum
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
