// Package connlimit counts the open connections of a listener, so the HTTP
// server can keep a reserve of descriptors for health checks and node-to-node
// calls when clients open too many (see server/limits.go).
package connlimit

import (
	"net"
	"sync"
	"sync/atomic"
)

// Listener wraps a net.Listener and counts its open connections.
type Listener struct {
	net.Listener
	open atomic.Int64
}

// Wrap returns a counting listener.
func Wrap(l net.Listener) *Listener { return &Listener{Listener: l} }

// Accept accepts and counts a connection until it is closed.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	return &conn{Conn: c, l: l}, nil
}

// Open is the number of accepted connections not yet closed.
func (l *Listener) Open() int64 { return l.open.Load() }

type conn struct {
	net.Conn
	l    *Listener
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}
