package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"

	"google.golang.org/grpc"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/connections"
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
	// forwardedIP); NotLeader is set by a handler that found this node no
	// longer leading for it.
	Forwarded   bool
	forwardedIP string
	NotLeader   bool
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
}

// Secured is a handler's @Secured: its action and how its resource is
// named.
type Secured struct {
	Action   string
	Resource func(remote.Requester) string
}

// Handle adds a route (before Serve).
func (s *Server) Handle(r *Route) { s.routes[r.Type] = r }

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
	return s.Dispatch(ctx, connOf(ctx).id, p), nil
}

// Dispatch answers one unary Payload of connection connID, in the order of
// Java's BaseGrpcServer and GrpcRequestAcceptor: invoke source, server
// check, handler lookup, registered connection, parse, filters (auth, then
// parameters), handler. A handler panic is answered like an exception.
func (s *Server) Dispatch(ctx context.Context, connID string, p *remote.Payload) (out *remote.Payload) {
	typ := p.Metadata.Type
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
	} else if r := s.filter(rt, call); r != nil {
		return remote.Encode(r)
	}
	defer func() {
		if e := recover(); e != nil {
			s.log.Error("grpc handler panic", "type", typ, "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
			out = remote.Encode(errorResponse(fmt.Errorf("%v", e)))
		}
	}()
	r, err := rt.Handle(ctx, call)
	if err != nil {
		return remote.Encode(errorResponse(err))
	}
	resp := remote.Encode(r)
	if call.Forwarded {
		resp.Metadata.Headers = map[string]string{}
		if call.NotLeader {
			resp.Metadata.Headers[HeaderNotLeader] = "true"
		} else if s.cfg.Applied != nil {
			resp.Metadata.Headers[HeaderApplied] = strconv.FormatUint(s.cfg.Applied(), 10)
		}
	}
	return resp
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
