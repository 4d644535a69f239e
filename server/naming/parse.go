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
	// String.split drops trailing empty strings: "," has no entries and
	// "a=1," one, "a=b=" is a=b, "a=" fails
	for _, item := range compat.JavaSplit(raw, ",") {
		kv := compat.JavaSplit(item, "=")
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

// jacksonTree is JacksonUtils.toObj(String): Jackson's readTree of raw.
// A syntax error is NacosDeserializationException's 500 with Jackson's
// message; otherwise the first JSON value (numbers as json.Number). Blank
// input is no value (nil, ok): Jackson's missing node.
func jacksonTree(raw string) (any, error) {
	if msg := compat.JacksonSyntaxError(raw); msg != "" {
		return nil, compat.ServerError("errCode: 101, errMsg: Nacos deserialize failed.  ", msg)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, nil // blank: MissingNode
	}
	return v, nil
}

// nodeGet is JsonNode.get(field): present only on object nodes.
func nodeGet(node any, field string) (any, bool) {
	m, ok := node.(map[string]any)
	if !ok {
		return nil, false
	}
	v, ok := m[field]
	return v, ok
}

// nodeText is JsonNode.asText(): a string's value, a number's or boolean's
// text, "null" for null, "" for containers.
func nodeText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case json.Number:
		return javaNumberText(t)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	default:
		return ""
	}
}

// javaNumberText is the asText of Jackson's number node: integers as they
// are (IntNode, LongNode, BigIntegerNode), others as Double.toString.
func javaNumberText(n json.Number) string {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		return s
	}
	f, err := n.Float64()
	if err != nil {
		return s
	}
	return compat.FormatJavaDouble(f)
}

// npeGetText is the NullPointerException of node.get(field).asText() on a
// missing field (Java 17's helpful message).
var npeGetText = compat.ServerError(`Cannot invoke "com.fasterxml.jackson.databind.JsonNode.asText()" because the return value of "com.fasterxml.jackson.databind.JsonNode.get(String)" is null`)
