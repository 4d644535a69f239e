package naming

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/push"
)

// ServiceForm is a parsed POST/PUT /service.
type ServiceForm struct {
	NamespaceID, ServiceName string // grouped
	ProtectThreshold         float32
	Metadata                 map[string]string
	Selector                 Selector
}

// ParseSelector is ServiceController.parseSelector: blank → none; else
// URL-decoded (URLDecoder's errors are 400), read as a JSON tree, and
// SelectorType.valueOf(type.asText()) decides: none, or label with its
// expression; a missing type or expression is Java's NullPointerException.
func ParseSelector(raw string) (Selector, error) {
	if JavaTrimBlank(raw) {
		return Selector{Type: "none"}, nil
	}
	dec, err := compat.JavaURLDecode(raw)
	if err != nil {
		return Selector{}, compat.IllegalArgument(err.Error())
	}
	node, err := jacksonTree(dec)
	if err != nil {
		return Selector{}, err
	}
	typ, ok := nodeGet(node, "type")
	if !ok {
		return Selector{}, npeGetText
	}
	switch ts := nodeText(typ); ts {
	case "none":
		return Selector{Type: "none"}, nil
	case "label":
		ex, ok := nodeGet(node, "expression")
		if !ok {
			return Selector{}, npeGetText
		}
		expr := nodeText(ex)
		labels, err := ParseLabelExpression(expr)
		if err != nil {
			return Selector{}, err
		}
		return Selector{Type: "label", Expression: expr, Labels: labels}, nil
	default:
		return Selector{}, compat.IllegalArgument("No enum constant com.alibaba.nacos.api.selector.SelectorType." + ts)
	}
}

// CreateService is POST /service.
func (r *Registry) CreateService(ctx context.Context, f ServiceForm) error {
	if s := r.service(f.NamespaceID, f.ServiceName); s != nil {
		return compat.IllegalArgument("specified service already exists, serviceName : " + f.ServiceName)
	}
	if err := r.rules.serviceName(f.ServiceName); err != nil {
		return err
	}
	meta := newServiceMeta(f.NamespaceID, f.ServiceName)
	meta.ProtectThreshold, meta.Metadata, meta.Selector = f.ProtectThreshold, f.Metadata, f.Selector
	err := r.createMeta(ctx, meta)
	if isCondFailed(err) {
		return compat.IllegalArgument("specified service already exists, serviceName : " + f.ServiceName)
	}
	return err
}

func isCondFailed(err error) bool { return errors.Is(err, raftstore.ErrCondFailed) }

// UpdateService is PUT /service.
func (r *Registry) UpdateService(ctx context.Context, f ServiceForm) error {
	s := r.service(f.NamespaceID, f.ServiceName)
	if s == nil {
		return compat.ServerError("service " + f.ServiceName + " not found!")
	}
	if err := r.rules.serviceName(f.ServiceName); err != nil {
		return err
	}
	return r.updateMeta(ctx, s, f.NamespaceID, f.ServiceName, func(meta *ServiceMeta) error {
		meta.ProtectThreshold, meta.Metadata, meta.Selector = f.ProtectThreshold, f.Metadata, f.Selector
		return nil
	})
}

// DeleteService is DELETE /service: removes it even with instances.
func (r *Registry) DeleteService(ctx context.Context, ns, grouped string) error {
	if r.service(ns, grouped) == nil {
		return compat.IllegalArgument("specified service not exist, serviceName : " + grouped)
	}
	return r.deleteServiceCP(ctx, ns, grouped)
}

func appendClusterBrief(w *compat.JSON, c ClusterMeta) {
	w.BeginObject().Key("name").Str(c.Name).Key("healthChecker")
	c.HealthChecker.AppendJSON(w)
	w.Key("metadata")
	appendStrMap(w, c.Metadata)
	w.EndObject()
}

// clusters returns the service's clusters in the order of Java's
// Service.clusterMap: a HashMap for a service created in memory (by an
// instance), a LinkedHashMap (insertion order) for one that came from its
// CP record (created by POST /service, or read back at start). Caller
// holds s.mu.
func (s *Service) clusters() []ClusterMeta {
	if !s.linked {
		return hashOrderClusters(s.meta.Clusters)
	}
	out := make([]ClusterMeta, 0, len(s.meta.Clusters))
	for _, c := range s.meta.Clusters {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seq != out[j].Seq {
			return out[i].Seq < out[j].Seq
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// linkedClusters reports whether Java holds the clusters as a
// LinkedHashMap. Caller holds s.mu or knows s cannot change.
func (s *Service) linkedClusters() bool { return s.linked }

// hashOrderClusters orders clusters as a HashMap<String,Cluster> iterates.
func hashOrderClusters(m map[string]ClusterMeta) []ClusterMeta {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	out := make([]ClusterMeta, 0, len(m))
	for _, n := range compat.JavaHashOrderStrings(sortStrings(names), 16) {
		out = append(out, m[n])
	}
	return out
}

func sortStrings(s []string) []string { sort.Strings(s); return s }

// GetService is GET /service.
func (r *Registry) GetService(ns, grouped string) ([]byte, error) {
	s := r.service(ns, grouped)
	if s == nil {
		return nil, compat.ErrServiceIsNotFound(grouped)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	w := compat.NewJSON(256)
	w.BeginObject().Key("name").Str(BareName(grouped)).Key("namespaceId").Str(ns).
		Key("protectThreshold").Float(s.meta.ProtectThreshold).Key("metadata")
	appendStrMap(w, s.meta.Metadata)
	w.Key("selector")
	s.meta.Selector.AppendJSON(w)
	w.Key("groupName").Str(GroupOf(grouped)).Key("clusters").BeginArray()
	for _, c := range s.clusters() {
		appendClusterBrief(w, c)
	}
	return w.EndArray().EndObject().Bytes(), nil
}

// namesOf returns the sorted grouped names of a namespace.
func (r *Registry) namesOf(ns string) []string {
	r.mu.RLock()
	names := make([]string, 0, len(r.namespaces[ns]))
	for n := range r.namespaces[ns] {
		names = append(names, n)
	}
	r.mu.RUnlock()
	sort.Strings(names)
	return names
}

// ListServices is GET /service/list (ServiceController.list, §3.4),
// including its label-selector filter ("INSTANCE.metadata.k = 'v'" or
// "SERVICE.metadata.k = 'v'"), its Java int paging arithmetic and the
// exceptions its selector parsing can throw.
func (r *Registry) ListServices(ns, group, selector string, pageNo, pageSize int) ([]byte, error) {
	names := r.namesOf(ns)
	if len(names) == 0 {
		return compat.ServiceList([]string{}, 0), nil
	}
	prefix := group + GroupSeparator
	if group != "*" {
		kept := names[:0]
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				kept = append(kept, n)
			}
		}
		names = kept
	}
	if compat.JavaTrim(selector) != "" {
		var err error
		if names, err = r.filterBySelector(ns, names, selector); err != nil {
			return nil, err
		}
	}
	start := int32(pageNo-1) * int32(pageSize) // Java int arithmetic, overflow included
	if start < 0 {
		start = 0
	}
	n := int32(len(names))
	if start >= n {
		return compat.ServiceList([]string{}, len(names)), nil
	}
	end := start + int32(pageSize)
	if end > n {
		end = n
	}
	if end < start { // subList(start, end) with an overflowed end
		return nil, compat.IllegalArgument("fromIndex(" + strconv.Itoa(int(start)) + ") > toIndex(" + strconv.Itoa(int(end)) + ")")
	}
	page := make([]string, 0, end-start)
	for _, name := range names[start:end] {
		page = append(page, strings.ReplaceAll(name, prefix, ""))
	}
	return compat.ServiceList(page, len(names)), nil
}

// filterBySelector applies the service-list selector the way Java parses it.
func (r *Registry) filterBySelector(ns string, names []string, selector string) ([]string, error) {
	sel, err := jacksonTree(selector)
	if err != nil {
		return nil, err
	}
	typ, ok := nodeGet(sel, "type")
	if !ok {
		return nil, npeGetText
	}
	ts := nodeText(typ)
	if ts != "none" && ts != "label" {
		return nil, compat.IllegalArgument("No enum constant com.alibaba.nacos.api.selector.SelectorType." + ts)
	}
	ex, ok := nodeGet(sel, "expression")
	if !ok {
		return nil, npeGetText
	}
	expr := strings.Join(strings.FieldsFunc(nodeText(ex), unicode.IsSpace), "")
	if ts != "label" || expr == "" {
		return names, nil
	}
	terms := compat.JavaSplit(expr, "=") // expression.split("=")
	if len(terms) == 0 {                 // "=": terms[0]
		return nil, compat.ServerError("Index 0 out of bounds for length 0")
	}
	factors := compat.JavaSplit(terms[0], ".") // terms[0].split("\\.")
	if len(factors) == 0 {
		return nil, compat.ServerError("Index 0 out of bounds for length 0")
	}
	if factors[0] != "INSTANCE" && factors[0] != "SERVICE" {
		return names, nil
	}
	if len(terms) < 2 {
		return nil, compat.ServerError("Index 1 out of bounds for length 1")
	}
	key, value := factors[len(factors)-1], strings.ReplaceAll(terms[1], "'", "")
	var out []string
	for _, name := range names {
		s := r.service(ns, name)
		if s == nil {
			continue
		}
		s.mu.RLock()
		match := false
		if factors[0] == "SERVICE" {
			v, ok := s.meta.Metadata[key]
			match = ok && v == value
		} else {
			for _, list := range []map[string]*Instance{s.persistent, s.ephemeral} {
				for _, in := range list {
					if v, ok := in.Metadata[key]; ok && v == value {
						match = true
					}
				}
			}
		}
		s.mu.RUnlock()
		if match {
			out = append(out, name)
		}
	}
	return out, nil
}

// ServiceNames is GET /service/names (ServiceController.searchService):
// bare names matching ".*expr.*" against "<grouped>:[]", per namespace, as
// HashSets (so one bare name in two groups appears once); count is the
// number of namespaces. A named namespace that does not exist fails with an
// NPE (500, empty body); a bad regex is a PatternSyntaxException (400).
func (r *Registry) ServiceNames(ns, expr string) ([]byte, error) {
	re, err := compat.CompileJavaRegex(".*" + expr + ".*")
	if err != nil {
		return nil, err
	}
	var nss []string
	r.mu.RLock()
	if compat.JavaTrim(ns) != "" {
		if _, ok := r.namespaces[ns]; !ok {
			r.mu.RUnlock()
			return nil, compat.ServerError("")
		}
		nss = []string{ns}
	}
	r.mu.RUnlock()
	if nss == nil {
		nss = r.namespaceIDs()
	}
	w := compat.NewJSON(256)
	w.BeginObject().Key("services").BeginObject()
	for _, n := range nss {
		seen := map[string]bool{}
		var bare []string
		for _, g := range r.namesOf(n) {
			if b := BareName(g); re.MatchString(g+":[]") && !seen[b] {
				seen[b] = true
				bare = append(bare, b)
			}
		}
		w.Key(n).StrList(compat.JavaHashOrderStrings(bare, 16))
	}
	return w.EndObject().Key("count").Int(int64(len(nss))).EndObject().Bytes(), nil
}

// Subscribers is GET /service/subscribers with Java's fuzzy matching
// (getClientsFuzzy): stored key starts with the namespace, bare name and
// group contain the requested ones; rows carry the requested namespace. all
// is the push service's stored subscribers in its iteration order.
func (r *Registry) Subscribers(all []push.Subscriber, ns, grouped string, pageNo, pageSize int) []byte {
	bare, group := BareName(grouped), GroupOf(grouped)
	var match []push.Subscriber
	for _, s := range all {
		if !strings.HasPrefix(ServiceKey(s.NamespaceID, s.Service), ns) {
			continue
		}
		if strings.Contains(BareName(s.Service), bare) && strings.Contains(GroupOf(s.Service), group) {
			match = append(match, s)
		}
	}
	start, end := page(len(match), pageNo, pageSize)
	w := compat.NewJSON(256)
	w.BeginObject().Key("subscribers").BeginArray()
	for _, s := range match[start:end] {
		w.BeginObject().Key("addrStr").Str(s.AddrStr()).Key("agent").Str(s.Agent).Key("app").Str(s.App).
			Key("ip").Str(s.IP).Key("namespaceId").Str(ns).Key("serviceName").Str(s.Service).EndObject()
	}
	return w.EndArray().Key("count").Int(int64(len(match))).EndObject().Bytes()
}

// ServiceChecksum is PUT /service/checksum.
func (r *Registry) ServiceChecksum(ns, grouped string) ([]byte, error) {
	s := r.service(ns, grouped)
	if s == nil {
		return nil, compat.ServerError("serviceName not found: " + grouped)
	}
	s.mu.Lock()
	sum := s.checksumLocked()
	s.mu.Unlock()
	w := compat.NewJSON(64)
	return w.BeginObject().Key("checksum").Str(sum).EndObject().Bytes(), nil
}

// ClusterForm is PUT /cluster.
type ClusterForm struct {
	NamespaceID, ServiceName, ClusterName string
	CheckPort                             int
	UseInstancePort4Check                 bool
	HealthChecker                         HealthChecker
	Metadata                              map[string]string
}

// ParseHealthChecker parses the healthChecker JSON; unknown types → NONE.
func ParseHealthChecker(raw string) (HealthChecker, error) {
	var h HealthChecker
	if msg := compat.JacksonSyntaxError(raw); msg != "" {
		return h, compat.DeserializeError("com.alibaba.nacos.api.naming.pojo.healthcheck.AbstractHealthChecker", msg)
	}
	if err := json.Unmarshal([]byte(raw), &h); err != nil {
		return h, compat.DeserializeError("com.alibaba.nacos.api.naming.pojo.healthcheck.AbstractHealthChecker", err.Error())
	}
	switch strings.ToUpper(h.Type) {
	case "TCP", "HTTP", "MYSQL", "NONE":
		h.Type = strings.ToUpper(h.Type)
	default:
		h = HealthChecker{Type: "NONE"}
	}
	if h.Type == "HTTP" && h.ExpectedResponseCode == 0 {
		h.ExpectedResponseCode = 200
	}
	return h, nil
}

// UpdateCluster is PUT /cluster.
func (r *Registry) UpdateCluster(ctx context.Context, f ClusterForm) error {
	s := r.service(f.NamespaceID, f.ServiceName)
	if s == nil {
		return compat.ServerError("service not found:" + f.ServiceName)
	}
	return r.updateMeta(ctx, s, f.NamespaceID, f.ServiceName, func(meta *ServiceMeta) error {
		c, ok := meta.Clusters[f.ClusterName]
		if !ok {
			if err := r.rules.clusterName(f.ClusterName); err != nil {
				return err
			}
			c = NewClusterMeta(f.ClusterName)
		}
		if c.DefIPPort == -1 && f.CheckPort == 0 {
			// its first write would freeze defIPPort at 0, which Java's
			// Cluster.setDefIPPort refuses when the write is read back
			return compat.ServerError("errCode: 101, errMsg: Nacos deserialize failed.  ")
		}
		c.DefCkport = f.CheckPort
		c.UseIPPort4Check = f.UseInstancePort4Check
		c.HealthChecker = f.HealthChecker
		c.Metadata = f.Metadata
		if ok {
			meta.Clusters[f.ClusterName] = c
		} else {
			meta.addCluster(c)
		}
		return nil
	})
}

// SetHealth is PUT /health: only for clusters whose checker is NONE.
func (r *Registry) SetHealth(ns, grouped, cluster, ip string, port int, healthy bool) error {
	// a missing service or cluster is a NullPointerException there, with
	// Java 17's message (the 1.4.8 reference runs on Java 17)
	s := r.service(ns, grouped)
	if s == nil {
		return compat.ServerError(`Cannot invoke "com.alibaba.nacos.naming.core.Service.getClusterMap()" because "service" is null`)
	}
	s.mu.Lock()
	c, ok := s.meta.Clusters[cluster]
	if !ok {
		s.mu.Unlock()
		return compat.ServerError(`Cannot invoke "com.alibaba.nacos.naming.core.Cluster.getHealthChecker()" because the return value of "java.util.Map.get(Object)" is null`)
	}
	if c.HealthChecker.Type != "NONE" {
		s.mu.Unlock()
		return compat.IllegalArgument("health check is still working, service: " + grouped)
	}
	var kind ChangeKind
	for _, list := range []map[string]*Instance{s.persistent, s.ephemeral} {
		for _, in := range list {
			if in.ClusterName == cluster && in.IP == ip && in.Port == port && in.Healthy != healthy {
				in.Healthy = healthy
				kind |= ChangedHealth
				if in.Ephemeral {
					kind |= ChangedEphemeral // the owner's datum changed: shipped
				}
			}
		}
	}
	if kind != 0 {
		s.touch(r.nowMillis())
	}
	s.mu.Unlock()
	if kind != 0 {
		r.emit(ns, grouped, kind)
	}
	return nil
}

// MetadataBatchForm is PUT|DELETE /instance/metadata/batch.
type MetadataBatchForm struct {
	NamespaceID, ServiceName, ConsistencyType, Instances string
	Metadata                                             map[string]string
	Delete                                               bool
	// Only limits the batch to one half: "ephemeral" (the Distro owner's,
	// once the raft leader ran the other) or "persistent" (the raft
	// leader's); "" runs both.
	Only string
}

// MetadataBatchKinds reports whether a batch's instance list (the
// instances parameter) names ephemeral instances, persistent ones, or
// both; an unreadable list names neither (the batch then does nothing).
func MetadataBatchKinds(instances string) (ephemeral, persistent bool) {
	var raw []struct {
		Ephemeral *bool `json:"ephemeral"`
	}
	if err := json.Unmarshal([]byte(instances), &raw); err != nil {
		return false, false
	}
	for _, in := range raw {
		if in.Ephemeral == nil || *in.Ephemeral {
			ephemeral = true
		} else {
			persistent = true
		}
	}
	return ephemeral, persistent
}

// MetadataBatch merges or removes metadata keys and returns the updated
// instances ("ip:port:cluster:ephemeral|persist", sorted). Java answers an
// empty list for a request it cannot apply; an error is the CP write's
// (the raft leader could not take it).
func (r *Registry) MetadataBatch(ctx context.Context, f MetadataBatchForm) ([]string, error) {
	// metadata=null: Java's putAll(null) / null.keySet() throws, and the
	// batch answers an empty list.
	if f.Metadata == nil || CheckServiceNameFormat(f.ServiceName) != nil {
		return []string{}, nil
	}
	s := r.service(f.NamespaceID, f.ServiceName)
	if s == nil {
		return []string{}, nil
	}
	type target struct {
		ip, cluster string
		port        int
	}
	var listed map[bool][]target
	switch f.ConsistencyType {
	case "ephemeral", "persist":
	case "": // the listed instances
	default: // Java logs "services.all value is illegal" and does nothing
		return []string{}, nil
	}
	if f.ConsistencyType == "" {
		var raw []struct {
			IP          string `json:"ip"`
			Port        int    `json:"port"`
			ClusterName string `json:"clusterName"`
			Ephemeral   *bool  `json:"ephemeral"`
		}
		if err := json.Unmarshal([]byte(f.Instances), &raw); err != nil {
			return []string{}, nil
		}
		listed = map[bool][]target{}
		for _, in := range raw {
			c := in.ClusterName
			if compat.JavaTrim(c) == "" {
				c = DefaultCluster
			}
			eph := true
			if in.Ephemeral != nil {
				eph = *in.Ephemeral
			}
			listed[eph] = append(listed[eph], target{in.IP, c, in.Port})
		}
	}
	matches := func(in *Instance, eph bool) bool {
		if listed == nil {
			return (f.ConsistencyType == "ephemeral") == eph
		}
		for _, t := range listed[eph] {
			if t.ip == in.IP && t.cluster == in.ClusterName && (t.port == in.Port || in.Port == 0) {
				return true
			}
		}
		return false
	}
	// An instance registered with metadata=null has a null map: Java's
	// putAll (or remove, when there are keys to remove) throws and that
	// consistency group updates nothing.
	throws := func(in *Instance) bool { return in.Metadata == nil && (!f.Delete || len(f.Metadata) > 0) }
	apply := func(in *Instance) {
		if in.Metadata == nil {
			in.Metadata = map[string]string{}
		}
		for k, v := range f.Metadata {
			if f.Delete {
				delete(in.Metadata, k)
			} else {
				in.Metadata[k] = v
			}
		}
	}
	updated := []string{}
	suffix := func(eph bool) string {
		if eph {
			return ":ephemeral"
		}
		return ":persist"
	}
	// ephemeral: in memory
	s.mu.Lock()
	ephOK := f.Only != "persistent"
	for _, in := range s.ephemeral {
		if matches(in, true) && throws(in) {
			ephOK = false
		}
	}
	for k, in := range s.ephemeral {
		if ephOK && matches(in, true) {
			c := in.clone()
			apply(c)
			s.ephemeral[k] = c
			updated = append(updated, in.DatumKey()+suffix(true))
		}
	}
	if len(updated) > 0 {
		s.touch(r.nowMillis())
	}
	s.mu.Unlock()
	if len(updated) > 0 {
		r.emit(f.NamespaceID, f.ServiceName, ChangedEphemeral)
	}
	if f.Only == "ephemeral" {
		sort.Strings(updated)
		return updated, nil
	}
	var persisted []string
	err := r.writePersistent(ctx, f.NamespaceID, f.ServiceName, func(_ *Service, list map[string]*Instance) error {
		persisted = persisted[:0]
		for k, in := range list {
			if matches(in, false) {
				c := in.clone() // list shares the live instances: replace, never modify
				apply(c)
				list[k] = c
				persisted = append(persisted, in.DatumKey()+suffix(false))
			}
		}
		if len(persisted) == 0 {
			return errNothing
		}
		return nil
	})
	switch {
	case err == nil:
		updated = append(updated, persisted...)
	case !errors.Is(err, errNothing):
		// never answer "updated" for a write raft did not take (a
		// follower's swallowed not-leader error: issue 23)
		return nil, err
	}
	sort.Strings(updated)
	return updated, nil
}

var errNothing = compat.ServerError("nothing to update")

// Metrics is GET /operator/metrics (§9.3).
func (r *Registry) Metrics(status string, cpu, load, mem float32) []byte {
	services, instances := r.Counts()
	w := compat.NewJSON(256)
	return w.BeginObject().Key("status").Str(status).Key("serviceCount").Int(int64(services)).
		Key("instanceCount").Int(int64(instances)).Key("raftNotifyTaskCount").Int(0).
		Key("responsibleServiceCount").Int(int64(services)).Key("responsibleInstanceCount").Int(int64(instances)).
		Key("cpu").Float(cpu).Key("load").Float(load).Key("mem").Float(mem).EndObject().Bytes()
}

// HealthServer is GET /health/server.
func (r *Registry) HealthServer(port int) []byte {
	services, _ := r.Counts()
	w := compat.NewJSON(128)
	return w.BeginObject().Key("msg").Str("Hello! I am Nacos-Naming and healthy! total services: raft " +
		strconv.Itoa(services) + ", local port:" + strconv.Itoa(port)).EndObject().Bytes()
}

// HasService reports whether the service exists.
func (r *Registry) HasService(ns, grouped string) bool { return r.service(ns, grouped) != nil }

// AllDomNames is GET /api/allDomNames: the DNS-F form for Nacos-DNS agents,
// else every namespace.
func (r *Registry) AllDomNames(dns bool) ([]byte, error) {
	w := compat.NewJSON(256)
	if dns {
		names := r.namesOf(DefaultNamespace)
		bare := make([]string, len(names))
		for i, n := range names {
			bare[i] = BareName(n)
		}
		return w.BeginObject().Key("count").Int(int64(len(names))).Key("doms").StrList(bare).EndObject().Bytes(), nil
	}
	// Java: a HashMap<namespace, HashSet<bare name>> filled from the
	// namespaces' sorted service maps; count is the sum of the set sizes
	total := 0
	w.BeginObject()
	inner := compat.NewJSON(256)
	inner.BeginObject()
	for _, n := range r.namespaceIDs() {
		seen := map[string]bool{}
		var bare []string
		for _, g := range r.namesOf(n) {
			if b := BareName(g); !seen[b] {
				seen[b] = true
				bare = append(bare, b)
			}
		}
		total += len(bare)
		inner.Key(n).StrList(compat.JavaHashOrderStrings(bare, 16))
	}
	inner.EndObject()
	return w.Key("count").Int(int64(total)).Key("doms").Raw(inner.Bytes()).EndObject().Bytes(), nil
}
