// Package grpcwire is a small gRPC server over HTTP/2 (RFC 9113, the gRPC
// HTTP/2 protocol) for a few methods whose messages the caller encodes
// itself: unary calls and bidirectional streams of raw message bytes, no
// compression, no TLS. It exists for memory and CPU: a Nacos 2.x server
// holds tens of thousands of mostly idle client connections, and grpc-go
// runs four goroutines per connection (reader, writer, keep-alive and the
// stream's handler, whose stacks stay grown) with its own buffers, HPACK
// tables and timers. Here a connection is one goroutine that reads frames;
// calls and stream messages run on a few shared workers, writes go to the
// socket under the connection's lock, and one goroutine for the whole
// server sends the keep-alive pings. DESIGN.md has the details.
package grpcwire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// Kind is how a method is called.
type Kind int

// The method kinds.
const (
	UnaryMethod Kind = iota + 1
	StreamMethod
)

// Handler answers calls.
type Handler interface {
	// Unary answers one request message of a unary method; an error ends
	// the call with its Status (Unknown for an error that is not one).
	// ctx ends when the client cancels or its grpc-timeout passes.
	Unary(ctx context.Context, c *Conn, method string, msg []byte) ([]byte, error)
	// OpenStream starts a call of a streaming method; its receiver gets
	// the client's messages in order. An error refuses the call.
	OpenStream(s *Stream) (StreamReceiver, error)
}

// StreamReceiver gets a stream's messages, one at a time, in order.
type StreamReceiver interface {
	// Message is one message from the client (the receiver owns msg).
	Message(msg []byte)
	// Closed is called once when the stream ends: the client half-closed
	// or reset it, or the connection ended. No Message follows.
	Closed()
}

// Config configures a Server.
type Config struct {
	// Methods are the served paths ("/Service/method") and their kinds;
	// other paths are answered Unimplemented.
	Methods map[string]Kind
	Handler Handler
	Logger  *slog.Logger
	// MaxRecvMsgSize is the largest request message (grpc-go's default 4 MiB).
	MaxRecvMsgSize int
	// KeepAliveTime is how long a silent connection waits before the
	// server pings it, KeepAliveTimeout how long it waits for the answer
	// before closing it (0: 2 h and 20 s). PermitKeepAliveTime is the
	// shortest ping interval a client may use; a client pinging faster
	// three times is sent GOAWAY ENHANCE_YOUR_CALM "too_many_pings"
	// (0: 5 min), as grpc-go's and grpc-java's enforcement policies do.
	KeepAliveTime, KeepAliveTimeout, PermitKeepAliveTime time.Duration
	// OnConnect and OnClose are called for each accepted connection, the
	// first before any call of it, the second once after its last.
	OnConnect, OnClose func(*Conn)
	// Inline reports whether a unary call's handler answers at once
	// without blocking or sending on a stream; such calls run on their
	// connection's reader, and the answers to the calls read together go
	// out in one write (nil: every call runs on a worker).
	Inline func(c *Conn, method string, req []byte) bool
	// Workers is how many long-lived goroutines run calls and stream
	// messages (0: GOMAXPROCS); when they are all busy a call gets a new
	// spare worker, which stays while there is work (spareIdle).
	Workers int
}

// Server serves gRPC over HTTP/2 connections.
type Server struct {
	cfg  Config
	log  *slog.Logger
	work chan func()
	bufs sync.Pool // *[]byte frame and write buffers

	mu     sync.Mutex
	conns  map[*Conn]struct{}
	lns    []net.Listener
	closed bool
	done   chan struct{}
	wg     sync.WaitGroup
}

// New returns a server.
func New(cfg Config) (*Server, error) {
	if cfg.Handler == nil || len(cfg.Methods) == 0 {
		return nil, errors.New("grpcwire: Config.Handler and Config.Methods must be set")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxRecvMsgSize <= 0 {
		cfg.MaxRecvMsgSize = 4 << 20
	}
	if cfg.KeepAliveTime <= 0 {
		cfg.KeepAliveTime = 2 * time.Hour
	}
	if cfg.KeepAliveTimeout <= 0 {
		cfg.KeepAliveTimeout = 20 * time.Second
	}
	if cfg.PermitKeepAliveTime <= 0 {
		cfg.PermitKeepAliveTime = 5 * time.Minute
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	s := &Server{cfg: cfg, log: cfg.Logger, work: make(chan func()), conns: map[*Conn]struct{}{}, done: make(chan struct{})}
	for range cfg.Workers {
		s.wg.Add(1)
		go s.worker()
	}
	s.wg.Add(1)
	go s.keepalive()
	return s, nil
}

func (s *Server) worker() {
	defer s.wg.Done()
	for {
		select {
		case f := <-s.work:
			f()
		case <-s.done:
			return
		}
	}
}

// run runs f on an idle worker or, when none is idle, on a new spare
// worker.
func (s *Server) run(f func()) {
	select {
	case s.work <- f:
	default:
		go s.spare(f)
	}
}

// spareIdle is how long a spare worker waits for more work before it
// ends.
const spareIdle = 2 * time.Second

// spare runs f, then serves as a worker until it has been idle for
// spareIdle. Under load the spares stay and run call after call on stacks
// already grown, instead of a new goroutine per call growing its stack
// (copystack and newproc were 8–13 % of the server's CPU per call).
func (s *Server) spare(f func()) {
	f()
	t := time.NewTimer(spareIdle)
	defer t.Stop()
	for {
		select {
		case f := <-s.work:
			f()
			t.Reset(spareIdle)
		case <-t.C:
			return
		case <-s.done:
			return
		}
	}
}

// Serve accepts connections on ln until Close or an accept error, which
// it returns (nil after Close).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return nil
	}
	s.lns = append(s.lns, ln)
	s.mu.Unlock()
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			if isTemporaryAccept(err) {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.log.Warn("grpc accept failed; retrying", "err", err, "delay", delay)
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("grpcwire: accept: %w", err)
		}
		delay = 0
		c := newConn(s, nc)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return nil
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		go c.serve()
	}
}

// isTemporaryAccept reports an accept error worth retrying: out of file
// descriptors or buffers, a connection aborted before it was accepted, a
// timeout.
func isTemporaryAccept(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM)
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

func (s *Server) removeConn(c *Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Conns is how many connections are open.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Close stops accepting, sends every connection GOAWAY and closes it.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	lns, conns := s.lns, make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, ln := range lns {
		ln.Close()
	}
	for _, c := range conns {
		c.goAway(errCodeNo, "")
		c.Close()
	}
	close(s.done)
	s.wg.Wait()
}

// keepalive pings connections silent for KeepAliveTime and closes those
// that do not answer within KeepAliveTimeout: one goroutine for all.
func (s *Server) keepalive() {
	defer s.wg.Done()
	tick := min(s.cfg.KeepAliveTime, s.cfg.KeepAliveTimeout) / 4
	tick = max(tick, 10*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	var conns []*Conn
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		conns = conns[:0]
		s.mu.Lock()
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()
		now := time.Now().UnixNano()
		for _, c := range conns {
			c.checkAlive(now)
		}
		clear(conns)
	}
}
