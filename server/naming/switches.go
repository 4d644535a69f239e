package naming

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// SwitchDomainName is the fixed "name" property of the switch domain
// (UtilsAndCommons.SWITCH_DOMAIN_NAME).
const SwitchDomainName = "00-00---000-NACOS_SWITCH_DOMAIN-000---00-00"

// HealthParams is one of SwitchDomain's Http/Tcp/MysqlHealthParams: response
// time bounds in milliseconds and the re-evaluation factor.
type HealthParams struct {
	Max, Min int
	Factor   float32
}

// Default health parameters per checker type (SwitchDomain.*HealthParams).
var (
	defaultHTTPHealth  = HealthParams{Max: 5000, Min: 500, Factor: 0.85}
	defaultTCPHealth   = HealthParams{Max: 5000, Min: 1000, Factor: 0.75}
	defaultMySQLHealth = HealthParams{Max: 3000, Min: 2000, Factor: 0.65}
)

// IntMap is a Java Map<String,Integer> that remembers its iteration order,
// which Jackson writes: HashMap order for maps built by Apply, insertion
// (LinkedHashMap) order for maps read from a batch JSON. A nil Values is Java
// null.
type IntMap struct {
	Keys   []string // iteration order; every key is in Values
	Values map[string]int
}

// Get returns the value for key.
func (m IntMap) Get(key string) (int, bool) {
	v, ok := m.Values[key]
	return v, ok
}

func (m IntMap) clone() IntMap {
	if m.Values == nil {
		return IntMap{}
	}
	c := IntMap{Keys: append([]string{}, m.Keys...), Values: make(map[string]int, len(m.Values))}
	for k, v := range m.Values {
		c.Values[k] = v
	}
	return c
}

func emptyIntMap() IntMap { return IntMap{Keys: []string{}, Values: map[string]int{}} }

// Fields of Switches that Java can hold as null although the Go type has no
// nil (a batch update may set them to null).
const (
	nullPushGo uint8 = 1 << iota
	nullPushJava
	nullPushPython
	nullPushC
	nullPushCSharp
	nullMySQLHealth
)

// Switches is Nacos' SwitchDomain (naming-v1.md §9.1): the naming switches
// shown by GET /v1/ns/operator/switches and changed by PUT (§9.2). Fields
// follow the Java declaration order and types (long → int64, float →
// float32). Nil slices and a nil IntMap.Values are Java null. Values are
// copied with Clone; the zero value is not the default, use DefaultSwitches.
type Switches struct {
	Masters                                  []string
	AdWeightMap                              IntMap
	DefaultPushCacheMillis                   int64
	ClientBeatInterval                       int64
	DefaultCacheMillis                       int64
	DistroThreshold                          float32
	HealthCheckEnabled                       bool
	AutoChangeHealthCheckEnabled             bool
	DistroEnabled                            bool
	EnableStandalone                         bool
	PushEnabled                              bool
	CheckTimes                               int
	HTTPHealthParams                         HealthParams
	TCPHealthParams                          HealthParams
	MySQLHealthParams                        HealthParams
	IncrementalList                          []string
	ServerStatusSynchronizationPeriodMillis  int64
	ServiceStatusSynchronizationPeriodMillis int64
	DisableAddIP                             bool
	SendBeatOnly                             bool
	LightBeatEnabled                         bool
	LimitedURLMap                            IntMap
	DistroServerExpiredMillis                int64
	PushGoVersion                            string
	PushJavaVersion                          string
	PushPythonVersion                        string
	PushCVersion                             string
	PushCSharpVersion                        string
	EnableAuthentication                     bool
	// OverriddenServerStatus is nil (Java null) by default; "" after
	// entry=overriddenServerStatus&value=null.
	OverriddenServerStatus   *string
	DefaultInstanceEphemeral bool
	// HealthCheckWhiteList is a Java HashSet<String>, kept in its iteration
	// order.
	HealthCheckWhiteList []string

	nulls uint8 // Java nulls of the string / health-param fields above
}

// DefaultSwitches returns the SwitchDomain defaults of Nacos 1.4.8.
func DefaultSwitches() Switches {
	return Switches{
		AdWeightMap:                              emptyIntMap(),
		DefaultPushCacheMillis:                   10000,
		ClientBeatInterval:                       5000,
		DefaultCacheMillis:                       3000,
		DistroThreshold:                          0.7,
		HealthCheckEnabled:                       true,
		AutoChangeHealthCheckEnabled:             true,
		DistroEnabled:                            true,
		EnableStandalone:                         true,
		PushEnabled:                              true,
		CheckTimes:                               3,
		HTTPHealthParams:                         defaultHTTPHealth,
		TCPHealthParams:                          defaultTCPHealth,
		MySQLHealthParams:                        defaultMySQLHealth,
		IncrementalList:                          []string{},
		ServerStatusSynchronizationPeriodMillis:  2000,
		ServiceStatusSynchronizationPeriodMillis: 5000,
		LightBeatEnabled:                         true,
		LimitedURLMap:                            emptyIntMap(),
		DistroServerExpiredMillis:                10000,
		PushGoVersion:                            "0.1.0",
		PushJavaVersion:                          "0.1.0",
		PushPythonVersion:                        "0.4.3",
		PushCVersion:                             "1.0.12",
		PushCSharpVersion:                        "0.9.0",
		DefaultInstanceEphemeral:                 true,
		HealthCheckWhiteList:                     []string{},
	}
}

func cloneStrings(l []string) []string {
	if l == nil {
		return nil
	}
	return append([]string{}, l...)
}

// Clone returns a deep copy.
func (s Switches) Clone() Switches {
	c := s
	c.Masters = cloneStrings(s.Masters)
	c.AdWeightMap = s.AdWeightMap.clone()
	c.IncrementalList = cloneStrings(s.IncrementalList)
	c.LimitedURLMap = s.LimitedURLMap.clone()
	c.HealthCheckWhiteList = cloneStrings(s.HealthCheckWhiteList)
	if s.OverriddenServerStatus != nil {
		v := *s.OverriddenServerStatus
		c.OverriddenServerStatus = &v
	}
	return c
}

// UpdateFrom is SwitchManager.update(SwitchDomain): how Java copies a stored
// (CP) switch domain into the live one that GET /operator/switches shows and
// the naming logic reads. It copies every field except PushCSharpVersion and
// HealthCheckWhiteList, which Java forgets, so those two never change on the
// live domain.
func (s *Switches) UpdateFrom(n Switches) {
	csharp, white := s.PushCSharpVersion, s.HealthCheckWhiteList
	csharpNull := s.nulls & nullPushCSharp
	*s = n.Clone()
	s.PushCSharpVersion, s.HealthCheckWhiteList = csharp, white
	s.nulls = s.nulls&^nullPushCSharp | csharpNull
}

// HealthCheckEnabledFor is SwitchDomain.isHealthCheckEnabled(serviceName).
func (s *Switches) HealthCheckEnabledFor(serviceName string) bool {
	if s.HealthCheckEnabled {
		return true
	}
	for _, w := range s.HealthCheckWhiteList {
		if w == serviceName {
			return true
		}
	}
	return false
}

// PushVersionFor returns the minimum pushable version for a client type:
// "java", "go", "python" or "dns" (Nacos-DNS clients use pushPythonVersion),
// "c", "csharp"; "" for anything else.
func (s Switches) PushVersionFor(clientType string) string {
	switch clientType {
	case "java":
		return s.PushJavaVersion
	case "go":
		return s.PushGoVersion
	case "python", "dns":
		return s.PushPythonVersion
	case "c":
		return s.PushCVersion
	case "csharp":
		return s.PushCSharpVersion
	}
	return ""
}

// appendJavaFloat writes a Java float as Jackson does by default:
// QUOTE_NON_NUMERIC_NUMBERS is on, so NaN and ±Infinity are JSON strings.
func appendJavaFloat(w *compat.JSON, f float32) {
	if x := float64(f); math.IsNaN(x) || math.IsInf(x, 0) {
		w.Str(compat.FormatJavaFloat(f))
		return
	}
	w.Float(f)
}

func appendHealth(w *compat.JSON, h HealthParams) {
	w.BeginObject().
		Key("max").Int(int64(h.Max)).
		Key("min").Int(int64(h.Min)).
		Key("factor")
	appendJavaFloat(w, h.Factor)
	w.EndObject()
}

func appendIntMap(w *compat.JSON, m IntMap) {
	if m.Values == nil {
		w.Null()
		return
	}
	w.BeginObject()
	for _, k := range m.Keys {
		w.Key(k).Int(int64(m.Values[k]))
	}
	w.EndObject()
}

func appendNullableList(w *compat.JSON, l []string) {
	if l == nil {
		w.Null()
		return
	}
	w.StrList(l)
}

func (s *Switches) appendNullableStr(w *compat.JSON, v string, bit uint8) {
	if s.nulls&bit != 0 {
		w.Null()
		return
	}
	w.Str(v)
}

// JSON is the body of GET /v1/ns/operator/switches: Spring's mapper writes
// nulls, fields in declaration order, then the getter-only name and checksum
// (naming-v1.md §9.1).
func (s *Switches) JSON() []byte {
	w := compat.NewJSON(1400)
	w.BeginObject()
	w.Key("masters")
	appendNullableList(w, s.Masters)
	w.Key("adWeightMap")
	appendIntMap(w, s.AdWeightMap)
	w.Key("defaultPushCacheMillis").Int(s.DefaultPushCacheMillis)
	w.Key("clientBeatInterval").Int(s.ClientBeatInterval)
	w.Key("defaultCacheMillis").Int(s.DefaultCacheMillis)
	w.Key("distroThreshold")
	appendJavaFloat(w, s.DistroThreshold)
	w.Key("healthCheckEnabled").Bool(s.HealthCheckEnabled)
	w.Key("autoChangeHealthCheckEnabled").Bool(s.AutoChangeHealthCheckEnabled)
	w.Key("distroEnabled").Bool(s.DistroEnabled)
	w.Key("enableStandalone").Bool(s.EnableStandalone)
	w.Key("pushEnabled").Bool(s.PushEnabled)
	w.Key("checkTimes").Int(int64(s.CheckTimes))
	w.Key("httpHealthParams")
	appendHealth(w, s.HTTPHealthParams)
	w.Key("tcpHealthParams")
	appendHealth(w, s.TCPHealthParams)
	w.Key("mysqlHealthParams")
	if s.nulls&nullMySQLHealth != 0 {
		w.Null()
	} else {
		appendHealth(w, s.MySQLHealthParams)
	}
	w.Key("incrementalList")
	appendNullableList(w, s.IncrementalList)
	w.Key("serverStatusSynchronizationPeriodMillis").Int(s.ServerStatusSynchronizationPeriodMillis)
	w.Key("serviceStatusSynchronizationPeriodMillis").Int(s.ServiceStatusSynchronizationPeriodMillis)
	w.Key("disableAddIP").Bool(s.DisableAddIP)
	w.Key("sendBeatOnly").Bool(s.SendBeatOnly)
	w.Key("lightBeatEnabled").Bool(s.LightBeatEnabled)
	w.Key("limitedUrlMap")
	appendIntMap(w, s.LimitedURLMap)
	w.Key("distroServerExpiredMillis").Int(s.DistroServerExpiredMillis)
	w.Key("pushGoVersion")
	s.appendNullableStr(w, s.PushGoVersion, nullPushGo)
	w.Key("pushJavaVersion")
	s.appendNullableStr(w, s.PushJavaVersion, nullPushJava)
	w.Key("pushPythonVersion")
	s.appendNullableStr(w, s.PushPythonVersion, nullPushPython)
	w.Key("pushCVersion")
	s.appendNullableStr(w, s.PushCVersion, nullPushC)
	w.Key("pushCSharpVersion")
	s.appendNullableStr(w, s.PushCSharpVersion, nullPushCSharp)
	w.Key("enableAuthentication").Bool(s.EnableAuthentication)
	w.Key("overriddenServerStatus")
	if s.OverriddenServerStatus == nil {
		w.Null()
	} else {
		w.Str(*s.OverriddenServerStatus)
	}
	w.Key("defaultInstanceEphemeral").Bool(s.DefaultInstanceEphemeral)
	w.Key("healthCheckWhiteList")
	appendNullableList(w, s.HealthCheckWhiteList)
	w.Key("name").Str(SwitchDomainName)
	w.Key("checksum").Null()
	w.EndObject()
	return w.Bytes()
}

// Switch entry names (SwitchEntry.java).
const (
	SwitchBatch                    = "batch"
	SwitchDistroThreshold          = "distroThreshold"
	SwitchClientBeatInterval       = "clientBeatInterval"
	SwitchPushVersion              = "pushVersion"
	SwitchPushCacheMillis          = "pushCacheMillis"
	SwitchDefaultCacheMillis       = "defaultCacheMillis"
	SwitchMasters                  = "masters"
	SwitchDistro                   = "distro"
	SwitchCheck                    = "check"
	SwitchPushEnabled              = "pushEnabled"
	SwitchServiceStatusSyncPeriod  = "serviceStatusSynchronizationPeriodMillis"
	SwitchServerStatusSyncPeriod   = "serverStatusSynchronizationPeriodMillis"
	SwitchHealthCheckTimes         = "healthCheckTimes"
	SwitchDisableAddIP             = "disableAddIP"
	SwitchSendBeatOnly             = "sendBeatOnly"
	SwitchLimitedURLMap            = "limitedUrlMap"
	SwitchEnableStandalone         = "enableStandalone"
	SwitchOverriddenServerStatus   = "overriddenServerStatus"
	SwitchDefaultInstanceEphemeral = "defaultInstanceEphemeral"
	SwitchDistroServerExpiredMilli = "distroServerExpiredMillis"
	SwitchLightBeatEnabled         = "lightBeatEnabled"
	SwitchAutoChangeHealthCheck    = "autoChangeHealthCheckEnabled"
)

var swVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// Apply is SwitchManager.update(entry, value) on s (naming-v1.md §9.2):
// validation failures are 400 *compat.Error with Java's messages, Java
// parse failures NumberFormatException texts; s is changed only on success.
// Unknown entries are a no-op. Quirks kept on purpose: enableStandalone is set
// only when value is empty (to false); batch keeps the current
// enableStandalone; pushVersion without ':' is Java 8's
// ArrayIndexOutOfBoundsException (500 "caused: 1;").
func (s *Switches) Apply(entry, value string) error {
	switch entry {
	case SwitchBatch:
		dom, err := parseBatchSwitches(value)
		if err != nil {
			return err
		}
		dom.EnableStandalone = s.EnableStandalone
		h, t := dom.HTTPHealthParams, dom.TCPHealthParams
		if h.Min < 500 || t.Min < 500 {
			return compat.IllegalArgument("min check time for http or tcp is too small(<500)")
		}
		if h.Max < 3000 || t.Max < 3000 {
			return compat.IllegalArgument("max check time for http or tcp is too small(<3000)")
		}
		if h.Factor < 0 || h.Factor > 1 || t.Factor < 0 || t.Factor > 1 {
			return compat.IllegalArgument("malformed factor")
		}
		*s = dom
	case SwitchDistroThreshold:
		f, err := swParseFloat(value)
		if err != nil {
			return err
		}
		if f <= 0 {
			return compat.IllegalArgument("distroThreshold can not be zero or negative: " + compat.FormatJavaFloat(f))
		}
		s.DistroThreshold = f
	case SwitchClientBeatInterval:
		return swSetLong(&s.ClientBeatInterval, value, 0, "")
	case SwitchPushVersion:
		parts := swSplit(value, ":")
		if len(parts) < 2 {
			// value.split(":")[1] on a shorter array (Java 8 message).
			return compat.ServerError(strconv.Itoa(len(parts)))
		}
		typ, version := parts[0], parts[1]
		if !swVersionRE.MatchString(version) {
			return compat.IllegalArgument(`illegal version, must match: [0-9]+\.[0-9]+\.[0-9]+`)
		}
		switch typ {
		case "java":
			s.PushJavaVersion, s.nulls = version, s.nulls&^nullPushJava
		case "python":
			s.PushPythonVersion, s.nulls = version, s.nulls&^nullPushPython
		case "c":
			s.PushCVersion, s.nulls = version, s.nulls&^nullPushC
		case "go":
			s.PushGoVersion, s.nulls = version, s.nulls&^nullPushGo
		default:
			return compat.IllegalArgument("unsupported client type: " + typ)
		}
	case SwitchPushCacheMillis:
		return swSetLong(&s.DefaultPushCacheMillis, value, 10000, "min cache time for http or tcp is too small(<10000)")
	case SwitchDefaultCacheMillis:
		return swSetLong(&s.DefaultCacheMillis, value, 1000, "min default cache time  is too small(<1000)")
	case SwitchMasters:
		s.Masters = swSplit(value, ",")
	case SwitchDistro:
		s.DistroEnabled = strings.EqualFold(value, "true")
	case SwitchCheck:
		s.HealthCheckEnabled = strings.EqualFold(value, "true")
	case SwitchPushEnabled:
		s.PushEnabled = strings.EqualFold(value, "true")
	case SwitchServiceStatusSyncPeriod:
		return swSetLong(&s.ServiceStatusSynchronizationPeriodMillis, value, 5000, "serviceStatusSynchronizationPeriodMillis is too small(<5000)")
	case SwitchServerStatusSyncPeriod:
		// Java checks < 1000 but its message says 15000.
		return swSetLong(&s.ServerStatusSynchronizationPeriodMillis, value, 1000, "serverStatusSynchronizationPeriodMillis is too small(<15000)")
	case SwitchHealthCheckTimes:
		n, err := swParseInt(value, 32)
		if err != nil {
			return err
		}
		s.CheckTimes = int(n)
	case SwitchDisableAddIP:
		s.DisableAddIP = strings.EqualFold(value, "true")
	case SwitchSendBeatOnly:
		s.SendBeatOnly = strings.EqualFold(value, "true")
	case SwitchLimitedURLMap:
		if value == "" {
			return nil
		}
		m, err := parseLimitedURLs(value)
		if err != nil {
			return err
		}
		s.LimitedURLMap = m
	case SwitchEnableStandalone:
		// SwitchManager tests !isNotEmpty(value): only an empty value gets
		// here, and Boolean.parseBoolean("") is false.
		if value == "" {
			s.EnableStandalone = false
		}
	case SwitchOverriddenServerStatus:
		v := value
		if v == "null" {
			v = ""
		}
		s.OverriddenServerStatus = &v
	case SwitchDefaultInstanceEphemeral:
		s.DefaultInstanceEphemeral = strings.EqualFold(value, "true")
	case SwitchDistroServerExpiredMilli:
		return swSetLong(&s.DistroServerExpiredMillis, value, 0, "")
	case SwitchLightBeatEnabled:
		s.LightBeatEnabled = swCommonsBool(value)
	case SwitchAutoChangeHealthCheck:
		s.AutoChangeHealthCheckEnabled = swCommonsBool(value)
	}
	return nil
}

// parseLimitedURLs is the limitedUrlMap entry: "url:status,url2:status" into a
// new HashMap(16).
func parseLimitedURLs(value string) (IntMap, error) {
	m := IntMap{Values: map[string]int{}}
	var order []string
	for _, each := range swSplit(value, ",") {
		parts := swSplit(each, ":")
		if len(parts) < 2 {
			return IntMap{}, compat.IllegalArgument("invalid input for limited urls")
		}
		url := parts[0]
		if url == "" {
			return IntMap{}, compat.IllegalArgument("url can not be empty, url: " + url)
		}
		code, err := swParseInt(parts[1], 32)
		if err != nil {
			return IntMap{}, err
		}
		if code <= 0 {
			return IntMap{}, compat.IllegalArgument("illegal normal status code: " + strconv.FormatInt(code, 10))
		}
		if _, dup := m.Values[url]; !dup {
			order = append(order, url)
		}
		m.Values[url] = int(code)
	}
	m.Keys = compat.JavaHashOrderStrings(order, 16)
	return m, nil
}

func swSetLong(dst *int64, value string, min int64, msg string) error {
	n, err := swParseInt(value, 64)
	if err != nil {
		return err
	}
	if msg != "" && n < min {
		return compat.IllegalArgument(msg)
	}
	*dst = n
	return nil
}

// swParseInt is Long.parseLong / Integer.parseInt (bits 64 / 32).
func swParseInt(s string, bits int) (int64, error) {
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, compat.NumberFormat(s)
	}
	return n, nil
}

var swFloatRE = regexp.MustCompile(`^[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?)$`)

// swParseFloat is Float.parseFloat: Java trim, Java's grammar (no inf/nan
// spellings, no underscores, optional f/d suffix), rounding straight to float.
func swParseFloat(s string) (float32, error) {
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if t == "" {
		return 0, compat.IllegalArgument("empty String")
	}
	if !swFloatRE.MatchString(t) {
		return 0, compat.NumberFormat(t)
	}
	if strings.HasSuffix(t, "NaN") { // Go refuses a signed NaN, Java does not
		return float32(math.NaN()), nil
	}
	if !strings.HasSuffix(t, "Infinity") && strings.ContainsAny(t[len(t)-1:], "fFdD") {
		t = t[:len(t)-1]
	}
	f, err := strconv.ParseFloat(t, 32)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, compat.NumberFormat(t)
	}
	return float32(f), nil
}

// swCommonsBool is commons-lang BooleanUtils.toBoolean(String).
func swCommonsBool(s string) bool {
	switch strings.ToLower(s) {
	case "true", "on", "yes", "y", "t":
		return true
	}
	return false
}

// swSplit is Java's String.split with a one-character literal separator:
// no match gives the whole string (even ""), trailing empty strings go.
func swSplit(s, sep string) []string {
	if !strings.Contains(s, sep) {
		return []string{s}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// --- batch: JacksonUtils.toObj(value, SwitchDomain.class) ---

const switchDomainClass = "com.alibaba.nacos.naming.misc.SwitchDomain"

// switchDeserializeError is NacosDeserializationException through
// ConsoleExceptionHandler; the cause is Go's wording, not Jackson's.
func switchDeserializeError(cause string) error {
	return compat.ServerError("errCode: 101, errMsg: Nacos deserialize for class ["+switchDomainClass+"] failed.  ", cause)
}

type swField struct {
	key string
	raw json.RawMessage
}

// swObject reads a JSON object's members in order (duplicates kept: Jackson
// calls the setter again, so the last one wins).
func swObject(dec *json.Decoder) ([]swField, error) {
	var out []swField
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, swField{key, raw})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, err
	}
	return out, nil
}

func swObjectOf(raw json.RawMessage) ([]swField, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	if tok == nil {
		return nil, true, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, false, fmt.Errorf("cannot deserialize object from %s", raw)
	}
	f, err := swObject(dec)
	return f, false, err
}

func swScalar(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); ok {
		return nil, fmt.Errorf("cannot deserialize value of scalar type out of %v token", d)
	}
	return tok, nil
}

// swJInt coerces a JSON value to a Java int/long the way Jackson 2 does by
// default: null → 0, floats truncated, numeric strings parsed.
func swJInt(raw json.RawMessage, bits int) (int64, error) {
	v, err := swScalar(raw)
	if err != nil {
		return 0, err
	}
	var text string
	switch x := v.(type) {
	case nil:
		return 0, nil
	case json.Number:
		text = string(x)
	case string:
		text = strings.TrimSpace(x)
		if text == "" {
			return 0, nil
		}
	default:
		return 0, fmt.Errorf("cannot coerce %v to a Java integer", x)
	}
	if n, err := strconv.ParseInt(text, 10, bits); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("cannot deserialize integer from %q", text)
	}
	lim := math.Ldexp(1, bits-1)
	if f >= lim || f < -lim {
		return 0, fmt.Errorf("numeric value (%s) out of range", text)
	}
	return int64(f), nil
}

func swJFloat(raw json.RawMessage) (float32, error) {
	v, err := swScalar(raw)
	if err != nil {
		return 0, err
	}
	switch x := v.(type) {
	case nil:
		return 0, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 32)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, err
		}
		return float32(f), nil
	case string:
		if strings.TrimSpace(x) == "" {
			return 0, nil
		}
		f, err := swParseFloat(x)
		if err != nil {
			return 0, fmt.Errorf("cannot deserialize float from %q", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("cannot coerce %v to a Java float", v)
}

func swJBool(raw json.RawMessage) (bool, error) {
	v, err := swScalar(raw)
	if err != nil {
		return false, err
	}
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case json.Number:
		n, err := x.Int64()
		if err != nil {
			return false, fmt.Errorf("cannot coerce %s to boolean", x)
		}
		return n != 0, nil
	case string:
		switch strings.TrimSpace(x) {
		case "true", "True", "TRUE":
			return true, nil
		case "false", "False", "FALSE", "":
			return false, nil
		}
		return false, fmt.Errorf("cannot deserialize boolean from %q", x)
	}
	return false, fmt.Errorf("cannot coerce %v to boolean", v)
}

// swJString returns the text of a scalar (numbers and booleans as written);
// null reports isNull.
func swJString(raw json.RawMessage) (s string, isNull bool, err error) {
	v, err := swScalar(raw)
	if err != nil {
		return "", false, err
	}
	switch x := v.(type) {
	case nil:
		return "", true, nil
	case string:
		return x, false, nil
	case json.Number:
		return string(x), false, nil
	case bool:
		return strconv.FormatBool(x), false, nil
	}
	return "", false, fmt.Errorf("cannot deserialize string from %v", v)
}

// swJStrings reads a List/Set of strings; null elements are refused (Java
// would keep them as null).
func swJStrings(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("cannot deserialize collection out of %s", raw)
	}
	out := []string{}
	for dec.More() {
		var el json.RawMessage
		if err := dec.Decode(&el); err != nil {
			return nil, err
		}
		s, isNull, err := swJString(el)
		if err != nil {
			return nil, err
		}
		if isNull {
			return nil, fmt.Errorf("null element in string collection (not supported)")
		}
		out = append(out, s)
	}
	return out, nil
}

// swJIntMap reads a Map<String,Integer> as Jackson's LinkedHashMap.
func swJIntMap(raw json.RawMessage) (IntMap, error) {
	fields, isNull, err := swObjectOf(raw)
	if err != nil || isNull {
		return IntMap{}, err
	}
	m := emptyIntMap()
	for _, f := range fields {
		if v, _ := swScalar(f.raw); v == nil {
			return IntMap{}, fmt.Errorf("null map value for %q (not supported)", f.key)
		}
		n, err := swJInt(f.raw, 32)
		if err != nil {
			return IntMap{}, err
		}
		if _, dup := m.Values[f.key]; !dup {
			m.Keys = append(m.Keys, f.key)
		}
		m.Values[f.key] = int(n)
	}
	return m, nil
}

func swJHealth(raw json.RawMessage, def HealthParams) (HealthParams, bool, error) {
	fields, isNull, err := swObjectOf(raw)
	if err != nil || isNull {
		return HealthParams{}, isNull, err
	}
	h := def
	for _, f := range fields {
		switch f.key {
		case "max", "min":
			n, err := swJInt(f.raw, 32)
			if err != nil {
				return h, false, err
			}
			if f.key == "max" {
				h.Max = int(n)
			} else {
				h.Min = int(n)
			}
		case "factor":
			if h.Factor, err = swJFloat(f.raw); err != nil {
				return h, false, err
			}
		}
	}
	return h, false, nil
}

// parseBatchSwitches reads a whole SwitchDomain JSON like Nacos' JacksonUtils
// (unknown properties ignored, missing ones keep their defaults, trailing
// text ignored).
func parseBatchSwitches(value string) (Switches, error) {
	if msg := compat.JacksonSyntaxError(value); msg != "" {
		return Switches{}, switchDeserializeError(msg)
	}
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	tok, err := dec.Token()
	if err == io.EOF {
		return Switches{}, switchDeserializeError("No content to map due to end-of-input")
	}
	if err != nil {
		return Switches{}, switchDeserializeError(err.Error())
	}
	if tok == nil { // JSON null: dom.setEnableStandalone → NullPointerException
		return Switches{}, compat.ServerError("")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Switches{}, switchDeserializeError(fmt.Sprintf("cannot construct SwitchDomain from %v", tok))
	}
	fields, err := swObject(dec)
	if err != nil {
		return Switches{}, switchDeserializeError(err.Error())
	}
	d := DefaultSwitches()
	httpNull, tcpNull := false, false
	for _, f := range fields {
		if err := d.setJSONField(f, &httpNull, &tcpNull); err != nil {
			return Switches{}, switchDeserializeError(fmt.Sprintf("%s: %v", f.key, err))
		}
	}
	if httpNull || tcpNull { // getHttpHealthParams().getMin() on null
		return Switches{}, compat.ServerError("")
	}
	return d, nil
}

func (d *Switches) setJSONField(f swField, httpNull, tcpNull *bool) error {
	var err error
	long := func(dst *int64) {
		*dst, err = swJInt(f.raw, 64)
	}
	boolean := func(dst *bool) {
		*dst, err = swJBool(f.raw)
	}
	str := func(dst *string, bit uint8) {
		var isNull bool
		*dst, isNull, err = swJString(f.raw)
		if isNull {
			d.nulls |= bit
		} else {
			d.nulls &^= bit
		}
	}
	health := func(dst *HealthParams, def HealthParams, isNull *bool) {
		*dst, *isNull, err = swJHealth(f.raw, def)
	}
	switch f.key {
	case "masters":
		d.Masters, err = swJStrings(f.raw)
	case "adWeightMap":
		d.AdWeightMap, err = swJIntMap(f.raw)
	case "defaultPushCacheMillis":
		long(&d.DefaultPushCacheMillis)
	case "clientBeatInterval":
		long(&d.ClientBeatInterval)
	case "defaultCacheMillis":
		long(&d.DefaultCacheMillis)
	case "distroThreshold":
		d.DistroThreshold, err = swJFloat(f.raw)
	case "healthCheckEnabled":
		boolean(&d.HealthCheckEnabled)
	case "autoChangeHealthCheckEnabled":
		boolean(&d.AutoChangeHealthCheckEnabled)
	case "distroEnabled":
		boolean(&d.DistroEnabled)
	case "enableStandalone":
		boolean(&d.EnableStandalone)
	case "pushEnabled":
		boolean(&d.PushEnabled)
	case "checkTimes":
		var n int64
		n, err = swJInt(f.raw, 32)
		d.CheckTimes = int(n)
	case "httpHealthParams":
		health(&d.HTTPHealthParams, defaultHTTPHealth, httpNull)
	case "tcpHealthParams":
		health(&d.TCPHealthParams, defaultTCPHealth, tcpNull)
	case "mysqlHealthParams":
		var isNull bool
		health(&d.MySQLHealthParams, defaultMySQLHealth, &isNull)
		if isNull {
			d.nulls |= nullMySQLHealth
		} else {
			d.nulls &^= nullMySQLHealth
		}
	case "incrementalList":
		d.IncrementalList, err = swJStrings(f.raw)
	case "serverStatusSynchronizationPeriodMillis":
		long(&d.ServerStatusSynchronizationPeriodMillis)
	case "serviceStatusSynchronizationPeriodMillis":
		long(&d.ServiceStatusSynchronizationPeriodMillis)
	case "disableAddIP":
		boolean(&d.DisableAddIP)
	case "sendBeatOnly":
		boolean(&d.SendBeatOnly)
	case "lightBeatEnabled":
		boolean(&d.LightBeatEnabled)
	case "limitedUrlMap":
		d.LimitedURLMap, err = swJIntMap(f.raw)
	case "distroServerExpiredMillis":
		long(&d.DistroServerExpiredMillis)
	case "pushGoVersion":
		str(&d.PushGoVersion, nullPushGo)
	case "pushJavaVersion":
		str(&d.PushJavaVersion, nullPushJava)
	case "pushPythonVersion":
		str(&d.PushPythonVersion, nullPushPython)
	case "pushCVersion":
		str(&d.PushCVersion, nullPushC)
	case "pushCSharpVersion":
		str(&d.PushCSharpVersion, nullPushCSharp)
	case "enableAuthentication":
		boolean(&d.EnableAuthentication)
	case "overriddenServerStatus":
		var v string
		var isNull bool
		v, isNull, err = swJString(f.raw)
		d.OverriddenServerStatus = nil
		if !isNull {
			d.OverriddenServerStatus = &v
		}
	case "defaultInstanceEphemeral":
		boolean(&d.DefaultInstanceEphemeral)
	case "healthCheckWhiteList":
		var l []string
		l, err = swJStrings(f.raw)
		if l != nil { // a HashSet: duplicates dropped, hash order
			seen := map[string]bool{}
			uniq := []string{}
			for _, s := range l {
				if !seen[s] {
					seen[s] = true
					uniq = append(uniq, s)
				}
			}
			l = compat.JavaHashOrderStrings(uniq, 16)
		}
		d.HealthCheckWhiteList = l
	}
	return err
}

// --- stored form ---

// switchesRecordVersion is the version of the Marshal format.
const switchesRecordVersion = 1

type swKV struct {
	K string `json:"k"`
	V int    `json:"v"`
}

type swHealthRec struct {
	Max    int    `json:"max"`
	Min    int    `json:"min"`
	Factor string `json:"factor"` // strconv 'g' text: keeps NaN/Inf and float32 bits
}

type switchesRecord struct {
	V                         int          `json:"v"`
	Masters                   []string     `json:"masters"`
	AdWeightMap               *[]swKV      `json:"adWeightMap"`
	DefaultPushCacheMillis    int64        `json:"defaultPushCacheMillis"`
	ClientBeatInterval        int64        `json:"clientBeatInterval"`
	DefaultCacheMillis        int64        `json:"defaultCacheMillis"`
	DistroThreshold           string       `json:"distroThreshold"`
	HealthCheckEnabled        bool         `json:"healthCheckEnabled"`
	AutoChangeHealthCheck     bool         `json:"autoChangeHealthCheckEnabled"`
	DistroEnabled             bool         `json:"distroEnabled"`
	EnableStandalone          bool         `json:"enableStandalone"`
	PushEnabled               bool         `json:"pushEnabled"`
	CheckTimes                int          `json:"checkTimes"`
	HTTPHealthParams          swHealthRec  `json:"httpHealthParams"`
	TCPHealthParams           swHealthRec  `json:"tcpHealthParams"`
	MySQLHealthParams         *swHealthRec `json:"mysqlHealthParams"`
	IncrementalList           []string     `json:"incrementalList"`
	ServerStatusSyncMillis    int64        `json:"serverStatusSynchronizationPeriodMillis"`
	ServiceStatusSyncMillis   int64        `json:"serviceStatusSynchronizationPeriodMillis"`
	DisableAddIP              bool         `json:"disableAddIP"`
	SendBeatOnly              bool         `json:"sendBeatOnly"`
	LightBeatEnabled          bool         `json:"lightBeatEnabled"`
	LimitedURLMap             *[]swKV      `json:"limitedUrlMap"`
	DistroServerExpiredMillis int64        `json:"distroServerExpiredMillis"`
	PushGoVersion             *string      `json:"pushGoVersion"`
	PushJavaVersion           *string      `json:"pushJavaVersion"`
	PushPythonVersion         *string      `json:"pushPythonVersion"`
	PushCVersion              *string      `json:"pushCVersion"`
	PushCSharpVersion         *string      `json:"pushCSharpVersion"`
	EnableAuthentication      bool         `json:"enableAuthentication"`
	OverriddenServerStatus    *string      `json:"overriddenServerStatus"`
	DefaultInstanceEphemeral  bool         `json:"defaultInstanceEphemeral"`
	HealthCheckWhiteList      []string     `json:"healthCheckWhiteList"`
}

func swFloatText(f float32) string { return strconv.FormatFloat(float64(f), 'g', -1, 32) }

func swKVs(m IntMap) *[]swKV {
	if m.Values == nil {
		return nil
	}
	l := make([]swKV, 0, len(m.Keys))
	for _, k := range m.Keys {
		l = append(l, swKV{k, m.Values[k]})
	}
	return &l
}

func swFromKVs(l *[]swKV) IntMap {
	if l == nil {
		return IntMap{}
	}
	m := emptyIntMap()
	for _, kv := range *l {
		if _, dup := m.Values[kv.K]; !dup {
			m.Keys = append(m.Keys, kv.K)
		}
		m.Values[kv.K] = kv.V
	}
	return m
}

func swHealthOut(h HealthParams) swHealthRec {
	return swHealthRec{Max: h.Max, Min: h.Min, Factor: swFloatText(h.Factor)}
}

func swHealthIn(r swHealthRec) (HealthParams, error) {
	f, err := strconv.ParseFloat(r.Factor, 32)
	if err != nil {
		return HealthParams{}, fmt.Errorf("naming: switches: factor %q: %w", r.Factor, err)
	}
	return HealthParams{Max: r.Max, Min: r.Min, Factor: float32(f)}, nil
}

func (s *Switches) nullableStr(v string, bit uint8) *string {
	if s.nulls&bit != 0 {
		return nil
	}
	return &v
}

// Marshal encodes the switches in nacosd's stored form (versioned JSON, not
// the wire format); UnmarshalSwitches reads it back exactly.
func (s Switches) Marshal() ([]byte, error) {
	r := switchesRecord{
		V:                         switchesRecordVersion,
		Masters:                   s.Masters,
		AdWeightMap:               swKVs(s.AdWeightMap),
		DefaultPushCacheMillis:    s.DefaultPushCacheMillis,
		ClientBeatInterval:        s.ClientBeatInterval,
		DefaultCacheMillis:        s.DefaultCacheMillis,
		DistroThreshold:           swFloatText(s.DistroThreshold),
		HealthCheckEnabled:        s.HealthCheckEnabled,
		AutoChangeHealthCheck:     s.AutoChangeHealthCheckEnabled,
		DistroEnabled:             s.DistroEnabled,
		EnableStandalone:          s.EnableStandalone,
		PushEnabled:               s.PushEnabled,
		CheckTimes:                s.CheckTimes,
		HTTPHealthParams:          swHealthOut(s.HTTPHealthParams),
		TCPHealthParams:           swHealthOut(s.TCPHealthParams),
		IncrementalList:           s.IncrementalList,
		ServerStatusSyncMillis:    s.ServerStatusSynchronizationPeriodMillis,
		ServiceStatusSyncMillis:   s.ServiceStatusSynchronizationPeriodMillis,
		DisableAddIP:              s.DisableAddIP,
		SendBeatOnly:              s.SendBeatOnly,
		LightBeatEnabled:          s.LightBeatEnabled,
		LimitedURLMap:             swKVs(s.LimitedURLMap),
		DistroServerExpiredMillis: s.DistroServerExpiredMillis,
		PushGoVersion:             s.nullableStr(s.PushGoVersion, nullPushGo),
		PushJavaVersion:           s.nullableStr(s.PushJavaVersion, nullPushJava),
		PushPythonVersion:         s.nullableStr(s.PushPythonVersion, nullPushPython),
		PushCVersion:              s.nullableStr(s.PushCVersion, nullPushC),
		PushCSharpVersion:         s.nullableStr(s.PushCSharpVersion, nullPushCSharp),
		EnableAuthentication:      s.EnableAuthentication,
		OverriddenServerStatus:    s.OverriddenServerStatus,
		DefaultInstanceEphemeral:  s.DefaultInstanceEphemeral,
		HealthCheckWhiteList:      s.HealthCheckWhiteList,
	}
	if s.nulls&nullMySQLHealth == 0 {
		h := swHealthOut(s.MySQLHealthParams)
		r.MySQLHealthParams = &h
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("naming: marshal switches: %w", err)
	}
	return b, nil
}

// UnmarshalSwitches decodes the form written by Marshal.
func UnmarshalSwitches(b []byte) (Switches, error) {
	var r switchesRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return Switches{}, fmt.Errorf("naming: unmarshal switches: %w", err)
	}
	if r.V != switchesRecordVersion {
		return Switches{}, fmt.Errorf("naming: unmarshal switches: unknown version %d", r.V)
	}
	thr, err := strconv.ParseFloat(r.DistroThreshold, 32)
	if err != nil {
		return Switches{}, fmt.Errorf("naming: unmarshal switches: distroThreshold %q: %w", r.DistroThreshold, err)
	}
	s := Switches{
		Masters:                                  r.Masters,
		AdWeightMap:                              swFromKVs(r.AdWeightMap),
		DefaultPushCacheMillis:                   r.DefaultPushCacheMillis,
		ClientBeatInterval:                       r.ClientBeatInterval,
		DefaultCacheMillis:                       r.DefaultCacheMillis,
		DistroThreshold:                          float32(thr),
		HealthCheckEnabled:                       r.HealthCheckEnabled,
		AutoChangeHealthCheckEnabled:             r.AutoChangeHealthCheck,
		DistroEnabled:                            r.DistroEnabled,
		EnableStandalone:                         r.EnableStandalone,
		PushEnabled:                              r.PushEnabled,
		CheckTimes:                               r.CheckTimes,
		IncrementalList:                          r.IncrementalList,
		ServerStatusSynchronizationPeriodMillis:  r.ServerStatusSyncMillis,
		ServiceStatusSynchronizationPeriodMillis: r.ServiceStatusSyncMillis,
		DisableAddIP:                             r.DisableAddIP,
		SendBeatOnly:                             r.SendBeatOnly,
		LightBeatEnabled:                         r.LightBeatEnabled,
		LimitedURLMap:                            swFromKVs(r.LimitedURLMap),
		DistroServerExpiredMillis:                r.DistroServerExpiredMillis,
		EnableAuthentication:                     r.EnableAuthentication,
		OverriddenServerStatus:                   r.OverriddenServerStatus,
		DefaultInstanceEphemeral:                 r.DefaultInstanceEphemeral,
		HealthCheckWhiteList:                     r.HealthCheckWhiteList,
	}
	if s.HTTPHealthParams, err = swHealthIn(r.HTTPHealthParams); err != nil {
		return Switches{}, err
	}
	if s.TCPHealthParams, err = swHealthIn(r.TCPHealthParams); err != nil {
		return Switches{}, err
	}
	if r.MySQLHealthParams == nil {
		s.nulls |= nullMySQLHealth
	} else if s.MySQLHealthParams, err = swHealthIn(*r.MySQLHealthParams); err != nil {
		return Switches{}, err
	}
	for _, f := range []struct {
		src *string
		dst *string
		bit uint8
	}{
		{r.PushGoVersion, &s.PushGoVersion, nullPushGo},
		{r.PushJavaVersion, &s.PushJavaVersion, nullPushJava},
		{r.PushPythonVersion, &s.PushPythonVersion, nullPushPython},
		{r.PushCVersion, &s.PushCVersion, nullPushC},
		{r.PushCSharpVersion, &s.PushCSharpVersion, nullPushCSharp},
	} {
		if f.src == nil {
			s.nulls |= f.bit
		} else {
			*f.dst = *f.src
		}
	}
	return s, nil
}
