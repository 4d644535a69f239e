package naming

import (
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// appendClusterFull writes the JacksonUtils Cluster JSON (§2.5).
func appendClusterFull(w *compat.JSON, grouped string, c ClusterMeta, empty bool) {
	w.BeginObject().Key("serviceName").Str(grouped).Key("name").Str(c.Name).Key("healthChecker")
	c.HealthChecker.AppendJSON(w)
	w.Key("defaultPort").Int(80).Key("defaultCheckPort").Int(80).Key("useIPPort4Check").Bool(c.UseIPPort4Check).
		Key("metadata")
	appendStrMap(w, c.Metadata)
	// empty before defIPPort: both are getter-only properties, which
	// Jackson writes in the JVM's declared-method order (as the 1.4.8
	// reference renders them)
	w.Key("sitegroup").Str("").Key("defCkport").Int(int64(c.DefCkport)).Key("empty").Bool(empty).
		Key("defIPPort").Int(int64(c.EffectiveIPPort())).EndObject()
}

// CatalogService is GET /catalog/service.
func (r *Registry) CatalogService(ns, grouped string) ([]byte, error) {
	s := r.service(ns, grouped)
	if s == nil {
		return nil, compat.ErrServiceIsNotFound(grouped)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	w := compat.NewJSON(512)
	w.BeginObject().Key("service").BeginObject().Key("name").Str(BareName(grouped)).
		Key("protectThreshold").Float(s.meta.ProtectThreshold).Key("groupName").Str(GroupOf(grouped)).Key("selector")
	s.meta.Selector.AppendJSON(w)
	w.Key("metadata")
	appendStrMap(w, s.meta.Metadata)
	w.EndObject().Key("clusters").BeginArray()
	for _, c := range s.clusters() {
		appendClusterFull(w, grouped, c, len(s.instancesOf([]string{c.Name})) == 0)
	}
	return w.EndArray().EndObject().Bytes(), nil
}

// CatalogInstances is GET /catalog/instances.
func (r *Registry) CatalogInstances(ns, grouped, cluster string, pageNo, pageSize int) ([]byte, error) {
	s := r.service(ns, grouped)
	if s == nil {
		return nil, compat.ErrServiceIsNotFound(grouped)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, ok := s.meta.Clusters[cluster]; !ok {
		return nil, compat.ServerError("cluster " + cluster + " is not found!")
	}
	all := s.instancesOf([]string{cluster})
	start, end := page(len(all), pageNo, pageSize)
	w := compat.NewJSON(256 + 400*(end-start))
	w.BeginObject().Key("list").BeginArray()
	for _, in := range all[start:end] {
		in.AppendJSON(w)
	}
	return w.EndArray().Key("count").Int(int64(len(all))).EndObject().Bytes(), nil
}

// page returns the [start,end) window of Java's sublist paging.
func page(n, pageNo, pageSize int) (int, int) {
	start := (pageNo - 1) * pageSize
	if start < 0 {
		start = 0
	}
	if start > n {
		start = n
	}
	end := start + pageSize
	if end > n || end < start {
		end = n
	}
	return start, end
}

// CatalogServicesQuery is GET /catalog/services.
type CatalogServicesQuery struct {
	NamespaceID, ServiceNameParam, GroupNameParam, Instance string
	PageNo, PageSize                                        int
	WithInstances, HasIPCount                               bool
}

// pagedServices is ServiceManager.getPagedService: search, filters, and
// its paging (everything when pageSize covers all matches).
func (r *Registry) pagedServices(q CatalogServicesQuery, startPage int) (page []string, total int, err error) {
	r.mu.RLock()
	_, exists := r.namespaces[q.NamespaceID]
	r.mu.RUnlock()
	if !exists {
		return nil, 0, nil
	}
	names := r.namesOf(q.NamespaceID)
	if compat.JavaTrim(q.ServiceNameParam) != "" || compat.JavaTrim(q.GroupNameParam) != "" {
		param := q.GroupNameParam + GroupSeparator + q.ServiceNameParam // getGroupedNameOptional
		parts := strings.SplitN(param, GroupSeparator, 2)
		for i, p := range parts {
			if compat.JavaTrim(p) == "" {
				parts[i] = ".*"
			} else {
				parts[i] = ".*" + p + ".*"
			}
		}
		re, err := compat.CompileJavaRegex(strings.Join(parts, GroupSeparator))
		if err != nil {
			return nil, 0, err // PatternSyntaxException
		}
		kept := names[:0]
		for _, n := range names {
			if re.MatchString(n + ":[]") {
				kept = append(kept, n)
			}
		}
		names = kept
	}
	var matched []string
	for _, n := range names {
		s := r.service(q.NamespaceID, n)
		if s == nil || (q.HasIPCount && s.count() == 0) || (q.Instance != "" && !s.hasInstance(q.Instance)) {
			continue
		}
		matched = append(matched, n)
	}
	if q.PageSize >= len(matched) {
		return matched, len(matched), nil
	}
	for i, n := range matched {
		if i < startPage*q.PageSize {
			continue
		}
		page = append(page, n)
		if len(page) >= q.PageSize {
			break
		}
	}
	return page, len(matched), nil
}

// CatalogServices lists services for the console (CatalogController.listDetail).
func (r *Registry) CatalogServices(q CatalogServicesQuery) ([]byte, error) {
	w := compat.NewJSON(1024)
	if q.WithInstances {
		page, _, err := r.pagedServices(q, q.PageNo) // Java passes pageNo, not pageNo-1, here
		if err != nil {
			return nil, err
		}
		w.BeginArray()
		for _, n := range page {
			s := r.service(q.NamespaceID, n)
			if s == nil {
				continue
			}
			s.mu.RLock()
			w.BeginObject().Key("serviceName").Str(BareName(n)).Key("groupName").Str(GroupOf(n)).Key("clusterMap").BeginObject()
			// getStringClusterInfoMap: the clusters put into a HashMap(8)
			byName := map[string]ClusterMeta{}
			var names []string
			for _, c := range s.clusters() {
				byName[c.Name] = c
				names = append(names, c.Name)
			}
			for _, n := range compat.JavaHashOrderStrings(names, 8) {
				c := byName[n]
				w.Key(c.Name).BeginObject().Key("hosts").BeginArray()
				for _, in := range s.instancesOf([]string{c.Name}) {
					w.BeginObject().Key("valid").Bool(in.Healthy).Key("metadata")
					appendStrMap(w, in.Metadata)
					w.Key("port").Int(int64(in.Port)).Key("ip").Str(in.IP).Key("weight").Double(in.Weight).
						Key("enabled").Bool(in.Enabled).EndObject()
				}
				w.EndArray().EndObject()
			}
			w.EndObject().Key("metadata")
			appendStrMap(w, s.meta.Metadata)
			w.EndObject()
			s.mu.RUnlock()
		}
		return w.EndArray().Bytes(), nil
	}
	page, total, err := r.pagedServices(q, q.PageNo-1)
	if err != nil {
		return nil, err
	}
	if len(page) == 0 {
		total = 0 // Java answers count 0 for an empty page
	}
	w.BeginObject().Key("serviceList").BeginArray()
	for _, n := range page {
		s := r.service(q.NamespaceID, n)
		if s == nil {
			continue
		}
		s.mu.RLock()
		all := s.instancesOf(nil)
		healthy := 0
		for _, in := range all {
			if in.Healthy {
				healthy++
			}
		}
		trigger := "false" // 0/0 is NaN in Java, and NaN <= x is false
		if len(all) > 0 && float64(healthy)/float64(len(all)) <= float64(s.meta.ProtectThreshold) {
			trigger = "true"
		}
		w.BeginObject().Key("name").Str(BareName(n)).Key("groupName").Str(GroupOf(n)).
			Key("clusterCount").Int(int64(len(s.meta.Clusters))).Key("ipCount").Int(int64(len(all))).
			Key("healthyInstanceCount").Int(int64(healthy)).Key("triggerFlag").Str(trigger).EndObject()
		s.mu.RUnlock()
	}
	return w.EndArray().Key("count").Int(int64(total)).EndObject().Bytes(), nil
}

func (s *Service) count() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ephemeral) + len(s.persistent)
}

// hasInstance is getPagedService's containedInstance test: "ip:port"
// (anything with a ':') matches ip:port exactly, otherwise the ip.
func (s *Service) hasInstance(spec string) bool {
	withPort := strings.Contains(spec, ":")
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, list := range []map[string]*Instance{s.persistent, s.ephemeral} {
		for _, in := range list {
			if (withPort && in.Addr() == spec) || (!withPort && in.IP == spec) {
				return true
			}
		}
	}
	return false
}

// CatalogRT is GET /catalog/rt/service.
func (r *Registry) CatalogRT(ns, grouped string) ([]byte, error) {
	s := r.service(ns, grouped)
	if s == nil {
		return nil, compat.IllegalArgument("request service doesn't exist")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	w := compat.NewJSON(256)
	w.BeginObject().Key("clusters").BeginArray()
	for _, c := range s.clusters() {
		best, worst, norm := idleRT(ServiceKey(ns, grouped), c.Name)
		if r.checker != nil {
			if b, w, n, ok := r.checker.rt(ServiceKey(ns, grouped), c.Name); ok {
				best, worst, norm = b, w, n
			}
		}
		w.BeginObject().Key("name").Str(c.Name).Key("checkRTBest").Int(best).Key("checkRTWorst").Int(worst).
			Key("checkRTNormalized").Int(norm).EndObject()
	}
	return w.EndArray().EndObject().Bytes(), nil
}
