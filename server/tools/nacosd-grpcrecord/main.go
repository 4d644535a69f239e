// Command nacosd-grpcrecord is a recording relay for the Nacos 2.x gRPC
// protocol: it listens where a client expects a server's gRPC port, relays
// every call (unary and bi-stream) to a real server, one upstream
// connection per client connection (the server names connections by their
// TCP transport), and writes each Payload it relays as one JSON line. It is
// how the golden bodies under compat/testdata/remote were captured from Java
// Nacos 2.5.1 and nacos-client 2.5.1; run it on loopback only.
//
//	nacosd-grpcrecord -listen 127.0.0.1:10210 -upstream 127.0.0.1:10200 -out rec.jsonl \
//	    -http-listen 127.0.0.1:9210 -http-upstream 127.0.0.1:9200
//
// A client pointed at 127.0.0.1:9210 then talks HTTP (login) through a
// plain TCP relay and gRPC (port + 1000) through the recorder.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"

	"github.com/nacosd/nacosd/compat/remote"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// record is one relayed Payload.
type record struct {
	Ms       int64             `json:"ms"`
	Conn     int64             `json:"conn"`
	Method   string            `json:"method"`
	Dir      string            `json:"dir"` // c2s: client to server; s2c: server to client
	Type     string            `json:"type"`
	ClientIP string            `json:"clientIp,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Body     string            `json:"body"`
	Raw      string            `json:"raw"` // the protobuf Payload, base64
}

type recorder struct {
	upstream string
	mu       sync.Mutex
	out      *json.Encoder
	start    time.Time
	nextConn atomic.Int64
	conns    sync.Map // conn id → *grpc.ClientConn
}

type connKey struct{}

// TagConn numbers each client transport (stats.Handler).
func (r *recorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return context.WithValue(ctx, connKey{}, r.nextConn.Add(1))
}

// HandleConn closes a transport's upstream connection when it ends.
func (r *recorder) HandleConn(ctx context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnEnd); ok {
		id, _ := ctx.Value(connKey{}).(int64)
		if c, ok := r.conns.LoadAndDelete(id); ok {
			c.(*grpc.ClientConn).Close()
		}
	}
}

func (r *recorder) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (r *recorder) HandleRPC(context.Context, stats.RPCStats)                       {}

func (r *recorder) upstreamFor(id int64) (*grpc.ClientConn, error) {
	if c, ok := r.conns.Load(id); ok {
		return c.(*grpc.ClientConn), nil
	}
	c, err := grpc.NewClient(r.upstream, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(remote.Codec{})))
	if err != nil {
		return nil, err
	}
	if prev, loaded := r.conns.LoadOrStore(id, c); loaded {
		c.Close()
		return prev.(*grpc.ClientConn), nil
	}
	return c, nil
}

func (r *recorder) log(conn int64, method, dir string, raw []byte) {
	var p remote.Payload
	rec := record{Ms: time.Since(r.start).Milliseconds(), Conn: conn, Method: method, Dir: dir,
		Raw: base64.StdEncoding.EncodeToString(raw)}
	if err := p.Unmarshal(raw); err != nil {
		rec.Type = "!" + err.Error()
	} else {
		rec.Type, rec.ClientIP, rec.Headers, rec.Body = p.Metadata.Type, p.Metadata.ClientIP, p.Metadata.Headers, string(p.Body)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out.Encode(rec)
}

// relay is the handler of every method: a stream to the same method upstream.
func (r *recorder) relay(_ any, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	id, _ := ss.Context().Value(connKey{}).(int64)
	cc, err := r.upstreamFor(id)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	if md, ok := metadata.FromIncomingContext(ss.Context()); ok {
		ctx = metadata.NewOutgoingContext(ctx, md.Copy())
	}
	cs, err := cc.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method, grpc.ForceCodec(remote.Codec{}))
	if err != nil {
		return err
	}
	up := make(chan error, 1)
	go func() {
		for {
			var b []byte
			if err := ss.RecvMsg(&b); err != nil {
				cs.CloseSend()
				if errors.Is(err, io.EOF) {
					err = nil
				}
				up <- err
				return
			}
			r.log(id, method, "c2s", b)
			if err := cs.SendMsg(&b); err != nil {
				up <- err
				return
			}
		}
	}()
	for {
		var b []byte
		if err := cs.RecvMsg(&b); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		r.log(id, method, "s2c", b)
		if err := ss.SendMsg(&b); err != nil {
			return err
		}
	}
}

// tcpRelay copies connections on listen to upstream unchanged.
func tcpRelay(ln net.Listener, upstream string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				return
			}
			defer u.Close()
			go io.Copy(u, c)
			io.Copy(c, u)
		}()
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("nacosd-grpcrecord", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:10210", "gRPC address clients connect to (HTTP port + 1000)")
	upstream := fs.String("upstream", "127.0.0.1:10200", "the real server's gRPC address")
	httpListen := fs.String("http-listen", "", "optional plain TCP relay for the HTTP port")
	httpUpstream := fs.String("http-upstream", "127.0.0.1:9200", "the real server's HTTP address")
	out := fs.String("out", "grpc-record.jsonl", "where the records go")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	defer f.Close()
	r := &recorder{upstream: *upstream, out: json.NewEncoder(f), start: time.Now()}
	r.out.SetEscapeHTML(false)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	if *httpListen != "" {
		hl, err := net.Listen("tcp", *httpListen)
		if err != nil {
			return err
		}
		defer hl.Close()
		go tcpRelay(hl, *httpUpstream)
	}
	srv := grpc.NewServer(grpc.ForceServerCodec(remote.Codec{}), grpc.UnknownServiceHandler(r.relay), grpc.StatsHandler(r))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-sig; srv.Stop() }()
	log.Printf("recording %s → %s into %s", *listen, *upstream, *out)
	return srv.Serve(ln)
}
