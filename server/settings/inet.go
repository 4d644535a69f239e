package settings

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"strings"
)

// inetOptions are the nacos.inetutils.* properties (console-auth-core-v1.md §4.5).
type inetOptions struct {
	siteLocalOnly bool
	preferred     []string // regexes or prefixes
	ignored       []*regexp.Regexp
	preferIPv6    bool
}

// iface is what address selection needs of a network interface.
type iface struct {
	index int
	name  string
	up    bool
	loop  bool
	addrs []net.IP
}

func systemInterfaces() []iface {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	out := make([]iface, 0, len(ifs))
	for _, ifc := range ifs {
		it := iface{index: ifc.Index, name: ifc.Name, up: ifc.Flags&net.FlagUp != 0, loop: ifc.Flags&net.FlagLoopback != 0}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				it.addrs = append(it.addrs, ipn.IP)
			}
		}
		out = append(out, it)
	}
	return out
}

// chooseIP is InetUtils.findFirstNonLoopbackAddress: among the up,
// non-loopback, non-ignored interfaces, the one with the lowest index that
// has a suitable address wins, and within it the last suitable address. It
// returns "" when nothing qualifies.
func chooseIP(ifs []iface, o inetOptions) (ip, ifName string) {
	best := -1
	for _, it := range ifs {
		if !it.up || it.loop || (best >= 0 && it.index >= best) || ignoredIface(it.name, o.ignored) {
			continue
		}
		for _, a := range it.addrs {
			v4 := a.To4() != nil
			if a.IsLoopback() || o.preferIPv6 == v4 {
				continue
			}
			if o.siteLocalOnly && !a.IsPrivate() {
				continue
			}
			if !preferredAddr(a.String(), o.preferred) {
				continue
			}
			best, ip, ifName = it.index, a.String(), it.name
			if !v4 {
				ip = "[" + ip + "]"
			}
		}
	}
	return ip, ifName
}

func ignoredIface(name string, ignored []*regexp.Regexp) bool {
	for _, re := range ignored {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

// preferredAddr is InetUtils.isPreferredAddress: no preference accepts all;
// otherwise the address must match one regex or start with one prefix.
func preferredAddr(addr string, preferred []string) bool {
	if len(preferred) == 0 {
		return true
	}
	for _, p := range preferred {
		if strings.HasPrefix(addr, p) {
			return true
		}
		if re, err := regexp.Compile("^(?:" + p + ")$"); err == nil && re.MatchString(addr) {
			return true
		}
	}
	return false
}

// validAddress is Java's check on an explicit address: an IP or a domain
// name, else "nacos address <x> is not ip".
func validAddress(a string) error {
	h := strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
	if net.ParseIP(h) != nil {
		return nil
	}
	if domainRe.MatchString(a) {
		return nil
	}
	return fmt.Errorf("nacos address %s is not ip", a)
}

var domainRe = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,62})(\.[A-Za-z0-9]([A-Za-z0-9-]{0,62}))*\.?$`)

// hostname is what Java's preferHostnameOverIp gives: the local host name.
func hostname() (string, error) {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "", fmt.Errorf("settings: local host name: %v", err)
	}
	return h, nil
}
