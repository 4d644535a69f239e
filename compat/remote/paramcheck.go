package remote

import (
	"fmt"
	"unicode/utf16"

	"github.com/nacosd/nacosd/compat"
)

// ParamInfo is what Java's RemoteParamCheckFilter extracts from a request
// for the default param checker (ParamInfo); "" fields are not checked.
type ParamInfo struct {
	NamespaceID, DataID, Group string
}

// CheckParams is DefaultParamChecker.checkParamInfoFormat for the fields of
// config requests, in Java's order (namespaceId, dataId, group). It returns
// the message Java puts after "Param check invalid:", or "" when the
// parameters pass. Lengths count UTF-16 units, as String.length does.
func CheckParams(infos []ParamInfo) string {
	for _, p := range infos {
		if msg := checkFormat("namespaceId/tenant", p.NamespaceID, 64, isNamespaceChar); msg != "" {
			return msg
		}
		if msg := checkFormat("dataId", p.DataID, 256, isDataIDChar); msg != "" {
			return msg
		}
		if msg := checkFormat("group", p.Group, 128, isDataIDChar); msg != "" {
			return msg
		}
	}
	return ""
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
