// Package server assembles one nacosd node: the raft CP store, the naming
// registry, UDP push, the config service and the fiber HTTP surface. main
// builds a Config from flags; tests build one directly and listen on
// 127.0.0.1:0.
package server

import (
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/distro"
	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/cluster"
	"github.com/nacosd/nacosd/server/config"
	"github.com/nacosd/nacosd/server/connbound"
	"github.com/nacosd/nacosd/server/connections"
	"github.com/nacosd/nacosd/server/console"
	"github.com/nacosd/nacosd/server/console/live"
	"github.com/nacosd/nacosd/server/grpcapi"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/leader"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/push"
)

// Version is the Nacos server version nacosd speaks (compat.NacosVersion).
const Version = compat.NacosVersion

// Server is one running node.
type Server struct {
	cfg      Config
	log      *slog.Logger
	store    *raftstore.Store
	registry *naming.Registry
	config   *config.Service
	push     *push.Service
	hub      *live.Hub // naming changes for the console's event streams
	auth     *auth.Service
	ops      opsState // metrics and access log (ops.go)
	app      *fiber.App
	ln       net.Listener
	started  time.Time

	// fixed by Start's first step (listen)
	ip       string // the advertised address (member ip)
	port     int    // the bound HTTP port
	raftAddr string // the raft bind address

	members      *cluster.Manager // self only in standalone mode
	peers        *cluster.Peers   // node-to-node HTTP
	distro       *distro.Distro   // AP protocol (the replicator in cluster mode)
	clusterTasks *clock.Schedules
	early        *handoff               // answers members while this one starts (startup.go); nil: standalone
	rebalance    *cluster.Rebalancer    // moves 2.x connections to members that join; nil: off
	gateStats    httpapi.GateStats      // writes forwarded, undeclared writes
	notReady     atomic.Pointer[string] // why this member last turned not ready (watchReadiness); nil: ready
	routes       *httpapi.Table

	run lifecycle // the run group: serving, failure, shutdown (lifecycle.go)

	conns       *connections.Manager // 2.x connections (grpc.go)
	grpc        *grpcapi.Server
	grpcConfig  *grpcapi.ConfigNotifier
	grpcForward *grpcapi.Sender
	grpcUnsub   func()
	router      *leader.Router // CP writes of both edges to the raft leader

	held            *connbound.Manager // 2.x instances of this node's connections (grpc.go)
	grpcNaming      *grpcapi.NamingNotifier
	grpcNamingUnsub func()
}

// New validates cfg; Start opens the stores and listeners.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ContextPath == "/" {
		cfg.ContextPath = ""
	}
	return &Server{cfg: cfg, log: cfg.Logger, run: newLifecycle()}, nil
}

// HTTPAddr is the bound HTTP address (host:port).
func (s *Server) HTTPAddr() string { return s.ln.Addr().String() }

// Handler is the HTTP handler (handler benchmarks drive it directly).
func (s *Server) Handler() fasthttp.RequestHandler { return s.app.Handler() }

// Registry exposes the naming domain (tests, benchmarks).
func (s *Server) Registry() *naming.Registry { return s.registry }

// PushService exposes the UDP push service (tests).
func (s *Server) PushService() *push.Service { return s.push }

// Build is the running binary's build (httpapi.BuildReporter).
func (s *Server) Build() buildinfo.Info { return s.cfg.Build }

// RaftAddr is the bound raft address.
func (s *Server) RaftAddr() string { return s.store.Addr() }

// PushAddr is the UDP push socket address.
func (s *Server) PushAddr() *net.UDPAddr { return s.push.Addr() }

// raftStatus is this node's view of the CP group for the console.
func (s *Server) raftStatus() console.RaftStatus {
	st := s.store.Stats()
	return console.RaftStatus{State: st["state"], LeaderAddr: s.store.LeaderAddr(), Term: st["term"], AppliedIndex: st["applied_index"]}
}

// Self is this node's member (httpapi.Cluster).
func (s *Server) Self() compat.Member { return s.members.Self() }

// Members lists the cluster, self included: only self in standalone mode.
func (s *Server) Members() []compat.Member { return s.members.Members() }

// Standalone reports the mode.
func (s *Server) Standalone() bool { return s.cfg.Standalone }
