package raftstore

import (
	"errors"
	"net"
	"time"

	"github.com/hashicorp/raft"
)

// tcpStreamLayer is raft's StreamLayer over plain TCP. It is raft's
// TCPStreamLayer plus access to the listener, so Store can report the
// bound address even when it advertises another one (a NAT or proxy in
// front of the node).
type tcpStreamLayer struct {
	ln        net.Listener
	advertise net.Addr
	source    *net.TCPAddr // local address of outgoing connections (nil: any)
}

func listenTCP(bind string, advertise net.Addr) (*tcpStreamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	if advertise == nil {
		advertise = ln.Addr()
	}
	t := &tcpStreamLayer{ln: ln, advertise: advertise}
	// A node bound to one address dials its peers from it too, so that its
	// traffic is its own on a host with several addresses.
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP != nil && !a.IP.IsUnspecified() {
		t.source = &net.TCPAddr{IP: a.IP}
	}
	return t, nil
}

// transportTimeout bounds one raft RPC's I/O (store.go).
const transportTimeout = 3 * time.Second

// synRetry is how often Dial sends a fresh SYN to a peer that does not
// answer (a partition dropping packets): the kernel's own retransmissions
// come after 1, 3, 7… s, so a peer reachable again waits for the next of
// them; a fresh attempt every synRetry connects within it.
const synRetry = 250 * time.Millisecond

// Dial implements raft.StreamLayer: attempts of synRetry each until the
// timeout; an answer other than silence (a refused connection: the peer is
// down) ends it at once, for raft's own backoff.
func (t *tcpStreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	deadline := time.Now().Add(timeout)
	for {
		attempt := min(synRetry, time.Until(deadline))
		if attempt <= 0 {
			attempt = time.Millisecond
		}
		d := net.Dialer{Timeout: attempt}
		if t.source != nil {
			d.LocalAddr = t.source
		}
		c, err := d.Dial("tcp", string(addr))
		var ne net.Error
		if err == nil || !errors.As(err, &ne) || !ne.Timeout() || !time.Now().Before(deadline) {
			return c, err
		}
	}
}

// Accept implements net.Listener.
func (t *tcpStreamLayer) Accept() (net.Conn, error) { return t.ln.Accept() }

// Close implements net.Listener.
func (t *tcpStreamLayer) Close() error { return t.ln.Close() }

// Addr implements net.Listener: the address raft advertises to peers.
func (t *tcpStreamLayer) Addr() net.Addr { return t.advertise }
