package server

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nacosd/nacosd/server/connbound"
	"github.com/nacosd/nacosd/server/connections"
	"github.com/nacosd/nacosd/server/grpcapi"
	"github.com/nacosd/nacosd/server/naming"
)

// GRPCConfig configures the Nacos 2.x edge (server/grpcapi).
type GRPCConfig struct {
	// Disabled serves no gRPC port (1.x clients only).
	Disabled bool
	// PortOffset is nacos.server.grpc.port.offset: the gRPC port is the HTTP
	// port plus it (default 1000, Java's SDK port offset).
	PortOffset int
	// Addr overrides the listen address (default: the HTTP host and port +
	// PortOffset; with HTTP port 0, a free port).
	Addr string
	// MaxConnections caps 2.x client connections (<= 0: no cap, Java's default).
	MaxConnections int
	// KeepAlive is how long a silent connection lives before it is probed
	// (default 20 s), CheckInterval the pause between ejection rounds (3 s)
	// and DetectTimeout how long a probe waits (5 s); tests shorten them.
	KeepAlive, CheckInterval, DetectTimeout time.Duration
	// MaxPushRetry is nacos.config.push.maxRetryTime (default 50).
	MaxPushRetry int
	// MaxRecvMsgSize is nacos.remote.server.grpc.sdk.max-inbound-message-size
	// (default 10 MiB).
	MaxRecvMsgSize int
	// HeldDropGrace is how long after a 2.x connection ends its ephemeral
	// instances are deregistered (default 5 s, connbound.Config.DropGrace);
	// HeldBeatInterval how often this node beats them on their owner
	// (default 5 s). Tests shorten them.
	HeldDropGrace, HeldBeatInterval time.Duration
	// PushDelay coalesces a service's changes before 2.x subscribers are
	// pushed (default 100 ms; Java: 500 ms).
	PushDelay time.Duration
	// RebalanceDelay is how long after a member joins the members compare
	// their 2.x connection counts and move connections to it (default
	// 10 s; negative: never, as Java without an operator);
	// RebalanceInterval how often they compare them anyway (default 60 s;
	// negative: only on joins).
	RebalanceDelay, RebalanceInterval time.Duration
	// Transport is nacosd.grpc.transport: grpcapi.TransportLean (default)
	// or grpcapi.TransportGRPCGo.
	Transport string
}

// startGRPC opens the connection table and the gRPC server with the
// config and naming routes (Start).
func (s *Server) startGRPC(context.Context) error {
	ip, httpPort := s.ip, s.port
	gc := s.cfg.GRPC
	if gc.Disabled {
		return nil
	}
	addr := gc.Addr
	if addr == "" {
		off := gc.PortOffset
		if off == 0 {
			off = grpcapi.DefaultPortOffset
		}
		port := httpPort + off
		if s.cfg.Port == 0 {
			port = 0
		}
		addr = net.JoinHostPort(s.cfg.Host, strconv.Itoa(port))
	}
	cc := connections.DefaultConfig()
	cc.Clock, cc.Logger, cc.ServerIP, cc.MaxConnections = s.cfg.Clock, s.log.With("component", "connections"), ip, gc.MaxConnections
	if gc.KeepAlive > 0 {
		cc.KeepAlive = gc.KeepAlive
	}
	if gc.CheckInterval > 0 {
		cc.CheckDelay, cc.CheckInterval = gc.CheckInterval, gc.CheckInterval
	}
	if gc.DetectTimeout > 0 {
		cc.DetectTimeout = gc.DetectTimeout
	}
	conns, err := connections.New(cc)
	if err != nil {
		return fmt.Errorf("server: connections: %w", err)
	}
	rc := grpcapi.DefaultConfig()
	rc.Conns, rc.Clock, rc.Logger, rc.Auth = conns, s.cfg.Clock, s.log.With("component", "grpc"), grpcapi.NewAuth(s.auth)
	rc.LocalWrites = s.cfg.Standalone
	rc.VerifyNode = s.auth.Identity().Verify
	if gc.MaxRecvMsgSize > 0 {
		rc.MaxRecvMsgSize = gc.MaxRecvMsgSize
	}
	rc.Transport = gc.Transport
	if !s.cfg.Standalone { // CP requests on a follower go to the raft leader
		off := gc.PortOffset
		if off == 0 {
			off = grpcapi.DefaultPortOffset
		}
		s.grpcForward = &grpcapi.Sender{Self: s.members.SelfAddress(), Log: s.log.With("component", "grpc-forward"),
			Port: func(member string) string {
				host, port, _ := net.SplitHostPort(member)
				p, _ := strconv.Atoi(port)
				return net.JoinHostPort(host, strconv.Itoa(p+off))
			}}
		if s.auth.Enabled() {
			s.grpcForward.Sign = s.auth.Identity().Sign
		}
		rc.Router, rc.Sender = s.router, s.grpcForward
		// a restarted member refuses requests, as Java does while it
		// starts, until it is back where it was (raftstore/watermark.go):
		// the client connects to another member
		rc.Starting = s.store.Behind
	}
	g, err := grpcapi.New(rc)
	if err != nil {
		return fmt.Errorf("server: grpc: %w", err)
	}
	grpcapi.MountCore(g)
	cd := grpcapi.ConfigDeps{Service: s.config, MaxContent: s.cfg.ConfigMaxContent}
	n := grpcapi.MountConfig(g, cd)
	// naming: connection-bound instances kept alive by this node on their
	// owners (server/connbound, server/held.go); pushes follow the
	// registry's change stream as UDP pushes do
	hc := connbound.DefaultConfig()
	hc.Writer, hc.Self, hc.Clock, hc.Logger = heldWriter{s}, s.members.SelfAddress(), s.cfg.Clock, s.log.With("component", "held")
	if gc.HeldDropGrace > 0 {
		hc.DropGrace = gc.HeldDropGrace
	}
	if gc.HeldBeatInterval > 0 {
		hc.BeatInterval = gc.HeldBeatInterval
		hc.Tick = min(hc.Tick, gc.HeldBeatInterval)
	}
	if s.held, err = connbound.New(hc); err != nil {
		return fmt.Errorf("server: held instances: %w", err)
	}
	conns.OnDisconnect(func(c *connections.Conn) { s.held.Drop(c.ID) })
	nn := grpcapi.MountNaming(g, grpcapi.NamingDeps{Reader: s.registry, Held: s.held, Persistent: s.registry,
		Push: grpcapi.PushConfig{Delay: gc.PushDelay}})
	s.grpcNamingUnsub = s.registry.Changes().Subscribe(func(c naming.Change) { nn.Changed(c.NamespaceID, c.Service) })
	s.grpcNaming = nn
	if gc.MaxPushRetry > 0 {
		n.SetMaxRetry(gc.MaxPushRetry)
	}
	s.grpcUnsub = s.config.OnChange(n.Changed)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: grpc listen on %s: %w", addr, err)
	}
	s.log.Info("gRPC (Nacos 2.x clients)", "listen", ln.Addr().String(), "transport", g.Transport())
	s.conns, s.grpc, s.grpcConfig = conns, g, n
	conns.Start()
	s.held.Start()
	g.Serve(ln)
	return nil
}

// closeGRPC stops the gRPC edge: no new requests, every connection closed.
func (s *Server) closeGRPC() {
	if s.held != nil {
		// first: the connections closing below must not take their
		// instances out of the lists while their clients move elsewhere
		s.held.Close()
	}
	if s.grpcUnsub != nil {
		s.grpcUnsub()
	}
	if s.grpcNamingUnsub != nil {
		s.grpcNamingUnsub()
	}
	if s.grpc != nil {
		s.grpc.Close()
	}
	if s.grpcForward != nil {
		s.grpcForward.Close()
	}
	if s.conns != nil {
		s.conns.Close()
	}
}

// GRPCAddr is the bound gRPC address ("" when disabled).
func (s *Server) GRPCAddr() string {
	if s.grpc == nil {
		return ""
	}
	return s.grpc.Addr().String()
}

// ConfigListeners is the number of (2.x connection, config) listen pairs.
func (s *Server) ConfigListeners() int {
	if s.grpcConfig == nil {
		return 0
	}
	return s.grpcConfig.Listeners()
}

// Connections exposes the 2.x connection table (tests).
func (s *Server) Connections() *connections.Manager { return s.conns }

// GRPCForwarded counts CP requests of the gRPC edge sent to the raft leader.
func (s *Server) GRPCForwarded() int64 {
	if s.grpc == nil {
		return 0
	}
	return s.grpc.Forwarded()
}

// GRPCRoutes lists the request types the gRPC edge answers.
func (s *Server) GRPCRoutes() []string {
	if s.grpc == nil {
		return nil
	}
	return s.grpc.Routes()
}

// HeldInstances exposes the 2.x instances this node holds (tests).
func (s *Server) HeldInstances() *connbound.Manager { return s.held }

// NamingSubscriptions is the number of (2.x connection, service)
// subscriptions.
func (s *Server) NamingSubscriptions() int {
	if s.grpcNaming == nil {
		return 0
	}
	return s.grpcNaming.Subscriptions()
}

// sdkConns adapts the 2.x connection table to cluster.Conns.
type sdkConns struct{ m *connections.Manager }

// SDKIDs lists the client connections in id order (the oldest first).
func (c sdkConns) SDKIDs() []string {
	var ids []string
	for _, cn := range c.m.List() {
		if cn.SDK() {
			ids = append(ids, cn.ID)
		}
	}
	return ids
}

func (c sdkConns) Reset(id, target string) { c.m.Reset(id, target) }

// loaderCount is this node's number of 2.x client connections for GET
// /v1/nacosd/loader (0 before the gRPC edge runs).
func (s *Server) loaderCount() int {
	if s.conns == nil {
		return 0
	}
	return len(sdkConns{s.conns}.SDKIDs())
}
