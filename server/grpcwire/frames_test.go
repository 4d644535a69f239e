package grpcwire

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// rawClient speaks HTTP/2 frame by frame.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	fr *http2.Framer
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	if _, err := nc.Write([]byte(clientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(nc, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return &rawClient{t: t, nc: nc, fr: fr}
}

// next reads frames (answering nothing) until one of type typ, or the
// connection's end (nil).
func (c *rawClient) next(typ http2.FrameType) http2.Frame {
	c.t.Helper()
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			return nil
		}
		if f.Header().Type == typ {
			return f
		}
	}
}

func (c *rawClient) headers(id uint32, path, ctype string, end bool) {
	c.t.Helper()
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", path}, {":authority", "x"}, {"content-type", ctype}, {"te", "trailers"}} {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: buf.Bytes(), EndHeaders: true, EndStream: end}); err != nil {
		c.t.Fatal(err)
	}
}

func fieldsOf(f http2.Frame) map[string]string {
	out := map[string]string{}
	if mh, ok := f.(*http2.MetaHeadersFrame); ok {
		for _, hf := range mh.Fields {
			out[hf.Name] = hf.Value
		}
	}
	return out
}

// TestKeepAlive is the real-time test of the keep-alive: a silent client
// is pinged after KeepAliveTime and closed KeepAliveTimeout later unless it
// answers; one that answers stays.
func TestKeepAlive(t *testing.T) {
	_, addr, _ := startWire(t, func(c *Config) {
		c.KeepAliveTime, c.KeepAliveTimeout = 200*time.Millisecond, 200*time.Millisecond
	})
	silent := dialRaw(t, addr)
	start := time.Now()
	if silent.next(http2.FramePing) == nil {
		t.Fatal("no ping")
	}
	if silent.next(http2.FrameGoAway) != nil { // nothing more, then the end
		t.Fatal("GOAWAY to a silent client")
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Fatalf("silent client closed after %v (ping at 200 ms, timeout 200 ms)", d)
	}

	alive := dialRaw(t, addr)
	for range 4 {
		f := alive.next(http2.FramePing)
		if f == nil {
			t.Fatal("answering client closed")
		}
		p := f.(*http2.PingFrame)
		if !p.IsAck() {
			if err := alive.fr.WritePing(true, p.Data); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestSettingsFirst: the server's first frame is its SETTINGS, however
// long the client takes to send its preface (a keep-alive ping sent
// earlier broke grpc-go's client: "initial http2 frame from server is not a
// settings frame").
func TestSettingsFirst(t *testing.T) {
	_, addr, _ := startWire(t, func(c *Config) {
		c.KeepAliveTime, c.KeepAliveTimeout = 20*time.Millisecond, time.Second
	})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	time.Sleep(150 * time.Millisecond)
	if _, err := nc.Write([]byte(clientPreface)); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	f, err := http2.NewFramer(nil, nc).ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	if f.Header().Type != http2.FrameSettings {
		t.Fatalf("first frame %v", f.Header().Type)
	}
}

// TestTooManyPings: a client pinging faster than PermitKeepAliveTime is
// sent GOAWAY ENHANCE_YOUR_CALM "too_many_pings" at the third strike, as
// by grpc-go.
func TestTooManyPings(t *testing.T) {
	_, addr, _ := startWire(t, nil)
	c := dialRaw(t, addr)
	for i := range 5 {
		if err := c.fr.WritePing(false, [8]byte{byte(i)}); err != nil {
			break
		}
	}
	f := c.next(http2.FrameGoAway)
	if f == nil {
		t.Fatal("no GOAWAY")
	}
	ga := f.(*http2.GoAwayFrame)
	if ga.ErrCode != http2.ErrCodeEnhanceYourCalm || string(ga.DebugData()) != "too_many_pings" {
		t.Fatalf("GOAWAY %v %q", ga.ErrCode, ga.DebugData())
	}
}

// TestEarlyAnswers: a request that is not gRPC gets 415, as from grpc-go;
// a unary call without a message gets Internal; stream ids must grow.
func TestEarlyAnswers(t *testing.T) {
	_, addr, _ := startWire(t, nil)
	c := dialRaw(t, addr)
	c.headers(1, "/Request/request", "text/plain", true)
	h := fieldsOf(c.next(http2.FrameHeaders))
	if h[":status"] != "415" || h["grpc-status"] != "3" || h["grpc-message"] != `invalid gRPC request content-type "text/plain"` {
		t.Fatalf("not gRPC: %v", h)
	}
	c.headers(3, "/Request/request", "application/grpc", true)
	h = fieldsOf(c.next(http2.FrameHeaders))
	if h[":status"] != "200" || h["grpc-status"] != "13" {
		t.Fatalf("no message: %v", h)
	}
	c.headers(3, "/Request/request", "application/grpc", true) // an old id
	f := c.next(http2.FrameGoAway)
	if f == nil || f.(*http2.GoAwayFrame).ErrCode != http2.ErrCodeProtocol {
		t.Fatalf("reused stream id: %v", f)
	}
}

// TestFlowControlWait: a stream's message larger than the client's window
// waits for WINDOW_UPDATE, then arrives whole.
func TestFlowControlWait(t *testing.T) {
	_, addr, _ := startWire(t, nil)
	c := dialRaw(t, addr)
	if err := c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1000}); err != nil {
		t.Fatal(err)
	}
	c.headers(1, "/BiRequestStream/requestBiStream", "application/grpc", false)
	msg := bytes.Repeat([]byte("q"), 5000)
	frame := append([]byte{0, 0, 0, byte(len(msg) >> 8), byte(len(msg))}, msg...)
	if err := c.fr.WriteData(1, false, frame); err != nil {
		t.Fatal(err)
	}
	var got []byte
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(got) < len(frame) {
		f, err := c.fr.ReadFrame()
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(got), err)
		}
		if d, ok := f.(*http2.DataFrame); ok {
			got = append(got, d.Data()...)
			if len(got) > 1000 && len(got) < len(frame) {
				t.Fatalf("%d bytes past a 1000-byte window", len(got))
			}
			if len(got) == 1000 {
				if err := c.fr.WriteWindowUpdate(1, 10000); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if !bytes.Equal(got, frame) {
		t.Fatal("message changed")
	}
}

// FuzzConn: whatever a client sends after the preface, the server neither
// panics nor hangs.
func FuzzConn(f *testing.F) {
	var settings bytes.Buffer
	fr := http2.NewFramer(&settings, nil)
	fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10})
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, kv := range [][2]string{{":method", "POST"}, {":path", "/BiRequestStream/requestBiStream"}, {"content-type", "application/grpc"}} {
		enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
	fr.WriteData(1, false, []byte{0, 0, 0, 0, 3, 'a', 'b', 'c'})
	fr.WriteData(1, true, []byte{0, 0, 0, 0, 1})
	fr.WritePing(false, [8]byte{})
	fr.WriteWindowUpdate(0, 0)
	f.Add(settings.Bytes())
	f.Add([]byte{0, 0, 4, 1, 4, 0, 0, 0, 1, 0x82, 0x86, 0x84, 0xff})
	f.Add([]byte{0, 0, 0, 9, 0, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := New(Config{Methods: map[string]Kind{"/Request/request": UnaryMethod, "/BiRequestStream/requestBiStream": StreamMethod},
			Handler: &testHandler{unaryCtxDone: make(chan struct{})}, MaxRecvMsgSize: 100, Logger: discardLogger(),
			// half the calls on the reader, half on workers
			Inline: func(_ *Conn, _ string, req []byte) bool { return len(req)%2 == 0 && string(req) != "block" }})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		client, server := net.Pipe()
		c := newConn(s, server)
		done := make(chan struct{})
		go func() { c.serve(); close(done) }()
		go io.Copy(io.Discard, client)
		client.SetWriteDeadline(time.Now().Add(2 * time.Second))
		client.Write(append([]byte(clientPreface), in...))
		client.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("connection not ended 5 s after the client closed")
		}
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestMessagesCutAnywhere: a stream's messages reach the receiver whole
// however the client cuts them into DATA frames (a message header split
// over frames, several messages in one frame, an empty message).
func TestMessagesCutAnywhere(t *testing.T) {
	msgs := [][]byte{{}, []byte("abc"), bytes.Repeat([]byte("0123456789"), 30), []byte("z")}
	var stream []byte
	for _, m := range msgs {
		stream = append(stream, 0, byte(len(m)>>24), byte(len(m)>>16), byte(len(m)>>8), byte(len(m)))
		stream = append(stream, m...)
	}
	for _, cut := range []int{1, 2, 3, 4, 6, 7, 64, len(stream)} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			_, addr, _ := startWire(t, nil)
			c := dialRaw(t, addr)
			c.headers(1, "/BiRequestStream/requestBiStream", "application/grpc", false)
			for p := stream; len(p) > 0; {
				n := min(cut, len(p))
				if err := c.fr.WriteData(1, false, p[:n]); err != nil {
					t.Fatal(err)
				}
				p = p[n:]
			}
			// the echoes, read back as one byte stream
			var got []byte
			for len(got) < len(stream) {
				f := c.next(http2.FrameData)
				if f == nil {
					t.Fatalf("connection ended after %d of %d echoed bytes", len(got), len(stream))
				}
				got = append(got, f.(*http2.DataFrame).Data()...)
			}
			if !bytes.Equal(got, stream) {
				t.Fatalf("echoed\n %q\nwant\n %q", got, stream)
			}
		})
	}
}
