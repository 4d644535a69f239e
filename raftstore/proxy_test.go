package raftstore

import (
	"io"
	"net"
	"sync"
	"testing"
)

// netProxy is a TCP proxy in front of a node's raft listener; the node
// advertises the proxy's address, so cut() stops everything peers send to
// the node (replies to the node's own requests travel on connections it
// dialed, through the peers' proxies).
type netProxy struct {
	ln net.Listener

	mu     sync.Mutex
	target string
	isCut  bool
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

func newNetProxy(t testing.TB) *netProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &netProxy{ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p
}

func (p *netProxy) addr() string { return p.ln.Addr().String() }

func (p *netProxy) setTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

func (p *netProxy) serve() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target, refuse := p.target, p.isCut || p.closed || p.target == ""
		p.mu.Unlock()
		if refuse {
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", target)
		if err != nil {
			in.Close()
			continue
		}
		if !p.track(in, out) {
			continue
		}
		p.wg.Add(2)
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

// track registers a connection pair unless the proxy was cut meanwhile.
func (p *netProxy) track(a, b net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isCut || p.closed {
		a.Close()
		b.Close()
		return false
	}
	p.conns[a], p.conns[b] = struct{}{}, struct{}{}
	return true
}

func (p *netProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// cut drops every connection and refuses new ones until heal.
func (p *netProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isCut = true
	for c := range p.conns {
		c.Close()
	}
}

func (p *netProxy) heal() {
	p.mu.Lock()
	p.isCut = false
	p.mu.Unlock()
}

func (p *netProxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}
