package httpapi

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/serviceinfo"
)

// NamingV2Routes are the naming Open API v2 of 2.5.1 (InstanceControllerV2,
// ServiceControllerV2): /v2/ns/instance POST, DELETE, PUT, GET and /list,
// /v2/ns/service POST, DELETE, PUT, GET and /list, answering Result JSON.
// Instance writes are AP (the service's Distro owner) or CP (persistent:
// the raft leader) as their 1.x counterparts.
func NamingV2Routes(d NamingDeps) []Route {
	h := &namingHandlers{NamingDeps: d}
	r, w := secNaming(auth.ActionRead), secNaming(auth.ActionWrite)
	inst := func(method string, fn fiber.Handler) Route {
		rt := route(method, "/v2/ns/instance", AP, w, v2Wrap(fn))
		rt.ClassOf, rt.Idempotent = h.instanceClass, true
		return rt
	}
	return withHead([]Route{
		audited(inst(fiber.MethodPost, h.v2Register), "instance.register", auditInstance, nil),
		audited(inst(fiber.MethodDelete, h.v2Deregister), "instance.deregister", auditInstance, nil),
		audited(inst(fiber.MethodPut, h.v2Update), "instance.update", auditInstance, nil),
		route(fiber.MethodGet, "/v2/ns/instance", Read, r, v2Wrap(h.v2Detail)),
		route(fiber.MethodGet, "/v2/ns/instance/list", Read, r, v2Wrap(h.v2List)),
		audited(route(fiber.MethodPost, "/v2/ns/service", CP, w, v2Wrap(h.v2CreateService)), "service.create", auditService, nil),
		audited(route(fiber.MethodDelete, "/v2/ns/service", CP, w, v2Wrap(h.v2DeleteService)), "service.delete", auditService, nil),
		idempotentRoute(audited(route(fiber.MethodPut, "/v2/ns/service", CP, w, v2Wrap(h.v2UpdateService)), "service.update", auditService, nil)),
		route(fiber.MethodGet, "/v2/ns/service", Read, r, v2Wrap(h.v2GetService)),
		route(fiber.MethodGet, "/v2/ns/service/list", Read, r, v2Wrap(h.v2ListServices)),
	}, v2NotSupported)
}

// namingParamInfo is NamingDefaultHttpParamExtractor's fields.
func namingParamInfo(p Params) []remote.ParamInfo {
	get := func(n string) string { v, _ := p.Raw(n); return v }
	var meta map[string]string
	if raw, ok := p.Raw("metadata"); ok {
		meta, _ = naming.ParseMetadata(raw)
	}
	return []remote.ParamInfo{{NamespaceID: get("namespaceId"), ServiceName: get("serviceName"), Group: get("groupName"),
		Cluster: get("clusterName"), IP: get("ip"), Port: get("port"), Metadata: meta}}
}

// v2Service is the grouped name of the request: serviceName (required)
// in groupName (DEFAULT_GROUP).
func v2Service(p Params, form bool) (string, error) {
	svc, ok := p.Raw("serviceName")
	if !ok || form && compat.JavaIsBlank(svc) {
		if form {
			return "", v2FormMissing("serviceName", "String")
		}
		return "", v2Missing("serviceName", "String")
	}
	group := p.Optional("groupName", naming.DefaultGroup)
	if compat.JavaIsBlank(svc) {
		return "", v2Err(fiber.StatusBadRequest, v2ValidateError, "Param 'serviceName' is illegal, serviceName is blank")
	}
	if compat.JavaIsBlank(group) {
		return "", v2Err(fiber.StatusBadRequest, v2ValidateError, "Param 'groupName' is illegal, groupName is blank")
	}
	return group + "@@" + svc, nil
}

// v2InstanceForm is InstanceForm: validate, the weight's range, the
// instance built with Java's defaults.
func (h *namingHandlers) v2InstanceForm(c *fiber.Ctx) (naming.InstanceForm, error) {
	p := ParamsOf(c)
	if ok, err := paramFilter(c, namingParamInfo(p)); !ok {
		return naming.InstanceForm{}, errAnswered{err}
	}
	svc, err := v2Service(p, true)
	if err != nil {
		return naming.InstanceForm{}, err
	}
	ip, _ := p.Raw("ip")
	if compat.JavaIsBlank(ip) {
		return naming.InstanceForm{}, v2FormMissing("ip", "String")
	}
	portRaw, ok := p.Raw("port")
	if !ok || strings.TrimSpace(portRaw) == "" {
		return naming.InstanceForm{}, v2FormMissing("port", "Integer")
	}
	port, _ := strconv.Atoi(strings.TrimSpace(portRaw)) // the param filter refused a non-number
	weight := 1.0
	if v, ok := p.Raw("weight"); ok && strings.TrimSpace(v) != "" {
		if weight, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return naming.InstanceForm{}, &V2Error{Status: fiber.StatusInternalServerError, Code: v2ServerError,
				Message: "Failed to convert property value of type 'java.lang.String' to required type 'java.lang.Double' for property 'weight'"}
		}
	}
	if weight > 10000 || weight < 0 {
		return naming.InstanceForm{}, v2Err(fiber.StatusBadRequest, 21001, "instance format invalid: The weights range from 0.0 to 10000.0")
	}
	meta := map[string]string{}
	if raw, ok := p.Raw("metadata"); ok && !compat.JavaIsBlank(raw) {
		if meta, err = naming.ParseMetadata(raw); err != nil {
			return naming.InstanceForm{}, err
		}
	}
	cluster := p.Optional("clusterName", naming.DefaultCluster)
	if compat.JavaIsBlank(cluster) {
		cluster = naming.DefaultCluster
	}
	eph := h.Registry.Switches().DefaultInstanceEphemeral
	if v, ok := p.Raw("ephemeral"); ok && v != "" {
		eph = BooleanUtilsToBoolean(v)
	}
	in := naming.Instance{IP: ip, Port: port, Weight: weight, ClusterName: cluster, Metadata: meta, Ephemeral: eph,
		Healthy: p.Optional("healthy", "true") != "false", Enabled: p.Optional("enabled", "true") != "false"}
	return naming.InstanceForm{NamespaceID: namespace(p), ServiceName: svc, Instance: in, Agent: userAgent(c)}, nil
}

// errAnswered is an answer the param filter already wrote.
type errAnswered struct{ err error }

func (e errAnswered) Error() string { return "answered" }

func (h *namingHandlers) v2Write(c *fiber.Ctx, write func(naming.InstanceForm) error) error {
	f, err := h.v2InstanceForm(c)
	if ea, ok := err.(errAnswered); ok {
		return ea.err
	}
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	return v2OK(c, v2Str("ok"))
}

func (h *namingHandlers) v2Register(c *fiber.Ctx) error {
	return h.v2Write(c, func(f naming.InstanceForm) error { return h.Registry.Register(ctxOf(c), f) })
}

func (h *namingHandlers) v2Deregister(c *fiber.Ctx) error {
	return h.v2Write(c, func(f naming.InstanceForm) error { return h.Registry.Deregister(ctxOf(c), f) })
}

// v2Update updates an instance, registering it when absent (2.x's
// updateInstance of an ephemeral client instance adds it).
func (h *namingHandlers) v2Update(c *fiber.Ctx) error {
	return h.v2Write(c, func(f naming.InstanceForm) error { return h.Registry.Register(ctxOf(c), f) })
}

// v2Detail is GET /v2/ns/instance.
func (h *namingHandlers) v2Detail(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if ok, err := paramFilter(c, namingParamInfo(p)); !ok {
		return err
	}
	svc, err := v2Service(p, false)
	if err != nil {
		return err
	}
	ip, ok := p.Raw("ip")
	if !ok {
		return v2Missing("ip", "String")
	}
	portRaw, ok := p.Raw("port")
	if !ok {
		return v2Missing("port", "Integer")
	}
	port, _ := strconv.Atoi(strings.TrimSpace(portRaw))
	cluster := p.Optional("clusterName", naming.DefaultCluster)
	v, found := h.Registry.View(namespace(p), svc)
	var in *naming.Instance
	for i := range v.Instances {
		x := &v.Instances[i]
		if found && x.ClusterName == cluster && x.IP == ip && x.Port == port {
			in = x
		}
	}
	if in == nil {
		if len(v.Instances) == 0 { // getInstance0: no hosts at all
			return v2Err(fiber.StatusNotFound, v2ResourceNotFound, "no ips found for cluster "+cluster+" in service "+svc)
		}
		return v2Err(fiber.StatusNotFound, v2ResourceNotFound, "no matched ip found!")
	}
	return v2OK(c, func(w *compat.JSON) {
		w.BeginObject()
		w.Key("serviceName").Str(svc)
		w.Key("ip").Str(ip)
		w.Key("port").Int(int64(port))
		w.Key("clusterName").Str(cluster)
		w.Key("weight").Double(in.Weight)
		w.Key("healthy").Bool(in.Healthy)
		w.Key("instanceId")
		if in.InstanceID == "" {
			w.Null()
		} else {
			w.Str(in.InstanceID)
		}
		w.Key("metadata").StrMap(compat.JavaHashMapKeys(in.Metadata), in.Metadata, false)
		w.EndObject()
	})
}

// v2List is GET /v2/ns/instance/list: the ServiceInfo an HTTP subscriber
// gets (name grouped, enabled instances, the protect threshold).
func (h *namingHandlers) v2List(c *fiber.Ctx) error {
	p := ParamsOf(c)
	if ok, err := paramFilter(c, namingParamInfo(p)); !ok {
		return err
	}
	svc, err := v2Service(p, false)
	if err != nil {
		return err
	}
	cluster := p.Optional("clusterName", "")
	healthyOnly := BooleanUtilsToBoolean(p.Optional("healthyOnly", "false"))
	v, found := h.Registry.View(namespace(p), svc)
	group, _, _ := strings.Cut(svc, "@@")
	si := serviceinfo.Render(v, found, serviceinfo.Selection{Clusters: cluster, HealthyOnly: healthyOnly, EnabledOnly: true,
		Name: svc, HasName: true, Group: group, HasGroup: true}, h.Registry.Switches().DefaultPushCacheMillis, h.Registry.Config().Clock.Now().UnixMilli())
	return v2OK(c, func(w *compat.JSON) { si.AppendJSON(w) })
}

// v2ServiceForm is ServiceForm: validate, protectThreshold, metadata,
// selector.
func (h *namingHandlers) v2ServiceForm(c *fiber.Ctx) (naming.ServiceForm, error) {
	p := ParamsOf(c)
	svc, err := v2Service(p, true)
	if err != nil {
		return naming.ServiceForm{}, err
	}
	f := naming.ServiceForm{NamespaceID: namespace(p), ServiceName: svc, Metadata: map[string]string{}}
	if v, ok := p.Raw("protectThreshold"); ok && strings.TrimSpace(v) != "" {
		t, err := strconv.ParseFloat(strings.TrimSpace(v), 32)
		if err != nil {
			return f, &V2Error{Status: fiber.StatusInternalServerError, Code: v2ServerError,
				Message: "Failed to convert property value of type 'java.lang.String' to required type 'java.lang.Float' for property 'protectThreshold'"}
		}
		f.ProtectThreshold = float32(t)
	}
	if raw, ok := p.Raw("metadata"); ok && !compat.JavaIsBlank(raw) {
		if f.Metadata, err = naming.ParseMetadata(raw); err != nil {
			return f, err
		}
	}
	if f.Selector, err = naming.ParseSelector(p.Optional("selector", "")); err != nil {
		return f, err
	}
	return f, nil
}

func (h *namingHandlers) v2CreateService(c *fiber.Ctx) error {
	f, err := h.v2ServiceForm(c)
	if err != nil {
		return err
	}
	if h.Registry.HasService(f.NamespaceID, f.ServiceName) {
		return v2Err(fiber.StatusBadRequest, v2ServiceExists, "specified service "+f.ServiceName+" already exists!")
	}
	if err := h.Registry.CreateService(ctxOf(c), f); err != nil {
		return err
	}
	return v2OK(c, v2Str("ok"))
}

func (h *namingHandlers) v2UpdateService(c *fiber.Ctx) error {
	f, err := h.v2ServiceForm(c)
	if err != nil {
		return err
	}
	if !h.Registry.HasService(f.NamespaceID, f.ServiceName) {
		return v2Err(fiber.StatusBadRequest, v2ServiceNotExist, "service "+f.ServiceName+" not found!")
	}
	if err := h.Registry.UpdateService(ctxOf(c), f); err != nil {
		return err
	}
	return v2OK(c, v2Str("ok"))
}

func (h *namingHandlers) v2DeleteService(c *fiber.Ctx) error {
	p := ParamsOf(c)
	svc, err := v2Service(p, false)
	if err != nil {
		return err
	}
	ns := namespace(p)
	v, found := h.Registry.View(ns, svc)
	if !found {
		return v2Err(fiber.StatusBadRequest, v2ServiceNotExist, "service "+svc+" not found!")
	}
	if len(v.Instances) > 0 {
		return v2Err(fiber.StatusBadRequest, 21009, "Service "+svc+" is not empty, can't be delete. Please unregister instance first")
	}
	if err := h.Registry.DeleteService(ctxOf(c), ns, svc); err != nil {
		return err
	}
	return v2OK(c, v2Str("ok"))
}

// v2GetService is GET /v2/ns/service: ServiceDetailInfo.
func (h *namingHandlers) v2GetService(c *fiber.Ctx) error {
	p := ParamsOf(c)
	svc, err := v2Service(p, false)
	if err != nil {
		return err
	}
	ns := namespace(p)
	v, found := h.Registry.View(ns, svc)
	if !found {
		return v2Err(fiber.StatusBadRequest, v2ServiceNotExist, "service not found, namespace: "+ns+", serviceName: "+svc)
	}
	group, name, _ := strings.Cut(svc, "@@")
	ephemeral := false
	for _, in := range v.Instances {
		if in.Ephemeral {
			ephemeral = true
		}
	}
	return v2OK(c, func(w *compat.JSON) {
		w.BeginObject()
		w.Key("namespace").Str(ns)
		w.Key("serviceName").Str(name)
		w.Key("groupName").Str(group)
		w.Key("clusterMap").BeginObject()
		byName := map[string]naming.ClusterMeta{}
		names := map[string]string{}
		for _, cl := range v.Clusters {
			byName[cl.Name], names[cl.Name] = cl, ""
		}
		for _, n := range compat.JavaHashMapKeys(names) {
			cl := byName[n]
			w.Key(n).BeginObject()
			w.Key("clusterName").Str(n)
			cl.HealthChecker.AppendJSON(w.Key("healthChecker"))
			w.Key("metadata").StrMap(compat.JavaHashMapKeys(cl.Metadata), cl.Metadata, false)
			w.Key("hosts").Null()
			w.EndObject()
		}
		w.EndObject()
		w.Key("metadata").StrMap(compat.JavaHashMapKeys(v.Metadata), v.Metadata, false)
		w.Key("protectThreshold").Float(v.ProtectThreshold)
		w.Key("selector")
		if v.Selector.Type == "label" {
			w.BeginObject().Key("type").Str("LabelSelector").Key("type").Str("label").Key("contextType").Str("CMDB").
				Key("expression").Str(v.Selector.Expression).EndObject()
		} else {
			w.BeginObject().Key("type").Str("NoneSelector").Key("type").Str("none").Key("contextType").Str("NONE").EndObject()
		}
		w.Key("ephemeral").Bool(ephemeral)
		w.EndObject()
	})
}

// v2ListServices is GET /v2/ns/service/list: the group's service names,
// paged as ServiceUtil.pageServiceName pages them.
func (h *namingHandlers) v2ListServices(c *fiber.Ctx) error {
	p := ParamsOf(c)
	ns := namespace(p)
	group := p.Optional("groupName", naming.DefaultGroup)
	pageNo, err := v2Int(p, "pageNo", 1)
	if err != nil {
		return err
	}
	pageSize, err := v2Int(p, "pageSize", 20)
	if err != nil {
		return err
	}
	pageSize = min(500, pageSize)
	all := h.Registry.GroupedNames(ns)
	var names []string
	prefix := group + "@@"
	for _, n := range all {
		if strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	names = compat.JavaHashOrderStrings(names, len(all))
	start := (pageNo - 1) * pageSize
	if start < 0 {
		start = 0
	}
	page := []string{}
	if start < len(names) {
		end := min(start+pageSize, len(names))
		if end < start {
			return &V2Error{Status: fiber.StatusInternalServerError, Code: v2ServerError,
				Message: "fromIndex(" + strconv.Itoa(start) + ") > toIndex(" + strconv.Itoa(end) + ")"}
		}
		for _, n := range names[start:end] {
			page = append(page, n[len(prefix):])
		}
	}
	return v2OK(c, func(w *compat.JSON) {
		w.BeginObject().Key("count").Int(int64(len(names))).Key("services").StrList(page).EndObject()
	})
}
