package httpapi

import (
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/push"
)

// PushState is what the naming handlers need of the push service.
type PushState interface {
	Stored() []push.Subscriber
	State(detail, reset bool) push.State
	RenderState(st push.State, detail bool) []byte
}

// NamingDeps are the collaborators of the naming handlers.
type NamingDeps struct {
	Registry *naming.Registry
	Push     PushState // may be nil
	Cluster  Cluster   // members for /operator/servers
	// Status returns the server status name (UP, DOWN, ...).
	Status func() string
	// Port is the HTTP port (for /health/server).
	Port int
	// SysLoad returns cpu, load and mem for /operator/metrics.
	SysLoad func() (cpu, load, mem float32)
	// Distro serves /v1/ns/distro/*, /service/status and DistroFilter's
	// proxying of @CanDistro requests; a nil Distro.Distro leaves those
	// paths to "no such api".
	Distro DistroDeps
}

type namingHandlers struct {
	NamingDeps
	oldPeer oldRaftPeer
}

// MountNaming registers every /v1/ns endpoint on r (the context-path
// group; tests).
func MountNaming(r fiber.Router, d NamingDeps) { MustTable(NamingRoutes(d)).Mount(r) }

// NamingRoutes are the /v1/ns endpoints. Paths Java Nacos does not serve
// answer 501 "no such api" as its DistroFilter does (naming-v1.md §1.2,
// §1.3). Every request runs TrafficReviseFilter first (Java's order 1,
// before AuthFilter and DistroFilter).
func NamingRoutes(d NamingDeps) []Route {
	h := &namingHandlers{NamingDeps: d}
	dh := &distroHandlers{d.Distro}
	nsR, nsW := func() *Secured { return secNaming(auth.ActionRead) }, func() *Secured { return secNaming(auth.ActionWrite) }
	var rs []Route
	audit := func(r *Route, action string, params []string) { r.Audit = &AuditSpec{Action: action, Params: params} }
	add := func(method, path string, class Class, a *Secured, fn fiber.Handler) *Route {
		r := Route{Method: method, Path: "/v1/ns" + path, Class: class, Auth: a, Handler: fn, Filter: h.trafficRevise}
		if method == MethodAll { // not looked up by the gate: the handler filters
			r.Handler, r.Filter = h.revised(fn), nil
		}
		rs = append(rs, r)
		return &rs[len(rs)-1]
	}
	for _, base := range []string{"/instance", "/api"} {
		withUpdate := append(auditInstance[:len(auditInstance):len(auditInstance)], "enabled", "weight")
		r := add(fiber.MethodPost, base, AP, nsW(), h.register)
		r.ClassOf, r.Idempotent = h.instanceClass, true
		audit(r, "instance.register", auditInstance)
		r = add(fiber.MethodDelete, base, AP, nsW(), h.deregister)
		r.ClassOf, r.Idempotent = h.instanceClass, true
		audit(r, "instance.deregister", auditInstance)
		r = add(fiber.MethodPut, base, AP, nsW(), h.update)
		r.ClassOf, r.Idempotent = h.instanceClass, true
		audit(r, "instance.update", withUpdate)
		r = add(fiber.MethodPatch, base, AP, nsW(), h.patch)
		r.ClassOf, r.Idempotent = h.patchClass, true
		audit(r, "instance.patch", withUpdate)
		add(fiber.MethodGet, base, Read, nsR(), h.detail)
		add(fiber.MethodGet, base+"/list", Read, nsR(), h.list)
		add(fiber.MethodPut, base+"/beat", AP, nsW(), h.beat)
		add(fiber.MethodGet, base+"/statuses", Read, secNode(), h.statuses)
		batch := []string{"namespaceId", "serviceName", "consistencyType", "instances"}
		r = add(fiber.MethodPut, base+"/metadata/batch", Mixed, nsW(), h.metadataBatch(false))
		r.ClassOf, r.Idempotent = h.metadataClass, true
		audit(r, "instance.metadata.update", batch)
		r = add(fiber.MethodDelete, base+"/metadata/batch", Mixed, nsW(), h.metadataBatch(true))
		r.ClassOf, r.Idempotent = h.metadataClass, true
		audit(r, "instance.metadata.delete", batch)
	}
	// Legacy and status endpoints Java leaves open (issue 26 item 8): with
	// auth on each needs what its modern counterpart needs. The old /api
	// beat and list take a bare name (dom) in DEFAULT_GROUP; allDomNames
	// lists every namespace's services.
	add(fiber.MethodGet, "/api/allDomNames", Read, secFixed(auth.ActionRead, "*:*:naming/*", false), h.allDomNames)
	add(fiber.MethodGet, "/api/srvIPXT", Read, &Secured{action: auth.ActionRead, parser: legacyNamingResource}, h.srvIPXT)
	add(fiber.MethodGet, "/api/clientBeat", AP, &Secured{action: auth.ActionWrite, parser: legacyNamingResource}, h.clientBeat)
	if d.Distro.Distro != nil {
		for _, r := range dh.routes(secNode()) {
			add(r.Method, strings.TrimPrefix(r.Path, "/v1/ns"), r.Class, r.Auth, r.Handler)
		}
		// nacosd's own Distro extension, outside /v1/ns (no naming filter)
		rs = append(rs, route(fiber.MethodPut, "/v1/nacosd/distro/beats", Local, secNode(), dh.beats))
	}

	audit(add(fiber.MethodPost, "/service", CP, nsW(), h.createService), "service.create", auditService)
	audit(add(fiber.MethodDelete, "/service", CP, nsW(), h.deleteService), "service.delete", auditService)
	add(fiber.MethodGet, "/service", Read, nsR(), h.getService)
	updSvc := add(fiber.MethodPut, "/service", CP, nsW(), h.updateService)
	updSvc.Idempotent = true
	audit(updSvc, "service.update", auditService)
	add(fiber.MethodGet, "/service/list", Read, nsR(), h.listServices)
	add(fiber.MethodGet, "/service/names", Read, nsR(), h.serviceNames)
	add(fiber.MethodPut, "/service/checksum", Local, secNode(), h.serviceChecksum)
	add(fiber.MethodGet, "/service/subscribers", Read, nsR(), h.subscribers)

	add(fiber.MethodGet, "/catalog/service", Read, nsR(), h.catalogService)
	add(fiber.MethodGet, "/catalog/instances", Read, nsR(), h.catalogInstances)
	add(fiber.MethodGet, "/catalog/services", Read, nsR(), h.catalogServices)
	add(fiber.MethodGet, "/catalog/rt/service", Read, nsR(), h.catalogRT) // names one service (issue 26 item 8)

	add(fiber.MethodGet, "/health/server", Read, nil, h.healthServer)
	// PUT /health: DefaultResourceParser, "resource name invalid!"
	health := append(auditInstance[:len(auditInstance)-1:len(auditInstance)-1], "healthy")
	audit(add(fiber.MethodPut, "/health", AP, &Secured{action: auth.ActionWrite}, h.setHealth), "instance.health", health)
	audit(add(fiber.MethodPut, "/health/instance", AP, &Secured{action: auth.ActionWrite}, h.setHealth), "instance.health", health)
	updCluster := add(fiber.MethodPut, "/cluster", CP, nsW(), h.updateCluster)
	updCluster.Idempotent = true
	audit(updCluster, "cluster.update", []string{"namespaceId", "serviceName", "clusterName"})

	for _, base := range []string{"/operator", "/ops"} {
		add(fiber.MethodGet, base+"/push/state", Read, secNode(), h.pushState) // every namespace's failed pushes; resets counters
		add(fiber.MethodGet, base+"/switches", Read, nil, h.getSwitches)
		sw := add(fiber.MethodPut, base+"/switches", CP, secFixed(auth.ActionWrite, "naming/switches", false), h.putSwitches)
		sw.Idempotent = true
		audit(sw, "switch.update", []string{"entry", "value", "debug"})
		add(fiber.MethodGet, base+"/metrics", Read, nil, h.metrics)
		add(fiber.MethodGet, base+"/servers", Read, nil, h.servers)
		add(fiber.MethodGet, base+"/distro/server", Read, nsR(), h.distroServer)
		add(fiber.MethodGet, base+"/distro/status", Read, nil, h.distroStatus)
		audit(add(fiber.MethodPut, base+"/log", Local, secNode(), opsLog("ok")), "log.level", []string{"logName", "logLevel"})
	}
	// The old HTTP raft of 1.3 is switched off in every 1.4.8 server once its
	// members report 1.4+: each endpoint throws IllegalStateException (§7.2).
	oldRaft := func(c *fiber.Ctx) error { return compat.ServerError("old raft protocol already stop") }
	oldRaftRoutes := []struct{ method, path string }{
		{"POST", "/vote"}, {"POST", "/beat"}, {"GET", "/peer"}, {"PUT", "/datum/reload"}, {"POST", "/datum"},
		{"DELETE", "/datum"}, {"GET", "/datum"}, {"GET", "/state"}, {"POST", "/datum/commit"}, {"DELETE", "/datum/commit"},
		{"GET", "/leader"}, {"GET", "/listeners"},
	}
	for _, rt := range oldRaftRoutes {
		add(rt.method, "/raft"+rt.path, Local, secNode(), oldRaft)
	}
	for _, rt := range oldRaftRoutes {
		// RaftController's second mapping, /nacos/v1/ns/raft, under the
		// context path: outside /v1/ns/*, so no naming filter runs
		rs = append(rs, Route{Method: rt.method, Path: "/nacos/v1/ns/raft" + rt.path, Class: Local, Handler: oldRaft})
	}
	for _, base := range []string{"/operator", "/ops"} {
		add(fiber.MethodGet, base+"/cluster/state", Read, nil, h.oldRaftClusterState)
		// @RequestMapping: every method (node-only as GET)
		add(fiber.MethodGet, base+"/server/status", Read, secNode(), h.oldServerStatus)
		add(MethodAll, base+"/server/status", Read, nil, h.oldServerStatus)
	}
	// ControllerMethodsCache registers @GetMapping("checkers") on /v1/ns/health
	// as /v1/ns/healthcheckers: it passes DistroFilter, then Spring finds no
	// handler (naming-v1.md §1.3).
	add(fiber.MethodGet, "/healthcheckers", Read, nil, func(c *fiber.Ctx) error {
		return SendSpringError(c, fiber.StatusNotFound, "No message available")
	})
	// the rest of the node-to-node prefixes: node-only, then "no such api"
	for _, p := range []string{"/distro/*", "/raft/*"} {
		for _, m := range []string{fiber.MethodGet, fiber.MethodPut, fiber.MethodPost, fiber.MethodDelete} {
			add(m, p, Local, secNode(), noSuchAPI)
		}
	}
	add(MethodAll, "/*", Read, nil, noSuchAPI)
	return rs
}

// revised runs fn behind TrafficReviseFilter.
func (h *namingHandlers) revised(fn fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if done, err := h.trafficRevise(c); done {
			return err
		}
		return fn(c)
	}
}

// instanceClass: an instance write is CP for a persistent instance
// (ephemeral=false, or the defaultInstanceEphemeral switch off), AP
// otherwise.
func (h *namingHandlers) instanceClass(c *fiber.Ctx) Class {
	p := ParamsOf(c)
	def := h.Registry.Switches().DefaultInstanceEphemeral
	v, ok := p.Raw("ephemeral")
	if ok && v != "" && !BooleanUtilsToBoolean(v) || (!ok || v == "") && !def {
		return CP
	}
	return AP
}

// patchClass: a patch changes the instance it finds, persistent ones
// through raft.
func (h *namingHandlers) patchClass(c *fiber.Ctx) Class {
	p := ParamsOf(c)
	svc, err := checkedService(p)
	if err != nil {
		return AP // the owner answers the error
	}
	ip, _ := p.Raw("ip")
	port, err := ParseJavaInt(p.Optional("port", "0"))
	if err != nil {
		return AP
	}
	cluster := p.Optional("clusterName", "")
	if cluster == "" {
		cluster = p.Optional("cluster", naming.DefaultCluster)
	}
	if h.Registry.IsPersistent(namespace(p), svc, cluster, ip, port) {
		return CP
	}
	return AP
}

// metadataClass: a metadata batch touches ephemeral instances, persistent
// ones or both (consistencyType, else the listed instances).
func (h *namingHandlers) metadataClass(c *fiber.Ctx) Class {
	p := ParamsOf(c)
	switch p.Optional("consistencyType", "") {
	case "ephemeral":
		return AP
	case "persist":
		return CP
	case "":
	default:
		return Read // Java logs the bad value and does nothing
	}
	eph, pers := naming.MetadataBatchKinds(p.Optional("instances", ""))
	switch {
	case eph && pers:
		return Mixed
	case pers:
		return CP
	}
	return AP
}

// trafficRevise is TrafficReviseFilter (naming-v1.md §1.2): the
// limitedUrlMap switch, then the server-status gate.
// done says the filter answered.
func (h *namingHandlers) trafficRevise(c *fiber.Ctx) (done bool, err error) {
	if lm := h.Registry.Switches().LimitedURLMap; len(lm.Keys) > 0 {
		uri := string(c.Request().URI().Path()) + "?" + string(c.Request().URI().QueryString())
		for _, k := range lm.Keys {
			if strings.HasPrefix(uri, k) {
				c.Status(lm.Values[k])
				return true, nil
			}
		}
	}
	status := h.Status()
	switch {
	case status == "UP", strings.HasPrefix(userAgent(c), "Nacos-Server"),
		status == "WRITE_ONLY" && c.Method() != fiber.MethodGet,
		status == "READ_ONLY" && c.Method() == fiber.MethodGet:
		return false, nil
	}
	return true, c.Status(fiber.StatusServiceUnavailable).SendString("server is " + status + "now, please try again later!")
}

func noSuchAPI(c *fiber.Ctx) error {
	return SendSpringError(c, fiber.StatusNotImplemented, "no such api:"+c.Method()+":"+string(c.Request().URI().Path()))
}

// peekUserAgent is userAgent without the copy (valid until the handler
// returns).
func peekUserAgent(c *fiber.Ctx) string {
	if ua := c.Request().Header.UserAgent(); len(ua) > 0 {
		return utils.UnsafeString(ua)
	}
	return utils.UnsafeString(c.Request().Header.Peek("Client-Version"))
}

// userAgent is WebUtils.getUserAgent.
func userAgent(c *fiber.Ctx) string {
	if ua := string(c.Request().Header.UserAgent()); ua != "" {
		return ua
	}
	return string(c.Request().Header.Peek("Client-Version"))
}

// groupedServiceName is DistroFilter's rewrite of serviceName (or dom).
// A blank serviceName gives way to dom; a blank value is passed on as it is
// (neither trimmed nor grouped).
func groupedServiceName(p Params) (string, bool) {
	v, ok := p.Raw("serviceName")
	if !ok || compat.JavaTrim(v) == "" {
		if d, okd := p.Raw("dom"); okd {
			v, ok = d, true
		}
	}
	if !ok {
		return "", false
	}
	if compat.JavaTrim(v) == "" {
		return v, true
	}
	return naming.GroupedName(compat.JavaTrim(v), p.Optional("groupName", naming.DefaultGroup)), true
}

// peekCheckedService is checkedService on Peek: the name may share the
// request's memory (valid until the handler returns).
func peekCheckedService(p Params) (string, error) {
	v, ok := p.Peek("serviceName")
	if !ok {
		v, ok = p.Peek("dom")
	}
	if !ok {
		return "", compat.ParamRequired("serviceName")
	}
	v = naming.GroupedName(compat.JavaTrim(v), p.PeekOptional("groupName", naming.DefaultGroup))
	if v == "" {
		return "", compat.ParamRequired("serviceName")
	}
	return v, naming.CheckServiceNameFormat(v)
}

// requiredService is WebUtils.required(serviceName) on the rewritten value.
func requiredService(p Params) (string, error) {
	v, ok := groupedServiceName(p)
	if !ok || v == "" {
		return "", compat.ParamRequired("serviceName")
	}
	return v, nil
}

// checkedService adds NamingUtils.checkServiceNameFormat.
func checkedService(p Params) (string, error) {
	v, err := requiredService(p)
	if err != nil {
		return "", err
	}
	return v, naming.CheckServiceNameFormat(v)
}

// springService is @RequestParam serviceName (missing → 500).
func springService(p Params) (string, error) {
	v, ok := groupedServiceName(p)
	if !ok {
		return "", compat.MissingRequestParam("serviceName", "String")
	}
	return v, nil
}

func namespace(p Params) string { return p.Optional("namespaceId", naming.DefaultNamespace) }

// requiredIPPort reads the required ip and port (Integer.parseInt).
func requiredIPPort(p Params) (string, int, error) {
	ip, err := p.Required("ip")
	if err != nil {
		return "", 0, err
	}
	port, err := p.Required("port")
	if err != nil {
		return "", 0, err
	}
	n, err := ParseJavaInt(port)
	return ip, n, err
}

// ipAddress is InstanceController.getIpAddress: enabled/enable, healthy,
// ip, port, cluster, ephemeral, then weight — Java's order of failures.
func (h *namingHandlers) ipAddress(p Params) (naming.Instance, error) {
	var in naming.Instance
	enabled := p.Optional("enabled", "")
	if enabled == "" {
		enabled = p.Optional("enable", "true")
	}
	in.Enabled = BooleanUtilsToBoolean(enabled)
	weight := p.Optional("weight", "1")
	in.Healthy = BooleanUtilsToBoolean(p.Optional("healthy", "true"))
	var err error
	if in.IP, in.Port, err = requiredIPPort(p); err != nil {
		return in, err
	}
	in.ClusterName = p.Optional("clusterName", "")
	if in.ClusterName == "" {
		in.ClusterName = p.Optional("cluster", naming.DefaultCluster)
	}
	defEph := "true"
	if !h.Registry.Switches().DefaultInstanceEphemeral {
		defEph = "false"
	}
	in.Ephemeral = BooleanUtilsToBoolean(p.Optional("ephemeral", defEph))
	in.Weight, err = ParseJavaDouble(weight)
	return in, err
}

// instanceForm is register/update parsing: serviceName, then parseInstance
// (app, getIpAddress, metadata).
func (h *namingHandlers) instanceForm(c *fiber.Ctx, p Params) (naming.InstanceForm, error) {
	var f naming.InstanceForm
	svc, err := checkedService(p)
	if err != nil {
		return f, err
	}
	f.NamespaceID, f.ServiceName, f.Agent = namespace(p), svc, userAgent(c)
	if f.Instance, err = h.ipAddress(p); err != nil {
		return f, err
	}
	f.Instance.App = p.Optional("app", "DEFAULT")
	f.Instance.Metadata = map[string]string{}
	if raw := p.Optional("metadata", ""); raw != "" {
		if f.Instance.Metadata, err = naming.ParseMetadata(raw); err != nil {
			return f, err
		}
	}
	return f, nil
}

func ctxOf(c *fiber.Ctx) context.Context { return c.UserContext() }

// sendOK answers a write: Java's plain "ok", or the write's error.
func sendOK(c *fiber.Ctx, err error) error {
	if err != nil {
		return err
	}
	return SendText(c, "ok")
}

func (h *namingHandlers) register(c *fiber.Ctx) error {
	p := ParamsOf(c)
	f, err := h.instanceForm(c, p)
	if err != nil {
		return err
	}
	return sendOK(c, h.Registry.Register(ctxOf(c), f))
}

func (h *namingHandlers) deregister(c *fiber.Ctx) error {
	p := ParamsOf(c)
	in, err := h.ipAddress(p) // Java reads the instance before serviceName here
	if err != nil {
		return err
	}
	svc, err := checkedService(p)
	if err != nil {
		return err
	}
	f := naming.InstanceForm{NamespaceID: namespace(p), ServiceName: svc, Agent: userAgent(c), Instance: in}
	return sendOK(c, h.Registry.Deregister(ctxOf(c), f))
}

func (h *namingHandlers) update(c *fiber.Ctx) error {
	p := ParamsOf(c)
	f, err := h.instanceForm(c, p)
	if err != nil {
		return err
	}
	return sendOK(c, h.Registry.Update(ctxOf(c), f))
}

// patch is PATCH /instance: the instance must exist before any optional
// field is parsed (Java's order of failures); unlike Java, nothing is
// applied until every field parsed and validated.
func (h *namingHandlers) patch(c *fiber.Ctx) error {
	p := ParamsOf(c)
	svc, err := checkedService(p)
	if err != nil {
		return err
	}
	f := naming.PatchForm{NamespaceID: namespace(p), ServiceName: svc}
	if f.IP, err = p.Required("ip"); err != nil {
		return err
	}
	port, err := p.Required("port")
	if err != nil {
		return err
	}
	f.ClusterName = p.Optional("clusterName", "")
	if f.ClusterName == "" {
		f.ClusterName = p.Optional("cluster", naming.DefaultCluster)
	}
	if f.Port, err = ParseJavaInt(port); err != nil {
		return err
	}
	if !h.Registry.HasInstance(f.NamespaceID, svc, f.ClusterName, f.IP, f.Port) {
		return compat.IllegalArgument("instance not found")
	}
	if raw := p.Optional("metadata", ""); raw != "" {
		if f.Metadata, err = naming.ParseMetadata(raw); err != nil {
			return err
		}
		f.SetMetadata = true // "null" sets a null map, as Java does
	}
	if v := p.Optional("app", ""); v != "" {
		f.App = &v
	}
	if v := p.Optional("weight", ""); v != "" {
		w, err := ParseJavaDouble(v)
		if err != nil {
			return err
		}
		f.Weight = &w
	}
	if v := p.Optional("healthy", ""); v != "" {
		b := BooleanUtilsToBoolean(v)
		f.Healthy = &b
	}
	if v := p.Optional("enabled", ""); v != "" {
		b := BooleanUtilsToBoolean(v)
		f.Enabled = &b
	}
	return sendOK(c, h.Registry.Patch(ctxOf(c), f))
}

func (h *namingHandlers) detail(c *fiber.Ctx) error {
	p := ParamsOf(c)
	svc, err := checkedService(p)
	if err != nil {
		return err
	}
	cluster := p.Optional("clusterName", naming.DefaultCluster)
	ip, port, err := requiredIPPort(p)
	if err != nil {
		return err
	}
	body, err := h.Registry.Detail(namespace(p), svc, cluster, ip, port)
	if err != nil {
		return err
	}
	return SendJSON(c, body)
}

// listQuery reads instance/list's parameters in place (Peek): the query is
// only looked at, and Registry.ListBody copies what it keeps.
func (h *namingHandlers) listQuery(c *fiber.Ctx, p Params, svc string) (naming.ListQuery, error) {
	q := naming.ListQuery{NamespaceID: p.PeekOptional("namespaceId", naming.DefaultNamespace), ServiceName: svc, Agent: peekUserAgent(c)}
	q.Clusters = p.PeekOptional("clusters", "")
	q.ClientIP = p.PeekOptional("clientIP", "")
	udp, err := ParseJavaInt(p.PeekOptional("udpPort", "0"))
	if err != nil {
		return q, err
	}
	q.UDPPort = udp
	if udp > 0 { // a subscription: pushed to its source unless trusted
		q.Source = c.Context().RemoteIP().String()
	}
	q.Env = p.PeekOptional("env", "")
	q.IsCheck = ParseBoolean(p.PeekOptional("isCheck", "false"))
	q.App = p.PeekOptional("app", "")
	q.Tenant = p.PeekOptional("tid", "")
	q.HealthyOnly = ParseBoolean(p.PeekOptional("healthyOnly", "false"))
	return q, nil
}

func (h *namingHandlers) list(c *fiber.Ctx) error {
	p := ParamsOf(c)
	svc, err := peekCheckedService(p)
	if err != nil {
		return err
	}
	return h.sendList(c, p, svc)
}

// srvIPXT is the legacy list: dom is a bare name in DEFAULT_GROUP.
func (h *namingHandlers) srvIPXT(c *fiber.Ctx) error {
	p := ParamsOf(c)
	dom, err := p.Required("dom")
	if err != nil {
		return err
	}
	return h.sendList(c, p, naming.DefaultGroup+naming.GroupSeparator+dom)
}

// sendList writes the cached body's parts straight into the response.
func (h *namingHandlers) sendList(c *fiber.Ctx, p Params, svc string) error {
	q, err := h.listQuery(c, p, svc)
	if err != nil {
		return err
	}
	body, err := h.Registry.ListBody(q)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, ContentTypeJSON)
	pre, ref, post := body.Parts()
	resp := c.Response()
	resp.ResetBody()
	resp.AppendBody(pre)
	if ref >= 0 {
		var db [20]byte
		resp.AppendBody(strconv.AppendInt(db[:0], ref, 10))
	}
	resp.AppendBody(post)
	return nil
}

// beatWith is InstanceController.beat, in its order of parsing: the beat
// JSON, clusterName, ip and port, then serviceName (svc resolves it). The
// hottest request a registry serves: parameters are read in place
// (Peek; Registry.Beat copies what it keeps) and the answer is written
// straight into the response.
func (h *namingHandlers) beatWith(c *fiber.Ctx, p Params, svc func() (string, error)) error {
	var f naming.BeatForm
	var beat naming.BeatInfo
	if raw := p.PeekOptional("beat", ""); raw != "" {
		if err := naming.ParseBeatInto(raw, &beat); err != nil {
			return err
		}
		f.Beat = &beat
	}
	f.ClusterName = p.PeekOptional("clusterName", naming.DefaultCluster)
	f.IP = p.PeekOptional("ip", "")
	port, err := ParseJavaInt(p.PeekOptional("port", "0"))
	if err != nil {
		return err
	}
	f.Port = port
	f.NamespaceID = p.PeekOptional("namespaceId", naming.DefaultNamespace)
	if f.ServiceName, err = svc(); err != nil {
		return err
	}
	if v := c.Request().Header.Peek(HeaderBeatReceived); len(v) > 0 {
		f.ReceivedAt, _ = strconv.ParseInt(string(v), 10, 64)
	}
	res, err := h.Registry.Beat(ctxOf(c), f)
	if err != nil {
		return err
	}
	var buf [96]byte
	return sendJSONCopy(c, res.AppendJSON(buf[:0]))
}

func (h *namingHandlers) beat(c *fiber.Ctx) error {
	p := ParamsOf(c)
	return h.beatWith(c, p, func() (string, error) { return peekCheckedService(p) })
}

func (h *namingHandlers) clientBeat(c *fiber.Ctx) error {
	p := ParamsOf(c)
	dom, err := p.Required("dom")
	if err != nil {
		return err
	}
	return h.beatWith(c, p, func() (string, error) { return naming.DefaultGroup + naming.GroupSeparator + dom, nil })
}

func (h *namingHandlers) statuses(c *fiber.Ctx) error {
	p := ParamsOf(c)
	key, err := p.SpringRequired("key")
	if err != nil {
		return err
	}
	body, err := h.Registry.Statuses(key)
	if err != nil {
		return err
	}
	return SendJSON(c, body)
}

func (h *namingHandlers) metadataBatch(del bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		p := ParamsOf(c)
		svc, err := requiredService(p)
		if err != nil {
			return err
		}
		raw, err := p.Required("metadata")
		if err != nil {
			return err
		}
		md, err := naming.ParseMetadata(raw)
		if err != nil {
			return err
		}
		f := naming.MetadataBatchForm{NamespaceID: namespace(p), ServiceName: svc, Metadata: md, Delete: del,
			ConsistencyType: p.Optional("consistencyType", ""), Instances: p.Optional("instances", "")}
		part, leaderAnswer := PartOf(c)
		switch part {
		case PartEphemeral:
			f.Only = "ephemeral"
		case PartPersistent:
			f.Only = "persistent"
		}
		updated, err := h.Registry.MetadataBatch(ctxOf(c), f)
		if err != nil {
			return err
		}
		if part == PartEphemeral { // the raft leader's half
			var cp struct {
				Updated []string `json:"updated"`
			}
			if err := json.Unmarshal(leaderAnswer, &cp); err != nil {
				return compat.ServerError("metadata batch: the raft leader's answer: " + err.Error())
			}
			updated = append(updated, cp.Updated...)
			sort.Strings(updated)
		}
		w := compat.NewJSON(128)
		return SendJSON(c, w.BeginObject().Key("updated").StrList(updated).EndObject().Bytes())
	}
}

func (h *namingHandlers) allDomNames(c *fiber.Ctx) error {
	body, err := h.Registry.AllDomNames(strings.HasPrefix(userAgent(c), "Nacos-DNS"))
	if err != nil {
		return err
	}
	return SendJSON(c, body)
}
