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
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/server/connections"
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
	srv    *grpc.Server
	routes map[string]*Route
	ln     net.Listener

	forwarded  atomic.Int64 // CP requests sent to the raft leader
	transports sync.Map     // remote address → *transport
	closed     atomic.Bool
	serveErr   chan error
}

// transport is one accepted TCP connection (Java: one connection id).
type transport struct {
	id   string
	conn net.Conn
}

// New builds the server; Handle adds routes before Serve.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, conns: cfg.Conns, log: cfg.Logger, routes: map[string]*Route{}, serveErr: make(chan error, 1)}
	s.srv = grpc.NewServer(
		grpc.ForceServerCodec(remote.Codec{}),
		grpc.MaxRecvMsgSize(cfg.MaxRecvMsgSize),
		grpc.StatsHandler(&connTagger{s: s}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: cfg.KeepAliveTime, Timeout: cfg.KeepAliveTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: cfg.PermitKeepAliveTime, PermitWithoutStream: true}),
		// thousands of mostly idle clients: a small read buffer each (none
		// at all cost two syscalls per frame: +15 % CPU per connection
		// setup for 0.5 KiB less per connection) and write buffers from a
		// shared pool, held only while writing
		grpc.ReadBufferSize(4<<10), grpc.WriteBufferSize(32<<10), // write buffers are shared by default (grpc-go 1.85)
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
	s.ln = &trackListener{Listener: ln, s: s}
	go func() {
		err := s.srv.Serve(s.ln)
		if s.closed.Load() || errors.Is(err, grpc.ErrServerStopped) {
			err = nil
		}
		s.serveErr <- err
	}()
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
	s.srv.Stop()
}

// trackListener remembers each accepted connection by its remote address,
// so the server can close a transport (GrpcConnection.close closes the
// channel) and name it.
type trackListener struct {
	net.Listener
	s *Server
}

func (l *trackListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.s.transports.Store(c.RemoteAddr().String(), &transport{conn: c})
	return &trackedConn{Conn: c, s: l.s}, nil
}

type trackedConn struct {
	net.Conn
	s    *Server
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() { c.s.transports.Delete(c.RemoteAddr().String()) })
	return c.Conn.Close()
}

// connTagger names transports as Java's AddressTransportFilter does
// ("<ms>_<remoteIp>_<remotePort>") and unregisters a transport's
// connection when it ends.
type connTagger struct{ s *Server }

type connKey struct{}

// connInfo is what a call's context knows about its transport.
type connInfo struct {
	id         string
	remoteIP   string
	remotePort int
	localPort  int
	remoteAddr string
}

func (t *connTagger) TagConn(ctx context.Context, info *stats.ConnTagInfo) context.Context {
	ci := &connInfo{remoteAddr: info.RemoteAddr.String()}
	if a, ok := info.RemoteAddr.(*net.TCPAddr); ok {
		ci.remoteIP, ci.remotePort = a.IP.String(), a.Port
		if v4 := a.IP.To4(); v4 != nil {
			ci.remoteIP = v4.String()
		}
	}
	if a, ok := info.LocalAddr.(*net.TCPAddr); ok {
		ci.localPort = a.Port
	}
	ci.id = strconv.FormatInt(t.s.cfg.Clock.Now().UnixMilli(), 10) + "_" + ci.remoteIP + "_" + strconv.Itoa(ci.remotePort)
	if tr, ok := t.s.transports.Load(ci.remoteAddr); ok {
		tr.(*transport).id = ci.id
	}
	return context.WithValue(ctx, connKey{}, ci)
}

func (t *connTagger) HandleConn(ctx context.Context, st stats.ConnStats) {
	if _, ok := st.(*stats.ConnEnd); !ok {
		return
	}
	if ci, ok := ctx.Value(connKey{}).(*connInfo); ok {
		t.s.conns.Unregister(ci.id)
	}
}

func (t *connTagger) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (t *connTagger) HandleRPC(context.Context, stats.RPCStats)                       {}

func connOf(ctx context.Context) *connInfo {
	if ci, ok := ctx.Value(connKey{}).(*connInfo); ok {
		return ci
	}
	// without the stats handler (never in practice): a name from the peer
	ci := &connInfo{}
	if p, ok := peer.FromContext(ctx); ok {
		ci.remoteAddr = p.Addr.String()
		ci.id = ci.remoteAddr
	}
	return ci
}

// closeTransport closes the TCP connection of a transport.
func (s *Server) closeTransport(remoteAddr string) {
	if tr, ok := s.transports.Load(remoteAddr); ok {
		tr.(*transport).conn.Close()
	}
}
