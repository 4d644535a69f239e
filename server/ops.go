package server

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nacosd/nacosd/server/accesslog"
	"github.com/nacosd/nacosd/server/audit"
	"github.com/nacosd/nacosd/server/httpapi"
	"github.com/nacosd/nacosd/server/metrics"
)

// OpsConfig is the operations side of a node: the actuator endpoints
// (management.endpoints.web.exposure.*) and Tomcat's access log
// (server.tomcat.accesslog.*).
type OpsConfig struct {
	// ExposePrometheus mounts <context>/actuator/prometheus (Java: only
	// when the exposure includes prometheus or *).
	ExposePrometheus bool
	// HideHealth drops <context>/actuator/health (exposure.exclude names
	// health; Spring Boot exposes it by default).
	HideHealth bool
	// AccessLog is written when AccessLog.Enabled; Clock, Logger and the
	// redacted identity header are filled in by the server.
	AccessLog accesslog.Config
	// AuditDir, when set, is where the audit trail is written
	// (nacosd.audit-log, nacosd.audit-dir; server/audit).
	AuditDir string
}

// minFreeDisk is Spring Boot's diskSpace health threshold (10 MB).
const minFreeDisk = 10 << 20

// opsState holds the metrics registry and the access log. The hooks given
// to push and config run before the registry exists and after it is
// closed, so they read it through an atomic pointer.
type opsState struct {
	m      atomic.Pointer[metrics.Metrics]
	access *accesslog.Log
	audit  *audit.Log
}

func (o *opsState) pushAcked(next func(time.Duration)) func(time.Duration) {
	return func(d time.Duration) {
		if m := o.m.Load(); m != nil {
			m.PushAcked(d)
		}
		if next != nil {
			next(d)
		}
	}
}

func (o *opsState) configNotified(d time.Duration) {
	if m := o.m.Load(); m != nil {
		m.ConfigNotified(d)
	}
}

// startOps builds the registry over the running domains and opens the
// access log. Call it once the domains exist, before serving.
func (s *Server) startOps() error {
	src := metrics.Sources{
		Counts: s.registry.Counts,
		Naming: s.registry.Stats,
		Push:   s.push.Counters,
		Config: s.config.Stats,
		Raft:   s.store.Stats,
		Ready:  s.Ready,
	}
	// the auth service starts after this (read at scrape time, once serving)
	src.DefaultAdminPassword = func() bool { return s.auth != nil && s.auth.DefaultPasswordInForce() }
	if !s.cfg.Standalone {
		src.Distro = s.distroStats
	}
	m := metrics.New(metrics.Config{Clock: s.cfg.Clock, Logger: s.log.With("component", "metrics"), Sources: src, Build: s.cfg.Build})
	s.ops.m.Store(m)
	if ac := s.cfg.Ops.AccessLog; ac.Enabled {
		ac.Clock, ac.Logger = s.cfg.Clock, s.log.With("component", "accesslog")
		if k := s.cfg.Auth.ServerIdentityKey; k != "" {
			ac.RedactHeaders = append(append([]string(nil), ac.RedactHeaders...), k)
		}
		l, err := accesslog.Open(ac)
		if err != nil {
			return fmt.Errorf("server: access log: %w", err)
		}
		s.ops.access = l
	}
	if dir := s.cfg.Ops.AuditDir; dir != "" {
		l, err := audit.Open(audit.Config{Dir: dir, Clock: s.cfg.Clock, Logger: s.log.With("component", "audit")})
		if err != nil {
			return fmt.Errorf("server: audit log: %w", err)
		}
		s.ops.audit = l
	}
	return nil
}

// observed feeds one finished request to the metrics and the access log.
func (s *Server) observed(r httpapi.Request) {
	if m := s.ops.m.Load(); m != nil {
		method := r.Method
		switch method {
		case "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS", "TRACE", "CONNECT":
		default:
			method = "UNKNOWN" // made-up methods must not mint series without end
		}
		m.ObserveRequest(metrics.Request{Method: method, URI: r.URI, Status: r.Status, Exception: r.Exception, Duration: r.Duration})
		switch r.ConfigOp {
		case "get":
			m.ConfigGet()
		case "publish":
			m.ConfigPublish()
		}
		if r.Failed && strings.Contains(r.Path, "/v1/cs/") {
			m.Exception("config", "db") // a store failure behind a config request
		}
	}
	if l := s.ops.access; l != nil {
		l.Write(&accesslog.Entry{Start: r.Start, Duration: r.Duration, Method: r.Method, Path: r.Path, Query: r.Query,
			Protocol: r.Protocol, Status: r.Status, BytesSent: r.BytesSent, RemoteIP: r.RemoteIP, LocalAddr: r.LocalAddr,
			ReqHeader: r.ReqHeader, RespHeader: r.RespHeader})
	}
}

// actuator is what MountActuator exposes.
func (s *Server) actuator() httpapi.ActuatorDeps {
	var d httpapi.ActuatorDeps
	if !s.cfg.Ops.HideHealth {
		d.Health = s.health
	}
	if s.cfg.Ops.ExposePrometheus {
		d.Prometheus = s.ops.m.Load().Registry()
	}
	return d
}

// health is Spring Boot's aggregate of Java Nacos's indicators: diskSpace
// (10 MB free where the data lives) and the store standing in for the
// database (open, not shut down).
func (s *Server) health() error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(s.cfg.DataDir, &st); err == nil && st.Bavail*uint64(st.Bsize) < minFreeDisk {
		return fmt.Errorf("server: less than 10 MB free in %s", s.cfg.DataDir)
	}
	if s.store == nil || s.store.Stats()["state"] == "Shutdown" {
		return errors.New("server: store is not open")
	}
	return nil
}

// closeOps stops the daily metrics timer and flushes the access log and
// the audit trail; call it after HTTP serving has stopped.
func (s *Server) closeOps() error {
	if m := s.ops.m.Swap(nil); m != nil {
		m.Close()
	}
	// a log that cannot be flushed (a full disk) is reported, but does not
	// make an otherwise clean stop fail: the data is safe, the exit status
	// says so
	if s.ops.audit != nil {
		if err := s.ops.audit.Close(); err != nil {
			s.log.Warn("audit trail: the last entries could not be written", "err", err)
		}
	}
	if s.ops.access != nil {
		if err := s.ops.access.Close(); err != nil {
			s.log.Warn("access log: the last lines could not be written", "err", err)
		}
	}
	return nil
}

// modeName is the start-up log's mode.
func (s *Server) modeName() string {
	if s.cfg.Standalone {
		return "standalone"
	}
	return "cluster"
}

// memberAddrs lists the members' addresses for the start-up log.
func (s *Server) memberAddrs() string {
	ms := s.Members()
	addrs := make([]string, len(ms))
	for i, m := range ms {
		addrs[i] = m.Address()
	}
	return strings.Join(addrs, ",")
}
