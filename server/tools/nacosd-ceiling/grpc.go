package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"google.golang.org/grpc"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/grpcwire"
)

// The gRPC ceiling (-grpc-addr): a Nacos 2.x server that does no work. A
// unary call is answered by its request's type alone (the payload's type
// is peeked, nothing else is decoded) with an answer rendered at start:
// ServerCheckResponse, a ConfigQueryResponse with -grpc-content bytes,
// ConfigPublishResponse, InstanceResponse, HealthCheckResponse, and an
// ErrorResponse for anything else. A ConnectionSetupRequest on the stream
// gets a SetupAckRequest; other stream messages are dropped. With
// -grpc-stack go it is stock grpc-go, with wire nacosd's own HTTP/2
// transport (server/grpcwire) answering on each connection's reader.
// Driven by nacosd-grpcload as the servers are, it shows what the client,
// the kernel's loopback and a gRPC stack cost on their own.

const (
	methodRequest   = "/Request/request"
	methodBiRequest = "/BiRequestStream/requestBiStream"
)

// cannedAnswers are the encoded payloads, by request type.
type cannedAnswers struct {
	byType   map[string][]byte
	fallback []byte
	setupAck []byte
}

func newCannedAnswers(contentSize int) *cannedAnswers {
	content := strings.Repeat("x", contentSize)
	sum := md5.Sum([]byte(content))
	md5s, ctype := hex.EncodeToString(sum[:]), "text"
	enc := func(r remote.Responder) []byte { return remote.Encode(r).Marshal() }
	a := &cannedAnswers{byType: map[string][]byte{
		remote.TypeServerCheckRequest: enc(&remote.ServerCheckResponse{Response: remote.OK(), ConnectionID: "ceiling",
			SupportAbilityNegotiation: true}),
		remote.TypeConfigQueryRequest: enc(&remote.ConfigQueryResponse{Response: remote.OK(), Content: &content, MD5: &md5s,
			ContentType: &ctype, LastModified: 1}),
		remote.TypeConfigPublishRequest: enc(remote.NewPlain(remote.TypeConfigPublishResponse, remote.OK())),
		remote.TypeInstanceRequest:      enc(&remote.InstanceResponse{Response: remote.OK(), Class: remote.TypeInstanceResponse, Op: remote.RegisterInstance}),
		remote.TypeHealthCheckRequest:   enc(remote.NewPlain(remote.TypeHealthCheckResponse, remote.OK())),
	}, fallback: enc(remote.ErrorResponse(remote.ErrServer, "ceiling: not answered"))}
	a.setupAck = remote.EncodeRequest(&remote.SetupAckRequest{AbilityTable: map[string]bool{}}, "").Marshal()
	return a
}

func (a *cannedAnswers) answer(req []byte) []byte {
	if b, ok := a.byType[string(remote.PeekType(req))]; ok {
		return b
	}
	return a.fallback
}

// onStream is what the stream side does with a client's message: the
// answer to send, if any.
func (a *cannedAnswers) onStream(msg []byte) []byte {
	if string(remote.PeekType(msg)) == remote.TypeConnectionSetupRequest {
		return a.setupAck
	}
	return nil
}

// serveGRPC serves the gRPC ceiling on addr until it fails.
func serveGRPC(addr, stack string, contentSize int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return serveGRPCOn(ln, stack, contentSize)
}

func serveGRPCOn(ln net.Listener, stack string, contentSize int) error {
	a := newCannedAnswers(contentSize)
	switch stack {
	case "go":
		return serveGo(ln, a)
	case "wire":
		return serveWire(ln, a)
	}
	return fmt.Errorf("-grpc-stack %q: want go or wire", stack)
}

func serveGo(ln net.Listener, a *cannedAnswers) error {
	s := grpc.NewServer(grpc.ForceServerCodec(remote.Codec{}))
	s.RegisterService(&grpc.ServiceDesc{ServiceName: "Request", HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "request",
			Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				var req []byte
				if err := dec(&req); err != nil {
					return nil, err
				}
				b := a.answer(req)
				return &b, nil
			}}}}, struct{}{})
	s.RegisterService(&grpc.ServiceDesc{ServiceName: "BiRequestStream", HandlerType: (*any)(nil),
		Streams: []grpc.StreamDesc{{StreamName: "requestBiStream", ServerStreams: true, ClientStreams: true,
			Handler: func(_ any, st grpc.ServerStream) error {
				for {
					var msg []byte
					if err := st.RecvMsg(&msg); err != nil {
						return nil
					}
					if b := a.onStream(msg); b != nil {
						if err := st.SendMsg(&b); err != nil {
							return nil
						}
					}
				}
			}}}}, struct{}{})
	return s.Serve(ln)
}

// wireCeiling answers through grpcwire; every unary call runs on its
// connection's reader.
type wireCeiling struct{ a *cannedAnswers }

func (w wireCeiling) Unary(_ context.Context, _ *grpcwire.Conn, _ string, msg []byte) ([]byte, error) {
	return w.a.answer(msg), nil
}

func (w wireCeiling) OpenStream(s *grpcwire.Stream) (grpcwire.StreamReceiver, error) {
	return wireStream{w.a, s}, nil
}

type wireStream struct {
	a *cannedAnswers
	s *grpcwire.Stream
}

func (r wireStream) Message(msg []byte) {
	if b := r.a.onStream(msg); b != nil {
		_ = r.s.Send(b)
	}
}

func (wireStream) Closed() {}

func serveWire(ln net.Listener, a *cannedAnswers) error {
	s, err := grpcwire.New(grpcwire.Config{
		Methods: map[string]grpcwire.Kind{methodRequest: grpcwire.UnaryMethod, methodBiRequest: grpcwire.StreamMethod},
		Handler: wireCeiling{a}, Logger: slog.New(slog.DiscardHandler),
		Inline: func(*grpcwire.Conn, string, []byte) bool { return true },
	})
	if err != nil {
		return err
	}
	return s.Serve(ln)
}
