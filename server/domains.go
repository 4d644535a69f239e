package server

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/auth"
	"github.com/nacosd/nacosd/server/config"
	"github.com/nacosd/nacosd/server/console/live"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/push"
	"github.com/nacosd/nacosd/server/switches"
)

// buildDomains builds what the edges serve, over the open store: UDP
// push, Distro, the naming registry and the config service (which load
// their part of the store in parallel), and the auth service with its
// built-in user.
func (s *Server) buildDomains(ctx context.Context) error {
	// push renders through the registry, built after it: regp is set once
	// the registry exists, before any subscriber can appear.
	var regp atomic.Pointer[naming.Registry]
	if err := s.startPush(&regp); err != nil {
		return err
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
	go func() { cfgDone <- s.startConfig() }()
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
	return s.startAuth(ctx)
}

// startPush builds the UDP push service; it renders through the registry
// regp holds once it exists.
func (s *Server) startPush(regp *atomic.Pointer[naming.Registry]) (err error) {
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
			return time.Duration(switches.Default().DefaultPushCacheMillis) * time.Millisecond
		}
	}
	if s.push, err = push.New(pc); err != nil {
		return fmt.Errorf("server: start push: %w", err)
	}
	return nil
}

// startConfig builds the config service from the store (buildDomains).
func (s *Server) startConfig() (err error) {
	cc := config.DefaultConfig()
	cc.Store, cc.Clock, cc.Logger = s.store, s.cfg.Clock, s.log.With("component", "config")
	cc.Notified = s.ops.configNotified
	cc.WorkerID = config.WorkerIDFromIP(s.ip)
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

// startAuth builds the auth service and writes the built-in user nacos
// (on a raft follower the leader writes it later: bootstrapAuth).
func (s *Server) startAuth(ctx context.Context) (err error) {
	if s.auth, err = auth.New(auth.Config{Settings: s.cfg.Auth.Settings(), Store: s.store, Clock: s.cfg.Clock,
		Logger: s.log.With("component", "auth"), ContextPath: s.cfg.ContextPath}); err != nil {
		return fmt.Errorf("server: start auth: %w", err)
	}
	if err := s.auth.Bootstrap(ctx); err != nil && !errors.Is(err, raftstore.ErrNotLeader) {
		return fmt.Errorf("server: start auth: %w", err)
	}
	return nil
}
