package remote

import (
	"strconv"

	"github.com/valyala/fastjson"

	"github.com/nacosd/nacosd/compat"
)

// Class names of the naming module (api/naming/remote).
const (
	TypeInstanceRequest           = "InstanceRequest"
	TypeInstanceResponse          = "InstanceResponse"
	TypeBatchInstanceRequest      = "BatchInstanceRequest"
	TypeBatchInstanceResponse     = "BatchInstanceResponse"
	TypePersistentInstanceRequest = "PersistentInstanceRequest"
	TypeServiceListRequest        = "ServiceListRequest"
	TypeServiceListResponse       = "ServiceListResponse"
	TypeServiceQueryRequest       = "ServiceQueryRequest"
	TypeQueryServiceResponse      = "QueryServiceResponse"
	TypeSubscribeServiceRequest   = "SubscribeServiceRequest"
	TypeSubscribeServiceResponse  = "SubscribeServiceResponse"
	TypeNotifySubscriberRequest   = "NotifySubscriberRequest"
	TypeNotifySubscriberResponse  = "NotifySubscriberResponse"
)

// Operation types of InstanceRequest and BatchInstanceRequest
// (NamingRemoteConstants).
const (
	RegisterInstance      = "registerInstance"
	DeregisterInstance    = "deregisterInstance"
	BatchRegisterInstance = "batchRegisterInstance"
)

// Instance is api/naming/pojo/Instance as Jackson reads and writes it.
type Instance struct {
	InstanceID, IP           string
	HasInstanceID, HasIP     bool // non-null
	Port                     int
	Weight                   float64
	Healthy, Enabled         bool
	Ephemeral                bool
	ClusterName, ServiceName string
	HasCluster, HasService   bool
	// Metadata nil is null (a client may send it).
	Metadata map[string]string
	// MetaOrder, when set, is the order of Metadata's keys in the JSON and
	// in JavaString (the server's HashMap order, which depends on how the
	// map was built); else the keys of a default HashMap.
	MetaOrder []string
}

// metaKeys returns the metadata keys in their Java order.
func (in *Instance) metaKeys() []string {
	if len(in.MetaOrder) == len(in.Metadata) {
		return in.MetaOrder
	}
	return compat.JavaHashMapKeys(in.Metadata)
}

// NewInstance is an Instance with Java's field defaults (weight 1,
// healthy, enabled, ephemeral, empty metadata).
func NewInstance() Instance {
	return Instance{Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, Metadata: map[string]string{}}
}

// Preserved metadata keys and their defaults (PreservedMetadataKeys,
// Constants).
const (
	MetaHeartBeatInterval  = "preserved.heart.beat.interval"
	MetaHeartBeatTimeout   = "preserved.heart.beat.timeout"
	MetaIPDeleteTimeout    = "preserved.ip.delete.timeout"
	MetaInstanceIDGenerate = "preserved.instance.id.generator"
)

// metaMillis is getMetaDataByKeyWithDefault(key, long).
func (in *Instance) metaMillis(key string, def int64) int64 {
	if len(in.Metadata) == 0 {
		return def
	}
	v := in.Metadata[key]
	if v == "" {
		return def
	}
	for _, r := range v {
		if r < '0' || r > '9' {
			return def
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def // Long.parseLong would throw; Java cannot serialise it either
	}
	return n
}

// HeartBeatInterval is getInstanceHeartBeatInterval (ms).
func (in *Instance) HeartBeatInterval() int64 { return in.metaMillis(MetaHeartBeatInterval, 5000) }

// HeartBeatTimeout is getInstanceHeartBeatTimeOut (ms).
func (in *Instance) HeartBeatTimeout() int64 { return in.metaMillis(MetaHeartBeatTimeout, 15000) }

// IPDeleteTimeout is getIpDeleteTimeout (ms).
func (in *Instance) IPDeleteTimeout() int64 { return in.metaMillis(MetaIPDeleteTimeout, 30000) }

// idGenerator is getInstanceIdGenerator: "simple" for no metadata, else
// the metadata's value (ok false: null, not written).
func (in *Instance) idGenerator() (string, bool) {
	if len(in.Metadata) == 0 {
		return "simple", true
	}
	v, ok := in.Metadata[MetaInstanceIDGenerate]
	return v, ok
}

// AppendJSON writes the instance as the server's mapper does (NON_NULL;
// the fields, then the getter-only properties in the order Java 2.5.1
// writes them).
func (in *Instance) AppendJSON(w *compat.JSON) {
	w.BeginObject()
	if in.HasInstanceID {
		w.Key("instanceId").Str(in.InstanceID)
	}
	if in.HasIP {
		w.Key("ip").Str(in.IP)
	}
	w.Key("port").Int(int64(in.Port))
	w.Key("weight").Double(in.Weight)
	w.Key("healthy").Bool(in.Healthy)
	w.Key("enabled").Bool(in.Enabled)
	w.Key("ephemeral").Bool(in.Ephemeral)
	if in.HasCluster {
		w.Key("clusterName").Str(in.ClusterName)
	}
	if in.HasService {
		w.Key("serviceName").Str(in.ServiceName)
	}
	if in.Metadata != nil {
		w.Key("metadata").StrMap(in.metaKeys(), in.Metadata, false)
	}
	w.Key("ipDeleteTimeout").Int(in.IPDeleteTimeout())
	if g, ok := in.idGenerator(); ok {
		w.Key("instanceIdGenerator").Str(g)
	}
	w.Key("instanceHeartBeatInterval").Int(in.HeartBeatInterval())
	w.Key("instanceHeartBeatTimeOut").Int(in.HeartBeatTimeout())
	w.EndObject()
}

// JavaString is Instance.toString (its hashCode is the string's: the
// HashSet order of a service's hosts).
func (in *Instance) JavaString() string {
	b := make([]byte, 0, 192)
	b = append(b, "Instance{instanceId="...)
	b = appendJavaQuoted(b, in.InstanceID, in.HasInstanceID)
	b = append(b, ", ip="...)
	b = appendJavaQuoted(b, in.IP, in.HasIP)
	b = append(b, ", port="...)
	b = strconv.AppendInt(b, int64(in.Port), 10)
	b = append(b, ", weight="...)
	b = compat.AppendJavaDouble(b, in.Weight)
	b = append(b, ", healthy="...)
	b = strconv.AppendBool(b, in.Healthy)
	b = append(b, ", enabled="...)
	b = strconv.AppendBool(b, in.Enabled)
	b = append(b, ", ephemeral="...)
	b = strconv.AppendBool(b, in.Ephemeral)
	b = append(b, ", clusterName="...)
	b = appendJavaQuoted(b, in.ClusterName, in.HasCluster)
	b = append(b, ", serviceName="...)
	b = appendJavaQuoted(b, in.ServiceName, in.HasService)
	b = append(b, ", metadata="...)
	if in.Metadata == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, k := range in.metaKeys() {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, k...)
			b = append(b, '=')
			b = append(b, in.Metadata[k]...)
		}
		b = append(b, '}')
	}
	b = append(b, '}')
	return string(b)
}

// appendJavaQuoted is "'" + s + "'" of a String that may be null ('null').
func appendJavaQuoted(b []byte, s string, ok bool) []byte {
	b = append(b, '\'')
	if ok {
		b = append(b, s...)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '\'')
}

func (o *object) instance() (Instance, error) {
	in := NewInstance()
	var err error
	if in.InstanceID, in.HasInstanceID, err = o.str("instanceId"); err != nil {
		return in, err
	}
	if in.IP, in.HasIP, err = o.str("ip"); err != nil {
		return in, err
	}
	port, err := o.int32("port")
	if err != nil {
		return in, err
	}
	in.Port = int(port)
	if in.Weight, err = o.float64("weight", 1); err != nil {
		return in, err
	}
	if in.Healthy, err = o.boolean("healthy", true); err != nil {
		return in, err
	}
	if in.Enabled, err = o.boolean("enabled", true); err != nil {
		return in, err
	}
	if in.Ephemeral, err = o.boolean("ephemeral", true); err != nil {
		return in, err
	}
	if in.ClusterName, in.HasCluster, err = o.str("clusterName"); err != nil {
		return in, err
	}
	if in.ServiceName, in.HasService, err = o.str("serviceName"); err != nil {
		return in, err
	}
	if v := o.get("metadata"); v != nil {
		if in.Metadata, err = o.strMap("metadata"); err != nil {
			return in, err
		}
		if mo, _ := v.Object(); mo != nil && in.Metadata != nil {
			in.MetaOrder = make([]string, 0, len(in.Metadata))
			seen := map[string]bool{}
			mo.Visit(func(k []byte, _ *fastjson.Value) {
				if _, ok := in.Metadata[string(k)]; ok && !seen[string(k)] {
					seen[string(k)] = true
					in.MetaOrder = append(in.MetaOrder, string(k))
				}
			})
		}
	}
	return in, nil
}

func (in *Instance) appendRequestJSON(w *compat.JSON) {
	w.BeginObject()
	if in.HasInstanceID {
		w.Key("instanceId").Str(in.InstanceID)
	}
	w.Key("ip").Str(in.IP)
	w.Key("port").Int(int64(in.Port))
	w.Key("weight").Double(in.Weight)
	w.Key("healthy").Bool(in.Healthy)
	w.Key("enabled").Bool(in.Enabled)
	w.Key("ephemeral").Bool(in.Ephemeral)
	w.Key("clusterName").Str(in.ClusterName)
	if in.HasService {
		w.Key("serviceName").Str(in.ServiceName)
	}
	if in.Metadata != nil {
		w.Key("metadata").StrMap(compat.JavaHashMapKeys(in.Metadata), in.Metadata, false)
	}
	w.EndObject()
}

// NamingKey is AbstractNamingRequest's namespace, serviceName and
// groupName; HasService and HasGroup tell present values from null.
type NamingKey struct {
	Namespace, ServiceName, GroupName  string
	HasNamespace, HasService, HasGroup bool
}

func (k *NamingKey) appendKey(w *compat.JSON) {
	if k.HasNamespace || k.Namespace != "" {
		w.Key("namespace").Str(k.Namespace)
	}
	if k.HasService || k.ServiceName != "" {
		w.Key("serviceName").Str(k.ServiceName)
	}
	if k.HasGroup || k.GroupName != "" {
		w.Key("groupName").Str(k.GroupName)
	}
}

func (o *object) namingKey() (k NamingKey, err error) {
	if k.Namespace, k.HasNamespace, err = o.str("namespace"); err != nil {
		return
	}
	if k.ServiceName, k.HasService, err = o.str("serviceName"); err != nil {
		return
	}
	k.GroupName, k.HasGroup, err = o.str("groupName")
	return
}

// InstanceRequest registers or deregisters a connection's ephemeral
// instance (Type RegisterInstance / DeregisterInstance).
type InstanceRequest struct {
	RequestBase
	NamingKey
	Op string // "type"; HasOp false: null
	// HasOp tells a present type from null.
	HasOp    bool
	Instance *Instance // nil: null
}

// Type is the class name.
func (*InstanceRequest) Type() string { return TypeInstanceRequest }

// Module is "naming".
func (*InstanceRequest) Module() string { return ModuleNaming }

func (r *InstanceRequest) appendFields(w *compat.JSON) {
	r.appendKey(w)
	if r.HasOp || r.Op != "" {
		w.Key("type").Str(r.Op)
	}
	if r.Instance != nil {
		r.Instance.appendRequestJSON(w.Key("instance"))
	}
}

// PersistentInstanceRequest registers or deregisters a persistent
// instance (a CP write).
type PersistentInstanceRequest struct{ InstanceRequest }

// Type is the class name.
func (*PersistentInstanceRequest) Type() string { return TypePersistentInstanceRequest }

// BatchInstanceRequest replaces a connection's instances of a service.
type BatchInstanceRequest struct {
	RequestBase
	NamingKey
	Op    string
	HasOp bool
	// Instances nil is null; a nil element is a null element.
	Instances    []*Instance
	HasInstances bool
}

// Type is the class name.
func (*BatchInstanceRequest) Type() string { return TypeBatchInstanceRequest }

// Module is "naming".
func (*BatchInstanceRequest) Module() string { return ModuleNaming }

func (r *BatchInstanceRequest) appendFields(w *compat.JSON) {
	r.appendKey(w)
	if r.HasOp || r.Op != "" {
		w.Key("type").Str(r.Op)
	}
	if r.Instances != nil || r.HasInstances {
		w.Key("instances").BeginArray()
		for _, in := range r.Instances {
			if in == nil {
				w.Null()
				continue
			}
			in.appendRequestJSON(w)
		}
		w.EndArray()
	}
}

// ServiceListRequest pages the service names of a group.
type ServiceListRequest struct {
	RequestBase
	NamingKey
	PageNo, PageSize int
	Selector         string
}

// Type is the class name.
func (*ServiceListRequest) Type() string { return TypeServiceListRequest }

// Module is "naming".
func (*ServiceListRequest) Module() string { return ModuleNaming }

func (r *ServiceListRequest) appendFields(w *compat.JSON) {
	r.appendKey(w)
	w.Key("pageNo").Int(int64(r.PageNo))
	w.Key("pageSize").Int(int64(r.PageSize))
	if r.Selector != "" {
		w.Key("selector").Str(r.Selector)
	}
}

// ServiceQueryRequest reads a service's instances once.
type ServiceQueryRequest struct {
	RequestBase
	NamingKey
	Cluster     string
	HasCluster  bool
	HealthyOnly bool
	UDPPort     int
}

// Type is the class name.
func (*ServiceQueryRequest) Type() string { return TypeServiceQueryRequest }

// Module is "naming".
func (*ServiceQueryRequest) Module() string { return ModuleNaming }

func (r *ServiceQueryRequest) appendFields(w *compat.JSON) {
	r.appendKey(w)
	w.Key("cluster").Str(r.Cluster)
	w.Key("healthyOnly").Bool(r.HealthyOnly)
	w.Key("udpPort").Int(int64(r.UDPPort))
}

// SubscribeServiceRequest subscribes (or unsubscribes) the connection to
// a service's changes.
type SubscribeServiceRequest struct {
	RequestBase
	NamingKey
	Subscribe bool
	Clusters  string
}

// Type is the class name.
func (*SubscribeServiceRequest) Type() string { return TypeSubscribeServiceRequest }

// Module is "naming".
func (*SubscribeServiceRequest) Module() string { return ModuleNaming }

func (r *SubscribeServiceRequest) appendFields(w *compat.JSON) {
	r.appendKey(w)
	w.Key("subscribe").Bool(r.Subscribe)
	w.Key("clusters").Str(r.Clusters)
}

// NotifySubscriberRequest pushes a service's instances to a subscribed
// connection (server → client; acked with NotifySubscriberResponse).
type NotifySubscriberRequest struct {
	RequestBase
	ServiceInfo *ServiceInfo
	// ServiceInfoJSON, when set, is written instead of ServiceInfo: the
	// ServiceInfoJSON of one state, rendered once for every subscriber a
	// change is pushed to (only the requestId differs between them).
	ServiceInfoJSON []byte
}

// ServiceInfoJSON is the JSON si is written as in a NotifySubscriberRequest.
func ServiceInfoJSON(si *ServiceInfo) []byte {
	w := compat.NewJSON(256)
	si.AppendJSON(w)
	return w.Bytes()
}

// Type is the class name.
func (*NotifySubscriberRequest) Type() string { return TypeNotifySubscriberRequest }

// Module is "naming".
func (*NotifySubscriberRequest) Module() string { return ModuleNaming }

func (r *NotifySubscriberRequest) appendFields(w *compat.JSON) {
	if r.ServiceInfoJSON != nil {
		w.Key("serviceInfo").Raw(r.ServiceInfoJSON)
	} else if r.ServiceInfo != nil {
		r.ServiceInfo.AppendJSON(w.Key("serviceInfo"))
	}
}

// ServiceInfo is api/naming/pojo/ServiceInfo as the server writes it.
type ServiceInfo struct {
	Name, GroupName, Clusters string
	// HasName and HasGroup: name and groupName are not null.
	HasName, HasGroup        bool
	CacheMillis              int64
	Hosts                    []Instance
	LastRefTime              int64
	ReachProtectionThreshold bool
}

// AppendJSON writes the Jackson JSON (checksum is always "", allIPs
// false; valid is the getter isValid: hosts are never null here).
func (s *ServiceInfo) AppendJSON(w *compat.JSON) {
	w.BeginObject()
	if s.HasName {
		w.Key("name").Str(s.Name)
	}
	if s.HasGroup {
		w.Key("groupName").Str(s.GroupName)
	}
	w.Key("clusters").Str(s.Clusters)
	w.Key("cacheMillis").Int(s.CacheMillis)
	w.Key("hosts").BeginArray()
	for i := range s.Hosts {
		s.Hosts[i].AppendJSON(w)
	}
	w.EndArray()
	w.Key("lastRefTime").Int(s.LastRefTime)
	w.Key("checksum").Str("")
	w.Key("allIPs").Bool(false)
	w.Key("reachProtectionThreshold").Bool(s.ReachProtectionThreshold)
	w.Key("valid").Bool(true)
	w.EndObject()
}

// InstanceResponse answers InstanceRequest, PersistentInstanceRequest
// (class InstanceResponse) and BatchInstanceRequest (BatchInstanceResponse)
// with the operation type.
type InstanceResponse struct {
	Response
	Class string // TypeInstanceResponse or TypeBatchInstanceResponse
	Op    string // null when ""
}

// Type is the class name.
func (r *InstanceResponse) Type() string { return r.Class }

// AppendJSON writes the Jackson JSON.
func (r *InstanceResponse) AppendJSON(w *compat.JSON) {
	r.head(w)
	if r.Op != "" {
		w.Key("type").Str(r.Op)
	}
	r.tail(w)
}

// ServiceListResponse answers ServiceListRequest.
type ServiceListResponse struct {
	Response
	Count        int
	ServiceNames []string // nil: null
}

// Type is the class name.
func (*ServiceListResponse) Type() string { return TypeServiceListResponse }

// AppendJSON writes the Jackson JSON.
func (r *ServiceListResponse) AppendJSON(w *compat.JSON) {
	r.head(w)
	w.Key("count").Int(int64(r.Count))
	if r.ServiceNames != nil {
		w.Key("serviceNames").StrList(r.ServiceNames)
	}
	r.tail(w)
}

// ServiceInfoResponse answers ServiceQueryRequest (QueryServiceResponse)
// and SubscribeServiceRequest (SubscribeServiceResponse).
type ServiceInfoResponse struct {
	Response
	Class       string
	ServiceInfo *ServiceInfo // nil: null
}

// Type is the class name.
func (r *ServiceInfoResponse) Type() string { return r.Class }

// AppendJSON writes the Jackson JSON.
func (r *ServiceInfoResponse) AppendJSON(w *compat.JSON) {
	r.head(w)
	if r.ServiceInfo != nil {
		r.ServiceInfo.AppendJSON(w.Key("serviceInfo"))
	}
	r.tail(w)
}

// decodeNaming reads the naming module's request classes; ok is false for
// other types.
func decodeNaming(typ string, o *object, rb RequestBase) (r Requester, ok bool, err error) {
	switch typ {
	case TypeInstanceRequest, TypePersistentInstanceRequest:
		ir := InstanceRequest{RequestBase: rb}
		if ir.NamingKey, err = o.namingKey(); err != nil {
			return nil, true, err
		}
		if ir.Op, ir.HasOp, err = o.str("type"); err != nil {
			return nil, true, err
		}
		sub, err := o.sub("instance", "com.alibaba.nacos.api.naming.pojo.Instance")
		if err != nil {
			return nil, true, err
		}
		if sub != nil {
			in, err := sub.instance()
			if err != nil {
				return nil, true, err
			}
			ir.Instance = &in
		}
		if typ == TypePersistentInstanceRequest {
			return &PersistentInstanceRequest{ir}, true, nil
		}
		return &ir, true, nil
	case TypeBatchInstanceRequest:
		br := &BatchInstanceRequest{RequestBase: rb}
		if br.NamingKey, err = o.namingKey(); err != nil {
			return nil, true, err
		}
		if br.Op, br.HasOp, err = o.str("type"); err != nil {
			return nil, true, err
		}
		if v := o.get("instances"); v != nil && v.Type() != fastjson.TypeNull {
			br.HasInstances = true
		}
		err = o.objects("instances", "com.alibaba.nacos.api.naming.pojo.Instance", func(e *object) error {
			if e == nil {
				br.Instances = append(br.Instances, nil)
				return nil
			}
			in, err := e.instance()
			if err != nil {
				return err
			}
			br.Instances = append(br.Instances, &in)
			return nil
		})
		if err != nil {
			return nil, true, err
		}
		if br.HasInstances && br.Instances == nil {
			br.Instances = []*Instance{}
		}
		return br, true, nil
	case TypeServiceListRequest:
		lr := &ServiceListRequest{RequestBase: rb}
		if lr.NamingKey, err = o.namingKey(); err != nil {
			return nil, true, err
		}
		n, err := o.int32("pageNo")
		if err != nil {
			return nil, true, err
		}
		lr.PageNo = int(n)
		if n, err = o.int32("pageSize"); err != nil {
			return nil, true, err
		}
		lr.PageSize = int(n)
		lr.Selector, err = o.strOr("selector")
		return lr, true, err
	case TypeServiceQueryRequest:
		qr := &ServiceQueryRequest{RequestBase: rb}
		if qr.NamingKey, err = o.namingKey(); err != nil {
			return nil, true, err
		}
		if qr.Cluster, qr.HasCluster, err = o.str("cluster"); err != nil {
			return nil, true, err
		}
		if qr.HealthyOnly, err = o.boolean("healthyOnly", false); err != nil {
			return nil, true, err
		}
		n, err := o.int32("udpPort")
		qr.UDPPort = int(n)
		return qr, true, err
	case TypeSubscribeServiceRequest:
		sr := &SubscribeServiceRequest{RequestBase: rb}
		if sr.NamingKey, err = o.namingKey(); err != nil {
			return nil, true, err
		}
		if sr.Subscribe, err = o.boolean("subscribe", false); err != nil {
			return nil, true, err
		}
		sr.Clusters, err = o.strOr("clusters")
		return sr, true, err
	}
	return nil, false, nil
}

// ParseServiceInfo reads the "serviceInfo" property of a response or
// NotifySubscriberRequest body (nil when absent or null).
func ParseServiceInfo(body []byte) (*ServiceInfo, error) {
	o, release, err := parseObject("ServiceInfo", body)
	defer release()
	if err != nil || o == nil {
		return nil, err
	}
	so, err := o.sub("serviceInfo", "com.alibaba.nacos.api.naming.pojo.ServiceInfo")
	if err != nil || so == nil {
		return nil, err
	}
	s := &ServiceInfo{Hosts: []Instance{}}
	if s.Name, s.HasName, err = so.str("name"); err != nil {
		return nil, err
	}
	if s.GroupName, s.HasGroup, err = so.str("groupName"); err != nil {
		return nil, err
	}
	if s.Clusters, err = so.strOr("clusters"); err != nil {
		return nil, err
	}
	if s.CacheMillis, err = so.int64("cacheMillis"); err != nil {
		return nil, err
	}
	if s.LastRefTime, err = so.int64("lastRefTime"); err != nil {
		return nil, err
	}
	if s.ReachProtectionThreshold, err = so.boolean("reachProtectionThreshold", false); err != nil {
		return nil, err
	}
	err = so.objects("hosts", "com.alibaba.nacos.api.naming.pojo.Instance", func(e *object) error {
		if e == nil {
			return nil
		}
		in, err := e.instance()
		if err == nil {
			s.Hosts = append(s.Hosts, in)
		}
		return err
	})
	return s, err
}
