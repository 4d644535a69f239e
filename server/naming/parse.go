package naming

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nacosd/nacosd/compat"
)

// ParseMetadata is UtilsAndCommons.parseMetadata: blank → {}; a JSON object
// (scalar values coerced to strings) or the JSON literal null, which Jackson
// reads as a null map (nil here, rendered "metadata":null — what a Java client
// re-registering after a 20404 beat may send); anything after the first JSON
// value is ignored, as Jackson does without FAIL_ON_TRAILING_TOKENS; else
// "k=v,k2=v2"; anything else → NacosException "metadata format
// incorrect:<raw>" (500).
func ParseMetadata(raw string) (map[string]string, error) {
	if strings.TrimSpace(raw) == "" {
		return map[string]string{}, nil
	}
	if m, ok := parseJSONStringMap(raw); ok {
		return m, nil
	}
	m := map[string]string{}
	for _, item := range strings.Split(raw, ",") {
		kv := strings.Split(item, "=")
		if len(kv) != 2 {
			return nil, compat.ErrMetadataFormat(raw)
		}
		m[kv[0]] = kv[1]
	}
	return m, nil
}

// parseJSONStringMap decodes the first JSON value of raw into
// map[string]string the way Jackson does for Map<String,String>: strings,
// numbers and booleans become their text; a key whose value is null is
// dropped (Java keeps it with a null value, which every rendering omits; only
// the instanceIdGenerator default in /catalog/instances could tell); a
// top-level null is a nil map, but like Jackson's token matcher "nullx" is no
// null.
func parseJSONStringMap(raw string) (map[string]string, bool) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if v == nil {
		rest := strings.TrimLeft(raw, " \t\r\n")[len("null"):]
		if r, _ := utf8.DecodeRuneInString(rest); rest != "" && (r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return nil, false
		}
		return nil, true
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch t := v.(type) {
		case string:
			out[k] = t
		case json.Number:
			out[k] = t.String()
		case bool:
			out[k] = strconv.FormatBool(t)
		case nil:
		default:
			return nil, false // Jackson fails on objects/arrays for String values
		}
	}
	return out, true
}

// ClientType is the client family parsed from the User-Agent (§5.2).
type ClientType int

// Client families that may receive pushes.
const (
	ClientUnknown ClientType = iota
	ClientJava
	ClientDNS
	ClientC
	ClientGo
	ClientCSharp
)

// ClientInfo is NM/push/ClientInfo: type and version from the agent string.
type ClientInfo struct {
	Type    ClientType
	Version [3]int
	Valid   bool // version parsed
}

// ParseAgent parses "Nacos-Java-Client:v1.4.8" and the other prefixes.
func ParseAgent(agent string) ClientInfo {
	var ci ClientInfo
	switch {
	case strings.HasPrefix(agent, "Nacos-Java-Client"):
		ci.Type = ClientJava
	case strings.HasPrefix(agent, "Nacos-DNS"):
		ci.Type = ClientDNS
	case strings.HasPrefix(agent, "Nacos-C-Client"), strings.HasPrefix(agent, "vip-client4cpp"):
		ci.Type = ClientC
	case strings.HasPrefix(agent, "Nacos-Go-Client"):
		ci.Type = ClientGo
	case strings.HasPrefix(agent, "Nacos-CSharp-Client"):
		ci.Type = ClientCSharp
	default:
		return ci
	}
	i := strings.Index(agent, ":v")
	if i < 0 {
		return ci
	}
	ci.Version, ci.Valid = parseVersion(agent[i+2:])
	return ci
}

// parseVersion is Jackson 1.x VersionUtil.parseVersion: split on [-_./;:],
// leading digits of each part, at least two parts.
func parseVersion(s string) ([3]int, bool) {
	var v [3]int
	parts := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("-_./;:", r) })
	if len(parts) < 2 {
		return v, false
	}
	for i := 0; i < 3 && i < len(parts); i++ {
		n := 0
		for _, c := range parts[i] {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int(c-'0')
		}
		v[i] = n
	}
	return v, true
}

func versionAtLeast(v [3]int, min string) bool {
	m, ok := parseVersion(min)
	if !ok {
		return false
	}
	for i := 0; i < 3; i++ {
		if v[i] != m[i] {
			return v[i] > m[i]
		}
	}
	return true
}

// GroupedForAgent reports whether hosts and dom carry grouped names for this
// agent: only Nacos-Java-Client >= 1.0.0 (§3.2).
func GroupedForAgent(agent string) bool {
	ci := ParseAgent(agent)
	return ci.Type == ClientJava && ci.Valid && ci.Version[0] >= 1
}
