// Package connlimit counts the open connections of a listener, so the HTTP
// server can keep a reserve of descriptors for health checks and node-to-node
// calls when clients open too many (see server/limits.go).
package connlimit

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Listener wraps a net.Listener and counts its open connections.
type Listener struct {
	net.Listener
	open atomic.Int64
	// firstByte, when set, is the read deadline of a new connection: the
	// HTTP server sets its own once the first byte arrived, so a
	// connection that never sends anything is closed after it.
	firstByte time.Duration
	// max, when set, is the most connections open at once: one accepted
	// beyond it is handed to refuse and closed.
	max    int64
	refuse func(net.Conn)

	// fresh holds the connections that have not delivered a byte yet:
	// Close closes them with the listener. An HTTP server shutting down
	// waits for its open connections, and one that a client opened but
	// never used (a pool's spare) would hold it for seconds.
	mu     sync.Mutex
	fresh  map[*conn]struct{}
	closed bool
}

// Wrap returns a counting listener; firstByte (0: none) bounds the wait for
// a new connection's first byte.
func Wrap(l net.Listener, firstByte time.Duration) *Listener {
	return &Listener{Listener: l, firstByte: firstByte}
}

// SetMax caps the open connections at max (0: no cap): a connection
// accepted while max are open is passed to refuse (which may write an
// answer; nil: none) and closed, and Accept waits for the next. Call it
// before the first Accept. The HTTP server's own limit counts only the
// connections it is serving, not those a handler took over (held long
// polls), so this is what keeps the descriptors below the process limit.
func (l *Listener) SetMax(max int, refuse func(net.Conn)) {
	l.max, l.refuse = int64(max), refuse
}

// Accept accepts and counts a connection until it is closed.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	for err == nil && l.max > 0 && l.open.Load() >= l.max {
		if l.refuse != nil {
			l.refuse(c)
		}
		_ = c.Close()
		c, err = l.Listener.Accept()
	}
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	if l.firstByte > 0 {
		_ = c.SetReadDeadline(time.Now().Add(l.firstByte))
	}
	cc := &conn{Conn: c, l: l}
	l.mu.Lock()
	if l.closed { // closed while this one was being accepted
		l.mu.Unlock()
		_ = cc.Close()
		return nil, net.ErrClosed
	}
	if l.fresh == nil {
		l.fresh = make(map[*conn]struct{})
	}
	l.fresh[cc] = struct{}{}
	l.mu.Unlock()
	return cc, nil
}

// Close closes the listener and every accepted connection that has not
// delivered a byte yet; connections in use are left to their server.
func (l *Listener) Close() error {
	err := l.Listener.Close()
	l.mu.Lock()
	l.closed = true
	fresh := l.fresh
	l.fresh = nil
	l.mu.Unlock()
	for c := range fresh {
		_ = c.Close()
	}
	return err
}

// Open is the number of accepted connections not yet closed.
func (l *Listener) Open() int64 { return l.open.Load() }

type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
	used atomic.Bool // delivered a byte: no longer fresh
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.used.Load() {
		c.used.Store(true)
		c.l.forget(c)
	}
	return n, err
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	if !c.used.Load() {
		c.l.forget(c)
	}
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

func (l *Listener) forget(c *conn) {
	l.mu.Lock()
	delete(l.fresh, c)
	l.mu.Unlock()
}
