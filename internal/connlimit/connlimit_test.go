package connlimit

import (
	"net"
	"net/netip"
	"testing"
	"time"
)

func TestCounts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(ln, 0)
	defer l.Close()
	got := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			got <- c
		}
	}()
	var clients []net.Conn
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	a, b := <-got, <-got
	if l.Open() != 2 {
		t.Fatalf("open %d", l.Open())
	}
	a.Close()
	a.Close() // twice counts once
	if l.Open() != 1 {
		t.Fatalf("open after close %d", l.Open())
	}
	b.Close()
	for _, c := range clients {
		c.Close()
	}
	deadline := time.Now().Add(time.Second)
	for l.Open() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if l.Open() != 0 {
		t.Fatalf("open at end %d", l.Open())
	}
}

func TestMax(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(ln, 0)
	defer l.Close()
	refused := make(chan struct{}, 1)
	l.SetMax(1, func(c net.Conn) {
		_, _ = c.Write([]byte("no"))
		refused <- struct{}{}
	})
	got := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			got <- c
		}
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	first := <-got
	b, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	<-refused
	buf := make([]byte, 8)
	_ = b.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := b.Read(buf); string(buf[:n]) != "no" {
		t.Fatalf("refused connection read %q", buf[:n])
	}
	first.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case s := <-got: // below the cap again
		s.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("not accepted below the cap")
	}
}

// TestCloseClosesFreshConns: closing the listener closes the connections
// that never delivered a byte (a client's spare ones), not those in use.
func TestCloseClosesFreshConns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(ln, 0)
	dial := func() (client, server net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return c, s
	}
	silentC, silentS := dial()
	defer silentC.Close()
	defer silentS.Close()
	usedC, usedS := dial()
	defer usedC.Close()
	defer usedS.Close()
	if _, err := usedC.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := usedS.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// the silent one is closed: its client reads EOF at once
	_ = silentC.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := silentC.Read(make([]byte, 1)); err == nil || isTimeout(err) {
		t.Fatalf("silent connection still open after Close: %v", err)
	}
	// the used one still carries bytes both ways
	if _, err := usedS.Write([]byte("y")); err != nil {
		t.Fatalf("used connection closed: %v", err)
	}
	_ = usedC.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := usedC.Read(make([]byte, 1)); err != nil {
		t.Fatalf("used connection closed: %v", err)
	}
	if l.Open() != 1 {
		t.Fatalf("open %d, want 1", l.Open())
	}
	if _, err := l.Accept(); err == nil {
		t.Fatal("Accept after Close")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// dialFrom connects from the loopback address ip (127.0.0.0/8 is local).
func dialFrom(t *testing.T, ip, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// acceptAll accepts in the background, reading each connection until it is
// closed (as an HTTP server waits for a request), and closing it then.
func acceptAll(l *Listener) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 64)
				for {
					if _, err := c.Read(buf); err != nil {
						c.Close()
						return
					}
				}
			}()
		}
	}()
}

// closedByServer reports whether the server closed c within d.
func closedByServer(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !isTimeout(err)
}

// Issue 26 item 13: one address may hold at most perSource connections;
// other addresses, and exempt ones, are not affected.
func TestPerSource(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(ln, 0)
	defer l.Close()
	l.SetPerSource(3, func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }, func(c net.Conn) { c.Write([]byte("busy")) })
	acceptAll(l)
	addr := ln.Addr().String()
	var flood []net.Conn
	for i := 0; i < 3; i++ {
		flood = append(flood, dialFrom(t, "127.0.0.2", addr))
	}
	waitOpen(t, l, 3)
	over := dialFrom(t, "127.0.0.2", addr)
	buf := make([]byte, 8)
	_ = over.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := over.Read(buf); string(buf[:n]) != "busy" {
		t.Fatalf("the 4th connection from one address: read %q", buf[:n])
	}
	dialFrom(t, "127.0.0.3", addr) // another address
	for i := 0; i < 5; i++ {
		dialFrom(t, "127.0.0.1", addr) // exempt
	}
	waitOpen(t, l, 9)
	if l.RefusedForSource() != 1 {
		t.Fatalf("refused %d", l.RefusedForSource())
	}
	flood[0].Close() // a slot of the source frees with its connection
	waitOpen(t, l, 8)
	dialFrom(t, "127.0.0.2", addr)
	waitOpen(t, l, 9)
}

// Issue 26 item 13: past the pressure level, connections silent for longer
// than quiet since their accept are closed and new ones get quiet for their
// first byte; connections that sent a byte stay. Below it, the usual
// first-byte wait applies.
func TestSilentReapedUnderPressure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := Wrap(ln, time.Minute)
	defer l.Close()
	const quiet = 300 * time.Millisecond
	l.SetPressure(10, quiet)
	acceptAll(l)
	addr := ln.Addr().String()
	var silent []net.Conn
	for i := 0; i < 8; i++ {
		silent = append(silent, dialFrom(t, "127.0.0.2", addr))
	}
	talker := dialFrom(t, "127.0.0.2", addr)
	if _, err := talker.Write([]byte("GET")); err != nil {
		t.Fatal(err)
	}
	waitOpen(t, l, 9)
	time.Sleep(2 * quiet)
	// below the level: nothing is closed
	if closedByServer(silent[0], 50*time.Millisecond) {
		t.Fatal("a silent connection closed below the pressure level")
	}
	// the 10th connection reaches the level: the silent ones go
	late := dialFrom(t, "127.0.0.3", addr)
	for i, c := range silent {
		if !closedByServer(c, 5*time.Second) {
			t.Fatalf("silent connection %d not closed under pressure", i)
		}
	}
	if closedByServer(talker, 50*time.Millisecond) {
		t.Fatal("a connection that sent a byte was closed")
	}
	// the late one got only quiet for its first byte
	start := time.Now()
	if !closedByServer(late, 5*time.Second) || time.Since(start) > 2*time.Second {
		t.Fatalf("a silent connection accepted under pressure lived %v", time.Since(start))
	}
	if l.Reaped() != int64(len(silent)) {
		t.Fatalf("reaped %d", l.Reaped())
	}
}

func waitOpen(t *testing.T, l *Listener, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for l.Open() != n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if l.Open() != n {
		t.Fatalf("open %d, want %d", l.Open(), n)
	}
}
