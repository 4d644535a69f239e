package server

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/nacosd/nacosd/server/connections"
	"github.com/nacosd/nacosd/server/grpcapi"
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
}

// startGRPC opens the connection table and the gRPC server with the
// config routes (Start).
func (s *Server) startGRPC(ip string, httpPort int) error {
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
	rc.VerifyNode = s.auth.Identity().Verify
	if gc.MaxRecvMsgSize > 0 {
		rc.MaxRecvMsgSize = gc.MaxRecvMsgSize
	}
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
	}
	g, err := grpcapi.New(rc)
	if err != nil {
		return fmt.Errorf("server: grpc: %w", err)
	}
	grpcapi.MountCore(g)
	cd := grpcapi.ConfigDeps{Service: s.config, MaxContent: s.cfg.ConfigMaxContent}
	n := grpcapi.MountConfig(g, cd)
	if gc.MaxPushRetry > 0 {
		n.SetMaxRetry(gc.MaxPushRetry)
	}
	s.grpcUnsub = s.config.OnChange(n.Changed)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: grpc listen on %s: %w", addr, err)
	}
	s.conns, s.grpc, s.grpcConfig = conns, g, n
	conns.Start()
	g.Serve(ln)
	return nil
}

// closeGRPC stops the gRPC edge: no new requests, every connection closed.
func (s *Server) closeGRPC() {
	if s.grpcUnsub != nil {
		s.grpcUnsub()
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
