package grpcapi

import (
	"context"
	"fmt"
	"io"
	"net"
	"runtime/debug"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/grpcwire"
)

// The transports a Server can run on (Config.Transport).
const (
	// TransportGRPCGo is grpc-go's server.
	TransportGRPCGo = "grpc-go"
	// TransportLean is server/grpcwire: one goroutine per connection and
	// shared workers, for many mostly idle clients.
	TransportLean = "lean"
)

// The two methods every Nacos 2.x client calls.
const (
	methodRequest   = "/Request/request"
	methodBiRequest = "/BiRequestStream/requestBiStream"
)

// newWire builds the lean transport over the same dispatch.
func (s *Server) newWire() (*grpcwire.Server, error) {
	w, err := grpcwire.New(grpcwire.Config{
		Methods: map[string]grpcwire.Kind{methodRequest: grpcwire.UnaryMethod, methodBiRequest: grpcwire.StreamMethod},
		Handler: wireHandler{s}, Logger: s.log, MaxRecvMsgSize: s.cfg.MaxRecvMsgSize,
		KeepAliveTime: s.cfg.KeepAliveTime, KeepAliveTimeout: s.cfg.KeepAliveTimeout, PermitKeepAliveTime: s.cfg.PermitKeepAliveTime,
		Inline:    s.inline,
		OnConnect: func(c *grpcwire.Conn) { c.Value = s.newConnInfo(c) },
		OnClose:   func(c *grpcwire.Conn) { s.conns.Unregister(c.Value.(*connInfo).id) },
	})
	if err != nil {
		return nil, fmt.Errorf("grpcapi: %w", err)
	}
	return w, nil
}

// inlineTypes are the requests answered from memory, never blocking and
// never sending on a stream: the lean transport runs them on their
// connection's reader (grpcwire.Config.Inline), with auth off (checking a
// password is slow). With Config.LocalWrites (standalone) an
// InstanceRequest joins them: its writes go to this node's registry, whose
// change consumers only schedule work, never wait.
var inlineTypes = map[string]bool{remote.TypeServerCheckRequest: true, remote.TypeHealthCheckRequest: true,
	remote.TypeConfigQueryRequest: true}

func (s *Server) inline(_ *grpcwire.Conn, method string, req []byte) bool {
	if method != methodRequest || (s.cfg.Auth != nil && s.cfg.Auth.Enabled()) {
		return false
	}
	t := string(remote.PeekType(req))
	return inlineTypes[t] || s.cfg.LocalWrites && t == remote.TypeInstanceRequest
}

// newConnInfo names a connection as Java's AddressTransportFilter does
// ("<ms>_<remoteIp>_<remotePort>").
func (s *Server) newConnInfo(c interface {
	RemoteAddr() net.Addr
	LocalAddr() net.Addr
	io.Closer
}) *connInfo {
	ra := c.RemoteAddr()
	ci := &connInfo{remoteAddr: ra.String(), conn: c}
	if a, ok := ra.(*net.TCPAddr); ok {
		ci.remoteIP, ci.remotePort = a.IP.String(), a.Port
		if v4 := a.IP.To4(); v4 != nil {
			ci.remoteIP = v4.String()
		}
	}
	if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
		ci.localPort = a.Port
	}
	ci.id = fmt.Sprintf("%d_%s_%d", s.cfg.Clock.Now().UnixMilli(), ci.remoteIP, ci.remotePort)
	return ci
}

// wireHandler answers the lean transport's calls.
type wireHandler struct{ s *Server }

func (h wireHandler) Unary(ctx context.Context, c *grpcwire.Conn, _ string, msg []byte) (out []byte, err error) {
	s := h.s
	defer func() {
		if e := recover(); e != nil {
			s.log.Error("grpc request panic", "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
			out, err = remote.Encode(errorResponse(fmt.Errorf("%v", e))).Marshal(), nil
		}
	}()
	p := new(remote.Payload)
	if err := p.Unmarshal(msg); err != nil {
		return nil, grpcwire.Errorf(grpcwire.Internal, "grpc: error unmarshalling request: %v", err)
	}
	return s.Dispatch(ctx, c.Value.(*connInfo).id, p).Marshal(), nil
}

func (h wireHandler) OpenStream(st *grpcwire.Stream) (grpcwire.StreamReceiver, error) {
	bs := &biStream{s: h.s, ci: st.Conn().Value.(*connInfo), send: func(p *remote.Payload) error { return st.Send(p.Marshal()) }}
	return wireStream{bs, st}, nil
}

// wireStream feeds a stream's payloads to its biStream.
type wireStream struct {
	bs *biStream
	st *grpcwire.Stream
}

func (w wireStream) Message(msg []byte) {
	p := new(remote.Payload)
	if err := p.Unmarshal(msg); err != nil {
		// grpc-go ends the stream on a message it cannot decode (the
		// handler's RecvMsg fails); the connection stays open
		w.bs.s.log.Debug("undecodable payload on a stream", "connectionId", w.bs.ci.id, "err", err)
		w.st.Finish(grpcwire.Errorf(grpcwire.Internal, "grpc: failed to unmarshal the received message: %v", err))
		return
	}
	w.bs.onPayload(p) // a refused connection is closed: its stream ends
}

func (w wireStream) Closed() { w.bs.end() }
