package connlimit

import (
	"net"
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
