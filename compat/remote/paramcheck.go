package remote

import (
	"fmt"
	"strconv"
	"unicode/utf16"

	"github.com/nacosd/nacosd/compat"
)

// ParamInfo is what Java's RemoteParamCheckFilter extracts from a request
// for the default param checker (ParamInfo); "" fields are not checked.
type ParamInfo struct {
	NamespaceID, DataID, Group string
	// naming's fields: ServiceName, Clusters (comma-separated), Cluster,
	// IP, Port (a decimal text, "" unchecked) and Metadata.
	ServiceName, Clusters, Cluster, IP, Port string
	Metadata                                 map[string]string
	// Err is the message of an extractor that failed (Java's extractor
	// threw): the check fails with it.
	Err string
}

// CheckParams is DefaultParamChecker.checkParamInfoFormat, in Java's order
// (namespaceId, dataId, serviceName, group, clusters, cluster, ip, port,
// metadata). It returns the message Java puts after "Param check
// invalid:", or "" when the parameters pass. Lengths count UTF-16 units,
// as String.length does.
func CheckParams(infos []ParamInfo) string {
	for _, p := range infos {
		if p.Err != "" {
			return p.Err
		}
		if msg := checkFormat("namespaceId/tenant", p.NamespaceID, 64, isNamespaceChar); msg != "" {
			return msg
		}
		if msg := checkFormat("dataId", p.DataID, 256, isDataIDChar); msg != "" {
			return msg
		}
		if msg := checkServiceName(p.ServiceName); msg != "" {
			return msg
		}
		if msg := checkFormat("group", p.Group, 128, isDataIDChar); msg != "" {
			return msg
		}
		if !compat.JavaIsBlank(p.Clusters) {
			for _, c := range compat.JavaSplit(p.Clusters, ",") {
				if msg := checkCluster(c); msg != "" {
					return msg
				}
			}
		}
		if msg := checkCluster(p.Cluster); msg != "" {
			return msg
		}
		if msg := checkFormat("ip", p.IP, 128, isIPChar); msg != "" {
			return msg
		}
		if msg := checkPort(p.Port); msg != "" {
			return msg
		}
		if msg := checkMetadata(p.Metadata); msg != "" {
			return msg
		}
	}
	return ""
}

func checkCluster(c string) string {
	if compat.JavaIsBlank(c) {
		return ""
	}
	if javaLen(c) > 64 {
		return "Param 'cluster' is illegal, the param length should not exceed 64."
	}
	for _, r := range c {
		if !isNamespaceChar(r) {
			return "Param 'cluster' is illegal, illegal characters should not appear in the param."
		}
	}
	return ""
}

// checkServiceName is checkServiceNameFormat: at most 512 units, matching
// ^(?!@).((?!@@)[^\u4E00-\u9FA5\s])*$ — a first character that is not
// '@' (nor a line terminator), then no "@@", no CJK ideograph, no
// whitespace.
func checkServiceName(v string) string {
	if compat.JavaIsBlank(v) {
		return ""
	}
	if javaLen(v) > 512 {
		return "Param 'serviceName' is illegal, the param length should not exceed 512."
	}
	bad := "Param 'serviceName' is illegal, illegal characters should not appear in the param."
	rs := []rune(v)
	if rs[0] == '@' || isLineTerminator(rs[0]) {
		return bad
	}
	for i := 1; i < len(rs); i++ {
		if rs[i] == '@' && i+1 < len(rs) && rs[i+1] == '@' || isCJK(rs[i]) || isJavaSpace(rs[i]) {
			return bad
		}
	}
	return ""
}

func checkPort(port string) string {
	if compat.JavaIsBlank(port) {
		return ""
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil || n < 0 || n > 65535 {
		return "Param 'port' is illegal, the value should be between 0 and 65535."
	}
	return ""
}

// checkMetadata is checkMetadataFormat: the lengths of the non-blank keys
// and values together, at most 1024.
func checkMetadata(m map[string]string) string {
	total := 0
	for k, v := range m {
		if !compat.JavaIsBlank(k) {
			total += javaLen(k)
		}
		if !compat.JavaIsBlank(v) {
			total += javaLen(v)
		}
	}
	if total > 1024 {
		return "Param 'Metadata' is illegal, the param length should not exceed 1024."
	}
	return ""
}

// isIPChar is [^\u4E00-\u9FA5\s].
func isIPChar(r rune) bool { return !isCJK(r) && !isJavaSpace(r) }

func isCJK(r rune) bool { return r >= 0x4E00 && r <= 0x9FA5 }

// isJavaSpace is the regex class \s: [ \t\n\x0B\f\r].
func isJavaSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == 0x0B || r == '\f' || r == '\r'
}

// isLineTerminator is what the regex '.' does not match.
func isLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x85 || r == 0x2028 || r == 0x2029
}

// ParamCheckPrefix starts the message of a refused parameter.
const ParamCheckPrefix = "Param check invalid:"

func checkFormat(name, v string, max int, ok func(r rune) bool) string {
	if compat.JavaIsBlank(v) {
		return ""
	}
	if javaLen(v) > max {
		return fmt.Sprintf("Param '%s' is illegal, the param length should not exceed %d.", name, max)
	}
	for _, r := range v {
		if !ok(r) {
			return "Param '" + name + "' is illegal, illegal characters should not appear in the param."
		}
	}
	return ""
}

// isNamespaceChar is [\w-] (ASCII \w).
func isNamespaceChar(r rune) bool {
	return r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// isDataIDChar is [a-zA-Z0-9-_:.].
func isDataIDChar(r rune) bool { return isNamespaceChar(r) || r == ':' || r == '.' }

func javaLen(s string) int {
	n := 0
	for _, r := range s {
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}
