package jepsen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Names is the key space of the workload: small, so that ops collide.
type Names struct {
	Group      string   // config group
	ConfigKeys []string // dataIds
	PIServices []string // persistent instance services
	Slots      int      // instance slots per persistent service
	PIBase     int      // slot i is ClientIP:PIBase+i
	SvcNames   []string // services whose metadata is written
	EphNames   []string // services of the beating instances
	EphBase    int      // beater i is ClientIP:EphBase+i
	ClientIP   string   // the clients' address (instances are registered on it too)
	BetaIPs    string   // the beta's IPs: never a client's, so a plain read returns the main content
}

// DefaultNames is the key space the report describes.
func DefaultNames(clientIP string, port int) Names {
	return Names{
		Group:      "JEPSEN",
		ConfigKeys: []string{"jk0", "jk1", "jk2", "jk3", "jk4"},
		PIServices: []string{"jps0", "jps1", "jps2"},
		Slots:      4,
		PIBase:     port + 60,
		SvcNames:   []string{"jsm0", "jsm1"},
		EphNames:   []string{"jes0", "jes1", "jes2"},
		EphBase:    port + 70,
		ClientIP:   clientIP,
		BetaIPs:    "192.0.2.1,192.0.2.2",
	}
}

// exec runs op against its node with client cl and records it.
func (w *Workload) exec(cl *Client, op *Op) { w.execVia(cl, nil, op) }

// execVia is exec in a session that may be a gRPC one (gs not nil): the
// ops a 2.x client has a request for go over gRPC, as do ops made with
// Proto "grpc" (a 2.x client's instance).
func (w *Workload) execVia(cl *Client, gs *grpcSession, op *Op) {
	n := w.c.Nodes[op.Node]
	if gs != nil && overGRPC(op.Kind) {
		op.Proto = "grpc"
	}
	w.rec.Invoke(op)
	var o Outcome
	if op.Proto == "grpc" {
		o = w.performGRPC(gs, op)
	} else {
		o = w.perform(cl, n, op)
	}
	w.rec.Complete(op, o)
}

// perform sends op and reads its answer into op.
func (w *Workload) perform(cl *Client, n *Node, op *Op) Outcome {
	ctx := context.Background()
	nm := w.names
	timeout := w.timeout
	if op.Client >= samplerClient && op.Client < finalClient {
		timeout = w.sampleTimeout
	}
	cfgQ := url.Values{"dataId": {op.Key}, "group": {nm.Group}}
	switch op.Kind {
	case CfgPut, CfgCAS, BetaPut:
		form := url.Values{"dataId": {op.Key}, "group": {nm.Group}, "content": {op.Value}}
		hdr := map[string]string{}
		if op.Kind == CfgCAS {
			hdr["casMd5"] = op.CAS
		}
		if op.Kind == BetaPut {
			hdr["betaIps"] = nm.BetaIPs
		}
		st, body, err := cl.Do(ctx, n, http.MethodPost, "/nacos/v1/cs/configs", nil, form, hdr, timeout)
		return classify(op, st, body, err, bodyIs("true"))
	case CfgDel:
		st, body, err := cl.Do(ctx, n, http.MethodDelete, "/nacos/v1/cs/configs", cfgQ, nil, nil, timeout)
		return classify(op, st, body, err, bodyIs("true"))
	case BetaStop:
		q := url.Values{"dataId": {op.Key}, "group": {nm.Group}, "beta": {"true"}}
		st, body, err := cl.Do(ctx, n, http.MethodDelete, "/nacos/v1/cs/configs", q, nil, nil, timeout)
		o := classify(op, st, body, err, func(b string) bool {
			var r restResult
			return json.Unmarshal([]byte(b), &r) == nil && r.Code == 200 && string(r.Data) == "true"
		})
		var r restResult
		if o == Unknown && st == http.StatusOK && json.Unmarshal([]byte(body), &r) == nil && string(r.Data) == "false" {
			// Java's well-formed refusal {"code":500,"message":"remove
			// beta data error","data":false}: the beta was not removed
			return Fail
		}
		return o
	case CfgGet:
		st, body, err := cl.Get(ctx, n, "/nacos/v1/cs/configs", cfgQ, timeout)
		if err == nil && st == http.StatusNotFound && strings.Contains(body, "config data not exist") {
			op.Status = st
			return OK
		}
		o := classify(op, st, body, err, nil)
		if o == OK {
			op.Found, op.Read = true, body
		}
		return o
	case BetaGet:
		q := url.Values{"dataId": {op.Key}, "group": {nm.Group}, "beta": {"true"}}
		st, body, err := cl.Get(ctx, n, "/nacos/v1/cs/configs", q, timeout)
		o := classify(op, st, body, err, nil)
		if o == OK {
			v, found, perr := parseBeta(body)
			if perr != nil {
				op.Err = perr.Error()
				return Unknown
			}
			op.Found, op.Read = found, v
		}
		return o
	case PIReg, EphReg:
		eph := op.Kind == EphReg
		ip, port := nm.ClientIP, nm.PIBase+op.Slot
		meta := fmt.Sprintf(`{"v":%q}`, op.Value)
		if eph {
			port, meta = nm.EphBase+op.Slot, `{"beater":"`+strconv.Itoa(op.Slot)+`"}`
		}
		form := url.Values{"serviceName": {op.Key}, "ip": {ip}, "port": {strconv.Itoa(port)},
			"ephemeral": {strconv.FormatBool(eph)}, "metadata": {meta}}
		st, body, err := cl.Do(ctx, n, http.MethodPost, "/nacos/v1/ns/instance", nil, form, nil, timeout)
		return classify(op, st, body, err, bodyIs("ok"))
	case PIDereg, EphDereg:
		eph := op.Kind == EphDereg
		port := nm.PIBase + op.Slot
		if eph {
			port = nm.EphBase + op.Slot
		}
		q := url.Values{"serviceName": {op.Key}, "ip": {nm.ClientIP}, "port": {strconv.Itoa(port)}, "ephemeral": {strconv.FormatBool(eph)}}
		st, body, err := cl.Do(ctx, n, http.MethodDelete, "/nacos/v1/ns/instance", q, nil, nil, timeout)
		return classify(op, st, body, err, bodyIs("ok"))
	case PIMeta:
		var insts []string
		for i := 0; i < nm.Slots; i++ {
			if op.Mask&(1<<i) != 0 {
				insts = append(insts, fmt.Sprintf(`{"ip":%q,"port":%d,"ephemeral":false}`, nm.ClientIP, nm.PIBase+i))
			}
		}
		form := url.Values{"serviceName": {op.Key}, "metadata": {fmt.Sprintf(`{"m":%q}`, op.Value)}}
		if op.AllPersist {
			form.Set("consistencyType", "persist")
		} else {
			form.Set("instances", "["+strings.Join(insts, ",")+"]")
		}
		st, body, err := cl.Do(ctx, n, http.MethodPut, "/nacos/v1/ns/instance/metadata/batch", nil, form, nil, timeout)
		o := classify(op, st, body, err, nil)
		if o == OK {
			m, perr := parseUpdated(body, nm.ClientIP, nm.PIBase, nm.Slots)
			if perr != nil {
				op.Err = perr.Error()
				return Unknown
			}
			op.Updated = m
		}
		return o
	case SvcPut, PISvcPut:
		u, th := op.Value, "0"
		if op.Kind == SvcPut {
			i := strings.LastIndexByte(op.Value, '|')
			u, th = op.Value[:i], op.Value[i+1:]
		}
		key := "u"
		if op.Kind == PISvcPut {
			key = "r"
		}
		form := url.Values{"serviceName": {op.Key}, "protectThreshold": {th}, "metadata": {key + "=" + u}}
		st, body, err := cl.Do(ctx, n, http.MethodPut, "/nacos/v1/ns/service", nil, form, nil, timeout)
		return classify(op, st, body, err, bodyIs("ok"))
	case SvcGet:
		st, body, err := cl.Get(ctx, n, "/nacos/v1/ns/service", url.Values{"serviceName": {op.Key}}, timeout)
		o := classify(op, st, body, err, nil)
		if o == OK {
			v, found, perr := parseService(body)
			if perr != nil {
				op.Err = perr.Error()
				return Unknown
			}
			op.Found, op.Read = found, v
		}
		return o
	case PIList, EphList:
		q := url.Values{"serviceName": {op.Key}, "healthyOnly": {"false"}}
		st, body, err := cl.Get(ctx, n, "/nacos/v1/ns/instance/list", q, timeout)
		o := classify(op, st, body, err, nil)
		if o != OK {
			return o
		}
		var perr error
		if op.Kind == PIList {
			op.Slots, op.Extra, perr = parseSlots(body, nm.ClientIP, nm.PIBase, nm.Slots)
		} else {
			op.Insts, perr = parseInsts(body)
		}
		if perr != nil {
			op.Err = perr.Error()
			return Unknown
		}
		return OK
	case EphBeat:
		port := nm.EphBase + op.Slot
		beat := fmt.Sprintf(`{"cluster":"DEFAULT","ip":%q,"metadata":{"beater":"%d"},"period":1000,"port":%d,"scheduled":false,"serviceName":"DEFAULT_GROUP@@%s","stopped":false,"weight":1.0}`,
			nm.ClientIP, op.Slot, port, op.Key)
		form := url.Values{"serviceName": {"DEFAULT_GROUP@@" + op.Key}, "beat": {beat}}
		st, body, err := cl.Do(ctx, n, http.MethodPut, "/nacos/v1/ns/instance/beat", nil, form, nil, timeout)
		o := classify(op, st, body, err, nil)
		if o == OK {
			var r struct {
				Code int `json:"code"`
			}
			if json.Unmarshal([]byte(body), &r) != nil {
				op.Err = trim(body)
				return Unknown
			}
			if r.Code != 10200 {
				op.Err = trim(body)
				return Fail // 20404: the owner does not know the instance
			}
		}
		return o
	}
	op.Err = "unknown kind"
	return Fail
}
