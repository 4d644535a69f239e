package jepsen

import (
	"fmt"
	"os/exec"
	"strings"
)

// RuleTag is the comment on every iptables rule the checker adds; rules
// carrying it (and naming only the checker's addresses) are removed after
// a run and before the next one, so an interrupted run leaves nothing
// behind for long.
const RuleTag = "nacosd-jepsen"

// Firewall cuts nodes off with iptables DROP rules in INPUT on lo,
// matching only pairs of the nodes' own addresses: the clients, on
// another address, still reach a node that is cut off.
type Firewall struct {
	IPs []string // the only addresses rules may name
}

func iptables(args ...string) error {
	out, err := exec.Command("iptables", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("jepsen: iptables %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Available reports whether iptables can be used (installed, root).
func (f *Firewall) Available() error {
	if _, err := exec.LookPath("iptables"); err != nil {
		return fmt.Errorf("jepsen: iptables not installed (apt-get install iptables): %w", err)
	}
	return iptables("-S", "INPUT")
}

func (f *Firewall) ours(ip string) bool {
	ip = strings.TrimSuffix(ip, "/32")
	for _, x := range f.IPs {
		if x == ip {
			return true
		}
	}
	return false
}

// Partition drops every packet between ip and each of others, both ways.
func (f *Firewall) Partition(ip string, others []string) error {
	if !f.ours(ip) {
		return fmt.Errorf("jepsen: %s is not one of the checker's addresses", ip)
	}
	for _, o := range others {
		if !f.ours(o) {
			return fmt.Errorf("jepsen: %s is not one of the checker's addresses", o)
		}
		for _, p := range [][2]string{{ip, o}, {o, ip}} {
			if err := iptables("-I", "INPUT", "-s", p[0], "-d", p[1], "-m", "comment", "--comment", RuleTag, "-j", "DROP"); err != nil {
				return err
			}
		}
	}
	return nil
}

// Heal removes every rule carrying RuleTag whose addresses are the
// checker's, and returns how many it removed.
func (f *Firewall) Heal() (int, error) {
	out, err := exec.Command("iptables", "-S", "INPUT").Output()
	if err != nil {
		return 0, fmt.Errorf("jepsen: iptables -S INPUT: %w", err)
	}
	removed := 0
	var firstErr error
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "-A" || !strings.Contains(line, RuleTag) {
			continue
		}
		mine := true
		for i, fl := range fields {
			if (fl == "-s" || fl == "-d") && i+1 < len(fields) && !f.ours(fields[i+1]) {
				mine = false
			}
		}
		if !mine {
			continue
		}
		args := append([]string{"-D"}, fields[1:]...)
		for i, a := range args {
			args[i] = strings.Trim(a, `"`)
		}
		if err := iptables(args...); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		removed++
	}
	return removed, firstErr
}
