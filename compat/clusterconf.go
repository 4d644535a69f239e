package compat

import (
	"bufio"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
)

// DefaultMemberPort is the port of a cluster.conf entry without one.
const DefaultMemberPort = 8848

// ParseClusterConf reads cluster.conf as EnvUtil.analyzeClusterConf and
// MemberUtil.readServerConf do (console-auth-core-v1.md §4.4): lines
// trimmed, empty lines skipped, a line starting with '#' ignored, text from
// the first '#' on a line a comment, several comma-separated addresses per
// line, `ip[:port]` with port 8848 by default and IPv6 in brackets. Any
// entry that does not parse (a blank line part, a bad port, a query string)
// makes the whole file invalid, as in Java, which then keeps its current
// membership. The result is the member addresses ("ip:port"), sorted and
// without duplicates.
func ParseClusterConf(text string) ([]string, error) {
	var entries []string
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Text()
		if raw == "" {
			continue // IoUtils.readLines drops empty lines, not blank ones
		}
		s := strings.TrimSpace(raw)
		if strings.HasPrefix(s, "#") {
			continue
		}
		if i := strings.Index(s, "#"); i >= 0 {
			s = strings.TrimSpace(s[:i])
		}
		parts := []string{s}
		if strings.Index(s, ",") > 0 {
			parts = JavaSplit(s, ",")
		}
		for _, p := range parts {
			addr, err := ParseMemberAddress(strings.TrimSpace(p))
			if err != nil {
				return nil, fmt.Errorf("cluster.conf line %d: %w", line, err)
			}
			entries = append(entries, addr)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cluster.conf: %w", err)
	}
	return SortedMembers(entries), nil
}

// ParseMemberList reads nacos.member.list or NACOS_SERVERS entries (already
// split) with the cluster.conf address rules.
func ParseMemberList(items []string) ([]string, error) {
	out := make([]string, 0, len(items))
	for _, it := range items {
		if strings.TrimSpace(it) == "" {
			continue
		}
		addr, err := ParseMemberAddress(strings.TrimSpace(it))
		if err != nil {
			return nil, err
		}
		out = append(out, addr)
	}
	return SortedMembers(out), nil
}

// SortedMembers sorts addresses as Java's String order does (MemberUtil.
// simpleMembers) and drops duplicates.
func SortedMembers(addrs []string) []string {
	out := append([]string(nil), addrs...)
	sort.Strings(out)
	j := 0
	for i, a := range out {
		if i > 0 && a == out[j-1] {
			continue
		}
		out[j] = a
		j++
	}
	return out[:j]
}

// ParseMemberAddress is MemberUtil.singleParse's address rule: `ip[:port]`
// or `host[:port]`, IPv6 in brackets, port 8848 when absent. It returns the
// member address ("ip:port", IPv6 bracketed).
func ParseMemberAddress(s string) (string, error) {
	host, port, err := SplitMemberAddress(s)
	if err != nil {
		return "", err
	}
	return JoinMemberAddress(host, port), nil
}

// SplitMemberAddress splits `ip[:port]` into host (IPv6 without brackets)
// and port (8848 when absent).
func SplitMemberAddress(s string) (host string, port int, err error) {
	if strings.TrimSpace(s) == "" {
		return "", 0, fmt.Errorf("ip and port string cannot be empty!")
	}
	port = DefaultMemberPort
	var portText string
	if strings.HasPrefix(s, "[") && strings.Contains(s, "]") {
		end := strings.Index(s, "]")
		host = s[1:end]
		if a, perr := netip.ParseAddr(host); perr != nil || !a.Is6() {
			return "", 0, fmt.Errorf("The IPv6 address(%q) is incorrect.", s[:end+1])
		}
		if rest := s[end+1:]; rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return "", 0, fmt.Errorf("member address %q: bad port", s)
			}
			portText = rest[1:]
		}
	} else {
		parts := JavaSplit(s, ":")
		host = parts[0]
		if len(parts) > 1 {
			portText = parts[1]
		}
		if len(parts) > 2 {
			return "", 0, fmt.Errorf("member address %q: IPv6 addresses must be in brackets", s)
		}
	}
	if host == "" {
		return "", 0, fmt.Errorf("member address %q: no host", s)
	}
	if portText != "" {
		n, perr := strconv.ParseInt(portText, 10, 32)
		if perr != nil {
			return "", 0, fmt.Errorf("member address %q: For input string: %q", s, portText)
		}
		port = int(n)
	}
	if port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("member address %q: port %d out of range", s, port)
	}
	return host, port, nil
}

// JoinMemberAddress is Member.getAddress: ip:port with IPv6 bracketed.
func JoinMemberAddress(host string, port int) string {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(port)
}

// RaftPort is MemberUtil.calculateRaftPort: the member's port − 1000.
func RaftPort(port int) int { return port - 1000 }
