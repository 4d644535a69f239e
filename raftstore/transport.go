package raftstore

import (
	"errors"
	"net"
	"sync"
	"syscall"
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

	quitOnce sync.Once
	quit     chan struct{} // closed by stopDialing: dials give up at once
}

func listenTCP(bind string, advertise net.Addr) (*tcpStreamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	if advertise == nil {
		advertise = ln.Addr()
	}
	t := &tcpStreamLayer{ln: ln, advertise: advertise, quit: make(chan struct{})}
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
// timeout, against a silent peer (fresh SYNs) and a refused one (the peer
// is down: tried again every synRetry) alike. raft backs off after every
// failed RPC to a peer, doubling up to 10 s: a dial that failed at once
// on every refusal ran up that backoff within seconds of a member going
// down, and the leader then tried the restarted member only up to 10 s
// later (the fault checker saw restarted members serve data 15–40 s old).
// Failing once per timeout instead, a member back after 15 s is tried
// again within a fraction of a second. stopDialing ends every dial at once
// (Close, so raft's shutdown does not wait for them).
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
		start := time.Now()
		c, err := d.Dial("tcp", string(addr))
		if err == nil || !time.Now().Before(deadline) || t.stopped() {
			return c, err
		}
		var ne net.Error
		switch {
		case errors.As(err, &ne) && ne.Timeout():
			// silence: a fresh SYN at once
		case errors.Is(err, syscall.ECONNREFUSED):
			// down: again when this attempt's time is up
			if !t.sleep(min(time.Until(deadline), attempt-time.Since(start))) {
				return nil, err
			}
		default:
			return c, err
		}
	}
}

// sleep waits d, or returns false at once when dialing stopped.
func (t *tcpStreamLayer) sleep(d time.Duration) bool {
	if d <= 0 {
		return !t.stopped()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-t.quit:
		return false
	}
}

func (t *tcpStreamLayer) stopped() bool {
	select {
	case <-t.quit:
		return true
	default:
		return false
	}
}

// stopDialing makes every dial, running or to come, give up at once.
func (t *tcpStreamLayer) stopDialing() {
	if t.quit != nil {
		t.quitOnce.Do(func() { close(t.quit) })
	}
}

// Accept implements net.Listener.
func (t *tcpStreamLayer) Accept() (net.Conn, error) { return t.ln.Accept() }

// Close implements net.Listener.
func (t *tcpStreamLayer) Close() error { return t.ln.Close() }

// Addr implements net.Listener: the address raft advertises to peers.
func (t *tcpStreamLayer) Addr() net.Addr { return t.advertise }
