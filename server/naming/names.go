// Package naming is the Nacos 1.4.8 naming domain: namespaces, services,
// clusters and instances; registration, heartbeats and expiry of ephemeral
// instances, persistent instances and service metadata kept in raftstore, and
// the instance/list view clients poll and receive as UDP pushes. It does not
// import fiber: the HTTP layer binds parameters into the request types here.
package naming

import (
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// Well-known names (naming-v1.md §2.1).
const (
	DefaultNamespace = "public"
	DefaultGroup     = "DEFAULT_GROUP"
	DefaultCluster   = "DEFAULT"
	GroupSeparator   = "@@"
)

// serviceNameOK is Java's service name pattern ^[0-9a-zA-Z@\.:_-]+$ and
// clusterNameOK its cluster name pattern ^[0-9a-zA-Z-]+$, as byte loops
// (every register checks the cluster name; the regexp was 4 % of it).
func serviceNameOK(s string) bool { return nameOK(s, "@.:_") }

func clusterNameOK(s string) bool { return nameOK(s, "") }

// nameOK: s is not empty and every byte is an ASCII letter, digit or '-',
// or one of extra.
func nameOK(s, extra string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// GroupedName applies DistroFilter's rule: a name without "@@" gets
// "<group>@@" in front (group blank → DEFAULT_GROUP); blank stays blank.
func GroupedName(serviceName, groupName string) string {
	if strings.TrimSpace(serviceName) == "" || strings.Contains(serviceName, GroupSeparator) {
		return serviceName
	}
	if strings.TrimSpace(groupName) == "" {
		groupName = DefaultGroup
	}
	return groupName + GroupSeparator + serviceName
}

// CheckServiceNameFormat is NamingUtils.checkServiceNameFormat.
//
// Java splits s on "@@" (trailing empty parts dropped) and wants at least
// two parts, the first not empty; this reads the same without splitting.
func CheckServiceNameFormat(s string) error {
	i := strings.Index(s, GroupSeparator)
	if i < 0 {
		return compat.ErrServiceNameFormat()
	}
	rest := s[i+len(GroupSeparator):]
	for strings.HasPrefix(rest, GroupSeparator) {
		rest = rest[len(GroupSeparator):]
	}
	if rest == "" { // every part after the first is empty: dropped
		return compat.ErrServiceNameFormat()
	}
	if i == 0 {
		return compat.ErrEmptyGroup()
	}
	return nil
}

// BareName is NamingUtils.getServiceName.
func BareName(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	if !strings.Contains(s, GroupSeparator) {
		return s
	}
	parts := compat.JavaSplit(s, GroupSeparator)
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// GroupOf is NamingUtils.getGroupName.
func GroupOf(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	if !strings.Contains(s, GroupSeparator) {
		return DefaultGroup
	}
	parts := compat.JavaSplit(s, GroupSeparator)
	if len(parts) == 0 {
		return ""
	}
	return parts[0]
}

// ServiceKey is "<namespaceId>##<groupedServiceName>" (assembleFullServiceName).
func ServiceKey(namespaceID, grouped string) string { return namespaceID + "##" + grouped }

// SplitServiceKey undoes ServiceKey; a key without "##" is in public.
func SplitServiceKey(key string) (namespaceID, grouped string) {
	if i := strings.Index(key, "##"); i >= 0 {
		return key[:i], key[i+2:]
	}
	return DefaultNamespace, key
}
