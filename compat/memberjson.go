package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// ReportedMember is a Member JSON as a node reports itself on
// POST /v1/core/cluster/report (console-auth-core-v1.md §4.2), read the way
// Spring's Jackson reads core/cluster/Member.
type ReportedMember struct {
	IP string
	// Port is -1 when absent (Member's field default).
	Port int
	// State is the enum name; "" when absent or null.
	State string
	// ExtendInfo holds the reported map with numbers as json.Number; nil
	// when absent or null.
	ExtendInfo map[string]any
	// Address is the "address" property as sent ("" when absent or null);
	// see EffectiveAddress.
	Address string
}

// Check is Member.check(): ip and address not blank, port not -1.
func (m ReportedMember) Check() bool {
	return strings.TrimSpace(m.IP) != "" && strings.TrimSpace(m.Address) != "" && m.Port != -1
}

// EffectiveAddress is Member.getAddress(): the address property, or ip:port
// when it is blank.
func (m ReportedMember) EffectiveAddress() string {
	if strings.TrimSpace(m.Address) == "" {
		return m.IP + ":" + strconv.Itoa(m.Port)
	}
	return m.Address
}

// MemberStates are the NodeState enum names.
var memberStates = map[string]bool{
	MemberStarting: true, MemberUp: true, MemberSuspicious: true, MemberDown: true, MemberIsolation: true,
}

// ParseReportedMember reads a @RequestBody Member the way Spring's Jackson
// does: exact property names, unknown ones ignored, port coerced from numbers
// and numeric strings, state an enum name, extendInfo a map. ok=false means a
// JSON null body; err is a parse error (its text follows Jackson's wording
// only loosely).
func ParseReportedMember(body []byte) (m ReportedMember, ok bool, err error) {
	m.Port = -1
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return m, false, err
	}
	if raw == nil {
		return m, false, nil
	}
	str := func(k string) (string, error) {
		v, present := raw[k]
		if !present {
			return "", nil
		}
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return "", err
		}
		switch t := x.(type) {
		case nil:
			return "", nil
		case string:
			return t, nil
		case float64, bool:
			return strings.TrimSpace(string(v)), nil
		}
		return "", fmt.Errorf("cannot deserialize String from %s", v)
	}
	if m.IP, err = str("ip"); err != nil {
		return m, false, err
	}
	if m.Address, err = str("address"); err != nil {
		return m, false, err
	}
	if v, present := raw["port"]; present {
		p, err := str("port")
		if err != nil {
			return m, false, err
		}
		switch {
		case string(bytes.TrimSpace(v)) == "null", p == "":
			m.Port = 0
		default:
			n, perr := strconv.ParseInt(p, 10, 32)
			if perr != nil {
				f, ferr := strconv.ParseFloat(p, 64)
				if ferr != nil || f >= 1<<31 || f < -(1<<31) {
					return m, false, fmt.Errorf("cannot deserialize value of type `int` from %s", v)
				}
				n = int64(f)
			}
			m.Port = int(n)
		}
	}
	if _, present := raw["state"]; present {
		s, err := str("state")
		if err != nil {
			return m, false, err
		}
		if s != "" && !memberStates[s] {
			return m, false, fmt.Errorf("cannot deserialize value of type `com.alibaba.nacos.core.cluster.NodeState` from String %q: not one of the values accepted for Enum class: [STARTING, UP, SUSPICIOUS, DOWN, ISOLATION]", s)
		}
		m.State = s
	}
	if v, present := raw["extendInfo"]; present {
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		var x any
		if err := d.Decode(&x); err != nil {
			return m, false, err
		}
		switch t := x.(type) {
		case nil:
		case map[string]any:
			m.ExtendInfo = t
		default:
			return m, false, fmt.Errorf("cannot deserialize Map from %s", v)
		}
	}
	return m, true, nil
}
