// Package connlimit counts the open connections of a listener, so the HTTP
// server can keep a reserve of descriptors for health checks and node-to-node
// calls when clients open too many (see server/limits.go).
package connlimit

import (
	"net"
	"net/netip"
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
	// perSource, when set, is the most connections open at once from one
	// address (exempt ones aside): one beyond it goes to refuseSource.
	perSource    int
	exempt       func(netip.Addr) bool
	refuseSource func(net.Conn)
	// pressure, when set, is the number of open connections from which the
	// table counts as nearly full: a new connection then gets only quiet
	// for its first byte, and connections silent for longer than quiet
	// since their accept are closed (at most one sweep per quiet/4).
	pressure int64
	quiet    time.Duration

	// fresh holds the connections that have not delivered a byte yet:
	// Close closes them with the listener. An HTTP server shutting down
	// waits for its open connections, and one that a client opened but
	// never used (a pool's spare) would hold it for seconds.
	mu        sync.Mutex
	fresh     map[*conn]struct{}
	closed    bool
	bySource  map[netip.Addr]int
	lastSweep time.Time
	// reaped counts the silent connections closed under pressure; refused
	// those refused for their source (both: tests, logs).
	reaped, refused atomic.Int64
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

// SetPerSource caps the connections open at once from one address at n (0:
// no cap); addresses for which exempt reports true (nil: none) are not
// counted. A connection beyond it is passed to refuse (nil: none) and
// closed. A single client host needs a few connections (its long poll, a
// keep-alive pool); a flood of connections from one address no longer
// takes the whole table. Call it before the first Accept.
func (l *Listener) SetPerSource(n int, exempt func(netip.Addr) bool, refuse func(net.Conn)) {
	l.perSource, l.exempt, l.refuseSource = n, exempt, refuse
}

// SetPressure makes the listener defend a nearly full table: from level
// open connections on, a new connection gets quiet (instead of the usual
// first-byte wait) to send its first byte, and connections that have sent
// nothing for quiet since they were accepted are closed, so that
// connections opened and left silent (an idle-connection flood) cannot keep
// ordinary requests out. Call it before the first Accept.
func (l *Listener) SetPressure(level int, quiet time.Duration) {
	l.pressure, l.quiet = int64(level), quiet
}

// Accept accepts and counts a connection until it is closed.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.max > 0 && l.open.Load() >= l.max {
			if l.refuse != nil {
				l.refuse(c)
			}
			_ = c.Close()
			continue
		}
		cc, err := l.admit(c)
		if err != nil {
			return nil, err
		}
		if cc != nil {
			return cc, nil
		}
	}
}

// admit counts c, or refuses it for its source (nil, nil); under pressure it
// closes the connections silent for too long.
func (l *Listener) admit(c net.Conn) (*conn, error) {
	now := time.Now()
	cc := &conn{Conn: c, l: l, accepted: now}
	var reap []*conn
	l.mu.Lock()
	if l.closed { // closed while this one was being accepted
		l.mu.Unlock()
		_ = c.Close()
		return nil, net.ErrClosed
	}
	if l.perSource > 0 {
		if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
			src := ap.Addr().Unmap()
			if l.exempt == nil || !l.exempt(src) {
				if l.bySource[src] >= l.perSource {
					l.mu.Unlock()
					l.refused.Add(1)
					if l.refuseSource != nil {
						l.refuseSource(c)
					}
					_ = c.Close()
					return nil, nil
				}
				if l.bySource == nil {
					l.bySource = make(map[netip.Addr]int)
				}
				l.bySource[src]++
				cc.src, cc.counted = src, true
			}
		}
	}
	pressed := l.pressure > 0 && l.open.Load()+1 >= l.pressure
	if pressed && now.Sub(l.lastSweep) >= l.quiet/4 {
		l.lastSweep = now
		for f := range l.fresh {
			if now.Sub(f.accepted) >= l.quiet && !f.used.Load() {
				reap = append(reap, f)
			}
		}
	}
	if l.fresh == nil {
		l.fresh = make(map[*conn]struct{})
	}
	l.fresh[cc] = struct{}{}
	l.open.Add(1)
	l.mu.Unlock()
	for _, f := range reap {
		_ = f.Close()
	}
	l.reaped.Add(int64(len(reap)))
	switch {
	case pressed && (l.firstByte <= 0 || l.quiet < l.firstByte):
		_ = c.SetReadDeadline(now.Add(l.quiet))
	case l.firstByte > 0:
		_ = c.SetReadDeadline(now.Add(l.firstByte))
	}
	return cc, nil
}

// Reaped is the number of silent connections closed under pressure.
func (l *Listener) Reaped() int64 { return l.reaped.Load() }

// RefusedForSource is the number of connections refused for their source.
func (l *Listener) RefusedForSource() int64 { return l.refused.Load() }

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
	l        *Listener
	once     sync.Once
	used     atomic.Bool // delivered a byte: no longer fresh
	accepted time.Time
	src      netip.Addr // counted against its source when counted
	counted  bool
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
	c.once.Do(func() {
		c.l.open.Add(-1)
		if c.counted {
			c.l.mu.Lock()
			if n := c.l.bySource[c.src] - 1; n > 0 {
				c.l.bySource[c.src] = n
			} else {
				delete(c.l.bySource, c.src)
			}
			c.l.mu.Unlock()
		}
	})
	return err
}

func (l *Listener) forget(c *conn) {
	l.mu.Lock()
	delete(l.fresh, c)
	l.mu.Unlock()
}
