package raftstore

import (
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestDialRetriesARefusedPeer: a dial to a refused peer (down) tries again
// every synRetry until its timeout, so raft's backoff counts one failure
// per timeout and a member that comes back is connected at once; a
// listening peer is connected; stopDialing ends a dial at once. (The fresh
// SYNs against a silent peer are exercised by the fault checker's
// partitions, conformance/jepsen: a silent peer needs iptables.)
func TestDialRetriesARefusedPeer(t *testing.T) {
	t.Parallel()
	l := &tcpStreamLayer{quit: make(chan struct{})}
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
	if _, err := l.Dial(addr, 600*time.Millisecond); err == nil {
		t.Fatal("dial of a closed port succeeded")
	}
	if d := time.Since(start); d < 500*time.Millisecond || d > 2*time.Second {
		t.Fatalf("a refused dial gave up after %v; want its whole timeout", d)
	}

	// the peer comes back while the dial retries
	go func() {
		time.Sleep(400 * time.Millisecond)
		ln2, err := net.Listen("tcp", string(addr))
		if err != nil {
			t.Error(err)
			return
		}
		t.Cleanup(func() { ln2.Close() })
	}()
	start = time.Now()
	c, err = l.Dial(addr, 3*time.Second)
	if err != nil {
		t.Fatalf("the peer came back, the dial failed: %v", err)
	}
	c.Close()
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Fatalf("connected %v after the start, the peer was back after 400 ms", d)
	}
}

// TestStopDialing: a dial retrying a refused peer ends at once when the
// store closes.
func TestStopDialing(t *testing.T) {
	t.Parallel()
	l := &tcpStreamLayer{quit: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := raft.ServerAddress(ln.Addr().String())
	ln.Close()
	time.AfterFunc(200*time.Millisecond, l.stopDialing)
	start := time.Now()
	if _, err := l.Dial(addr, 5*time.Second); err == nil {
		t.Fatal("dial of a closed port succeeded")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the dial went on %v after stopDialing", d)
	}
}
