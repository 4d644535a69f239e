package jepsen

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
)

// A gRPC session is a worker's session whose config and persistent
// instance ops go as a Nacos 2.x client sends them, over gRPC to the
// node's HTTP port + 1000 (ConfigPublish/Query/RemoveRequest,
// PersistentInstanceRequest, ServiceQueryRequest): the 2.x edge's own
// handlers and its way to the raft leader (issue 24). The ops without a
// 2.x request (CAS, betas, metadata batches, service updates) go over
// HTTP to the same node, so read-your-writes is checked across both.
type grpcSession struct {
	addr    string
	localIP string
	cl      *remoteclient.Client
}

func newGRPCSession(n *Node, localIP string) *grpcSession {
	return &grpcSession{addr: n.GRPCAddr(), localIP: localIP}
}

func (g *grpcSession) close() {
	if g != nil && g.cl != nil {
		g.cl.Close()
		g.cl = nil
	}
}

// grpcBeater is a Nacos 2.x client's ephemeral instance: registered on a
// connection to a node (InstanceRequest), kept alive by the connection,
// whose health is checked every second (HealthCheckRequest, recorded as
// its beat). When the check or the connection fails it connects to the
// next node and registers again, as the Java client's redo does. At its
// stop it closes the connection (the server removes what the connection
// held), after deregistering the instance when it deregisters.
func (w *Workload) grpcBeater(stop <-chan struct{}, b *Beater) {
	var gs *grpcSession
	defer func() { gs.close() }()
	node, registered := -1, false
	grpcOp := func(bs beaterSession, kind Kind) *Op {
		op := bs.op(node, kind)
		op.Proto = "grpc"
		w.execVia(nil, gs, op)
		return op
	}
	w.beatLoop(stop, b, func(bs beaterSession) {
		if node < 0 {
			node = bs.rng.IntN(len(w.c.Nodes))
		}
		for try := 0; try < len(w.c.Nodes); try++ {
			if gs == nil {
				gs, registered = newGRPCSession(w.c.Nodes[node], w.names.ClientIP), false
			}
			kind := EphBeat
			if !registered {
				kind = EphReg
			}
			if grpcOp(bs, kind).Outcome == OK {
				registered = true
				return
			}
			// the node did not answer, or the connection broke: the next
			// node, a new connection, the instance registered again
			gs.close()
			gs, node = nil, (node+1)%len(w.c.Nodes)
		}
	}, func(bs beaterSession) {
		if b.Deregister && gs != nil && registered {
			grpcOp(bs, EphDereg)
		}
	})
}

// overGRPC reports the kinds a gRPC session sends over gRPC.
func overGRPC(k Kind) bool {
	switch k {
	case CfgGet, CfgPut, CfgDel, PIReg, PIDereg, PIList:
		return true
	}
	return false
}

// Nacos 2.x's default namespace and group, as a Java client sends them.
const (
	grpcNamespace = "public"
	grpcGroup     = "DEFAULT_GROUP"
	// errConfigNotFound is ConfigQueryResponse's CONFIG_NOT_FOUND.
	errConfigNotFound = 300
)

// performGRPC sends op over the session's connection (opening it first
// when there is none) and reads its answer into op. A connection that
// could not be opened sent nothing: a definite failure. Any other
// transport error, and any answer but success, is an unknown outcome
// (the write may have been applied; a read observed nothing).
func (w *Workload) performGRPC(g *grpcSession, op *Op) Outcome {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	if g.cl == nil {
		cl, err := remoteclient.Dial(ctx, g.addr, remoteclient.Options{ClientIP: g.localIP, LocalIP: g.localIP,
			Labels: map[string]string{"source": "sdk", "module": "naming", "AppName": "jepsen"}})
		if err != nil {
			op.Err = "connect: " + err.Error()
			return Fail
		}
		g.cl = cl
	}
	nm := w.names
	var req remote.Requester
	cfgKey := remote.ConfigKey{DataID: op.Key, Group: nm.Group, HasDataID: true, HasGroup: true}
	svcKey := remote.NamingKey{Namespace: grpcNamespace, ServiceName: op.Key, GroupName: grpcGroup,
		HasNamespace: true, HasService: true, HasGroup: true}
	switch op.Kind {
	case CfgPut:
		req = &remote.ConfigPublishRequest{ConfigKey: cfgKey, Content: op.Value, HasContent: true}
	case CfgDel:
		req = &remote.ConfigRemoveRequest{ConfigKey: cfgKey}
	case CfgGet:
		req = &remote.ConfigQueryRequest{ConfigKey: cfgKey}
	case PIReg, PIDereg:
		in := remote.NewInstance()
		in.IP, in.HasIP, in.Port, in.ClusterName, in.HasCluster, in.Ephemeral = nm.ClientIP, true, nm.PIBase+op.Slot, "DEFAULT", true, false
		r := &remote.PersistentInstanceRequest{InstanceRequest: remote.InstanceRequest{NamingKey: svcKey, Op: remote.DeregisterInstance, HasOp: true, Instance: &in}}
		if op.Kind == PIReg {
			in.Metadata = map[string]string{"v": op.Value}
			r.Op = remote.RegisterInstance
		}
		req = r
	case PIList:
		req = &remote.ServiceQueryRequest{NamingKey: svcKey, HealthyOnly: false}
	case EphReg, EphDereg:
		in := remote.NewInstance()
		in.IP, in.HasIP, in.Port, in.ClusterName, in.HasCluster = nm.ClientIP, true, nm.EphBase+op.Slot, "DEFAULT", true
		in.Metadata = map[string]string{"beater": strconv.Itoa(op.Slot)}
		r := &remote.InstanceRequest{NamingKey: svcKey, Op: remote.RegisterInstance, HasOp: true, Instance: &in}
		if op.Kind == EphDereg {
			r.Op = remote.DeregisterInstance
		}
		req = r
	case EphBeat:
		// a 2.x instance lives with its connection: the client's health
		// check is its beat
		req = &remote.HealthCheckRequest{}
	default:
		op.Err = "no gRPC request for " + string(op.Kind)
		return Fail
	}
	out, d, err := g.cl.Do(ctx, req)
	if err != nil {
		op.Err = err.Error()
		st, ok := status.FromError(err)
		if !ok || st.Code() == codes.Unavailable || st.Code() == codes.Canceled {
			g.close() // a broken connection: the next op opens a new one
		}
		if ok && st.Code() == codes.Unavailable && strings.Contains(st.Message(), "connection refused") {
			return Fail // the connection was gone and could not be opened again: nothing was sent
		}
		return Unknown
	}
	if op.Kind == CfgGet && !d.Success() && d.ErrorCode == errConfigNotFound {
		return OK // absent
	}
	if !d.Success() {
		op.Status, op.Err = d.ErrorCode, trim(d.Message)
		return Unknown
	}
	switch op.Kind {
	case CfgGet:
		op.Found, op.Read = true, d.Str("content")
	case PIList:
		slots, extra, perr := parseServiceInfoSlots(out.Body, nm.ClientIP, nm.PIBase, nm.Slots)
		if perr != nil {
			op.Err = perr.Error()
			return Unknown
		}
		op.Slots, op.Extra = slots, extra
	}
	return OK
}

// parseServiceInfoSlots reads a QueryServiceResponse's serviceInfo hosts
// into slots, as parseSlots reads an HTTP list.
func parseServiceInfoSlots(body []byte, clientIP string, basePort, slots int) ([]Slot, int, error) {
	var r struct {
		ServiceInfo *json.RawMessage `json:"serviceInfo"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.ServiceInfo == nil {
		return nil, 0, fmt.Errorf("QueryServiceResponse without serviceInfo: %.200s", body)
	}
	return parseSlots(string(*r.ServiceInfo), clientIP, basePort, slots)
}
