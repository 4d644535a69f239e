package naming

import (
	"regexp"
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
	w.Key("sitegroup").Str("").Key("defCkport").Int(int64(c.DefCkport)).Key("defIPPort").Int(int64(c.EffectiveIPPort())).
		Key("empty").Bool(empty).EndObject()
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
	for _, c := range sortedClusters(s.meta.Clusters) {
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

// CatalogServices lists services for the console.
func (r *Registry) CatalogServices(q CatalogServicesQuery) ([]byte, error) {
	g, sn := ".*", ".*"
	if !JavaTrimBlank(q.GroupNameParam) {
		g = ".*" + q.GroupNameParam + ".*"
	}
	if !JavaTrimBlank(q.ServiceNameParam) {
		sn = ".*" + q.ServiceNameParam + ".*"
	}
	re, err := regexp.Compile("^(?:" + g + GroupSeparator + sn + ")$")
	if err != nil {
		return nil, compat.ServerError(err.Error())
	}
	var matched []string
	for _, n := range r.namesOf(q.NamespaceID) {
		if !re.MatchString(n+":[]") && !re.MatchString(n) {
			continue
		}
		s := r.service(q.NamespaceID, n)
		if s == nil {
			continue
		}
		if q.Instance != "" && !s.hasInstance(q.Instance) {
			continue
		}
		if q.HasIPCount && s.count() == 0 {
			continue
		}
		matched = append(matched, n)
	}
	w := compat.NewJSON(1024)
	if q.WithInstances {
		w.BeginArray()
		for _, n := range matched {
			s := r.service(q.NamespaceID, n)
			if s == nil {
				continue
			}
			s.mu.RLock()
			w.BeginObject().Key("serviceName").Str(BareName(n)).Key("groupName").Str(GroupOf(n)).Key("clusterMap").BeginObject()
			for _, c := range sortedClusters(s.meta.Clusters) {
				w.Key(c.Name).BeginObject().Key("hosts").BeginArray()
				for _, in := range s.instancesOf([]string{c.Name}) {
					w.BeginObject().Key("valid").Bool(in.Healthy).Key("metadata")
					if in.Metadata == nil {
						w.Null()
					} else {
						appendStrMap(w, in.Metadata)
					}
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
	start, end := 0, len(matched)
	if q.PageSize < len(matched) {
		start, end = page(len(matched), q.PageNo, q.PageSize)
	}
	w.BeginObject().Key("serviceList").BeginArray()
	for _, n := range matched[start:end] {
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
		trigger := "false"
		if len(all) > 0 && float32(healthy)/float32(len(all)) <= s.meta.ProtectThreshold {
			trigger = "true"
		}
		w.BeginObject().Key("name").Str(BareName(n)).Key("groupName").Str(GroupOf(n)).
			Key("clusterCount").Int(int64(len(s.meta.Clusters))).Key("ipCount").Int(int64(len(all))).
			Key("healthyInstanceCount").Int(int64(healthy)).Key("triggerFlag").Str(trigger).EndObject()
		s.mu.RUnlock()
	}
	return w.EndArray().Key("count").Int(int64(len(matched))).EndObject().Bytes(), nil
}

func (s *Service) count() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.ephemeral) + len(s.persistent)
}

func (s *Service) hasInstance(spec string) bool {
	ip, port, hasPort := spec, "", false
	if i := strings.LastIndex(spec, ":"); i >= 0 {
		ip, port, hasPort = spec[:i], spec[i+1:], true
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, list := range []map[string]*Instance{s.persistent, s.ephemeral} {
		for _, in := range list {
			if in.IP == ip && (!hasPort || in.Addr() == ip+":"+port) {
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
	for _, c := range sortedClusters(s.meta.Clusters) {
		best, worst, norm := int64(-1), int64(-1), int64(-1)
		if r.checker != nil {
			best, worst, norm = r.checker.rt(ServiceKey(ns, grouped), c.Name)
		}
		w.BeginObject().Key("name").Str(c.Name).Key("checkRTBest").Int(best).Key("checkRTWorst").Int(worst).
			Key("checkRTNormalized").Int(norm).EndObject()
	}
	return w.EndArray().EndObject().Bytes(), nil
}
