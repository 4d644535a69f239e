package compat

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Member states (core NodeState enum names).
const (
	MemberStarting   = "STARTING"
	MemberUp         = "UP"
	MemberSuspicious = "SUSPICIOUS"
	MemberDown       = "DOWN"
	MemberIsolation  = "ISOLATION"
)

// Member is a Nacos cluster member (core/cluster/Member.java) as the
// /v1/core/cluster endpoints and /v1/ns/operator/servers write it
// (console-auth-core-v1.md §4.1).
type Member struct {
	IP    string
	Port  int
	State string // one of the Member* states
	// ExtendInfo is a Java TreeMap<String,Object>: written with sorted keys.
	// Values are strings, numbers (int, int64, float64, json.Number…), bools,
	// nil, or nested maps/slices of those.
	ExtendInfo    map[string]any
	FailAccessCnt int
}

// Address is ip:port; IPv6 addresses are bracketed ("[::1]:8848").
func (m Member) Address() string {
	ip := m.IP
	if strings.Contains(ip, ":") && !strings.HasPrefix(ip, "[") {
		ip = "[" + ip + "]"
	}
	return ip + ":" + strconv.Itoa(m.Port)
}

// AppendJSON writes the member as Jackson does: ip, port, state, extendInfo
// (sorted keys), address, failAccessCnt (console-auth-core-v1.md §4.1).
func (m Member) AppendJSON(w *JSON) {
	w.BeginObject()
	w.Key("ip").Str(m.IP)
	w.Key("port").Int(int64(m.Port))
	w.Key("state").Str(m.State)
	w.Key("extendInfo")
	appendAnyMap(w, m.ExtendInfo)
	w.Key("address").Str(m.Address())
	w.Key("failAccessCnt").Int(int64(m.FailAccessCnt))
	w.EndObject()
}

// JSON returns the member JSON on its own.
func (m Member) JSON() []byte {
	w := NewJSON(256)
	m.AppendJSON(w)
	return w.Bytes()
}

func appendAnyMap(w *JSON, m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // TreeMap<String,…>: String.compareTo, which is UTF-16 order; equal to byte order below U+E000
	w.BeginObject()
	for _, k := range keys {
		w.Key(k)
		AppendAny(w, m[k])
	}
	w.EndObject()
}

// AppendAny writes a loosely typed value the way Jackson writes the Java
// object it stands for: strings, bools, integers, float64 as a Java Double,
// float32 as a Java Float (NaN and ±Infinity quoted, Jackson's default
// QUOTE_NON_NUMERIC_NUMBERS), json.Number verbatim, maps with sorted keys (as a
// TreeMap), slices in order, nil as null. Other types go through
// encoding/json.
func AppendAny(w *JSON, v any) {
	switch x := v.(type) {
	case nil:
		w.Null()
	case string:
		w.Str(x)
	case bool:
		w.Bool(x)
	case int:
		w.Int(int64(x))
	case int32:
		w.Int(int64(x))
	case int64:
		w.Int(x)
	case uint32:
		w.Int(int64(x))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) { // Jackson QUOTE_NON_NUMERIC_NUMBERS
			w.Str(FormatJavaDouble(x))
		} else {
			w.Double(x)
		}
	case float32:
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			w.Str(FormatJavaFloat(x))
		} else {
			w.Float(x)
		}
	case json.Number:
		w.Raw([]byte(x))
	case map[string]any:
		appendAnyMap(w, x)
	case map[string]string:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.StrMap(keys, x, false)
	case []any:
		w.BeginArray()
		for _, e := range x {
			AppendAny(w, e)
		}
		w.EndArray()
	case []string:
		w.StrList(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			w.Null()
			return
		}
		w.Raw(b)
	}
}

// RestResultJSON renders common/model/RestResult: {"code":…,"message":…,
// "data":…} in that order; a nil message is null, a nil data func writes null
// (console-auth-core-v1.md §1.3).
func RestResultJSON(code int, message *string, data func(w *JSON)) []byte {
	w := NewJSON(128)
	w.BeginObject()
	w.Key("code").Int(int64(code))
	w.Key("message")
	if message == nil {
		w.Null()
	} else {
		w.Str(*message)
	}
	w.Key("data")
	if data == nil {
		w.Null()
	} else {
		data(w)
	}
	w.EndObject()
	return w.Bytes()
}

// RestResultOK is RestResultUtils.success(data): code 200, message null.
func RestResultOK(data func(w *JSON)) []byte { return RestResultJSON(200, nil, data) }

// RestResultString is RestResultUtils.success(s) for a String payload.
func RestResultString(s string) []byte {
	return RestResultOK(func(w *JSON) { w.Str(s) })
}

// RestResultFailed is RestResultUtils.failedWithMsg(code, msg): data null.
func RestResultFailed(code int, msg string) []byte { return RestResultJSON(code, &msg, nil) }
