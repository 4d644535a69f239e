package cluster

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestQuickSYNRefusedAtOnce: the peers' dial connects to a listening
// member and gives up at once on a refused connection (the member is
// down), so Distro's quick retries cost nothing then. (Its fresh SYNs to a
// silent member are exercised by the fault checker's partitions,
// conformance/jepsen: a silent peer needs iptables.)
func TestQuickSYNRefusedAtOnce(t *testing.T) {
	dial := quickSYN(&net.Dialer{Timeout: 2 * time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	c, err := dial(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	ln.Close()
	start := time.Now()
	if _, err := dial(context.Background(), "tcp", addr); err == nil {
		t.Fatal("dial of a closed port succeeded")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("a refused dial took %v", d)
	}
}
