package grpcwire

import (
	"bytes"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// countingListener counts the writes to the connections it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{nc, l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// startCounted is startWire over a listener counting the server's writes.
func startCounted(t *testing.T, mod func(*Config)) (string, *atomic.Int64) {
	t.Helper()
	writes := &atomic.Int64{}
	_, addr, _ := startWireOn(t, mod, func(ln net.Listener) net.Listener { return countingListener{ln, writes} })
	return addr, writes
}

// unaryFrames is the frames of unary calls on streams first, first+2, …
// with the given requests, encoded for one write.
func unaryFrames(first uint32, reqs ...string) []byte {
	return unaryFramesTimeout(first, "", reqs...)
}

// unaryFramesTimeout is unaryFrames with a grpc-timeout ("": none).
func unaryFramesTimeout(first uint32, timeout string, reqs ...string) []byte {
	var out bytes.Buffer
	fr := http2.NewFramer(&out, nil)
	for i, req := range reqs {
		var hb bytes.Buffer
		enc := hpack.NewEncoder(&hb)
		fields := [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/Request/request"}, {"content-type", "application/grpc"}}
		if timeout != "" {
			fields = append(fields, [2]string{"grpc-timeout", timeout})
		}
		for _, f := range fields {
			enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		id := first + 2*uint32(i)
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
		fr.WriteData(id, true, append([]byte{0, 0, 0, byte(len(req) >> 8), byte(len(req))}, req...))
	}
	return out.Bytes()
}

// readAnswers reads frames until n calls have ended (their trailers),
// answering nothing; it returns each call's message.
func (c *rawClient) readAnswers(n int) map[uint32]string {
	c.t.Helper()
	got := map[uint32]string{}
	ended := 0
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for ended < n {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.t.Fatalf("after %d answers: %v", ended, err)
		}
		switch f := f.(type) {
		case *http2.DataFrame:
			got[f.StreamID] += string(f.Data())
		case *http2.MetaHeadersFrame:
			if f.StreamEnded() {
				ended++
			}
		}
	}
	return got
}

// TestCallsReadTogetherAnsweredInOneWrite: the answers to inline calls
// that arrive in one segment leave in one write (before the reader
// queued its frames, each answer was a write of its own), and each
// answer is its own call's.
func TestCallsReadTogetherAnsweredInOneWrite(t *testing.T) {
	addr, writes := startCounted(t, inlineAll(true))
	c := dialRaw(t, addr)
	if c.next(http2.FrameSettings) == nil { // the server's
		t.Fatal("no SETTINGS")
	}
	for { // the ack of the client's SETTINGS: the handshake's writes are done
		f := c.next(http2.FrameSettings)
		if f == nil {
			t.Fatal("no SETTINGS ack")
		}
		if f.(*http2.SettingsFrame).IsAck() {
			break
		}
	}
	reqs := []string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff"}
	before := writes.Load()
	if _, err := c.nc.Write(unaryFrames(1, reqs...)); err != nil {
		t.Fatal(err)
	}
	got := c.readAnswers(len(reqs))
	if n := writes.Load() - before; n != 1 {
		t.Fatalf("%d calls read together answered in %d writes, want 1", len(reqs), n)
	}
	for i, req := range reqs {
		id := uint32(1 + 2*i)
		if want := string([]byte{0, 0, 0, 0, byte(5 + len(req))}) + "echo:" + req; got[id] != want {
			t.Fatalf("stream %d answered %q, want %q", id, got[id], want)
		}
	}
}

// TestInlineAnswerPastTheWindow: an inline call whose answer does not fit
// the client's window is answered by a worker once the window opens (the
// reader must not wait for it: only the reader reads WINDOW_UPDATE).
func TestInlineAnswerPastTheWindow(t *testing.T) {
	addr, _ := startCounted(t, inlineAll(true))
	c := dialRaw(t, addr)
	if err := c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1000}); err != nil {
		t.Fatal(err)
	}
	req := string(bytes.Repeat([]byte("w"), 3000))
	if _, err := c.nc.Write(unaryFrames(1, req)); err != nil {
		t.Fatal(err)
	}
	var got []byte
	small := ""
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
		if d, ok := f.(*http2.DataFrame); ok && d.StreamID == 3 {
			small += string(d.Data())
		}
		if d, ok := f.(*http2.DataFrame); ok && d.StreamID == 1 {
			got = append(got, d.Data()...)
			if len(got) > 1000 && len(got) < 3010 {
				t.Fatalf("%d bytes past a 1000-byte window", len(got))
			}
			if len(got) == 1000 {
				// the reader still reads: a call read now is answered
				if _, err := c.nc.Write(unaryFrames(3, "small")); err != nil {
					t.Fatal(err)
				}
				if err := c.fr.WriteWindowUpdate(1, 10000); err != nil {
					t.Fatal(err)
				}
			}
		}
		if h, ok := f.(*http2.MetaHeadersFrame); ok && h.StreamEnded() && h.StreamID == 1 {
			break
		}
	}
	if want := fmt.Sprintf("\x00\x00\x00\x0b\xbdecho:%s", req); string(got) != want {
		t.Fatalf("answer of %d bytes is not the echo", len(got))
	}
	if small != "\x00\x00\x00\x00\x0aecho:small" {
		t.Fatalf("the call read while the first waited answered %q", small)
	}
}

// TestInlineDeadline: an inline call (no timer) that ends past its
// grpc-timeout is answered DEADLINE_EXCEEDED, as on a worker; one within
// it is answered.
func TestInlineDeadline(t *testing.T) {
	addr, _ := startCounted(t, inlineAll(true))
	c := dialRaw(t, addr)
	if _, err := c.nc.Write(unaryFramesTimeout(1, "30m", "sleep:100ms")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.nc.Write(unaryFramesTimeout(3, "10S", "quick")); err != nil {
		t.Fatal(err)
	}
	codes := map[uint32]string{}
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(codes) < 2 {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if h, ok := f.(*http2.MetaHeadersFrame); ok && h.StreamEnded() {
			codes[h.StreamID] = fieldsOf(h)["grpc-status"]
		}
	}
	if codes[1] != "4" || codes[3] != "0" {
		t.Fatalf("grpc-status past the deadline %q (want 4), within it %q (want 0)", codes[1], codes[3])
	}
}
