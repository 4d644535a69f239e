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
}

func listenTCP(bind string, advertise net.Addr) (*tcpStreamLayer, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	if advertise == nil {
		advertise = ln.Addr()
	}
	return &tcpStreamLayer{ln: ln, advertise: advertise}, nil
}

// Dial implements raft.StreamLayer.
func (t *tcpStreamLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(addr), timeout)
}

// Accept implements net.Listener.
func (t *tcpStreamLayer) Accept() (net.Conn, error) { return t.ln.Accept() }

// Close implements net.Listener.
func (t *tcpStreamLayer) Close() error { return t.ln.Close() }

// Addr implements net.Listener: the address raft advertises to peers.
func (t *tcpStreamLayer) Addr() net.Addr { return t.advertise }
