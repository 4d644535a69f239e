package compat

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Config-side wire facts of Nacos 1.4.8 (config-v1.md): validation rules and
// their exact error bodies, group keys, the long-poll Listening-Configs grammar
// and its URL-encoded answer, config types and their content types.

// Config limits and defaults (config-v1.md §1).
const (
	// ConfigMaxContent is the default maxContent in UTF-16 chars (10 MiB).
	ConfigMaxContent = 10 * 1024 * 1024
	// ConfigMaxDataIDLen and ConfigMaxGroupLen are the config_info column
	// sizes (data_id varchar(255), group_id varchar(128)).
	ConfigMaxDataIDLen = 255
	ConfigMaxGroupLen  = 128
	// ConfigMaxListenEntries is the most Listening-Configs entries accepted.
	ConfigMaxListenEntries = 10000
	// ConfigDefaultGroup is DEFAULT_GROUP.
	ConfigDefaultGroup = "DEFAULT_GROUP"
	// ConfigContentTypeJSON is what NacosWebFilter forces on every /v1/cs
	// response (config-v1.md §0).
	ConfigContentTypeJSON = "application/json;charset=UTF-8"
	// ConfigNotExist is the 404 body of GET /v1/cs/configs (println adds \n).
	ConfigNotExist = "config data not exist\n"
	// ConfigBeingModified is the 409 body of GET /v1/cs/configs.
	ConfigBeingModified = "requested file is being modified, please try later.\n"
)

// ConfigError is a /v1/cs error. NacosWebFilter presets
// application/json;charset=UTF-8, but the exception handler's
// ResponseEntity<String> goes through Spring's StringHttpMessageConverter,
// which sets text/plain;charset=UTF-8 (seen on the 1.4.8 reference; the
// spec's config-v1.md §0.3 says JSON): the default error content type.
func ConfigError(e *Error) *Error { return e }

// configIllegal is an IllegalArgumentException on /v1/cs (400).
func configIllegal(msg string, causes ...string) *Error {
	return ConfigError(IllegalArgument(msg, causes...))
}

// configNacos is a NacosException on /v1/cs: 500 through
// ConsoleExceptionHandler whatever its errCode (config-v1.md §0.3).
func configNacos(msg string, causes ...string) *Error {
	return ConfigError(ServerError(msg, causes...))
}

// ConfigServerError is any other exception on /v1/cs (500 "caused: msg;").
func ConfigServerError(msg string, causes ...string) *Error { return configNacos(msg, causes...) }

// ConfigIllegalArgument is an IllegalArgumentException on /v1/cs (400).
func ConfigIllegalArgument(msg string, causes ...string) *Error { return configIllegal(msg, causes...) }

// ConfigMissingParam is Spring's missing @RequestParam on /v1/cs (500).
func ConfigMissingParam(name, javaType string) *Error {
	return ConfigError(MissingRequestParam(name, javaType))
}

// ConfigNumberFormat is a NumberFormatException (400) on /v1/cs.
func ConfigNumberFormat(input string) *Error {
	return configIllegal(`For input string: "` + input + `"`)
}

// ConfigParamTypeMismatch is Spring's MethodArgumentTypeMismatchException for
// an @RequestParam of a number type (500 on the packaged server).
func ConfigParamTypeMismatch(javaType, input string) *Error {
	return configNacos(`Failed to convert value of type 'java.lang.String' to required type '`+javaType+`'; nested exception is java.lang.NumberFormatException: For input string: "`+input+`"`,
		`For input string: "`+input+`"`)
}

// ConfigIsValid is ParamUtils.isValid: every UTF-16 unit is a letter or
// digit (Java Character.isLetterOrDigit) or one of "_-.:"; characters outside
// the BMP are rejected (surrogate halves are neither).
func ConfigIsValid(s string) bool {
	for _, r := range s {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ':':
		case r == utf8.RuneError:
			return false
		case r > 0xFFFF:
			return false
		case unicode.IsLetter(r) || unicode.IsDigit(r):
		default:
			return false
		}
	}
	return true
}

// UTF16Len is String.length(): the number of UTF-16 code units.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 && r <= utf8.MaxRune {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// CheckTenant is ParamUtils.checkTenant (400 on failure).
func CheckTenant(tenant string) error {
	if JavaIsBlank(tenant) {
		return nil
	}
	if !ConfigIsValid(JavaTrim(tenant)) {
		return configIllegal("invalid tenant")
	}
	if UTF16Len(tenant) > 128 {
		return configIllegal("too long tag, over 128")
	}
	return nil
}

// CheckConfigParams is ParamUtils.checkParam(dataId, group, "datumId",
// content): NacosException(400) → 500 on the packaged server. maxContent <= 0
// means ConfigMaxContent.
func CheckConfigParams(dataID, group, content string, maxContent int) error {
	return checkConfig(dataID, group, content, maxContent, false)
}

// CheckConfigWrite is CheckConfigParams for a write: it also refuses a
// dataId or group longer than the config_info columns (data_id
// varchar(255), group_id varchar(128)), where Java answers true and loses
// the write (Derby's truncation error is only logged). Reads and deletes
// are not checked, as in Java (a longer key is simply not there).
func CheckConfigWrite(dataID, group, content string, maxContent int) error {
	return checkConfig(dataID, group, content, maxContent, true)
}

func checkConfig(dataID, group, content string, maxContent int, write bool) error {
	if JavaIsBlank(dataID) || !ConfigIsValid(JavaTrim(dataID)) {
		return configNacos("invalid dataId : " + dataID)
	}
	if JavaIsBlank(group) || !ConfigIsValid(group) {
		return configNacos("invalid group : " + group)
	}
	if write && UTF16Len(dataID) > ConfigMaxDataIDLen {
		return configNacos("too long dataId, over " + strconv.Itoa(ConfigMaxDataIDLen))
	}
	if write && UTF16Len(group) > ConfigMaxGroupLen {
		return configNacos("too long group, over " + strconv.Itoa(ConfigMaxGroupLen))
	}
	if JavaIsBlank(content) {
		return configNacos("content is blank : " + content)
	}
	if maxContent <= 0 {
		maxContent = ConfigMaxContent
	}
	if len(content) > maxContent && UTF16Len(content) > maxContent {
		return configNacos("invalid content, over " + strconv.Itoa(maxContent))
	}
	return nil
}

// CheckTag is ParamUtils.checkParam(tag) (400).
func CheckTag(tag string) error {
	if JavaIsBlank(tag) {
		return nil
	}
	if !ConfigIsValid(JavaTrim(tag)) {
		return configIllegal("invalid tag : " + tag)
	}
	if UTF16Len(tag) > 16 {
		return configIllegal("too long tag, over 16")
	}
	return nil
}

// ConfigAdvance holds the optional publish fields checked by
// ParamUtils.checkParam(Map); nil means the parameter was absent.
type ConfigAdvance struct {
	ConfigTags, Desc, Use, Effect, Type, Schema *string
}

// CheckAdvance validates the advance fields (NacosException(400) → 500).
func CheckAdvance(a ConfigAdvance) error {
	if a.ConfigTags != nil {
		tags := JavaSplit(*a.ConfigTags, ",")
		if len(tags) > 5 {
			return configNacos("too much config_tags, over 5")
		}
		for _, t := range tags {
			if UTF16Len(t) > 64 {
				return configNacos("too long tag, over 64")
			}
		}
	}
	for _, c := range []struct {
		v    *string
		name string
		max  int
	}{{a.Desc, "desc", 128}, {a.Use, "use", 32}, {a.Effect, "effect", 32}, {a.Type, "type", 32}, {a.Schema, "schema", 32768}} {
		if c.v != nil && UTF16Len(*c.v) > c.max {
			return configNacos("too long " + c.name + ", over " + strconv.Itoa(c.max))
		}
	}
	return nil
}

// ProcessNamespace is NamespaceUtil.processNamespaceParameter: blank,
// "public" or "null" (any case) → ""; else trimmed.
func ProcessNamespace(tenant string) string {
	if JavaIsBlank(tenant) || JavaEqualsIgnoreCase(JavaTrim(tenant), "public") || JavaEqualsIgnoreCase(JavaTrim(tenant), "null") {
		return ""
	}
	return JavaTrim(tenant)
}

// Config types (api ConfigType) and their response content types
// (FileTypeEnum, config-v1.md §3.1).
var configTypes = map[string]bool{"properties": true, "xml": true, "json": true, "text": true, "html": true, "yaml": true, "unset": true}

// NormalizeConfigType is publish's type handling: blank or not a ConfigType
// value (case-sensitive) → "text".
func NormalizeConfigType(t string) string {
	if configTypes[t] {
		return t
	}
	return "text"
}

// ConfigContentType is the Content-Type GET /v1/cs/configs answers for a
// config type (FileTypeEnum by upper-cased name; unknown → text).
func ConfigContentType(t string) string {
	switch t { // the types publish stores, without upper-casing them
	case "json":
		return "application/json;charset=UTF-8"
	case "xml":
		return "application/xml;charset=UTF-8"
	case "html":
		return "text/html;charset=UTF-8"
	case "text", "properties", "yaml", "unset", "":
		return "text/plain;charset=UTF-8"
	}
	switch strings.ToUpper(t) {
	case "JSON":
		return "application/json;charset=UTF-8"
	case "XML":
		return "application/xml;charset=UTF-8"
	case "HTML", "HTM":
		return "text/html;charset=UTF-8"
	}
	return "text/plain;charset=UTF-8"
}

// ConfigTypeOfDataID infers the type of an imported config from its dataId
// extension (FileTypeEnum; unknown → text).
func ConfigTypeOfDataID(dataID string) string {
	i := strings.LastIndexByte(dataID, '.')
	if i < 0 {
		return "text"
	}
	switch strings.ToLower(dataID[i+1:]) {
	case "yml", "yaml":
		return "yaml"
	case "txt", "text":
		return "text"
	case "json":
		return "json"
	case "xml":
		return "xml"
	case "htm", "html":
		return "html"
	case "properties":
		return "properties"
	}
	return "text"
}

// GroupKey is GroupKey2.getKey: esc(dataId)+"+"+esc(group)[+"+"+esc(tenant)]
// where esc turns '%' into %25 and '+' into %2B (config-v1.md §4.6).
func GroupKey(dataID, group, tenant string) string {
	return string(AppendGroupKey(make([]byte, 0, len(dataID)+len(group)+len(tenant)+2), dataID, group, tenant))
}

// AppendGroupKey appends GroupKey(dataID, group, tenant) to dst (with a
// stack buffer, a lookup by group key costs no allocation).
func AppendGroupKey(dst []byte, dataID, group, tenant string) []byte {
	dst = appendGroupKeyEsc(dst, dataID)
	dst = append(dst, '+')
	dst = appendGroupKeyEsc(dst, group)
	if tenant != "" {
		dst = append(dst, '+')
		dst = appendGroupKeyEsc(dst, tenant)
	}
	return dst
}

func appendGroupKeyEsc(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, "+%") {
		return append(dst, s...)
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '+':
			dst = append(dst, "%2B"...)
		case '%':
			dst = append(dst, "%25"...)
		default:
			dst = append(dst, s[i])
		}
	}
	return dst
}

// ErrInvalidGroupKey is returned by ParseGroupKey.
var ErrInvalidGroupKey = errors.New("compat: invalid groupkey")

// ParseGroupKey is GroupKey2.parseKey.
func ParseGroupKey(key string) (dataID, group, tenant string, err error) {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '+':
			if len(parts) == 2 {
				return "", "", "", ErrInvalidGroupKey
			}
			parts = append(parts, cur.String())
			cur.Reset()
		case c == '%':
			if i+2 < len(key) && key[i+1] == '2' && key[i+2] == 'B' {
				cur.WriteByte('+')
			} else if i+2 < len(key) && key[i+1] == '2' && key[i+2] == '5' {
				cur.WriteByte('%')
			} else {
				return "", "", "", ErrInvalidGroupKey
			}
			i += 2
		default:
			cur.WriteByte(c)
		}
	}
	parts = append(parts, cur.String())
	switch len(parts) {
	case 2:
		dataID, group = parts[0], parts[1]
	case 3:
		dataID, group, tenant = parts[0], parts[1], parts[2]
	default:
		return "", "", "", ErrInvalidGroupKey
	}
	if dataID == "" || group == "" {
		return "", "", "", ErrInvalidGroupKey
	}
	return dataID, group, tenant, nil
}

// Long-poll separators (Constants.WORD_SEPARATOR / LINE_SEPARATOR).
const (
	ListenWordSep = '\x02'
	ListenLineSep = '\x01'
)

// ListenEntry is one parsed Listening-Configs entry.
type ListenEntry struct {
	DataID, Group, MD5, Tenant string
}

// GroupKey returns the entry's group key.
func (e ListenEntry) GroupKey() string { return GroupKey(e.DataID, e.Group, e.Tenant) }

// ErrInvalidProbe is the 400 "caused: invalid probeModify;" of a blank,
// undecodable or malformed Listening-Configs value.
var ErrInvalidProbe = configIllegal("invalid probeModify")

// JavaURLDecode is URLDecoder.decode(s, "UTF-8"): '+' → space, runs of %XX
// decoded as UTF-8 bytes (malformed sequences become U+FFFD); a '%' not
// followed by two hex digits is an error (IllegalArgumentException).
func JavaURLDecode(s string) (string, error) {
	if !strings.ContainsAny(s, "+%") {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '+':
			b.WriteByte(' ')
			i++
		case '%':
			var buf []byte
			for i < len(s) && s[i] == '%' {
				if i+2 >= len(s) {
					return "", errors.New("URLDecoder: Incomplete trailing escape (%) pattern")
				}
				v, err := javaParseHex2(s[i+1 : i+3])
				if err != nil {
					return "", err
				}
				buf = append(buf, v)
				i += 3
			}
			b.WriteString(strings.ToValidUTF8(string(buf), "\uFFFD"))
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), nil
}

// javaParseHex2 is Integer.parseInt(s, i+1, i+3, 16) as URLDecoder uses it
// on Java 17: a leading sign is allowed ("%+1" is byte 1, "%-1" is a
// negative value, refused), errors name the index inside the two chars.
func javaParseHex2(h string) (byte, error) {
	bad := func(at int) error {
		return errors.New(`URLDecoder: Illegal hex characters in escape (%) pattern - Error at index ` + strconv.Itoa(at) + ` in: "` + h + `"`)
	}
	neg, start := false, 0
	if h[0] < '0' {
		if h[0] != '-' && h[0] != '+' {
			return 0, bad(0)
		}
		neg, start = h[0] == '-', 1
	}
	var v byte
	for k := start; k < 2; k++ {
		d, ok := unhex(h[k])
		if !ok {
			return 0, bad(k)
		}
		v = v<<4 | d
	}
	if neg && v != 0 {
		return 0, errors.New("URLDecoder: Illegal hex characters in escape (%) pattern - negative value")
	}
	return v, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// JavaURLEncode is URLEncoder.encode(s, "UTF-8"): A-Z a-z 0-9 . - * _ kept,
// space → '+', every other byte of the UTF-8 form → %XX (upper-case hex).
func JavaURLEncode(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/2)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hexUpper[c>>4])
			b.WriteByte(hexUpper[c&0xF])
		}
	}
	return b.String()
}

// ParseListeningConfigs is MD5Util.getClientMd5Map on an already
// double-decoded value (config-v1.md §4.1). Entries come back in input order
// with later duplicates of a group key replacing earlier ones in place of the
// first occurrence's slot (the order is only used through
// ListenOrder). Errors are ErrInvalidProbe.
func ParseListeningConfigs(s string) ([]ListenEntry, error) {
	var (
		out    []ListenEntry
		index  map[listenID]int // past linearDedup entries
		tokens [3]string
		n      int
		start  int
	)
	// Entries are the same group key exactly when dataId, group and tenant
	// are equal (GroupKey's escaping is one to one): a few are compared
	// directly, more through a map of the three, no key built.
	const linearDedup = 32
	find := func(e ListenEntry) (int, bool) {
		if index != nil {
			j, ok := index[listenID{e.DataID, e.Group, e.Tenant}]
			return j, ok
		}
		for j, o := range out {
			if o.DataID == e.DataID && o.Group == e.Group && o.Tenant == e.Tenant {
				return j, true
			}
		}
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ListenWordSep:
			if n >= 3 {
				return nil, ErrInvalidProbe
			}
			tokens[n] = s[start:i]
			n++
			start = i + 1
		case ListenLineSep:
			var e ListenEntry
			last := s[start:i]
			switch n {
			case 2:
				e = ListenEntry{DataID: tokens[0], Group: tokens[1], MD5: last}
			case 3:
				e = ListenEntry{DataID: tokens[0], Group: tokens[1], MD5: tokens[2], Tenant: last}
			default:
				return nil, ErrInvalidProbe
			}
			n, start = 0, i+1
			if j, ok := find(e); ok {
				out[j] = e
				continue
			}
			if len(out) >= ConfigMaxListenEntries {
				return nil, ErrInvalidProbe
			}
			out = append(out, e)
			switch {
			case index != nil:
				index[listenID{e.DataID, e.Group, e.Tenant}] = len(out) - 1
			case len(out) > linearDedup:
				index = make(map[listenID]int, 2*len(out))
				for j, o := range out {
					index[listenID{o.DataID, o.Group, o.Tenant}] = j
				}
			}
		}
	}
	return out, nil
}

// listenID is what makes two listen entries the same group key.
type listenID struct{ dataID, group, tenant string }

// ListenOrder returns the group keys of entries in the iteration order of the
// HashMap(50) MD5Util.getClientMd5Map builds, which is the order Java lists
// changed keys in an immediate long-poll answer.
func ListenOrder(keys []string) []string {
	return JavaHashOrderStrings(keys, 50)
}

// ChangedKey is a changed config in a long-poll answer.
type ChangedKey struct {
	DataID, Group, Tenant string
}

// EncodeChangedKeys is MD5Util.compareMd5ResultString + println: each key as
// dataId W group [W tenant] L, URL-encoded, plus a trailing "\n". An empty
// list is "" (the caller sends an empty body).
func EncodeChangedKeys(keys []ChangedKey) string {
	if len(keys) == 0 {
		return ""
	}
	var raw strings.Builder
	for _, k := range keys {
		raw.WriteString(k.DataID)
		raw.WriteByte(ListenWordSep)
		raw.WriteString(k.Group)
		if !JavaIsBlank(k.Tenant) {
			raw.WriteByte(ListenWordSep)
			raw.WriteString(k.Tenant)
		}
		raw.WriteByte(ListenLineSep)
	}
	return JavaURLEncode(raw.String()) + "\n"
}

// ProbeModifyResponse is the legacy short-polling header value
// "dataId:group;..." for clients older than 2.0.4 (config-v1.md §4.4).
func ProbeModifyResponse(keys []ChangedKey) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k.DataID)
		b.WriteByte(':')
		b.WriteString(k.Group)
		b.WriteByte(';')
	}
	return b.String()
}

// VersionNumber is Protocol.getVersionNumber: split on '.', sum = sum*10 +
// int(part) for numeric parts ("1.4.8" → 148).
func VersionNumber(v string) int {
	sum := 0
	for _, p := range strings.Split(v, ".") {
		n, err := strconv.Atoi(p)
		if err != nil || strings.HasPrefix(p, "+") {
			continue
		}
		sum = sum*10 + n
	}
	return sum
}
