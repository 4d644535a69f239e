package server

import (
	"context"
	"fmt"
	"time"
)

// Start opens the CP store, builds the domains and starts serving. ctx
// bounds the node's life: cancelled during Start, Start stops at the next
// step and returns its error; cancelled later, the node shuts down as by
// Close. On error everything opened so far is closed.
//
// Start is the node's wiring diagram: each step is one function, in the
// file named beside it, and uses what the steps before it opened.
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
	for _, step := range []func(context.Context) error{
		s.listen,       // the HTTP port, the advertised and raft addresses (listen.go)
		s.openCluster,  // the member list, the node-to-node client (cluster.go)
		s.openStore,    // the raft CP store (store.go)
		s.buildDomains, // push, Distro, naming, config, auth (domains.go)
		s.buildHTTP,    // connection limits, middleware, gate, route table (http.go)
		s.startGRPC,    // the 2.x edge (grpc.go)
		s.loadPeers,    // the peers' ephemeral data, then the API takes the port (cluster.go)
	} {
		if err := step(ctx); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("server: start: %w", err)
		}
	}
	s.serve(ctx)             // the run group (lifecycle.go)
	s.startClusterLoops(ctx) // reports, Distro, voters, rebalancing (cluster.go)
	s.log.Info("nacosd started", "http", s.HTTPAddr(), "contextPath", s.cfg.ContextPath, "dataDir", s.cfg.DataDir,
		"raft", s.store.Addr(), "push", s.push.Addr().String(), "startup", time.Since(s.started).Round(time.Millisecond).String(), "auth", s.cfg.Auth.Enabled,
		"mode", s.modeName(), "members", s.memberAddrs(), "home", s.cfg.Home, "version", s.cfg.Build.Version)
	return nil
}
