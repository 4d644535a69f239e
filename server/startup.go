package server

import (
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/distro"
	"github.com/nacosd/nacosd/server/cluster"
)

// A cluster member binds its HTTP port first and serves its API only once
// the raft store is open and the peers' ephemeral data is loaded. Members
// started together wait for one another in between: the first start probes
// every member (/v1/core/cluster/report) before it fixes the raft voters,
// and the Distro load asks each member for its lists. Unanswered, those
// calls hung on the accepted but unserved sockets until their timeouts
// (10 s and 3 s: a three-node cluster took 14.5 s to its first answer).
// While it starts, a member therefore answers on its socket with what it
// already knows: a report is recorded and answered with its raft address
// (so a prober learns it is a nacosd member without a raft leader yet), the
// Distro load with "starting" (it has no lists to give), everything else
// 503. Every answer closes its connection, so clients reconnect to the API.

// handoff hands the connections of a listening socket to the start-up
// responder until handOver, then to the listener returned by late.
type handoff struct {
	ln     net.Listener
	early  func(net.Conn)
	late   chan net.Conn
	handed atomic.Bool
	closed chan struct{}
	done   chan struct{} // the accept loop ended (err says why)
	err    error
	once   sync.Once
	mu     sync.Mutex
	conns  map[net.Conn]struct{} // early connections being served
	wg     sync.WaitGroup
}

func newHandoff(ln net.Listener, early func(net.Conn)) *handoff {
	h := &handoff{ln: ln, early: early, late: make(chan net.Conn), closed: make(chan struct{}), done: make(chan struct{}),
		conns: map[net.Conn]struct{}{}}
	go h.acceptLoop()
	return h
}

func (h *handoff) acceptLoop() {
	defer close(h.done)
	for {
		c, err := h.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() { // fd limit and the like: as net/http, back off
				select {
				case <-time.After(5 * time.Millisecond):
					continue
				case <-h.closed:
				}
			}
			h.err = err
			return
		}
		if !h.handed.Load() {
			if !h.track(c) {
				continue
			}
			go func() {
				defer h.untrack(c)
				h.early(c)
			}()
			continue
		}
		select {
		case h.late <- c:
		case <-h.closed:
			_ = c.Close()
			return
		}
	}
}

func (h *handoff) track(c net.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns == nil { // closing
		_ = c.Close()
		return false
	}
	h.conns[c] = struct{}{}
	h.wg.Add(1)
	return true
}

func (h *handoff) untrack(c net.Conn) {
	_ = c.Close()
	h.mu.Lock()
	if h.conns != nil {
		delete(h.conns, c)
	}
	h.mu.Unlock()
	h.wg.Done()
}

// handOver sends every later connection to the late listener.
func (h *handoff) handOver() { h.handed.Store(true) }

// Close closes the socket and every early connection and waits for their
// handlers.
func (h *handoff) Close() error {
	var err error
	h.once.Do(func() {
		close(h.closed)
		err = h.ln.Close()
		h.mu.Lock()
		for c := range h.conns {
			_ = c.Close()
		}
		h.conns = nil
		h.mu.Unlock()
		h.wg.Wait()
	})
	return err
}

// lateListener is the listener the API serves on.
type lateListener struct{ h *handoff }

func (l lateListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.h.late:
		return c, nil
	case <-l.h.closed:
		return nil, net.ErrClosed
	case <-l.h.done:
		if l.h.err != nil {
			return nil, l.h.err
		}
		return nil, net.ErrClosed
	}
}

func (l lateListener) Close() error   { return l.h.Close() }
func (l lateListener) Addr() net.Addr { return l.h.ln.Addr() }

// startupResponder serves connections while the member starts.
func (s *Server) startupResponder(members *cluster.Manager) func(net.Conn) {
	report := s.cfg.ContextPath + "/v1/core/cluster/report"
	datums := s.cfg.ContextPath + "/v1/ns/distro/datums"
	auth := s.cfg.Auth
	srv := &fasthttp.Server{
		ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, NoDefaultServerHeader: true,
		DisableKeepalive: true, // one answer per connection: the next one reaches the API once it serves
		Handler: func(c *fasthttp.RequestCtx) {
			path := string(c.Path())
			switch {
			case path == report && c.IsPost():
				if auth.Enabled && (auth.ServerIdentityKey == "" ||
					string(c.Request.Header.Peek(auth.ServerIdentityKey)) != auth.ServerIdentityValue) {
					c.Error("server identity required", fasthttp.StatusForbidden)
					return
				}
				m, ok, err := compat.ParseReportedMember(c.PostBody())
				if err != nil || !ok || !m.Check() {
					c.Error("member is starting; bad report", fasthttp.StatusBadRequest)
					return
				}
				known := members.Reported(m, string(c.Request.Header.Peek(cluster.HeaderRaft)))
				c.Response.Header.Set(cluster.HeaderRaft, members.RaftAddr())
				c.SetContentType("application/json;charset=UTF-8")
				c.SetBody(compat.RestResultString(strconv.FormatBool(known)))
			case path == datums:
				c.Error("member is starting", fasthttp.StatusServiceUnavailable) // Error resets the headers
				c.Response.Header.Set(distro.HeaderStarting, "true")
			default:
				c.Error("server is starting", fasthttp.StatusServiceUnavailable)
			}
		},
	}
	return func(c net.Conn) {
		if err := srv.ServeConn(c); err != nil {
			s.log.Debug("start-up responder", "remote", c.RemoteAddr().String(), "err", err)
		}
	}
}
