package grpcwire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/nacosd/nacosd/internal/testlog"
)

// rawCodec passes message bytes through (grpc-go's side of the tests).
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// testHandler echoes: a unary call answers "echo:" + the request (or the
// error its text asks for); a stream sends every message back.
type testHandler struct {
	opened, closed atomic.Int32
	unaryCtxDone   chan struct{}
}

func (h *testHandler) Unary(ctx context.Context, _ *Conn, method string, msg []byte) ([]byte, error) {
	switch s := string(msg); {
	case s == "block":
		<-ctx.Done()
		close(h.unaryCtxDone)
		return nil, ctx.Err()
	case strings.HasPrefix(s, "status:"):
		return nil, Errorf(InvalidArgument, "%s", strings.TrimPrefix(s, "status:"))
	case s == "plain-error":
		return nil, errors.New("boom")
	case s == "panic":
		panic("handler bug")
	case strings.HasPrefix(s, "sleep:"):
		d, _ := time.ParseDuration(strings.TrimPrefix(s, "sleep:"))
		time.Sleep(d)
	}
	return append([]byte("echo:"), msg...), nil
}

func (h *testHandler) OpenStream(s *Stream) (StreamReceiver, error) {
	h.opened.Add(1)
	return &echoReceiver{s: s, h: h}, nil
}

type echoReceiver struct {
	s *Stream
	h *testHandler
}

func (r *echoReceiver) Message(msg []byte) {
	if string(msg) == "fan" { // 20 concurrent senders of 100 KiB messages
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() { _ = r.s.Send(bytes.Repeat([]byte{byte('a' + i)}, 100<<10)) })
		}
		wg.Wait()
		return
	}
	if string(msg) == "finish" {
		r.s.Finish(Errorf(Internal, "finished"))
		return
	}
	_ = r.s.Send(msg)
}

func (r *echoReceiver) Closed() { r.h.closed.Add(1) }

func startWire(t *testing.T, mod func(*Config)) (*Server, string, *testHandler) {
	t.Helper()
	return startWireOn(t, mod, nil)
}

// startWireOn is startWire serving the listener wrap makes of the test's
// (nil: the listener itself).
func startWireOn(t *testing.T, mod func(*Config), wrap func(net.Listener) net.Listener) (*Server, string, *testHandler) {
	t.Helper()
	h := &testHandler{unaryCtxDone: make(chan struct{})}
	cfg := Config{Methods: map[string]Kind{"/Request/request": UnaryMethod, "/BiRequestStream/requestBiStream": StreamMethod},
		Handler: h, Logger: testlog.New(t), MaxRecvMsgSize: 4 << 20}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := ln
	if wrap != nil {
		served = wrap(ln)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(served) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, ln.Addr().String(), h
}

func dialWire(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}), grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func call(cc *grpc.ClientConn, method string, req []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []byte
	err := cc.Invoke(ctx, method, &req, &out)
	return out, err
}

// TestUnary: grpc-go's client calls a unary method with messages of every
// size from empty to past both sides' flow-control windows.
func TestUnary(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) { testUnary(t, inline) })
	}
}

// inlineAll runs every call that does not block on the reader.
func inlineAll(on bool) func(*Config) {
	return func(c *Config) {
		if on {
			c.Inline = func(_ *Conn, _ string, req []byte) bool { return string(req) != "block" }
		}
	}
}

func testUnary(t *testing.T, inline bool) {
	_, addr, _ := startWire(t, inlineAll(inline))
	cc := dialWire(t, addr)
	for _, n := range []int{0, 1, 100, 16384, 70 << 10, 1 << 20, 3 << 20} {
		req := bytes.Repeat([]byte("x"), n)
		out, err := call(cc, "/Request/request", req)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if want := append([]byte("echo:"), req...); !bytes.Equal(out, want) {
			t.Fatalf("%d bytes: answer of %d bytes", n, len(out))
		}
	}
	// many calls at once on one connection
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Go(func() {
			req := []byte(fmt.Sprint(i))
			out, err := call(cc, "/Request/request", req)
			if err == nil && string(out) != "echo:"+string(req) {
				err = fmt.Errorf("call %d answered %q", i, out)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestStatuses: the status and message grpc-go's server gives for unknown
// methods, a handler's errors and panics, too large a message.
func TestStatuses(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprint("inline=", inline), func(t *testing.T) { testStatuses(t, inline) })
	}
}

func testStatuses(t *testing.T, inline bool) {
	_, addr, _ := startWire(t, func(c *Config) { c.MaxRecvMsgSize = 1000; inlineAll(inline)(c) })
	cc := dialWire(t, addr)
	cases := []struct {
		method, req string
		code        codes.Code
		msg         string
	}{
		{"/Request/nothing", "x", codes.Unimplemented, "unknown method nothing for service Request"},
		{"/Nope/request", "x", codes.Unimplemented, "unknown service Nope"},
		{"/Request/request", "status:bad 100% ünïcode\n", codes.InvalidArgument, "bad 100% ünïcode\n"},
		{"/Request/request", "plain-error", codes.Unknown, "boom"},
		{"/Request/request", "panic", codes.Unknown, "handler bug"},
		{"/Request/request", strings.Repeat("y", 1001), codes.ResourceExhausted, "grpc: received message larger than max (1001 vs. 1000)"},
	}
	for _, c := range cases {
		_, err := call(cc, c.method, []byte(c.req))
		st, _ := status.FromError(err)
		if st.Code() != c.code || st.Message() != c.msg {
			t.Errorf("%s %.20q: %v %q, want %v %q", c.method, c.req, st.Code(), st.Message(), c.code, c.msg)
		}
	}
	// the connection still serves
	if out, err := call(cc, "/Request/request", []byte("ok")); err != nil || string(out) != "echo:ok" {
		t.Fatalf("after the errors: %q %v", out, err)
	}
}

// TestDeadline: a call's grpc-timeout ends its handler's context.
func TestDeadline(t *testing.T) {
	_, addr, h := startWire(t, nil)
	cc := dialWire(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, out := []byte("block"), []byte(nil)
	err := cc.Invoke(ctx, "/Request/request", &req, &out)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("got %v", err)
	}
	select {
	case <-h.unaryCtxDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context did not end")
	}
}

func openStream(t *testing.T, cc *grpc.ClientConn) (grpc.ClientStream, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cs, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, "/BiRequestStream/requestBiStream")
	if err != nil {
		t.Fatal(err)
	}
	return cs, cancel
}

// TestStream: messages both ways in order, concurrent sends of large
// messages keep their framing, the receiver learns of the client's end.
func TestStream(t *testing.T) {
	_, addr, h := startWire(t, nil)
	cc := dialWire(t, addr)
	cs, cancel := openStream(t, cc)
	defer cancel()
	for i := range 50 {
		m := []byte(fmt.Sprintf("m%d-%s", i, strings.Repeat("z", i*1000)))
		if err := cs.SendMsg(&m); err != nil {
			t.Fatal(err)
		}
		var got []byte
		if err := cs.RecvMsg(&got); err != nil || !bytes.Equal(got, m) {
			t.Fatalf("message %d: %d bytes, %v", i, len(got), err)
		}
	}
	fan := []byte("fan")
	if err := cs.SendMsg(&fan); err != nil {
		t.Fatal(err)
	}
	seen := map[byte]bool{}
	for range 20 {
		var got []byte
		if err := cs.RecvMsg(&got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 100<<10 || bytes.Count(got, got[:1]) != len(got) || seen[got[0]] {
			t.Fatalf("fan-out message of %d bytes, first %q, seen %v", len(got), got[:1], seen[got[0]])
		}
		seen[got[0]] = true
	}
	if err := cs.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var got []byte
	if err := cs.RecvMsg(&got); err != io.EOF {
		t.Fatalf("after CloseSend: %v, want EOF (status OK)", err)
	}
	waitFor(t, func() bool { return h.closed.Load() == 1 })
}

// TestStreamEnds: a stream the client cancels, and one the server
// finishes with a status, both reach the receiver's Closed.
func TestStreamEnds(t *testing.T) {
	_, addr, h := startWire(t, nil)
	cc := dialWire(t, addr)
	cs, cancel := openStream(t, cc)
	echo(t, cs, "hi")
	cancel()
	waitFor(t, func() bool { return h.closed.Load() == 1 })

	cs, cancel = openStream(t, cc)
	defer cancel()
	m, got := []byte("finish"), []byte(nil)
	if err := cs.SendMsg(&m); err != nil {
		t.Fatal(err)
	}
	err := cs.RecvMsg(&got)
	if st, _ := status.FromError(err); st.Code() != codes.Internal || st.Message() != "finished" {
		t.Fatalf("finished stream: %v", err)
	}
	waitFor(t, func() bool { return h.closed.Load() == 2 })
}

// TestConnEnds: closing the client's connection ends its streams and
// calls OnClose; the server's Close ends every connection.
func TestConnEnds(t *testing.T) {
	var connected, closed atomic.Int32
	s, addr, h := startWire(t, func(c *Config) {
		c.OnConnect = func(*Conn) { connected.Add(1) }
		c.OnClose = func(*Conn) { closed.Add(1) }
	})
	cc := dialWire(t, addr)
	cs, cancel := openStream(t, cc)
	defer cancel()
	echo(t, cs, "hi")
	cc.Close()
	waitFor(t, func() bool { return h.closed.Load() == 1 && closed.Load() == 1 && s.Conns() == 0 })
	cc2 := dialWire(t, addr)
	cs2, cancel2 := openStream(t, cc2)
	defer cancel2()
	echo(t, cs2, "hi")
	s.Close()
	var got []byte
	if err := cs2.RecvMsg(&got); err == nil {
		t.Fatal("stream alive after Close")
	}
	waitFor(t, func() bool { return h.closed.Load() == 2 && closed.Load() == 2 && connected.Load() == 2 })
}

// echo sends msg on a stream of the echo handler and reads it back.
func echo(t *testing.T, cs grpc.ClientStream, msg string) {
	t.Helper()
	m, got := []byte(msg), []byte(nil)
	if err := cs.SendMsg(&m); err != nil {
		t.Fatal(err)
	}
	if err := cs.RecvMsg(&got); err != nil || string(got) != msg {
		t.Fatalf("echo of %q: %q, %v", msg, got, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
