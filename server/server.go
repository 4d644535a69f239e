// Package server assembles one nacosd node: the raft CP store, the naming
// registry, UDP push, the config service and the fiber HTTP surface. main
// builds a Config from flags; tests build one directly and listen on
// 127.0.0.1:0.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/distro"
	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/internal/connlimit"
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
	"github.com/nacosd/nacosd/server/switches"
)

// Version is the Nacos server version nacosd speaks (compat.NacosVersion).
const Version = compat.NacosVersion

// standaloneRaftTimeout is the raft heartbeat, election and lease timeout of
// a standalone node (a one-voter cluster).
const standaloneRaftTimeout = 25 * time.Millisecond

// Config configures a node.
type Config struct {
	// Host and Port are the HTTP listen address (Java Nacos: all interfaces,
	// 8848). Port 0 picks a free port (tests).
	Host string
	Port int
	// IP is the address this node advertises (member ip); empty: the first
	// non-loopback IPv4 address, else 127.0.0.1.
	IP string
	// ContextPath is the URL prefix, "/nacos" by default; "/" or "" means none.
	ContextPath string
	// DataDir holds the raft log, snapshots and stable store.
	DataDir string
	// Standalone runs a one-node cluster; otherwise the members come from
	// NacosServers, ClusterConf or MemberList.
	Standalone bool
	// RaftAddr is the raft TCP bind address (default 127.0.0.1:<port-1000>).
	RaftAddr string
	// Naming configures the naming registry and Push the UDP push service
	// (Push.ListenAddr is the push socket, ":0" by default). Both are passed
	// through whole: zero fields mean the component's defaults; the
	// collaborators (store, pusher, renderer) are set by Start, and a nil
	// Clock or Logger is this Config's. With Push.SubscriberTTL and
	// SubscriberTTLFunc unset, subscribers live for the
	// defaultPushCacheMillis switch, as in Java.
	Naming naming.Config
	Push   push.Config
	// JavaPushTiming pushes every change 1 s after it as Java Nacos does;
	// by default the first change of a quiet service is pushed at once and
	// later ones are coalesced into one push per second.
	JavaPushTiming bool
	// FastRaft shortens raft timings (tests): 50 ms, or RaftTimeout when
	// set (several nodes on a loaded machine, the race detector on, need
	// more to keep a leader).
	FastRaft    bool
	RaftTimeout time.Duration
	// ClusterTimings shortens the cluster protocols' periods (tests); zero
	// fields mean the defaults.
	ClusterTimings ClusterTimings
	// HeaderTimeout closes a connection whose request has not fully
	// arrived within it (default 20 s, Tomcat's connectionTimeout).
	HeaderTimeout time.Duration
	// MaxConns caps client connections (default: the descriptor limit
	// minus a reserve); the last 5% serve only health and node calls.
	MaxConns int
	// MaxConnsPerSource caps the connections of one client address
	// (0: a quarter of MaxConns; negative: none; 127.0.0.1 and ::1 are
	// not limited). server/limits.go.
	MaxConnsPerSource int
	Clock             clock.Clock
	Logger            *slog.Logger
	// Build is the running binary's build (version, VCS revision): logged,
	// in metrics (nacosd_build_info), in /v1/console/server/state and the
	// console. DefaultConfig reads it; zero means unknown.
	Build buildinfo.Info

	// The fields below come from the Java-style configuration (package
	// server/settings: conf/application.properties, -D flags, Spring's
	// environment names, the nacos/nacos-server image's variables).

	// Home is nacos.home: conf/ and logs/ live under it. Empty in tests.
	Home string
	// ClusterConf is the path of <Home>/conf/cluster.conf; it need not exist.
	ClusterConf string
	// MemberList is nacos.member.list split on commas, blanks trimmed and
	// empty entries dropped. Java reads it only when cluster.conf does not
	// exist (console-auth-core-v1.md §4.4).
	MemberList []string
	// NacosServers is the nacos/nacos-server image's NACOS_SERVERS split on
	// blanks. The image writes it into cluster.conf when it starts in
	// cluster mode, so when set it stands for the file's entries.
	NacosServers []string
	// MemberLookup is nacos.core.member.lookup.type: "" (auto), "file" or
	// "address-server".
	MemberLookup string
	// Auth holds the nacos.core.auth.* properties.
	Auth AuthConfig
	// ConfigMaxContent is maxContent (0: Java's 10485760).
	ConfigMaxContent int
	// ConfigRetentionDays is nacos.config.retention.days (0: Java's 30).
	ConfigRetentionDays int
	// SnowflakeWorkerID is nacos.core.snowflake.worker-id; nil derives it
	// from the advertised IP as Java does.
	SnowflakeWorkerID *int64
	// Ops configures the actuator endpoints and the access log (ops.go).
	Ops OpsConfig
	// GRPC configures the Nacos 2.x gRPC edge (grpc.go).
	GRPC GRPCConfig
}

// ClusterTimings are the periods of the node-to-node protocols.
type ClusterTimings struct {
	// ReportDelay and ReportInterval: member reports (5 s, then every 2 s).
	ReportDelay, ReportInterval time.Duration
	// SyncDelay: Distro's coalescing window of a changed list (100 ms).
	SyncDelay time.Duration
	// VerifyInterval: Distro checksum and service status rounds (5 s).
	VerifyInterval time.Duration
	// LoadWait: how long a starting node waits for a peer's data (10 s).
	LoadWait time.Duration
	// BootstrapWait: how long a first start waits to hear from every
	// member before it fixes the raft voter set (10 s).
	BootstrapWait time.Duration
}

func (t ClusterTimings) bootstrapWait() time.Duration {
	if t.BootstrapWait > 0 {
		return t.BootstrapWait
	}
	return 10 * time.Second
}

// Settings converts the properties for the auth service, which refuses
// (with auth enabled) the published default secret, short keys and empty
// or published identities.
func (a AuthConfig) Settings() auth.Settings {
	return auth.Settings{Enabled: a.Enabled, SystemType: a.SystemType, TokenSecret: a.SecretKey, TokenExpire: a.TokenExpire,
		IdentityKey: a.ServerIdentityKey, IdentityValue: a.ServerIdentityValue, CachingEnabled: a.Caching,
		UserAgentAuthWhite: a.UserAgentAuthWhite, AdminPassword: a.AdminPassword}
}

// AuthConfig is nacos.core.auth.* as Java Nacos 1.4.8 reads it
// (console-auth-core-v1.md §3.1), unvalidated: the auth service decides
// what it accepts.
type AuthConfig struct {
	// Enabled is nacos.core.auth.enabled (default false).
	Enabled bool
	// SystemType is nacos.core.auth.system.type ("nacos" when shipped,
	// "" in code).
	SystemType string
	// SecretKey is nacos.core.auth.default.token.secret.key, the Base64 text
	// of the HMAC key exactly as configured. With no source setting it, it is
	// the key of the console jar's classpath application.properties, which
	// is what Java 1.4.8 uses then; the nacos/nacos-server image sets it to
	// $NACOS_AUTH_TOKEN, empty when that is unset.
	SecretKey string
	// SecretKeyDefault reports that SecretKey is that published default.
	SecretKeyDefault bool
	// TokenExpire is nacos.core.auth.default.token.expire.seconds (18000 s).
	TokenExpire time.Duration
	// Caching is nacos.core.auth.caching.enabled (default true).
	Caching bool
	// UserAgentAuthWhite is nacos.core.auth.enable.userAgentAuthWhite: true
	// when the property is absent, false in the shipped conf.
	UserAgentAuthWhite bool
	// ServerIdentityKey and ServerIdentityValue are
	// nacos.core.auth.server.identity.key/value.
	ServerIdentityKey, ServerIdentityValue string
	// AdminPassword is nacosd.auth.admin-password
	// (NACOSD_AUTH_ADMIN_PASSWORD, NACOS_AUTH_ADMIN_PASSWORD): the
	// password of the built-in user nacos, set at first start and while
	// nacos still has the default one.
	AdminPassword string
}

// DefaultConfig returns Java Nacos's defaults: port 8848, /nacos, ./data.
func DefaultConfig() Config {
	return Config{Host: "", Port: 8848, ContextPath: "/nacos", DataDir: "data", Standalone: true,
		Clock: clock.Real{}, Logger: slog.Default(), Build: buildinfo.Read()}
}

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Port < 0 || c.Port > 65535:
		return fmt.Errorf("server: port must be 0..65535, got %d", c.Port)
	case c.DataDir == "":
		return errors.New("server: data dir is empty")
	case c.ContextPath != "" && !strings.HasPrefix(c.ContextPath, "/"):
		return fmt.Errorf("server: context path must start with '/', got %q", c.ContextPath)
	case c.Logger == nil || c.Clock == nil:
		return errors.New("server: Logger and Clock must be set")
	}
	if !c.Standalone && len(c.NacosServers) == 0 && len(c.MemberList) == 0 {
		if _, err := os.Stat(c.ClusterConf); c.ClusterConf == "" || err != nil {
			return fmt.Errorf("server: cluster mode needs its members: write %s (one ip:port per line), or set NACOS_SERVERS or nacos.member.list", orText(c.ClusterConf, "conf/cluster.conf under the Nacos home"))
		}
	}
	if err := c.Auth.Settings().Validate(); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

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

	members      *cluster.Manager // self only in standalone mode
	peers        *cluster.Peers   // node-to-node HTTP
	distro       *distro.Distro   // AP protocol (the replicator in cluster mode)
	clusterTasks *clock.Schedules
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

// Start opens the CP store, builds the domains and starts serving HTTP. ctx
// bounds the node's life: cancelled during Start, Start stops at the next
// step and returns its error; cancelled later, the node shuts down as by
// Close. On error everything opened so far is closed.
func (s *Server) Start(ctx context.Context) (err error) {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("server: start: %w", err)
	}
	defer func() {
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			s.Close()
		}
	}()
	s.started = time.Now()
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("server: %w", portTaken(fmt.Errorf("listen on port %d: %w", s.cfg.Port, err),
			fmt.Sprintf("HTTP port %d", s.cfg.Port), addr, "choose another port (-port, server.port, SERVER_PORT)"))
	}
	s.ln = ln
	port := ln.Addr().(*net.TCPAddr).Port
	ip := s.cfg.IP
	if ip == "" {
		ip = selfIP()
	}

	raftAddr := s.cfg.RaftAddr
	if raftAddr == "" {
		switch {
		case s.cfg.Port == 0:
			raftAddr = "127.0.0.1:0"
		case s.cfg.Standalone:
			raftAddr = "127.0.0.1:" + strconv.Itoa(port-1000)
		default: // peers dial the member's ip at port − 1000, as Java's JRaft
			raftAddr = net.JoinHostPort(ip, strconv.Itoa(port-1000))
		}
	}
	if err := s.openCluster(ip, port, raftAddr); err != nil {
		return fmt.Errorf("server: cluster: %w", err)
	}
	var early *handoff
	if !s.cfg.Standalone { // members starting together answer one another (server/startup.go)
		early = newHandoff(ln, s.startupResponder(s.members))
		s.ln = lateListener{early}
	}
	rc := raftstore.DefaultConfig()
	rc.Dir = filepath.Join(s.cfg.DataDir, "raft")
	rc.NodeID = s.members.SelfAddress()
	rc.BindAddr = raftAddr
	rc.Bootstrap = true
	rc.Standalone = s.cfg.Standalone
	if !s.cfg.Standalone {
		if fresh, _ := raftstore.IsEmpty(rc.Dir); fresh {
			// first start: learn which members are Java nodes before the
			// voter set is fixed (members that do not answer count as voters)
			pctx, cancel := context.WithTimeout(ctx, s.cfg.ClusterTimings.bootstrapWait())
			s.members.Probe(pctx, 500*time.Millisecond)
			cancel()
			if l := s.members.RaftLeaderSeen(); l != "" {
				// a nacosd raft group exists already (this node is new, or its
				// data was wiped): join it; the leader adds this node as a
				// voter when its report arrives and sends it a snapshot
				rc.Bootstrap = false
				s.log.Info("raft: joining the existing raft group", "leader", l)
			}
		}
		rc.Peers = s.raftPeers(raftAddr)
		rc.OpenTimeout = 5 * time.Second // without a quorum yet the node still starts (AP data, reads)
	}
	rc.DiskBuckets = config.DiskBuckets()
	rc.Logger = s.log.With("component", "raft")
	if s.cfg.Standalone {
		// A lone voter has no peer to lose touch with: it elects itself
		// after one heartbeat timeout as a follower (raft waits 1–2×), which
		// was most of a start (100 ms: ~155 of ~185 ms to the first answer).
		// As leader it checks its lease (against itself only) once per
		// timeout: each check is a wake-up of the idle process, so the
		// timeout is not shorter still (idle CPU, 20 s of an idle node: 100 ms
		// 0.4 % of a core, 25 ms ~1 %, 10 ms 1.8 %).
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout = standaloneRaftTimeout, standaloneRaftTimeout, standaloneRaftTimeout
	}
	if s.cfg.FastRaft {
		d := 50 * time.Millisecond
		if s.cfg.RaftTimeout > 0 {
			d = s.cfg.RaftTimeout
		}
		rc.HeartbeatTimeout, rc.ElectionTimeout, rc.LeaderLeaseTimeout, rc.CommitTimeout = d, d, d, 5*time.Millisecond
	}
	if s.store, err = raftstore.Open(rc); err != nil {
		return fmt.Errorf("server: %w", portTaken(fmt.Errorf("open raft store: %w", err),
			"raft address "+raftAddr, raftAddr, "choose another HTTP port (raft uses port − 1000) or -raft-addr"))
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("server: start: %w", err)
	}

	// push renders through the registry, built after it: regp is set once
	// the registry exists, before any subscriber can appear.
	var regp atomic.Pointer[naming.Registry]
	pc := s.cfg.Push
	pc.LeadingEdge = !s.cfg.JavaPushTiming
	pc.OnAck = s.ops.pushAcked(pc.OnAck)
	if pc.Clock == nil {
		pc.Clock = s.cfg.Clock
	}
	if pc.Logger == nil {
		pc.Logger = s.log.With("component", "push")
	}
	pc.Render = func(sub push.Subscriber) ([]byte, error) {
		reg := regp.Load()
		if reg == nil {
			return nil, errors.New("server: push before the naming registry started")
		}
		return reg.RenderPush(sub)
	}
	if pc.SubscriberTTL == 0 && pc.SubscriberTTLFunc == nil {
		pc.SubscriberTTLFunc = func() time.Duration {
			if reg := regp.Load(); reg != nil {
				return time.Duration(reg.Switches().DefaultPushCacheMillis) * time.Millisecond
			}
			return time.Duration(switches.DefaultSwitches().DefaultPushCacheMillis) * time.Millisecond
		}
	}
	if s.push, err = push.New(pc); err != nil {
		return fmt.Errorf("server: start push: %w", err)
	}

	nc := s.cfg.Naming
	s.hub = live.NewHub()
	nc.Store, nc.Pusher = s.store, s.push
	ds := &distroStore{}
	if err := s.buildDistro(ds); err != nil {
		return err
	}
	if !s.cfg.Standalone {
		nc.Replicator = s.distro
	}
	if nc.Clock == nil {
		nc.Clock = s.cfg.Clock
	}
	if nc.Logger == nil {
		nc.Logger = s.log.With("component", "naming")
	}
	// the config cache and the naming registry each load their part of the
	// store (the decode of every config and persistent instance): in parallel
	cfgDone := make(chan error, 1)
	go func() { cfgDone <- s.startConfig(ip) }()
	reg, err := naming.New(nc)
	if cerr := <-cfgDone; err == nil && cerr != nil {
		return cerr
	}
	if err != nil {
		return fmt.Errorf("server: start naming: %w", err)
	}
	s.registry = reg
	ds.reg = reg
	regp.Store(reg)
	s.consumeChanges(reg)

	headerTimeout := s.cfg.HeaderTimeout
	if headerTimeout <= 0 {
		headerTimeout = DefaultHeaderTimeout
	}
	hardConns, softConns := connLimits(s.cfg.MaxConns)
	cln := connlimit.Wrap(s.ln, headerTimeout)
	// fasthttp's Concurrency does not count held long polls: the listener
	// caps every open connection (server/limits.go)
	cln.SetMax(hardConns, refuseConn)
	// an idle-connection flood cannot keep ordinary requests out: one
	// address holds at most a share of the table, and near the soft limit
	// connections that stay silent are closed (server/limits.go)
	cln.SetPerSource(perSourceLimit(s.cfg.MaxConnsPerSource, hardConns), localHost, refuseSource)
	cln.SetPressure(pressureLevel(hardConns, softConns), quietUnderPressure)
	s.app = fiber.New(fiber.Config{
		DisableStartupMessage: true,
		CaseSensitive:         true, // Spring's mappings are
		ErrorHandler:          httpapi.ErrorHandlerIn(s.log, s.cfg.ContextPath),
		BodyLimit:             32 << 20,
		ReadBufferSize:        32 << 10,
		ReduceMemoryUsage:     true,          // held long polls must not keep their 32 KiB read buffers
		ReadTimeout:           headerTimeout, // from a request's first byte; held long polls are past it
		Concurrency:           hardConns,     // beyond: fasthttp's 503 and close
		IdleTimeout:           headerTimeout, // Tomcat keepAliveTimeout = connectionTimeout; also bounds a silent new connection
	})
	// body limits before a body is read, parameter count before a parse
	// (server/httpapi/limits.go: Java's Tomcat limits)
	// (node-to-node bodies only with the server identity when auth is on)
	s.app.Server().HeaderReceived = httpapi.HeaderReceived(s.cfg.ContextPath, s.nodeBody)
	if err := s.startOps(); err != nil {
		return err
	}
	s.app.Use(httpapi.Observe(s.cfg.ContextPath, s.ops.access != nil, s.observed)) // metrics and access log, panics included
	// A handler bug must cost one request, not the process: the panic is
	// logged with its stack and answered 500 through the error handler.
	s.app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		s.log.Error("handler panic", "method", c.Method(), "path", c.Path(), "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
	}}))
	if s.auth, err = auth.New(auth.Config{Settings: s.cfg.Auth.Settings(), Store: s.store, Clock: s.cfg.Clock,
		Logger: s.log.With("component", "auth"), ContextPath: s.cfg.ContextPath}); err != nil {
		return fmt.Errorf("server: start auth: %w", err)
	}
	if err := s.auth.Bootstrap(ctx); err != nil && !errors.Is(err, raftstore.ErrNotLeader) {
		return fmt.Errorf("server: start auth: %w", err)
	}
	s.app.Use(httpapi.ParamLimit(s.cfg.ContextPath))
	s.app.Use(shedLoad(cln, softConns, s.cfg.ContextPath, func(c *fiber.Ctx) bool {
		return s.auth.Identity().Verify(func(k string) string { return string(c.Request().Header.Peek(k)) })
	}))
	// the route table: every route with its class and @Secured check; the
	// gate in front of them checks, and sends each write where it is
	// decided (server/routes.go, server/httpapi/gate.go)
	table, err := s.routeTable(port, reg)
	if err != nil {
		return err
	}
	s.routes = table
	if s.ops.audit != nil { // who changed what, recorded off the request path (server/audit)
		s.app.Use(httpapi.Audit(s.cfg.ContextPath, table, s.ops.audit.Record))
	}
	if s.router, err = leader.New(leader.Config{State: s.store, Self: s.members.SelfAddress(), Logger: s.log.With("component", "leader")}); err != nil {
		return fmt.Errorf("server: leader router: %w", err)
	}
	gd := httpapi.GateDeps{Table: table, ContextPath: s.cfg.ContextPath, Auth: s.auth, Objects: s.config,
		Raft: s.store, Self: s.members.SelfAddress(), Router: s.router, Distro: s.distroDeps(),
		Logger: s.log.With("component", "gate"), Stats: &s.gateStats}
	if !s.cfg.Standalone {
		// a standalone node has no leader but itself: a write it cannot
		// take (a full disk made it step down) answers its own error
		gd.Forward = s.forwardToLeader
	}
	s.app.Use(httpapi.Gate(gd))
	table.Mount(s.app.Group(s.cfg.ContextPath))
	if err := s.startGRPC(ip, port); err != nil {
		return err
	}
	s.ln = cln             // counted, first-byte deadline (server/limits.go)
	if !s.cfg.Standalone { // take the peers' ephemeral data before answering clients with empty lists
		lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		s.distro.LoadOnce(lctx)
		cancel()
	}
	if early != nil {
		early.handOver()
	}
	s.serve(ctx)
	s.startClusterLoops(ctx)
	s.log.Info("nacosd started", "http", ln.Addr().String(), "contextPath", s.cfg.ContextPath, "dataDir", s.cfg.DataDir,
		"raft", s.store.Addr(), "push", s.push.Addr().String(), "startup", time.Since(s.started).Round(time.Millisecond).String(), "auth", s.cfg.Auth.Enabled,
		"mode", s.modeName(), "members", s.memberAddrs(), "home", s.cfg.Home, "version", s.cfg.Build.Version)
	return nil
}

// startConfig builds the config service from the store (Start).
func (s *Server) startConfig(ip string) (err error) {
	cc := config.DefaultConfig()
	cc.Store, cc.Clock, cc.Logger = s.store, s.cfg.Clock, s.log.With("component", "config")
	cc.Notified = s.ops.configNotified
	cc.WorkerID = config.WorkerIDFromIP(ip)
	if s.cfg.SnowflakeWorkerID != nil {
		cc.WorkerID = *s.cfg.SnowflakeWorkerID
	}
	if s.cfg.ConfigMaxContent > 0 {
		cc.MaxContent = s.cfg.ConfigMaxContent
	}
	if s.cfg.ConfigRetentionDays > 0 {
		cc.RetentionDays = s.cfg.ConfigRetentionDays
	}
	if s.config, err = config.New(cc); err != nil {
		return fmt.Errorf("server: start config: %w", err)
	}
	return nil
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

// status is ServerStatusManager: the overriddenServerStatus switch when
// set, else UP once the naming registry serves. CP availability (a raft
// leader, a writable log) does not gate it: reads and ephemeral instances
// never touch raft, and CP writes answer their own error (raftstore's
// ErrStorage, ErrNotLeader) while the CP store cannot take them. Java 1.4.8
// standalone behaves alike (StandalonePersistentServiceProcessor is
// available unless JRaft reported an error); Java's cluster mode answers
// every naming call 503 while JRaft has no leader or after a raft error.
// See docs/operations.md.
func (s *Server) status() string {
	if s.registry == nil {
		return "STARTING"
	}
	if o := s.registry.Switches().OverriddenServerStatus; o != nil && *o != "" {
		return *o
	}
	return "UP"
}

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

// Ready is the readiness probe: both stores must answer, and a cluster
// member must be in touch with a raft leader. A member that has heard
// from no leader for longer than an election timeout (cut off from the
// majority, or the majority is down) serves reads that can be arbitrarily
// old: it reports itself not ready, so that load balancers and Kubernetes
// move clients to a member of the majority (Java stays ready).
func (s *Server) Ready() error {
	switch {
	case s.status() != "UP":
		return errors.New("Config and Naming are not in readiness")
	case s.store == nil || s.store.LeaderAddr() == "":
		return errors.New("Config is not in readiness: no raft leader")
	case !s.cfg.Standalone && s.store.LeaderContact() > s.store.ElectionTimeout():
		return fmt.Errorf("Config is not in readiness: no raft leader heard for %s (more than the election timeout %s): "+
			"this member is cut off from the majority, its data may be stale",
			s.store.LeaderContact().Round(time.Millisecond), s.store.ElectionTimeout())
	case !s.cfg.Standalone && s.distro != nil && !s.distro.Initialized():
		return errors.New("Naming is not in readiness")
	}
	return nil
}

// selfIP is the first non-loopback IPv4 address of the lowest-index up
// interface (InetUtils), else 127.0.0.1.
func selfIP() string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return "127.0.0.1"
	}
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
				return ipn.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

// sysLoad returns system cpu usage (approximated by load/cores), the 1-minute
// load average and used-memory ratio from /proc, as Java's OperatingSystemMXBean.
func sysLoad() (cpu, load, mem float32) {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseFloat(f[0], 32)
			load = float32(v)
		}
	}
	if n := runtime.NumCPU(); n > 0 {
		cpu = load / float32(n)
		if cpu > 1 {
			cpu = 1
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var total, avail float64
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			v, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "MemTotal:":
				total = v
			case "MemFree:":
				avail = v
			}
		}
		if total > 0 {
			mem = float32(1 - avail/total)
		}
	}
	return cpu, load, mem
}
