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
	send func(*remote.Payload) error
	ci   *connInfo
	once sync.Once
	// registered: the stream's ConnectionSetupRequest registered its
	// connection, which the stream's end unregisters
	registered bool
}

// Send writes one Payload (the manager serialises sends).
func (b *biStream) Send(p *remote.Payload) error { return b.send(p) }

// Close ends the connection as GrpcConnection.close does: the stream and
// its TCP connection. The stream's handler then returns.
func (b *biStream) Close() {
	b.once.Do(b.ci.closeTransport)
}

// streamHandler is GrpcBiStreamRequestAcceptor over grpc-go: each payload
// to onPayload, and when the stream ends its connection is unregistered
// (Java waits for the transport's end or the keep-alive ejection; a client
// that ends its stream but keeps its channel open gets nothing pushed in
// either case).
func (s *Server) streamHandler(_ any, ss grpc.ServerStream) error {
	bs := &biStream{s: s, ci: s.connOf(ss.Context()), send: func(p *remote.Payload) error { return ss.SendMsg(p) }}
	defer func() {
		if e := recover(); e != nil { // grpc-go does not recover it: one connection, not the process
			s.log.Error("grpc stream panic", "connectionId", bs.ci.id, "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
			bs.Close()
		}
		bs.end()
	}()
	for {
		p := new(remote.Payload)
		if err := ss.RecvMsg(p); err != nil {
			return nil
		}
		if !bs.onPayload(p) {
			return nil
		}
	}
}

// end unregisters the stream's connection.
func (b *biStream) end() {
	if b.registered {
		b.s.conns.Unregister(b.ci.id)
	}
}

// onPayload handles one payload of the stream: the first
// ConnectionSetupRequest registers the connection (and is answered with
// SetupAckRequest when the client sent an ability table); responses are
// the client's answers to the server's requests. Payloads that do not
// parse are ignored, as in Java. False: the connection was refused and
// closed.
func (b *biStream) onPayload(p *remote.Payload) bool {
	s, ci := b.s, b.ci
	typ := p.Metadata.Type
	if typ == remote.TypeConnectionSetupRequest {
		req, err := remote.DecodeRequest(p)
		setup, ok := req.(*remote.ConnectionSetupRequest)
		if err != nil || !ok {
			s.log.Debug("undecodable ConnectionSetupRequest", "connectionId", ci.id, "err", err)
			return true
		}
		if s.conns.Valid(ci.id) {
			return true // registered already (ConnectionManager.register answers true)
		}
		c := connections.NewConn(ci.id, b)
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
			b.Close()
			return false
		}
		b.registered = true
		if setup.AbilityTable != nil {
			if err := s.conns.Notify(c, &remote.SetupAckRequest{AbilityTable: s.cfg.Abilities}); err != nil {
				s.log.Debug("SetupAckRequest not sent", "connectionId", ci.id, "err", err)
			}
		}
		return true
	}
	if strings.HasSuffix(typ, "Response") {
		s.conns.Ack(ci.id, p)
		return true
	}
	s.log.Debug("unexpected payload on a stream", "connectionId", ci.id, "type", typ)
	return true
}
