package raftstore

import (
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestDialRefusedAtOnce: a refused connection (the peer is down) ends a
// dial at once, for raft's own backoff; a listening peer is connected. (The
// quick SYN retries against a silent peer are exercised by the fault
// checker's partitions, conformance/jepsen: a silent peer needs iptables.)
func TestDialRefusedAtOnce(t *testing.T) {
	t.Parallel()
	l := &tcpStreamLayer{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := raft.ServerAddress(ln.Addr().String())
	c, err := l.Dial(addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	ln.Close()
	start := time.Now()
	if _, err := l.Dial(addr, 3*time.Second); err == nil {
		t.Fatal("dial of a closed port succeeded")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("a refused dial took %v", d)
	}
}
