package server

import (
	"log/slog"

	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/server/console"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/naming"
)

// routeTable is the node's route table, in mounting order: every HTTP
// route with its class (read, AP write, CP write) and @Secured check.
// Mounting, the auth checks and the forwarding of writes all read it;
// conformance/routes.txt is checked against it (routes_test.go).
func (s *Server) routeTable(port int, reg *naming.Registry) (*httpapi.Table, error) {
	var fast *fasthttp.Server
	if s.app != nil {
		fast = s.app.Server()
	}
	return httpapi.NewTable(
		httpapi.CoreRoutes(s, s),
		httpapi.ViewCheckRoutes(s.CheckViews),
		httpapi.ActuatorRoutes(s.actuator()),
		httpapi.MigrateRoutes(s.config, s.auth),
		// held long polls leave fasthttp until answered (server/httpapi/held.go)
		httpapi.ConfigRoutes(httpapi.ConfigDeps{Service: s.config, Logger: s.log.With("component", "config"), Server: fast}),
		httpapi.ConfigV2Routes(httpapi.ConfigDeps{Service: s.config, Logger: s.log.With("component", "config")}), // Open API v2
		httpapi.AuthRoutes(s.auth),
		httpapi.HeldRoutes(s), // 2.x instances a member holds, written on their owner (server/held.go)
		httpapi.LoaderRoutes(s.loaderCount),
		httpapi.NamingRoutes(httpapi.NamingDeps{Registry: reg, Push: s.push, Cluster: s, Port: port,
			Status: s.status, SysLoad: sysLoad, Distro: s.distroDeps()}),
		httpapi.NamingV2Routes(httpapi.NamingDeps{Registry: reg}), // Open API v2
		console.Routes(console.Deps{ContextPath: s.cfg.ContextPath, Version: Version, Build: s.cfg.Build, Cluster: s, Config: s.config, Hub: s.hub,
			Raft: s.raftStatus, Distro: s.distroView, AuthEnabled: s.auth.Enabled, DefaultAdminPassword: s.auth.DefaultPasswordInForce,
			Logger: s.log.With("component", "console")}),
	)
}

// Routes is the node's route table.
func (s *Server) Routes() *httpapi.Table { return s.routes }

// GateStats are the counters of the node's gate: writes forwarded to the
// raft leader, writes of routes not declared CP.
func (s *Server) GateStats() *httpapi.GateStats { return &s.gateStats }

// RouteTable is the route table of a node, built without starting one:
// for tests and tools that list the routes (the attack suite sends every
// @Secured route). Its handlers are not to be called, and it lacks the
// Distro endpoints a started node mounts (their "/v1/ns/distro/*" check is
// there).
func RouteTable() (*httpapi.Table, error) {
	s := &Server{cfg: DefaultConfig(), log: slog.New(slog.DiscardHandler)}
	return s.routeTable(0, nil)
}

// CheckViews compares the views the domains keep of the raft state (the
// naming registry's persistent instances and services, the config cache)
// with the state itself, while no entry is applied, and returns every
// difference (nil: identical). A view that skipped an applied entry shows
// here even when later writes would hide it from clients.
func (s *Server) CheckViews() []string {
	var diffs []string
	s.store.Quiesced(func() {
		for _, d := range s.registry.CheckStore() {
			diffs = append(diffs, "naming: "+d)
		}
		for _, d := range s.config.CheckStore() {
			diffs = append(diffs, "config: "+d)
		}
	})
	return diffs
}
