// Package grpcapi is the Nacos 2.x edge of a node: the gRPC server on the
// HTTP port + 1000 (Java's SDK port offset) with the two services every 2.x
// client uses, Request.request (unary) and BiRequestStream.requestBiStream.
// It is a peer of server/httpapi over the same domain packages: it decodes
// the Payload (compat/remote), checks what Java's request filters check
// (invoke source, registered connection, auth, parameters), calls a small
// consumer-side interface of the domain, and renders the answer. Connection
// state lives in server/connections.
package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/server/connections"
	"github.com/nacosd/nacosd/server/grpcwire"
	"github.com/nacosd/nacosd/server/leader"
)

// DefaultPortOffset is Java's SDK gRPC port offset (Constants.SDK_GRPC_PORT_DEFAULT_OFFSET).
const DefaultPortOffset = 1000

// Config configures a Server.
type Config struct {
	Conns  *connections.Manager
	Clock  clock.Clock
	Logger *slog.Logger
	// Abilities is the server's ability table sent in SetupAckRequest
	// (Java 2.5.1: supportPersistentInstanceByGrpc).
	Abilities map[string]bool
	// Auth checks @Secured requests; nil or disabled lets every request through.
	Auth Auth
	// VerifyNode checks the server identity of a write another node
	// forwarded (with auth on).
	VerifyNode func(get func(string) string) bool
	// Router and Sender send CP requests to the raft leader before their
	// handler runs (forward.go); nil: every request runs here (a node that
	// always leads).
	Router *leader.Router
	Sender *Sender
	// Starting, when set and true, refuses every request as Java does
	// while it starts (a restarted member catching up with the leader).
	Starting func() bool
	// MaxRecvMsgSize is nacos.remote.server.grpc.sdk.max-inbound-message-size (10 MiB).
	MaxRecvMsgSize int
	// KeepAliveTime and KeepAliveTimeout are the transport's HTTP/2 pings
	// (grpc-java's server defaults: 2 h and 20 s); PermitKeepAliveTime is
	// the shortest client ping interval allowed (5 min).
	KeepAliveTime, KeepAliveTimeout, PermitKeepAliveTime time.Duration
	// Transport is the gRPC server the edge runs on: TransportLean
	// (server/grpcwire; the default) or TransportGRPCGo.
	Transport string
	// LocalWrites: every held-instance write applies on this node's
	// registry, never over the network (a standalone server), so an
	// InstanceRequest, too, runs on its connection's reader.
	LocalWrites bool
}

// DefaultConfig returns Java Nacos 2.5.1's settings; Conns must be set.
func DefaultConfig() Config {
	return Config{Clock: clock.Real{}, Logger: slog.Default(), Abilities: map[string]bool{"supportPersistentInstanceByGrpc": true},
		MaxRecvMsgSize: 10 << 20, KeepAliveTime: 2 * time.Hour, KeepAliveTimeout: 20 * time.Second, PermitKeepAliveTime: 5 * time.Minute}
}

// Validate checks c.
func (c Config) Validate() error {
	switch {
	case c.Conns == nil:
		return errors.New("grpcapi: Config.Conns is nil")
	case c.Clock == nil || c.Logger == nil:
		return errors.New("grpcapi: Config.Clock and Config.Logger must be set")
	case c.Transport != "" && c.Transport != TransportGRPCGo && c.Transport != TransportLean:
		return fmt.Errorf("grpcapi: unknown transport %q (%s or %s)", c.Transport, TransportGRPCGo, TransportLean)
	case c.MaxRecvMsgSize <= 0:
		return fmt.Errorf("grpcapi: MaxRecvMsgSize must be > 0, got %d", c.MaxRecvMsgSize)
	}
	return nil
}

// Server is the gRPC edge of one node.
type Server struct {
	cfg    Config
	conns  *connections.Manager
	log    *slog.Logger
	srv    *grpc.Server     // the grpc-go transport, or
	wire   *grpcwire.Server // the lean one
	routes map[string]*Route
	ln     net.Listener

	forwarded  atomic.Int64 // CP requests sent to the raft leader
	transports sync.Map     // remote address (net.Addr) → *connInfo
	closed     atomic.Bool
	serveErr   chan error
}

// New builds the server; Handle adds routes before Serve.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, conns: cfg.Conns, log: cfg.Logger, routes: map[string]*Route{}, serveErr: make(chan error, 1)}
	if cfg.Transport == "" || cfg.Transport == TransportLean {
		w, err := s.newWire()
		if err != nil {
			return nil, err
		}
		s.wire = w
		return s, nil
	}
	s.srv = grpc.NewServer(
		grpc.ForceServerCodec(remote.Codec{}),
		grpc.MaxRecvMsgSize(cfg.MaxRecvMsgSize),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: cfg.KeepAliveTime, Timeout: cfg.KeepAliveTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: cfg.PermitKeepAliveTime, PermitWithoutStream: true}),
		// thousands of mostly idle clients: a small read buffer each (1 KiB:
		// a frame header and a small request; larger frames are read past
		// it; none at all costs two syscalls per frame) and write buffers
		// from a shared pool, held only while writing
		grpc.ReadBufferSize(1<<10), grpc.WriteBufferSize(32<<10), // write buffers are shared by default (grpc-go 1.85)
		// unary calls run on a few long-lived goroutines instead of a new
		// one each (whose stack grows on every call: ~30 % of a config
		// query's server CPU)
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
	)
	s.srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "Request",
		HandlerType: (*any)(nil),
		Methods:     []grpc.MethodDesc{{MethodName: "request", Handler: s.unaryHandler}},
	}, s)
	s.srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "BiRequestStream",
		HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{StreamName: "requestBiStream", Handler: s.streamHandler,
			ServerStreams: true, ClientStreams: true}},
	}, s)
	return s, nil
}

// Serve accepts connections on ln until Close (in its own goroutine); Err
// delivers the serving error.
func (s *Server) Serve(ln net.Listener) {
	if s.wire != nil {
		s.ln = ln
		go func() { s.serveErr <- s.wire.Serve(ln) }()
		return
	}
	s.ln = &trackListener{Listener: ln, s: s}
	go func() {
		err := s.srv.Serve(s.ln)
		if s.closed.Load() || errors.Is(err, grpc.ErrServerStopped) {
			err = nil
		}
		s.serveErr <- err
	}()
}

// Transport is the gRPC server the edge runs on.
func (s *Server) Transport() string {
	if s.wire != nil {
		return TransportLean
	}
	return TransportGRPCGo
}

// Forwarded counts CP requests sent to the raft leader.
func (s *Server) Forwarded() int64 { return s.forwarded.Load() }

// Err delivers the error that stopped serving (nil after Close).
func (s *Server) Err() <-chan error { return s.serveErr }

// Addr is the bound address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops serving: every transport is closed (clients reconnect
// elsewhere, as after Java's shutdown).
func (s *Server) Close() {
	if !s.closed.CompareAndSwap(false, true) {
		return
	}
	if s.wire != nil {
		s.wire.Close()
		return
	}
	s.srv.Stop()
}

// trackListener names each accepted connection as Java's
// AddressTransportFilter does ("<ms>_<remoteIp>_<remotePort>") and
// remembers it by its remote address, which grpc-go puts into every call's
// peer: handlers find their connection with one map lookup, and the server
// can close a transport (GrpcConnection.close closes the channel). When
// the transport ends (grpc-go closes the socket) its connection is
// unregistered. This replaces a grpc stats handler, whose per-call events
// (begin, payloads, end, with their clock reads and allocations) cost more
// than the request's own work.
type trackListener struct {
	net.Listener
	s *Server
}

func (l *trackListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ra := c.RemoteAddr()
	ci := l.s.newConnInfo(c)
	l.s.transports.Store(ra, ci)
	return &trackedConn{Conn: c, s: l.s, ra: ra, ci: ci}, nil
}

type trackedConn struct {
	net.Conn
	s    *Server
	ra   net.Addr // the key in Server.transports: the same value every call
	ci   *connInfo
	once sync.Once
}

// RemoteAddr is the address the connection is known by.
func (c *trackedConn) RemoteAddr() net.Addr { return c.ra }

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.s.transports.Delete(c.ra)
		c.s.conns.Unregister(c.ci.id)
	})
	return err
}

// connInfo is what a call knows about its transport.
type connInfo struct {
	id         string
	remoteIP   string
	remotePort int
	localPort  int
	remoteAddr string
	conn       io.Closer
}

// connOf is the transport of a call (from its peer address).
func (s *Server) connOf(ctx context.Context) *connInfo {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return &connInfo{}
	}
	if ci, ok := s.transports.Load(p.Addr); ok {
		return ci.(*connInfo)
	}
	// a transport this listener did not accept (never in practice)
	return &connInfo{remoteAddr: p.Addr.String(), id: p.Addr.String()}
}

// closeTransport closes the TCP connection of a transport.
func (ci *connInfo) closeTransport() {
	if ci.conn != nil {
		ci.conn.Close()
	}
}
