package grpcapi

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"google.golang.org/grpc"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/connections"
)

// biStream is a connection's stream as connections.Stream.
type biStream struct {
	s    *Server
	ss   grpc.ServerStream
	ci   *connInfo
	once sync.Once
}

// Send writes one Payload (the manager serialises sends).
func (b *biStream) Send(p *remote.Payload) error { return b.ss.SendMsg(p) }

// Close ends the connection as GrpcConnection.close does: the stream and
// its TCP connection. The stream's handler then returns.
func (b *biStream) Close() {
	b.once.Do(b.ci.closeTransport)
}

// streamHandler is GrpcBiStreamRequestAcceptor: the first
// ConnectionSetupRequest registers the connection (and is answered with
// SetupAckRequest when the client sent an ability table); responses are
// the client's answers to the server's requests. Payloads that do not
// parse are ignored, as in Java. When the stream ends the connection is
// unregistered (Java waits for the transport's end or the keep-alive
// ejection; a client that ends its stream but keeps its channel open gets
// nothing pushed in either case).
func (s *Server) streamHandler(_ any, ss grpc.ServerStream) error {
	ci := s.connOf(ss.Context())
	bs := &biStream{s: s, ss: ss, ci: ci}
	registered := false
	defer func() {
		if e := recover(); e != nil { // grpc-go does not recover it: one connection, not the process
			s.log.Error("grpc stream panic", "connectionId", ci.id, "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
			bs.Close()
		}
		if registered {
			s.conns.Unregister(ci.id)
		}
	}()
	for {
		p := new(remote.Payload)
		if err := ss.RecvMsg(p); err != nil {
			return nil
		}
		typ := p.Metadata.Type
		if typ == remote.TypeConnectionSetupRequest {
			req, err := remote.DecodeRequest(p)
			setup, ok := req.(*remote.ConnectionSetupRequest)
			if err != nil || !ok {
				s.log.Debug("undecodable ConnectionSetupRequest", "connectionId", ci.id, "err", err)
				continue
			}
			if s.conns.Valid(ci.id) {
				continue // registered already (ConnectionManager.register answers true)
			}
			c := connections.NewConn(ci.id, bs)
			c.ClientIP, c.RemoteIP, c.RemotePort, c.LocalPort = p.Metadata.ClientIP, ci.remoteIP, ci.remotePort, ci.localPort
			c.Version, c.Tenant, c.Labels, c.Abilities = setup.ClientVersion, setup.Tenant, setup.Labels, setup.AbilityTable
			if c.Labels == nil {
				c.Labels = map[string]string{}
			}
			c.AppName = "-"
			if a, ok := c.Labels[connections.LabelAppName]; ok {
				c.AppName = a
			}
			if err := s.conns.Register(c); err != nil {
				s.log.Warn("connection refused", "connectionId", ci.id, "clientIp", c.ClientIP, "err", err)
				bs.Close()
				return nil
			}
			registered = true
			if setup.AbilityTable != nil {
				if err := s.conns.Notify(c, &remote.SetupAckRequest{AbilityTable: s.cfg.Abilities}); err != nil {
					s.log.Debug("SetupAckRequest not sent", "connectionId", ci.id, "err", err)
				}
			}
			continue
		}
		if strings.HasSuffix(typ, "Response") {
			s.conns.Ack(ci.id, p)
			continue
		}
		s.log.Debug("unexpected payload on a stream", "connectionId", ci.id, "type", typ)
	}
}
