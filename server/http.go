package server

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"

	"github.com/nacosd/nacosd/internal/connlimit"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/leader"
)

// buildHTTP builds the HTTP edge in the order a request meets it: the
// counted listener and fasthttp's limits, body and parameter limits,
// metrics and the access log, panic recovery, load shedding, the audit
// trail, then the gate (auth checks, writes sent where they are decided)
// in front of the route table.
func (s *Server) buildHTTP(context.Context) error {
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
	s.ln = cln // counted, first-byte deadline (server/limits.go)
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
	s.app.Use(httpapi.ParamLimit(s.cfg.ContextPath))
	s.app.Use(shedLoad(cln, softConns, s.cfg.ContextPath, func(c *fiber.Ctx) bool {
		return s.auth.Identity().Verify(func(k string) string { return string(c.Request().Header.Peek(k)) })
	}))
	return s.mountRoutes()
}

// mountRoutes mounts the route table behind the gate: every route with
// its class and @Secured check; the gate in front of them checks, and
// sends each write where it is decided (server/routes.go,
// server/httpapi/gate.go).
func (s *Server) mountRoutes() (err error) {
	table, err := s.routeTable(s.port, s.registry)
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
		// a restarted member serves raft state once it is back where it
		// was (raftstore/watermark.go)
		gd.CatchUp, gd.Behind = s.store.WaitCaughtUp, s.store.Behind
	}
	s.app.Use(httpapi.Gate(gd))
	table.Mount(s.app.Group(s.cfg.ContextPath))
	return nil
}
