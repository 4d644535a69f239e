package naming

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// Preserved metadata keys (API/naming/PreservedMetadataKeys.java).
const (
	MetaHeartBeatInterval = "preserved.heart.beat.interval"
	MetaHeartBeatTimeout  = "preserved.heart.beat.timeout"
	MetaIPDeleteTimeout   = "preserved.ip.delete.timeout"
	MetaInstanceIDGen     = "preserved.instance.id.generator"

	DefaultHeartBeatInterval = 5000
	DefaultHeartBeatTimeout  = 15000
	DefaultIPDeleteTimeout   = 30000
)

var digitsRE = regexp.MustCompile(`^\d+$`)

// Instance is one registered instance. Values are treated as immutable once
// stored in a service; writers replace the pointer (beats and health flips
// mutate only LastBeat/Healthy under the service lock).
type Instance struct {
	InstanceID  string            `json:"instanceId"`
	IP          string            `json:"ip"`
	Port        int               `json:"port"`
	Weight      float64           `json:"weight"`
	Healthy     bool              `json:"healthy"`
	Enabled     bool              `json:"enabled"`
	Ephemeral   bool              `json:"ephemeral"`
	ClusterName string            `json:"clusterName"`
	ServiceName string            `json:"serviceName"`
	Metadata    map[string]string `json:"metadata"`
	LastBeat    int64             `json:"lastBeat"`
	Marked      bool              `json:"marked"`
	App         string            `json:"app,omitempty"`

	// seq orders instances registered earlier first among Java hash ties
	// (kept across re-registration, not stored).
	seq uint64
	// rev is the store revision of a persistent instance's record; legacy
	// marks one read from an old per-service list record (persist.go).
	rev    uint64
	legacy bool
	// health-check state of persistent instances (not stored)
	checkOK, checkFail int
	mockValid          bool
	// holder tags an ephemeral instance a 2.x client's connection holds
	// (held.go): not stored, not rendered, not replicated
	holder string
}

// DatumKey is Instance.getDatumKey: ip:port:unknown:cluster.
func (in *Instance) DatumKey() string {
	if in.Port > 0 {
		return in.IP + ":" + strconv.Itoa(in.Port) + ":unknown:" + in.ClusterName
	}
	return in.IP + ":unknown:" + in.ClusterName
}

// appendDatumKey appends the DatumKey of ip, port and cluster to dst. With
// a stack buffer, a lookup m[string(appendDatumKey(buf[:0], ...))] costs
// no allocation.
func appendDatumKey(dst []byte, ip string, port int, cluster string) []byte {
	dst = append(dst, ip...)
	dst = append(dst, ':')
	if port > 0 {
		dst = strconv.AppendInt(dst, int64(port), 10)
		dst = append(dst, ':')
	}
	dst = append(dst, "unknown:"...)
	return append(dst, cluster...)
}

// Addr is ip:port.
func (in *Instance) Addr() string { return in.IP + ":" + strconv.Itoa(in.Port) }

// JavaString is Instance.toString: datumKey_weight_healthy_marked_cluster.
func (in *Instance) JavaString() string {
	return in.DatumKey() + "_" + compat.FormatJavaDouble(in.Weight) + "_" + strconv.FormatBool(in.Healthy) +
		"_" + strconv.FormatBool(in.Marked) + "_" + in.ClusterName
}

// sameJavaString reports in.JavaString() == o.JavaString() without
// building either (a re-register compares them).
func (in *Instance) sameJavaString(o *Instance) bool {
	if in.IP != o.IP || in.Port != o.Port || in.ClusterName != o.ClusterName || in.Healthy != o.Healthy || in.Marked != o.Marked {
		// the datum key, health and mark are delimited parts of the text;
		// different parts can still spell the same text, so compare it
		return in.JavaString() == o.JavaString()
	}
	return in.Weight == o.Weight || compat.FormatJavaDouble(in.Weight) == compat.FormatJavaDouble(o.Weight)
}

func (in *Instance) metaMillis(key string, def int64) int64 {
	if v, ok := in.Metadata[key]; ok && digitsRE.MatchString(v) {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

// HeartBeatInterval is getInstanceHeartBeatInterval (ms).
func (in *Instance) HeartBeatInterval() int64 {
	return in.metaMillis(MetaHeartBeatInterval, DefaultHeartBeatInterval)
}

// HeartBeatTimeout is getInstanceHeartBeatTimeOut (ms).
func (in *Instance) HeartBeatTimeout() int64 {
	return in.metaMillis(MetaHeartBeatTimeout, DefaultHeartBeatTimeout)
}

// IPDeleteTimeout is getIpDeleteTimeout (ms).
func (in *Instance) IPDeleteTimeout() int64 {
	return in.metaMillis(MetaIPDeleteTimeout, DefaultIPDeleteTimeout)
}

// IDGenerator is getInstanceIdGenerator, including its quirk: "simple" only
// when metadata is empty, "" (null) when metadata lacks the key.
func (in *Instance) IDGenerator() (string, bool) {
	if len(in.Metadata) == 0 {
		return "simple", true
	}
	v, ok := in.Metadata[MetaInstanceIDGen]
	return v, ok
}

// clone returns a deep copy that is a new, unstored instance (no record
// revision): writePersistent writes exactly the instances without one.
func (in *Instance) clone() *Instance {
	c := *in
	c.rev, c.legacy = 0, false
	if in.Metadata != nil {
		c.Metadata = make(map[string]string, len(in.Metadata))
		for k, v := range in.Metadata {
			c.Metadata[k] = v
		}
	}
	return &c
}

// AppendJSON writes the JacksonUtils (NON_NULL) form of the instance used by
// /catalog/instances and distro payloads (naming-v1.md §2.2).
func (in *Instance) AppendJSON(w *compat.JSON) {
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
		appendStrMap(w, in.Metadata)
	}
	w.Key("lastBeat").Int(in.LastBeat).
		Key("marked").Bool(in.Marked)
	if in.App != "" {
		w.Key("app").Str(in.App)
	}
	// getter-only properties, in the order the 1.4.8 reference writes
	// them (the JVM's declared-method order)
	w.Key("instanceHeartBeatInterval").Int(in.HeartBeatInterval())
	if g, ok := in.IDGenerator(); ok {
		w.Key("instanceIdGenerator").Str(g)
	}
	w.Key("instanceHeartBeatTimeOut").Int(in.HeartBeatTimeout()).
		Key("ipDeleteTimeout").Int(in.IPDeleteTimeout()).
		EndObject()
}

// appendStrMap writes a HashMap<String,String> in Java iteration order.
func appendStrMap(w *compat.JSON, m map[string]string) { compat.AppendStringMap(w, m) }

// HealthChecker is a cluster's health-check configuration (§2.5).
type HealthChecker struct {
	Type                 string `json:"type"` // TCP, HTTP, MYSQL, NONE
	Path                 string `json:"path,omitempty"`
	Headers              string `json:"headers,omitempty"`
	ExpectedResponseCode int    `json:"expectedResponseCode,omitempty"`
	User                 string `json:"user,omitempty"`
	Pwd                  string `json:"pwd,omitempty"`
	Cmd                  string `json:"cmd,omitempty"`
}

// AppendJSON writes the polymorphic Jackson form.
func (h HealthChecker) AppendJSON(w *compat.JSON) {
	w.BeginObject().Key("type").Str(h.Type)
	switch h.Type {
	case "HTTP":
		w.Key("path").Str(h.Path).Key("headers").Str(h.Headers).Key("expectedResponseCode").Int(int64(h.ExpectedResponseCode))
	case "MYSQL":
		w.Key("user").Str(h.User).Key("pwd").Str(h.Pwd).Key("cmd").Str(h.Cmd)
	}
	w.EndObject()
}

// Selector is a service's instance selector (§2.5).
type Selector struct {
	Type       string   `json:"type"` // none | label
	Expression string   `json:"expression,omitempty"`
	Labels     []string `json:"labels,omitempty"`
}

// AppendJSON writes {"type":"none"} or the label form.
func (s Selector) AppendJSON(w *compat.JSON) {
	if s.Type != "label" {
		w.BeginObject().Key("type").Str("none").EndObject()
		return
	}
	labels := append([]string(nil), s.Labels...) // a HashSet in Java
	sort.Strings(labels)
	w.BeginObject().Key("type").Str("label").Key("expression").Str(s.Expression).
		Key("labels").StrList(compat.JavaHashOrderStrings(labels, 16)).EndObject()
}

// ParseLabelExpression validates a label selector expression
// "CONSUMER.label.a = PROVIDER.label.a & ..." and returns its label names.
func ParseLabelExpression(expr string) ([]string, error) {
	if strings.TrimSpace(expr) == "" {
		return []string{}, nil
	}
	var labels []string
	for _, term := range strings.Split(expr, "&") {
		sides := strings.Split(term, "=")
		if len(sides) != 2 {
			return nil, compat.ServerError("parse expression failed!")
		}
		l, r := strings.TrimSpace(sides[0]), strings.TrimSpace(sides[1])
		const cp, pp = "CONSUMER.label.", "PROVIDER.label."
		if !strings.HasPrefix(l, cp) || !strings.HasPrefix(r, pp) {
			return nil, compat.ServerError("parse expression failed!")
		}
		if l[len(cp):] != r[len(pp):] || l[len(cp):] == "" {
			return nil, compat.ServerError("parse expression failed!")
		}
		labels = append(labels, l[len(cp):])
	}
	return labels, nil
}

// ClusterMeta is a cluster's configuration (§2.5).
type ClusterMeta struct {
	Name            string            `json:"name"`
	HealthChecker   HealthChecker     `json:"healthChecker"`
	DefCkport       int               `json:"defCkport"`
	DefIPPort       int               `json:"defIPPort"`
	UseIPPort4Check bool              `json:"useIPPort4Check"`
	Metadata        map[string]string `json:"metadata"`
	// Seq orders the clusters of a service whose cluster map Java holds
	// as a LinkedHashMap (Service.linked): when it was added, or its
	// position in the order the map had when last written.
	Seq int64 `json:"seq,omitempty"`
}

// NewClusterMeta returns a cluster with Java's defaults (TCP checker, port 80).
func NewClusterMeta(name string) ClusterMeta {
	return ClusterMeta{Name: name, HealthChecker: HealthChecker{Type: "TCP"}, DefCkport: 80, DefIPPort: -1,
		UseIPPort4Check: true, Metadata: map[string]string{}}
}

// freezeIPPortsOnly sets the unset defIPPort of every cluster to its check
// port, as writing the service to Java's CP store does: Jackson writes
// getDefIPPort() (defCkport while unset) and the applied copy sets it, so
// later check-port changes no longer move it.

// prepareWrite readies m for the CP store: it freezes defIPPort (see
// freezeIPPortsOnly) and, for a service whose clusters are in Java's HashMap
// order (linked false), numbers them in that order: Java writes the map
// in its iteration order and whoever reads the record back (a restart)
// gets a LinkedHashMap in that order.
func (m *ServiceMeta) prepareWrite(linked bool) {
	if !linked {
		for i, c := range hashOrderClusters(m.Clusters) {
			c.Seq = int64(i + 1)
			m.Clusters[c.Name] = c
		}
	}
	m.freezeIPPortsOnly()
}

// addCluster adds c as the last cluster (Seq after every other).
func (m *ServiceMeta) addCluster(c ClusterMeta) {
	var last int64
	for _, o := range m.Clusters {
		last = max(last, o.Seq)
	}
	c.Seq = last + 1
	m.Clusters[c.Name] = c
}

func (m *ServiceMeta) freezeIPPortsOnly() {
	for name, c := range m.Clusters {
		if c.DefIPPort == -1 {
			c.DefIPPort = c.DefCkport
			m.Clusters[name] = c
		}
	}
}

// EffectiveIPPort is getDefIPPort.
func (c ClusterMeta) EffectiveIPPort() int {
	if c.DefIPPort == -1 {
		return c.DefCkport
	}
	return c.DefIPPort
}

// ServiceMeta is the persisted part of a service (CP data).
type ServiceMeta struct {
	NamespaceID      string                 `json:"namespaceId"`
	Name             string                 `json:"name"` // grouped
	ProtectThreshold float32                `json:"protectThreshold"`
	AppName          string                 `json:"appName,omitempty"`
	Metadata         map[string]string      `json:"metadata"`
	Selector         Selector               `json:"selector"`
	Enabled          bool                   `json:"enabled"`
	Clusters         map[string]ClusterMeta `json:"clusters"`
	// Linked: the service was created from this record (POST /service),
	// so Java holds its clusters in a LinkedHashMap (Service.linked).
	Linked bool `json:"linked,omitempty"`
}

func newServiceMeta(ns, grouped string) ServiceMeta {
	return ServiceMeta{NamespaceID: ns, Name: grouped, Metadata: map[string]string{}, Selector: Selector{Type: "none"},
		Enabled: true, Clusters: map[string]ClusterMeta{}}
}

func (m ServiceMeta) clone() ServiceMeta {
	c := m
	c.Metadata = cloneMap(m.Metadata)
	c.Clusters = make(map[string]ClusterMeta, len(m.Clusters))
	for k, v := range m.Clusters {
		v.Metadata = cloneMap(v.Metadata)
		c.Clusters[k] = v
	}
	c.Selector.Labels = append([]string(nil), m.Selector.Labels...)
	return c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
