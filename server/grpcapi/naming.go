package grpcapi

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/serviceinfo"
	"github.com/nacosd/nacosd/server/switches"
)

// NamingReader is what the naming handlers read of server/naming.
type NamingReader interface {
	View(ns, grouped string) (naming.ServiceView, bool)
	GroupedNames(ns string) []string
	HasKinds(ns, grouped string) (ephemeral, persistent bool)
	Switches() *switches.Domain
}

// HeldInstances keeps a connection's ephemeral instances alive on their
// owners (server/connbound).
type HeldInstances interface {
	Set(ctx context.Context, connID, ns, svc string, ins []naming.Instance) error
	Remove(ctx context.Context, connID, ns, svc string) error
	// HeldBy lists the instances a connection holds in a service.
	HeldBy(connID, ns, svc string) []naming.Instance
}

// PersistentInstances writes persistent instances (a CP write: the
// dispatcher runs it on the raft leader).
type PersistentInstances interface {
	Register(ctx context.Context, f naming.InstanceForm) error
	Deregister(ctx context.Context, f naming.InstanceForm) error
}

// NamingDeps are the collaborators of the naming handlers.
type NamingDeps struct {
	Reader     NamingReader
	Held       HeldInstances
	Persistent PersistentInstances
	Clock      clock.Clock
	// Push configures the NotifySubscriberRequest pushes.
	Push PushConfig
}

// MountNaming adds the naming routes and returns the subscriptions'
// notifier, which the server feeds the registry's change stream.
func MountNaming(s *Server, d NamingDeps) *NamingNotifier {
	if d.Clock == nil {
		d.Clock = s.cfg.Clock
	}
	h := &namingHandlers{d: d, s: s}
	h.n = newNamingNotifier(s, d.Reader, d.Push)
	sec := func(action string) *Secured { return &Secured{Action: action, Resource: namingResource} }
	s.Handle(&Route{Type: remote.TypeInstanceRequest, Response: instanceResp(remote.TypeInstanceResponse),
		Secured: sec("w"), Params: instanceParams, Handle: h.instance})
	s.Handle(&Route{Type: remote.TypeBatchInstanceRequest, Response: instanceResp(remote.TypeBatchInstanceResponse),
		Secured: sec("w"), Params: batchParams, Handle: h.batch})
	s.Handle(&Route{Type: remote.TypePersistentInstanceRequest, Response: instanceResp(remote.TypeInstanceResponse),
		Secured: sec("w"), Params: instanceParams, Handle: h.persistent,
		Refuse: func(err error) remote.Responder {
			return errorResponse(&Error{Code: remote.ErrServer, Msg: "errCode: 500, errMsg: " + noLeaderNaming + " "})
		}})
	s.Handle(&Route{Type: remote.TypeServiceListRequest, Response: func() remote.Responder { return &remote.ServiceListResponse{} },
		Secured: sec("r"), Params: keyParams, Handle: h.list})
	s.Handle(&Route{Type: remote.TypeServiceQueryRequest, Response: infoResp(remote.TypeQueryServiceResponse),
		Secured: sec("r"), Params: queryParams, Handle: h.query})
	s.Handle(&Route{Type: remote.TypeSubscribeServiceRequest, Response: infoResp(remote.TypeSubscribeServiceResponse),
		Secured: sec("r"), Params: subscribeParams, Handle: h.subscribe})
	return h.n
}

func instanceResp(class string) func() remote.Responder {
	return func() remote.Responder { return &remote.InstanceResponse{Class: class} }
}

func infoResp(class string) func() remote.Responder {
	return func() remote.Responder { return &remote.ServiceInfoResponse{Class: class} }
}

type namingHandlers struct {
	d NamingDeps
	s *Server
	n *NamingNotifier
}

func namingKeyOf(r remote.Requester) remote.NamingKey {
	switch req := r.(type) {
	case *remote.InstanceRequest:
		return req.NamingKey
	case *remote.PersistentInstanceRequest:
		return req.NamingKey
	case *remote.BatchInstanceRequest:
		return req.NamingKey
	case *remote.ServiceListRequest:
		return req.NamingKey
	case *remote.ServiceQueryRequest:
		return req.NamingKey
	case *remote.SubscribeServiceRequest:
		return req.NamingKey
	}
	return remote.NamingKey{}
}

// namingResource is NamingGrpcResourceParser joined as the nacos auth
// plugin joins it: "[ns]:group:naming/service", "*" for a blank group or
// service, no namespace for public.
func namingResource(r remote.Requester) string {
	k := namingKeyOf(r)
	ns := k.Namespace
	if compat.JavaIsBlank(ns) || ns == "public" {
		ns = ""
	}
	group, name := k.GroupName, k.ServiceName
	if compat.JavaIsBlank(group) {
		group = "*"
	}
	if compat.JavaIsBlank(name) {
		name = "*"
	}
	return ns + ":" + group + ":naming/" + name
}

func keyParams(r remote.Requester) []remote.ParamInfo {
	k := namingKeyOf(r)
	return []remote.ParamInfo{{NamespaceID: k.Namespace, ServiceName: k.ServiceName, Group: k.GroupName}}
}

// instanceParams is Instance/PersistentInstanceRequestParamExtractor.
func instanceParams(r remote.Requester) []remote.ParamInfo {
	p := keyParams(r)
	var in *remote.Instance
	switch req := r.(type) {
	case *remote.InstanceRequest:
		in = req.Instance
	case *remote.PersistentInstanceRequest:
		in = req.Instance
	}
	if in != nil {
		p[0].IP, p[0].Port, p[0].Cluster, p[0].Metadata = in.IP, strconv.Itoa(in.Port), in.ClusterName, in.Metadata
	}
	return p
}

// batchParams is BatchInstanceRequestParamExtractor: the request, then
// each instance (a null one fails as Java's extractor does).
func batchParams(r remote.Requester) []remote.ParamInfo {
	p := keyParams(r)
	for _, in := range r.(*remote.BatchInstanceRequest).Instances {
		if in == nil {
			p = append(p, remote.ParamInfo{Err: `Cannot invoke "com.alibaba.nacos.api.naming.pojo.Instance.getIp()" because "instance" is null`})
			break
		}
		p = append(p, remote.ParamInfo{IP: in.IP, Port: strconv.Itoa(in.Port), ServiceName: in.ServiceName, Cluster: in.ClusterName,
			Metadata: in.Metadata})
	}
	return p
}

func queryParams(r remote.Requester) []remote.ParamInfo {
	req := r.(*remote.ServiceQueryRequest)
	p := keyParams(r)
	p[0].Port, p[0].Clusters = strconv.Itoa(req.UDPPort), req.Cluster
	return p
}

func subscribeParams(r remote.Requester) []remote.ParamInfo {
	p := keyParams(r)
	p[0].Clusters = r.(*remote.SubscribeServiceRequest).Clusters
	return p
}

// Java's exceptions, as its handlers let them escape.
func npe(msg string) error { return &Error{Code: remote.ErrServer, Msg: msg} }

func badRequest(msg string) error { return &Error{Code: remote.ErrInvalidParam, Msg: msg} }

// runtimeError is a NacosRuntimeException's message.
func runtimeError(code int, msg string) error {
	return &Error{Code: code, Msg: "errCode: " + strconv.Itoa(code) + ", errMsg: " + msg + " "}
}

const (
	errClientDisconnect = -401 // NacosException.CLIENT_DISCONNECT
	msgNPEType          = `Cannot invoke "String.hashCode()" because "<local4>" is null`
	msgNPENamespace     = `Cannot invoke "String.equals(Object)" because "this.namespace" is null`
)

// groupedName is NamingUtils.getGroupedName (Service.getGroupedServiceName).
func groupedName(k remote.NamingKey) (string, error) {
	if compat.JavaIsBlank(k.ServiceName) {
		return "", npe("Param 'serviceName' is illegal, serviceName is blank")
	}
	if compat.JavaIsBlank(k.GroupName) {
		return "", npe("Param 'groupName' is illegal, groupName is blank")
	}
	return k.GroupName + "@@" + k.ServiceName, nil
}

// namingConn is checkClientIsLegal: Java has a naming client only for
// connections labelled module=naming.
func namingConn(c *Call) error {
	if c.Conn.Labels["module"] != "naming" {
		return runtimeError(errClientDisconnect, "Client ["+c.Conn.ID+"] connection already disconnect, can't register ephemeral instance.")
	}
	return nil
}

// checkInstance is NamingUtils.checkInstanceIsLegal.
func checkInstance(in *remote.Instance) error {
	if in == nil {
		return badRequest("Instance can not be null.")
	}
	if in.HeartBeatTimeout() < in.HeartBeatInterval() || in.IPDeleteTimeout() < in.HeartBeatInterval() {
		return badRequest("Instance 'heart beat interval' must less than 'heart beat timeout' and 'ip delete timeout'.")
	}
	if in.ClusterName != "" {
		for _, r := range in.ClusterName {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-') {
				return badRequest("Instance 'clusterName' should be characters with only 0-9a-zA-Z-. (current: " + in.ClusterName + ")")
			}
		}
	}
	return nil
}

// instanceID is InstanceUtil.setInstanceIdIfEmpty with the simple
// generator: ip#port#cluster#service, the cluster as sent ("null" when
// absent) and the instance's service name, else the grouped name.
func instanceID(in *remote.Instance, grouped string) string {
	if in.InstanceID != "" {
		return in.InstanceID
	}
	svc := grouped
	if !compat.JavaIsBlank(in.ServiceName) {
		svc = in.ServiceName
	}
	cluster := in.ClusterName
	if !in.HasCluster {
		cluster = "null"
	}
	return in.IP + "#" + strconv.Itoa(in.Port) + "#" + cluster + "#" + svc
}

// domainInstance is the instance a 2.x request registers.
func domainInstance(in *remote.Instance, grouped string, ephemeral bool) naming.Instance {
	cluster := in.ClusterName
	if compat.JavaIsBlank(cluster) {
		cluster = naming.DefaultCluster
	}
	id := instanceID(in, grouped)
	if g, ok := in.Metadata[remote.MetaInstanceIDGenerate]; ok && strings.EqualFold(g, "snowflake") && in.InstanceID == "" {
		id = "" // the registry numbers it
	}
	meta := in.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	return naming.Instance{InstanceID: id, IP: in.IP, Port: in.Port, Weight: in.Weight, Healthy: in.Healthy, Enabled: in.Enabled,
		Ephemeral: ephemeral, ClusterName: cluster, ServiceName: grouped, Metadata: meta}
}

// instance is InstanceRequestHandler: a connection's ephemeral instance
// of a service, registered or deregistered.
func (h *namingHandlers) instance(ctx context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.InstanceRequest)
	grouped, err := groupedName(req.NamingKey)
	if err != nil {
		return nil, err
	}
	switch {
	case !req.HasOp:
		return nil, npe(msgNPEType)
	case req.Op == remote.RegisterInstance:
		if err := checkInstance(req.Instance); err != nil {
			return nil, err
		}
		if !req.HasNamespace {
			return nil, npe(msgNPENamespace)
		}
		if eph, pers := h.d.Reader.HasKinds(req.Namespace, grouped); pers && !eph {
			return nil, runtimeError(remote.ErrInvalidParam, "Current service "+grouped+" is persistent service, can't register ephemeral instance.")
		}
		if err := namingConn(c); err != nil {
			return nil, err
		}
		in := domainInstance(req.Instance, grouped, true)
		if err := h.d.Held.Set(ctx, c.Conn.ID, req.Namespace, grouped, []naming.Instance{in}); err != nil {
			return nil, heldError(err)
		}
		return &remote.InstanceResponse{Response: remote.OK(), Class: remote.TypeInstanceResponse, Op: remote.RegisterInstance}, nil
	case req.Op == remote.DeregisterInstance:
		// Java skips a deregistration for a service it does not know. The
		// local view is not the test of that on a cluster: this member holds
		// the connection's instance while the service's owner has the list,
		// and its own copy comes with the owner's next sync; a deregistration
		// right after the registration found no view here and was skipped,
		// the instance kept alive by this member's beats until the
		// connection closed (the conformance suite's subscribe.push on the
		// cluster).
		_, ok := h.d.Reader.View(req.Namespace, grouped)
		if ok || len(h.d.Held.HeldBy(c.Conn.ID, req.Namespace, grouped)) > 0 {
			if err := namingConn(c); err != nil {
				return nil, err
			}
			if err := h.d.Held.Remove(ctx, c.Conn.ID, req.Namespace, grouped); err != nil {
				return nil, heldError(err)
			}
		}
		if req.Instance == nil { // the trace event reads the instance after the deregistration
			return nil, npe(`Cannot invoke "com.alibaba.nacos.api.naming.pojo.Instance.getIp()" because the return value of "com.alibaba.nacos.api.naming.remote.request.InstanceRequest.getInstance()" is null`)
		}
		return &remote.InstanceResponse{Response: remote.OK(), Class: remote.TypeInstanceResponse, Op: remote.DeregisterInstance}, nil
	}
	return nil, badRequest("Unsupported request type " + req.Op)
}

// heldError is the answer to a write of held instances that failed on the
// service's owner.
func heldError(err error) error {
	var ce *compat.Error
	if errors.As(err, &ce) {
		return &Error{Code: remote.ErrServer, Msg: ce.Body}
	}
	return &Error{Code: remote.ErrServer, Msg: err.Error()}
}

// batch is BatchInstanceRequestHandler: the connection's instances of the
// service are replaced by the batch.
func (h *namingHandlers) batch(ctx context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.BatchInstanceRequest)
	grouped, err := groupedName(req.NamingKey)
	if err != nil {
		return nil, err
	}
	if req.Instances == nil {
		return nil, npe(`Cannot invoke "java.util.List.iterator()" because "instances" is null`)
	}
	switch {
	case !req.HasOp:
		return nil, npe(msgNPEType)
	case req.Op != remote.BatchRegisterInstance:
		return nil, badRequest("Unsupported request type " + req.Op)
	case !req.HasNamespace:
		return nil, npe(msgNPENamespace)
	}
	if eph, pers := h.d.Reader.HasKinds(req.Namespace, grouped); pers && !eph {
		return nil, runtimeError(remote.ErrInvalidParam, "Current service "+grouped+" is persistent service, can't batch register ephemeral instance.")
	}
	if err := namingConn(c); err != nil {
		return nil, err
	}
	ins := make([]naming.Instance, 0, len(req.Instances))
	for _, in := range req.Instances {
		ins = append(ins, domainInstance(in, grouped, true))
	}
	if err := h.d.Held.Set(ctx, c.Conn.ID, req.Namespace, grouped, ins); err != nil {
		return nil, heldError(err)
	}
	return &remote.InstanceResponse{Response: remote.OK(), Class: remote.TypeBatchInstanceResponse, Op: remote.BatchRegisterInstance}, nil
}

// persistent is PersistentInstanceRequestHandler: a CP write of the
// instance (on the raft leader: the dispatcher routed it there).
func (h *namingHandlers) persistent(ctx context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.PersistentInstanceRequest)
	grouped, err := groupedName(req.NamingKey)
	if err != nil {
		return nil, err
	}
	if !req.HasOp {
		return nil, npe(msgNPEType)
	}
	if req.Op != remote.RegisterInstance && req.Op != remote.DeregisterInstance {
		return nil, badRequest("Unsupported request type " + req.Op)
	}
	if req.Instance == nil {
		return nil, npe(`Cannot invoke "com.alibaba.nacos.api.naming.pojo.Instance.toInetAddr()" because "instance" is null`)
	}
	f := naming.InstanceForm{NamespaceID: req.Namespace, ServiceName: grouped, Instance: domainInstance(req.Instance, grouped, false)}
	if req.Op == remote.RegisterInstance {
		if eph, pers := h.d.Reader.HasKinds(req.Namespace, grouped); eph && !pers {
			return nil, runtimeError(remote.ErrInvalidParam, "Current service "+grouped+" is ephemeral service, can't register persistent instance.")
		}
		err = h.d.Persistent.Register(ctx, f)
	} else {
		err = h.d.Persistent.Deregister(ctx, f)
	}
	c.Wrote(err)
	if err != nil {
		return nil, runtimeError(remote.ErrServer, writeFailureNaming(err))
	}
	op := req.Op
	return &remote.InstanceResponse{Response: remote.OK(), Class: remote.TypeInstanceResponse, Op: op}, nil
}

// writeFailureNaming is writeFailure with naming's raft group name.
func writeFailureNaming(err error) string {
	if msg := writeFailure(err); msg != noLeaderText {
		return msg
	}
	return noLeaderNaming
}

// list is ServiceListRequestHandler: the names of a group's services,
// paged as ServiceUtil.pageServiceName pages them (Java's int arithmetic
// and its subList failure included).
func (h *namingHandlers) list(_ context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.ServiceListRequest)
	if !req.HasNamespace {
		return nil, npe(`Cannot invoke "Object.hashCode()" because "key" is null`)
	}
	all := javaSingletonOrder(req.Namespace, h.d.Reader.GroupedNames(req.Namespace))
	r := &remote.ServiceListResponse{Response: remote.OK(), ServiceNames: []string{}}
	if len(all) == 0 {
		return r, nil
	}
	var names []string
	if req.HasGroup {
		prefix := req.GroupName + "@@"
		for _, n := range all {
			if strings.HasPrefix(n, prefix) && !strings.Contains(n[len(prefix):], "@@") {
				names = append(names, n)
			}
		}
	}
	names = compat.JavaHashOrderStrings(names, len(all)) // new HashSet<>(serviceSet.size())
	r.Count = len(names)
	start := int32(req.PageNo-1) * int32(req.PageSize)
	if start < 0 {
		start = 0
	}
	if int(start) >= len(names) {
		return r, nil
	}
	end := start + int32(req.PageSize)
	if int(end) > len(names) {
		end = int32(len(names))
	}
	if start > end {
		return nil, npe("fromIndex(" + strconv.Itoa(int(start)) + ") > toIndex(" + strconv.Itoa(int(end)) + ")")
	}
	for _, n := range names[start:end] {
		if i := strings.Index(n, "@@"); i > 0 {
			n = n[i+2:]
		}
		r.ServiceNames = append(r.ServiceNames, n)
	}
	return r, nil
}

// query is ServiceQueryRequestHandler: the service's instances once.
func (h *namingHandlers) query(_ context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.ServiceQueryRequest)
	si := h.info(req.NamingKey, serviceinfo.Selection{Clusters: req.Cluster, HealthyOnly: req.HealthyOnly, EnabledOnly: true})
	return &remote.ServiceInfoResponse{Response: remote.OK(), Class: remote.TypeQueryServiceResponse, ServiceInfo: si}, nil
}

// info renders a service as a 2.x read sees it now.
func (h *namingHandlers) info(k remote.NamingKey, sel serviceinfo.Selection) *remote.ServiceInfo {
	var v naming.ServiceView
	found := false
	if k.HasNamespace && !compat.JavaIsBlank(k.ServiceName) && !compat.JavaIsBlank(k.GroupName) {
		v, found = h.d.Reader.View(k.Namespace, k.GroupName+"@@"+k.ServiceName)
	}
	sel.Name, sel.Group, sel.HasName, sel.HasGroup = k.ServiceName, k.GroupName, k.HasService, k.HasGroup
	return serviceinfo.Render(v, found, sel, h.d.Reader.Switches().DefaultPushCacheMillis, h.n.refTime())
}

// subscribe is SubscribeServiceRequestHandler: the service's instances
// now, and (un)subscription of the connection to its changes.
func (h *namingHandlers) subscribe(_ context.Context, c *Call) (remote.Responder, error) {
	req := c.Req.(*remote.SubscribeServiceRequest)
	grouped, err := groupedName(req.NamingKey)
	if err != nil {
		return nil, err
	}
	si := h.info(req.NamingKey, serviceinfo.Selection{Clusters: req.Clusters, EnabledOnly: true})
	if err := namingConn(c); err != nil {
		return nil, err
	}
	sub := subscription{ns: req.Namespace, svc: grouped, key: req.NamingKey, clusters: req.Clusters}
	if req.Subscribe {
		h.n.subscribe(c.Conn.ID, sub)
	} else {
		h.n.unsubscribe(c.Conn.ID, sub)
	}
	r := remote.OK()
	r.Message, r.HasMessage = "success", true
	return &remote.ServiceInfoResponse{Response: r, Class: remote.TypeSubscribeServiceResponse, ServiceInfo: si}, nil
}

// javaSingletonOrder orders a namespace's grouped service names as Java's
// ServiceManager iterates them: a ConcurrentHashSet<Service> (default
// capacity, resized at 3/4) by bin of Service.hashCode, Objects.hash(
// namespace, group, name).
func javaSingletonOrder(ns string, grouped []string) []string {
	c := 16
	for len(grouped) >= c*3/4 {
		c *= 2
	}
	bins := make(map[string]int, len(grouped))
	for _, g := range grouped {
		group, name, _ := strings.Cut(g, "@@")
		h := int32(1)
		for _, part := range []string{ns, group, name} {
			h = 31*h + compat.JavaStringHash(part)
		}
		bins[g] = compat.JavaHashBucket(h, c)
	}
	out := append([]string(nil), grouped...)
	sort.SliceStable(out, func(i, j int) bool { return bins[out[i]] < bins[out[j]] })
	return out
}
