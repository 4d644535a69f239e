package conformance

import (
	"net"
	"os"
	"slices"
	"testing"
)

// connectedPorts reads this process's sockets from /proc: a connection it
// holds to a listener must show that listener's port.
func TestConnectedPorts(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	port := l.Addr().(*net.TCPAddr).Port
	ports, err := connectedPorts(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ports, port) {
		t.Fatalf("connected ports %v lack the listener's %d", ports, port)
	}
	c.Close()
}
