package raftstore

import (
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

// Dial implements raft.StreamLayer.
func (t *tcpStreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	if t.source != nil {
		d.LocalAddr = t.source
	}
	return d.Dial("tcp", string(addr))
}

// Accept implements net.Listener.
func (t *tcpStreamLayer) Accept() (net.Conn, error) { return t.ln.Accept() }

// Close implements net.Listener.
func (t *tcpStreamLayer) Close() error { return t.ln.Close() }

// Addr implements net.Listener: the address raft advertises to peers.
func (t *tcpStreamLayer) Addr() net.Addr { return t.advertise }
