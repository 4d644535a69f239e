package compat

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
)

// Distro key prefixes (naming/consistency/KeyBuilder.java, naming-v1.md §2.1).
const (
	EphemeralKeyPrefix = "com.alibaba.nacos.naming.iplist.ephemeral."
	// InstanceListKeyPrefix is the prefix every instance-list key shares
	// (the Distro resource type of checksum and datum exchanges).
	InstanceListKeyPrefix = "com.alibaba.nacos.naming.iplist."
)

// EphemeralKey is KeyBuilder.buildInstanceListKey(ns, service, true).
func EphemeralKey(namespaceID, groupedService string) string {
	return EphemeralKeyPrefix + namespaceID + "##" + groupedService
}

// ParseEphemeralKey splits an ephemeral instance-list key into its
// namespace (KeyBuilder.getNamespace) and grouped service name
// (KeyBuilder.getServiceName). ok is false for any other key.
func ParseEphemeralKey(key string) (namespaceID, groupedService string, ok bool) {
	rest, found := strings.CutPrefix(key, EphemeralKeyPrefix)
	if !found {
		return "", "", false
	}
	ns, svc, found := strings.Cut(rest, "##")
	if !found {
		return "", "", false
	}
	if i := strings.Index(svc, "##"); i >= 0 { // key.split("##")[1]
		svc = svc[:i]
	}
	return ns, svc, true
}

// DistroInstance is an instance as Distro datums carry it: the JacksonUtils
// (NON_NULL) JSON of naming/core/Instance (naming-v1.md §2.2).
type DistroInstance struct {
	InstanceID  string
	IP          string
	Port        int
	Weight      float64
	Healthy     bool
	Enabled     bool
	Ephemeral   bool
	ClusterName string
	ServiceName string
	// Metadata nil is a null map (a client that re-registered from a beat
	// without metadata).
	Metadata map[string]string
	LastBeat int64
	Marked   bool
	App      string // "" is null
	Tenant   string // "" is null
}

// JavaString is Instance.toString (datumKey_weight_healthy_marked_cluster),
// the sort key of Instance.compareTo.
func (in DistroInstance) JavaString() string {
	dk := in.IP + ":unknown:" + in.ClusterName
	if in.Port > 0 {
		dk = in.IP + ":" + strconv.Itoa(in.Port) + ":unknown:" + in.ClusterName
	}
	return dk + "_" + FormatJavaDouble(in.Weight) + "_" + strconv.FormatBool(in.Healthy) + "_" +
		strconv.FormatBool(in.Marked) + "_" + in.ClusterName
}

// metaMillis is the preserved-metadata number rule (^\d+$ only).
func metaMillis(m map[string]string, key string, def int64) int64 {
	v, ok := m[key]
	if !ok || v == "" {
		return def
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return def
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return def
	}
	return n
}

// AppendDistroInstance writes the instance JSON in Jackson's property
// order, getter-only properties last.
func AppendDistroInstance(w *JSON, in DistroInstance) {
	w.BeginObject().
		Key("instanceId").Str(in.InstanceID).
		Key("ip").Str(in.IP).
		Key("port").Int(int64(in.Port)).
		Key("weight").Double(in.Weight).
		Key("healthy").Bool(in.Healthy).
		Key("enabled").Bool(in.Enabled).
		Key("ephemeral").Bool(in.Ephemeral).
		Key("clusterName").Str(in.ClusterName).
		Key("serviceName").Str(in.ServiceName)
	if in.Metadata != nil {
		w.Key("metadata")
		AppendStringMap(w, in.Metadata)
	}
	w.Key("lastBeat").Int(in.LastBeat).
		Key("marked").Bool(in.Marked)
	if in.Tenant != "" {
		w.Key("tenant").Str(in.Tenant)
	}
	if in.App != "" {
		w.Key("app").Str(in.App)
	}
	w.Key("instanceHeartBeatInterval").Int(metaMillis(in.Metadata, "preserved.heart.beat.interval", 5000)).
		Key("instanceHeartBeatTimeOut").Int(metaMillis(in.Metadata, "preserved.heart.beat.timeout", 15000)).
		Key("ipDeleteTimeout").Int(metaMillis(in.Metadata, "preserved.ip.delete.timeout", 30000))
	switch g, ok := in.Metadata["preserved.instance.id.generator"]; {
	case len(in.Metadata) == 0:
		w.Key("instanceIdGenerator").Str("simple")
	case ok:
		w.Key("instanceIdGenerator").Str(g)
	}
	w.EndObject()
}

// Datum is one Distro datum: an ephemeral instance-list key and its
// instances. Timestamp is not meaningful (Java stores 1 for every local
// write and re-wraps received datums the same way).
type Datum struct {
	Key       string
	Instances []DistroInstance
	Timestamp int64
}

// AppendDatum writes {"key":…,"value":{"instanceList":[…]},"timestamp":n}.
func AppendDatum(w *JSON, d Datum) {
	w.BeginObject().Key("key").Str(d.Key).Key("value").BeginObject().Key("instanceList").BeginArray()
	for _, in := range d.Instances {
		AppendDistroInstance(w, in)
	}
	w.EndArray().EndObject().Key("timestamp").Int(d.Timestamp).EndObject()
}

// Initial capacities of the maps Java's Distro serialises; they decide the
// key order of the JSON (java.util.HashMap / ConcurrentHashMap iteration).
const (
	DatumBatchCapacity    = 128  // DataStore.batchGet: a sync batch, a datum query
	DatumSnapshotCapacity = 2048 // DataStore's ConcurrentHashMap(1024): GET /distro/datums
	ChecksumCapacity      = 64   // DistroDataStorageImpl.getVerifyData
)

// DatumsJSON writes a Distro payload map {key: Datum, …} with its keys in
// the iteration order of the Java map it stands for (initialCapacity, one
// of the capacities above).
func DatumsJSON(datums []Datum, initialCapacity int) []byte {
	byKey := make(map[string]Datum, len(datums))
	keys := make([]string, 0, len(datums))
	for _, d := range datums {
		if _, dup := byKey[d.Key]; !dup {
			keys = append(keys, d.Key)
		}
		byKey[d.Key] = d
	}
	sort.Strings(keys)
	w := NewJSON(256 * (len(datums) + 1))
	w.BeginObject()
	for _, k := range JavaHashOrderStrings(keys, initialCapacity) {
		w.Key(k)
		AppendDatum(w, byKey[k])
	}
	w.EndObject()
	return w.Bytes()
}

type wireInstance struct {
	InstanceID  *string         `json:"instanceId"`
	IP          *string         `json:"ip"`
	Port        json.Number     `json:"port"`
	Weight      json.Number     `json:"weight"`
	Healthy     *bool           `json:"healthy"`
	Enabled     *bool           `json:"enabled"`
	Ephemeral   *bool           `json:"ephemeral"`
	ClusterName *string         `json:"clusterName"`
	ServiceName *string         `json:"serviceName"`
	Metadata    json.RawMessage `json:"metadata"`
	LastBeat    json.Number     `json:"lastBeat"`
	Marked      *bool           `json:"marked"`
	App         *string         `json:"app"`
	Tenant      *string         `json:"tenant"`
}

type wireDatum struct {
	Key   string `json:"key"`
	Value *struct {
		InstanceList []wireInstance `json:"instanceList"`
	} `json:"value"`
	Timestamp json.Number `json:"timestamp"`
}

// ParseDatums reads a Distro payload map {key: Datum} as Java's
// JacksonSerializer.deserializeMap does: unknown properties ignored, Java
// defaults for absent ones (weight 1.0, healthy, enabled and ephemeral
// true, lastBeat 0). A datum without a value has no instances.
func ParseDatums(body []byte) (map[string]Datum, error) {
	var p DatumParser
	return p.Parse(body)
}

// DatumParser parses Distro payloads like ParseDatums, reusing its parse
// buffers from one payload to the next (a sync carries every instance of
// every changed service, many times a second under load). Safe for
// concurrent use; the zero value is ready.
type DatumParser struct{ pool fastjson.ParserPool }

// Parse is ParseDatums.
func (dp *DatumParser) Parse(body []byte) (map[string]Datum, error) {
	p := dp.pool.Get()
	m, err := parseDatumsFast(p, body)
	dp.pool.Put(p)
	if err == nil {
		return m, nil
	}
	return parseDatumsLenient(body)
}

// parseDatumsLenient is the encoding/json path: every Jackson coercion.
func parseDatumsLenient(body []byte) (map[string]Datum, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]*wireDatum
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("distro datums: %w", err)
	}
	out := make(map[string]Datum, len(raw))
	for k, wd := range raw {
		if wd == nil {
			out[k] = Datum{Key: k}
			continue
		}
		d := Datum{Key: wd.Key}
		if wd.Timestamp != "" {
			d.Timestamp, _ = wd.Timestamp.Int64()
		}
		if wd.Value != nil {
			for _, wi := range wd.Value.InstanceList {
				in, err := wi.instance()
				if err != nil {
					return nil, fmt.Errorf("distro datum %s: %w", k, err)
				}
				d.Instances = append(d.Instances, in)
			}
		}
		out[k] = d
	}
	return out, nil
}

// parseDatumsFast reads the payload as Java nodes write it (string metadata
// values, plain numbers) in one pass without reflection — a sync carries
// every instance of every changed service, many times a second under load;
// anything else is left to the lenient decoder.
func parseDatumsFast(p *fastjson.Parser, body []byte) (map[string]Datum, error) {
	v, err := p.ParseBytes(body)
	if err != nil {
		return nil, err
	}
	top, err := v.Object()
	if err != nil {
		return nil, err
	}
	out := make(map[string]Datum, top.Len())
	var ferr error
	top.Visit(func(k []byte, dv *fastjson.Value) {
		if ferr != nil {
			return
		}
		key := string(k)
		if dv.Type() == fastjson.TypeNull {
			out[key] = Datum{Key: key}
			return
		}
		d := Datum{Key: string(dv.GetStringBytes("key")), Timestamp: dv.GetInt64("timestamp")}
		if list := dv.GetArray("value", "instanceList"); list != nil {
			d.Instances = make([]DistroInstance, 0, len(list))
			for _, iv := range list {
				in, err := fastInstance(iv)
				if err != nil {
					ferr = err
					return
				}
				d.Instances = append(d.Instances, in)
			}
		}
		out[key] = d
	})
	return out, ferr
}

var errSlowPath = errors.New("distro datum: needs the lenient decoder")

func fastInstance(v *fastjson.Value) (DistroInstance, error) {
	if v.Type() != fastjson.TypeObject {
		return DistroInstance{}, errSlowPath
	}
	in := DistroInstance{Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}
	str := func(name string, dst *string) error {
		f := v.Get(name)
		switch {
		case f == nil || f.Type() == fastjson.TypeNull:
		case f.Type() == fastjson.TypeString:
			*dst = string(f.GetStringBytes())
		default:
			return errSlowPath
		}
		return nil
	}
	boolean := func(name string, dst *bool) error {
		f := v.Get(name)
		switch {
		case f == nil || f.Type() == fastjson.TypeNull:
		case f.Type() == fastjson.TypeTrue:
			*dst = true
		case f.Type() == fastjson.TypeFalse:
			*dst = false
		default:
			return errSlowPath
		}
		return nil
	}
	for _, e := range []error{str("instanceId", &in.InstanceID), str("ip", &in.IP), str("clusterName", &in.ClusterName),
		str("serviceName", &in.ServiceName), str("app", &in.App), str("tenant", &in.Tenant),
		boolean("healthy", &in.Healthy), boolean("enabled", &in.Enabled), boolean("ephemeral", &in.Ephemeral), boolean("marked", &in.Marked)} {
		if e != nil {
			return in, e
		}
	}
	if f := v.Get("port"); f != nil && f.Type() != fastjson.TypeNull {
		n, err := f.Int()
		if err != nil {
			return in, errSlowPath
		}
		in.Port = n
	}
	if f := v.Get("weight"); f != nil && f.Type() != fastjson.TypeNull {
		w, err := f.Float64()
		if err != nil {
			return in, errSlowPath
		}
		in.Weight = w
	}
	if f := v.Get("lastBeat"); f != nil && f.Type() != fastjson.TypeNull {
		n, err := f.Int64()
		if err != nil {
			return in, errSlowPath
		}
		in.LastBeat = n
	}
	if f := v.Get("metadata"); f != nil && f.Type() != fastjson.TypeNull {
		o, err := f.Object()
		if err != nil {
			return in, errSlowPath
		}
		in.Metadata = make(map[string]string, o.Len())
		var merr error
		o.Visit(func(k []byte, mv *fastjson.Value) {
			switch mv.Type() {
			case fastjson.TypeString:
				in.Metadata[string(k)] = string(mv.GetStringBytes())
			case fastjson.TypeNull:
			default:
				merr = errSlowPath
			}
		})
		if merr != nil {
			return in, merr
		}
	}
	return in, nil
}

func (wi wireInstance) instance() (DistroInstance, error) {
	in := DistroInstance{Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	in.InstanceID, in.IP, in.ClusterName, in.ServiceName = str(wi.InstanceID), str(wi.IP), str(wi.ClusterName), str(wi.ServiceName)
	in.App, in.Tenant = str(wi.App), str(wi.Tenant)
	if wi.Port != "" {
		n, err := strconv.ParseInt(string(wi.Port), 10, 32)
		if err != nil {
			return in, fmt.Errorf("port %s: %w", wi.Port, err)
		}
		in.Port = int(n)
	}
	if wi.Weight != "" {
		f, err := strconv.ParseFloat(string(wi.Weight), 64)
		if err != nil {
			return in, fmt.Errorf("weight %s: %w", wi.Weight, err)
		}
		in.Weight = f
	}
	if wi.LastBeat != "" {
		n, err := strconv.ParseInt(string(wi.LastBeat), 10, 64)
		if err != nil {
			return in, fmt.Errorf("lastBeat %s: %w", wi.LastBeat, err)
		}
		in.LastBeat = n
	}
	for _, b := range []struct {
		p   *bool
		dst *bool
	}{{wi.Healthy, &in.Healthy}, {wi.Enabled, &in.Enabled}, {wi.Ephemeral, &in.Ephemeral}, {wi.Marked, &in.Marked}} {
		if b.p != nil {
			*b.dst = *b.p
		}
	}
	if len(wi.Metadata) > 0 && string(wi.Metadata) != "null" {
		var m map[string]any
		if err := json.Unmarshal(wi.Metadata, &m); err != nil {
			return in, fmt.Errorf("metadata: %w", err)
		}
		in.Metadata = make(map[string]string, len(m))
		for k, v := range m {
			switch x := v.(type) {
			case string:
				in.Metadata[k] = x
			case nil:
			case float64:
				in.Metadata[k] = strconv.FormatFloat(x, 'f', -1, 64)
			case bool:
				in.Metadata[k] = strconv.FormatBool(x)
			default:
				b, _ := json.Marshal(x)
				in.Metadata[k] = string(b)
			}
		}
	}
	return in, nil
}

// InstancesChecksum is Instances.recalculateChecksum (naming-v1.md §2.6):
// the instances sorted by Instance.compareTo, then for each
// ip:port_weight_healthy_enabled_cluster_<sorted key:value, metadata> and a
// comma, MD5 in lower-case hex.
func InstancesChecksum(list []DistroInstance) string {
	type entry struct {
		key string
		in  *DistroInstance
	}
	sorted := make([]entry, len(list))
	for i := range list {
		sorted[i] = entry{list[i].JavaString(), &list[i]}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].key < sorted[j].key })
	b := make([]byte, 0, 96*len(list))
	var keys []string
	for _, e := range sorted {
		in := e.in
		b = append(b, in.IP...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(in.Port), 10)
		b = append(b, '_')
		b = AppendJavaDouble(b, in.Weight)
		b = append(b, '_')
		b = strconv.AppendBool(b, in.Healthy)
		b = append(b, '_')
		b = strconv.AppendBool(b, in.Enabled)
		b = append(b, '_')
		b = append(b, in.ClusterName...)
		b = append(b, '_')
		if len(in.Metadata) > 0 {
			keys = keys[:0]
			for k := range in.Metadata {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				b = append(b, k...)
				b = append(b, ':')
				b = append(b, in.Metadata[k]...)
				b = append(b, ',')
			}
		}
		b = append(b, ',')
	}
	sum := md5.Sum(b)
	return hex.EncodeToString(sum[:])
}

// ChecksumsJSON writes a verify payload {key: checksum, …} in the order of
// Java's HashMap(64).
func ChecksumsJSON(sums map[string]string) []byte {
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w := NewJSON(96 * (len(keys) + 1))
	w.BeginObject()
	for _, k := range JavaHashOrderStrings(keys, ChecksumCapacity) {
		w.Key(k).Str(sums[k])
	}
	w.EndObject()
	return w.Bytes()
}
