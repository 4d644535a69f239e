package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"google.golang.org/grpc"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/connections"
	"github.com/nacosd/nacosd/server/leader"
)

// Call is one request reaching a handler.
type Call struct {
	// Conn is the registered connection the request came on.
	Conn    *connections.Conn
	Req     remote.Requester
	Payload *remote.Payload
	// Principal is the authenticated caller ("" with auth off).
	Principal string
	// Forwarded is a write another node forwarded (its client's IP in
	// forwardedIP).
	Forwarded   bool
	forwardedIP string
	// notLeader: the handler's CP write was refused as not leader (Wrote).
	notLeader bool
	// writeID is an idempotent write's id (raftstore.WithWriteID): chosen
	// by the node the client sent it to, carried by every copy forwarded.
	writeID string
}

// Wrote records the outcome of a CP handler's write: a refusal because
// this node is not (or no longer) the raft leader reaches the dispatcher,
// which sends the request to the leader whatever the handler answered.
func (c *Call) Wrote(err error) {
	if leader.IsNotLeader(err) {
		c.notLeader = true
	}
}

// ClientIP is the client address Java's handlers use (RequestMeta.clientIp:
// the connection's setup payload's clientIp), or for a forwarded write the
// IP of the client of the node that forwarded it.
func (c *Call) ClientIP() string {
	if c.Forwarded {
		return c.forwardedIP
	}
	return c.Conn.ClientIP
}

// Route is a request class the server answers: Java's RequestHandler with
// its annotations.
type Route struct {
	// Type is the request class (metadata.type).
	Type string
	// Response builds an empty answer of the handler's response class; the
	// filters answer their refusals with it (getDefaultResponseInstance).
	Response func() remote.Responder
	// Secured is the @Secured action ("r" or "w") with the resource of a
	// request; nil when the handler is not secured.
	Secured *Secured
	// Params extracts the parameters the param checker validates (the
	// handler's @Extractor); nil: none.
	Params func(remote.Requester) []remote.ParamInfo
	// Handle answers the request. An error is answered as Java answers an
	// exception escaping a handler (ErrorResponse, see errorResponse).
	Handle func(ctx context.Context, c *Call) (remote.Responder, error)
	// Refuse renders a CP request the leader router could not get applied
	// (no leader, or not applied here in time) in the handler's answer
	// class; nil: an ErrorResponse with the reason.
	Refuse func(err error) remote.Responder
}

// refuse renders a routing failure.
func (r *Route) refuse(err error) remote.Responder {
	if r.Refuse != nil {
		return r.Refuse(err)
	}
	return errorResponse(&Error{Code: remote.ErrServer, Msg: writeFailure(err)})
}

// Secured is a handler's @Secured: its action and how its resource is
// named.
type Secured struct {
	Action   string
	Resource func(remote.Requester) string
}

// Handle adds a route (before Serve). Its type must be in the request
// table (classes.go): a route of an undeclared type is a bug.
func (s *Server) Handle(r *Route) {
	if ClassOf(r.Type) == 0 {
		panic("grpcapi: request type " + r.Type + " has no class in the request table")
	}
	s.routes[r.Type] = r
}

// Routes lists the request types the server answers.
func (s *Server) Routes() []string {
	out := make([]string, 0, len(s.routes))
	for t := range s.routes {
		out = append(out, t)
	}
	return out
}

// clusterOnly are the request classes Java serves only on its cluster port
// (@InvokeSource cluster): sent to the SDK port they are refused.
var clusterOnly = map[string]bool{"ServerLoaderInfoRequest": true, "ServerReloadRequest": true,
	"ConfigChangeClusterSyncRequest": true, "MemberReportRequest": true, "DistroDataRequest": true}

// Messages of the acceptor's refusals (GrpcRequestAcceptor).
const (
	msgNoHandler    = "RequestHandler Not Found"
	msgUnregistered = "Connection is unregistered."
	msgDeserialize  = "errCode: 101, errMsg: Nacos deserialize failed.  "
	msgInvalid      = "Invalid request"
	msgStarting     = "Server is starting,please try later."
)

func (s *Server) unaryHandler(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (out any, err error) {
	// grpc-go does not recover a handler's panic: a bug must cost one
	// request, not the process
	defer func() {
		if e := recover(); e != nil {
			s.log.Error("grpc request panic", "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
			out, err = remote.Encode(errorResponse(fmt.Errorf("%v", e))), nil
		}
	}()
	p := new(remote.Payload)
	if err := dec(p); err != nil {
		return nil, err
	}
	return s.Dispatch(ctx, s.connOf(ctx).id, p), nil
}

// Dispatch answers one unary Payload of connection connID, in the order of
// Java's BaseGrpcServer and GrpcRequestAcceptor: invoke source, server
// check, handler lookup, registered connection, parse, filters (auth, then
// parameters), handler. A handler panic is answered like an exception.
func (s *Server) Dispatch(ctx context.Context, connID string, p *remote.Payload) (out *remote.Payload) {
	typ := p.Metadata.Type
	if s.cfg.Starting != nil && s.cfg.Starting() {
		return remote.Encode(remote.ErrorResponse(remote.ErrInvalidServerStatus, msgStarting))
	}
	if clusterOnly[typ] {
		return remote.Encode(remote.ErrorResponse(remote.ErrBadGateway, " invoke "+typ+" from sdk is forbidden"))
	}
	if typ == remote.TypeServerCheckRequest {
		return remote.Encode(&remote.ServerCheckResponse{Response: remote.OK(), ConnectionID: connID, SupportAbilityNegotiation: true})
	}
	rt := s.routes[typ]
	if rt == nil {
		return remote.Encode(remote.ErrorResponse(remote.ErrNoHandler, msgNoHandler))
	}
	conn := s.conns.Get(connID)
	if conn == nil {
		return remote.Encode(remote.ErrorResponse(remote.ErrUnregister, msgUnregistered))
	}
	req, err := remote.DecodeRequest(p)
	if err != nil {
		return remote.Encode(remote.ErrorResponse(remote.ErrBadGateway, msgDeserialize))
	}
	if req == nil {
		return remote.Encode(remote.ErrorResponse(remote.ErrBadGateway, msgInvalid))
	}
	s.conns.Touch(connID)
	call := &Call{Conn: conn, Req: req, Payload: p}
	if fwd := p.Metadata.Headers[HeaderForwarded]; fwd != "" && conn.Cluster() && s.fromNode(p) {
		call.Forwarded, call.forwardedIP = true, p.Metadata.Headers[HeaderClientIP]
		call.writeID = p.Metadata.Headers[HeaderWriteID]
		if ClassOf(typ) == CP {
			return s.onLeader(ctx, rt, call)
		}
		return s.runHandler(ctx, rt, call)
	}
	if r := s.filter(rt, call); r != nil {
		return remote.Encode(r)
	}
	if ClassOf(typ) == CP && s.cfg.Router != nil && s.cfg.Sender != nil {
		return s.routeCP(ctx, rt, call)
	}
	return s.runHandler(ctx, rt, call)
}

// runHandler runs a route's handler; a panic is answered like an exception.
func (s *Server) runHandler(ctx context.Context, rt *Route, call *Call) (out *remote.Payload) {
	defer func() {
		if e := recover(); e != nil {
			s.log.Error("grpc handler panic", "type", rt.Type, "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
			out = remote.Encode(errorResponse(fmt.Errorf("%v", e)))
		}
	}()
	r, err := rt.Handle(ctx, call)
	call.Wrote(err)
	if err != nil {
		return remote.Encode(errorResponse(err))
	}
	return remote.Encode(r)
}

// fromNode reports whether a forwarded request carries the server
// identity (with auth off every cluster connection is trusted, as the HTTP
// edge trusts its forwarded header).
func (s *Server) fromNode(p *remote.Payload) bool {
	if s.cfg.Auth == nil || !s.cfg.Auth.Enabled() || s.cfg.VerifyNode == nil {
		return true
	}
	h := remote.Header(p.Metadata.Headers)
	return s.cfg.VerifyNode(h.Get)
}

// filter runs Java's request filters for a route: auth (RemoteRequestAuthFilter),
// then the parameter check (RemoteParamCheckFilter). A refusal is the
// route's response class with the error set.
func (s *Server) filter(rt *Route, c *Call) remote.Responder {
	if rt.Secured != nil && s.cfg.Auth != nil && s.cfg.Auth.Enabled() {
		user, code, msg := s.cfg.Auth.CheckRemote(c.Req.Base().Headers, rt.Secured.Resource(c.Req), rt.Secured.Action, c.ClientIP())
		if code != 0 {
			r := rt.Response()
			*r.Base() = remote.Fail(code, msg)
			return r
		}
		c.Principal = user
	}
	if rt.Params != nil {
		if msg := remote.CheckParams(rt.Params(c.Req)); msg != "" {
			r := rt.Response()
			*r.Base() = remote.Fail(remote.ErrInvalidParam, remote.ParamCheckPrefix+msg)
			return r
		}
	}
	return nil
}

// errorResponse is ErrorResponse.build(Throwable): a NacosException-like
// error keeps its code (as both result and error code), anything else is 500.
func errorResponse(err error) remote.Responder {
	code := remote.ErrServer
	var ce *Error
	if errors.As(err, &ce) && ce.Code != 0 {
		code = ce.Code
	}
	r := remote.Fail(code, err.Error())
	r.ResultCode = code
	return remote.NewPlain(remote.TypeErrorResponse, r)
}
