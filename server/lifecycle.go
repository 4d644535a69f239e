package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// errClosed is the cause of a shutdown asked for by Close.
var errClosed = errors.New("server: closed")

// lifecycle is the node's run group: every long-running part runs in it,
// the first one to fail stops the whole node with that cause, and Close
// returns once every part has ended.
type lifecycle struct {
	mu      sync.Mutex
	stop    context.CancelCauseFunc // nil before serve
	group   *errgroup.Group
	done    chan struct{} // closed when every component is closed
	once    sync.Once
	cause   error // the failure that stopped the node (nil: Close or ctx)
	errs    []error
	stopped bool // shutdown started: a returning listener is expected
}

func newLifecycle() lifecycle { return lifecycle{done: make(chan struct{})} }

// serve starts the run group: HTTP serving, and the shutdown that follows
// the first failure, ctx's end or Close.
func (s *Server) serve(ctx context.Context) {
	runCtx, stop := context.WithCancelCause(ctx)
	g, gctx := errgroup.WithContext(runCtx)
	s.run.mu.Lock()
	s.run.stop, s.run.group = stop, g
	s.run.mu.Unlock()
	g.Go(func() error {
		err := s.app.Listener(s.ln)
		if s.stopping() {
			return nil
		}
		if err == nil {
			err = errors.New("listener closed")
		}
		return fmt.Errorf("server: http listener on %s stopped: %w", s.ln.Addr(), err)
	})
	if s.grpc != nil {
		g.Go(func() error {
			select {
			case err := <-s.grpc.Err():
				if err != nil && !s.stopping() {
					return fmt.Errorf("server: grpc listener stopped: %w", err)
				}
			case <-gctx.Done():
			}
			return nil
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		s.shutdown(context.Cause(gctx))
		return nil
	})
}

func (s *Server) stopping() bool {
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	return s.run.stopped
}

// shutdown closes every component once, logging why.
func (s *Server) shutdown(cause error) {
	s.run.once.Do(func() {
		s.run.mu.Lock()
		s.run.stopped = true
		s.run.mu.Unlock()
		switch {
		case cause == nil, errors.Is(cause, errClosed):
		case errors.Is(cause, context.Canceled), errors.Is(cause, context.DeadlineExceeded):
			s.log.Info("nacosd stopping: context ended", "cause", cause.Error())
		default:
			s.log.Error("nacosd stopping: a component failed", "cause", cause.Error())
			s.run.mu.Lock()
			s.run.cause = cause
			s.run.mu.Unlock()
		}
		errs := s.closeComponents()
		s.run.mu.Lock()
		s.run.errs = errs
		s.run.mu.Unlock()
		close(s.run.done)
	})
}

// closeComponents closes everything opened, in dependency order.
func (s *Server) closeComponents() []error {
	var errs []error
	// release held long polls and console event streams first, or the
	// HTTP shutdown waits for them
	if s.hub != nil {
		s.hub.Close()
	}
	s.closeGRPC()
	if s.config != nil {
		if err := s.config.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.app != nil {
		if err := s.app.ShutdownWithTimeout(5 * time.Second); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, fmt.Errorf("server: http shutdown: %w", err))
		}
	}
	if s.ln != nil {
		// also when the shutdown came before Serve took the listener, or
		// the listener is what failed
		_ = s.ln.Close()
	}
	s.closeCluster() // Distro reads the registry
	if err := s.closeOps(); err != nil {
		errs = append(errs, err)
	}
	if s.registry != nil {
		if err := s.registry.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.auth != nil {
		s.auth.Close()
	}
	if s.push != nil {
		if err := s.push.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.store != nil {
		if err := s.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("server: close raft store: %w", err))
		}
	}
	return errs
}

// Done is closed once the node has stopped: after Close, after the context
// given to Start ended, or after a component failed (see Err).
func (s *Server) Done() <-chan struct{} { return s.run.done }

// Err is the failure that stopped the node, nil while it runs or when it
// was stopped by Close or its context.
func (s *Server) Err() error {
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	return s.run.cause
}

// Close stops serving, closes every component and returns once every
// goroutine of the node has ended; safe to call twice and after a failure.
func (s *Server) Close() error {
	s.run.mu.Lock()
	stop, g := s.run.stop, s.run.group
	s.run.mu.Unlock()
	if stop == nil { // never served: Start failed or was not called
		s.shutdown(errClosed)
	} else {
		stop(errClosed)
		_ = g.Wait()
	}
	<-s.run.done
	s.run.mu.Lock()
	defer s.run.mu.Unlock()
	return errors.Join(s.run.errs...)
}
