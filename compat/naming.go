package compat

import "strconv"

// Naming wire shapes (naming-v1.md §3). Domain code fills these plain
// values; the Append functions write the exact bytes Java Nacos 1.4.8 does.

// Host is one entry of instance/list "hosts" (§3.2): the twelve keys, in order.
type Host struct {
	IP          string
	Port        int
	Valid       bool // the healthy bucket; also written as "healthy"
	Marked      bool
	InstanceID  string
	Metadata    map[string]string // nil → null
	Enabled     bool
	Weight      float64
	ClusterName string
	ServiceName string
	Ephemeral   bool
}

// ServiceInfo is the instance/list body (and the UDP push payload) of an
// existing service (§3.2). Hosts == nil is Java's early return for a service
// without instances in the requested clusters, which writes "hosts" after
// "env"; a non-nil empty slice (every instance disabled or filtered) keeps
// "hosts" first.
type ServiceInfo struct {
	Hosts       []Host
	Dom, Name   string
	CacheMillis int64
	LastRefTime int64
	Checksum    string
	Clusters    string
	Env         string
	Metadata    map[string]string
}

// AppendHost writes one host object.
func AppendHost(w *JSON, h Host) {
	w.BeginObject().Key("ip").Str(h.IP).Key("port").Int(int64(h.Port)).Key("valid").Bool(h.Valid).
		Key("healthy").Bool(h.Valid).Key("marked").Bool(h.Marked).Key("instanceId").Str(h.InstanceID).Key("metadata")
	AppendStringMap(w, h.Metadata)
	w.Key("enabled").Bool(h.Enabled).Key("weight").Double(h.Weight).Key("clusterName").Str(h.ClusterName).
		Key("serviceName").Str(h.ServiceName).Key("ephemeral").Bool(h.Ephemeral).EndObject()
}

// AppendServiceInfo writes the instance/list body of an existing service.
func AppendServiceInfo(w *JSON, si ServiceInfo) {
	w.BeginObject()
	if si.Hosts != nil {
		w.Key("hosts").BeginArray()
		for _, h := range si.Hosts {
			AppendHost(w, h)
		}
		w.EndArray()
	}
	w.Key("dom").Str(si.Dom).Key("name").Str(si.Name).Key("cacheMillis").Int(si.CacheMillis).
		Key("lastRefTime").Int(si.LastRefTime).Key("checksum").Str(si.Checksum).Key("useSpecifiedURL").Bool(false).
		Key("clusters").Str(si.Clusters).Key("env").Str(si.Env)
	if si.Hosts == nil {
		w.Key("hosts").BeginArray().EndArray()
	}
	w.Key("metadata")
	AppendStringMap(w, si.Metadata)
	w.EndObject()
}

// AppendAbsentServiceInfo writes instance/list for a service that does not
// exist: {"name","clusters","cacheMillis","hosts":[]}.
func AppendAbsentServiceInfo(w *JSON, name, clusters string, cacheMillis int64) {
	w.BeginObject().Key("name").Str(name).Key("clusters").Str(clusters).
		Key("cacheMillis").Int(cacheMillis).Key("hosts").BeginArray().EndArray().EndObject()
}

// AppendStringMap writes a java.util.HashMap<String,String> in its iteration
// order; nil is null.
func AppendStringMap(w *JSON, m map[string]string) {
	if m == nil {
		w.Null()
		return
	}
	w.StrMap(JavaHashMapKeys(m), m, false)
}

// Beat response codes (NamingResponseCode).
const (
	BeatOK       = 10200
	BeatNotFound = 20404
)

// BeatResult is the PUT /instance/beat body (§3.3).
type BeatResult struct {
	ClientBeatInterval int64
	Code               int
	LightBeatEnabled   bool
}

// JSON renders {"clientBeatInterval":5000,"code":10200,"lightBeatEnabled":true},
// or without lightBeatEnabled for code 20404.
func (b BeatResult) JSON() []byte { return b.AppendJSON(make([]byte, 0, 80)) }

// AppendJSON appends the JSON body to dst (a beat answers with it: no
// writer, no allocation beyond dst's growth).
func (b BeatResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"clientBeatInterval":`...)
	dst = strconv.AppendInt(dst, b.ClientBeatInterval, 10)
	dst = append(dst, `,"code":`...)
	dst = strconv.AppendInt(dst, int64(b.Code), 10)
	if b.Code == BeatOK {
		dst = append(dst, `,"lightBeatEnabled":`...)
		dst = strconv.AppendBool(dst, b.LightBeatEnabled)
	}
	return append(dst, '}')
}

// InstanceDetail is the GET /instance body (§3.1.7).
type InstanceDetail struct {
	Service, IP string
	Port        int
	ClusterName string
	Weight      float64
	Healthy     bool
	InstanceID  string
	Metadata    map[string]string
}

// JSON renders the detail object.
func (d InstanceDetail) JSON() []byte {
	w := NewJSON(256)
	w.BeginObject().Key("service").Str(d.Service).Key("ip").Str(d.IP).Key("port").Int(int64(d.Port)).
		Key("clusterName").Str(d.ClusterName).Key("weight").Double(d.Weight).Key("healthy").Bool(d.Healthy).
		Key("instanceId").Str(d.InstanceID).Key("metadata")
	AppendStringMap(w, d.Metadata)
	return w.EndObject().Bytes()
}

// ServiceList is the GET /service/list body: {"doms":[...],"count":N}.
func ServiceList(doms []string, count int) []byte {
	w := NewJSON(32 + 24*len(doms))
	return w.BeginObject().Key("doms").StrList(doms).Key("count").Int(int64(count)).EndObject().Bytes()
}

// Naming error bodies with the status Java gives (naming-v1.md §3, §1.6).
func ErrNoService(svc string) *Error { return ServerError("no service " + svc + " found!") }

// ErrNoIPsInCluster is GET /instance for an empty cluster.
func ErrNoIPsInCluster(cluster, svc string) *Error {
	return ServerError("no ips found for cluster " + cluster + " in service " + svc)
}

// ErrNoMatchedIP is GET /instance for an unknown ip:port.
func ErrNoMatchedIP() *Error { return ServerError("no matched ip found!") }

// ErrServiceNotFoundBeat is a beat whose service vanished.
func ErrServiceNotFoundBeat(svc, ns string) *Error {
	return ServerError("service not found: " + svc + "@" + ns)
}

// ErrServiceIsNotFound is GET /service and /catalog/service for a missing service.
func ErrServiceIsNotFound(svc string) *Error { return ServerError("service " + svc + " is not found!") }

// ErrServiceDisabled is instance/list of a disabled service.
func ErrServiceDisabled() *Error { return ServerError("service is disabled now.") }

// ErrWeightRange is Instance.validate's weight check.
func ErrWeightRange() *Error {
	return ServerError("instance format invalid: The weights range from 0.0 to 10000.0")
}

// ErrClusterName is Cluster's name check.
func ErrClusterName(name string) *Error {
	return IllegalArgument("cluster name can only have these characters: 0-9a-zA-Z-, current: " + name)
}

// ErrServiceName is Service.validate's name check.
func ErrServiceName(name string) *Error {
	return IllegalArgument("dom name can only have these characters: 0-9a-zA-Z-._:, current: " + name)
}

// ErrServiceNameFormat and ErrEmptyGroup are NamingUtils.checkServiceNameFormat.
func ErrServiceNameFormat() *Error {
	return IllegalArgument("Param 'serviceName' is illegal, it should be format as 'groupName@@serviceName'")
}

// ErrEmptyGroup is the second checkServiceNameFormat failure.
func ErrEmptyGroup() *Error {
	return IllegalArgument("Param 'serviceName' is illegal, groupName can't be empty")
}

// ErrMetadataFormat is UtilsAndCommons.parseMetadata's failure.
func ErrMetadataFormat(raw string) *Error { return ServerError("metadata format incorrect:" + raw) }
