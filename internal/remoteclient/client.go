// Package remoteclient is a small Nacos 2.x gRPC client written from the
// protocol: ServerCheckRequest on a fresh channel, the bi-stream with its
// ConnectionSetupRequest, SetupAckRequest, unary requests, and answers to
// the server's requests (change notifications, client detection, connect
// reset). Tests, the conformance corpus and the load tool use it against
// nacosd and Java Nacos 2.5.1 alike; it is not a full client (no
// reconnection, no redo).
package remoteclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/nacosd/nacosd/compat/remote"
)

// Options configure Dial. Zero values are a Java nacos-client 2.5.1 config
// client's.
type Options struct {
	// ClientIP goes into every request's metadata (127.0.0.1).
	ClientIP string
	// Version is the ConnectionSetupRequest clientVersion.
	Version string
	Tenant  string
	// Labels of the connection (source=sdk, module=config by default).
	Labels map[string]string
	// Abilities is the client's ability table; nil sends {} (Java always
	// sends a table). NoAbilities sends none, as 2.0/2.1 clients do.
	Abilities   map[string]bool
	NoAbilities bool
	// Headers are added to every request (accessToken, app …).
	Headers map[string]string
	// OnRequest, when set, answers the server's requests instead of the
	// default (a success response of the matching class). Returning nil
	// sends no answer.
	OnRequest func(p *remote.Payload, req remote.Requester) remote.Responder
	// NoStream stops after ServerCheckRequest: only unary calls (which a
	// server answers "Connection is unregistered" except ServerCheck).
	NoStream bool
	// SetupTimeout bounds the wait for SetupAckRequest (3 s).
	SetupTimeout time.Duration
	// LocalIP, when set, is the address the connection leaves from.
	LocalIP string
}

// Client is one connection.
type Client struct {
	opt    Options
	cc     *grpc.ClientConn
	stream grpc.ClientStream
	sendMu sync.Mutex
	// ConnID is the id the server gave in ServerCheckResponse.
	ConnID string
	// ServerAbilities is the SetupAckRequest's table.
	ServerAbilities map[string]bool

	cancel context.CancelFunc
	pushes chan *remote.Payload
	done   chan struct{}
	err    error
}

var (
	requestDesc = "/Request/request"
	streamDesc  = &grpc.StreamDesc{StreamName: "requestBiStream", ServerStreams: true, ClientStreams: true}
)

// Dial connects to a server's gRPC address (HTTP port + 1000) as a Java
// client does: ServerCheckRequest, then the stream and
// ConnectionSetupRequest, then (when the server supports ability
// negotiation) the SetupAckRequest.
func Dial(ctx context.Context, addr string, opt Options) (*Client, error) {
	if opt.ClientIP == "" {
		opt.ClientIP = "127.0.0.1"
	}
	if opt.Version == "" {
		opt.Version = "Nacos-Java-Client:v2.5.1"
	}
	if opt.Labels == nil {
		opt.Labels = map[string]string{"source": "sdk", "module": "config", "taskId": "0", "AppName": "remoteclient"}
	}
	if opt.SetupTimeout == 0 {
		opt.SetupTimeout = 3 * time.Second
	}
	dopts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(remote.Codec{}))}
	if opt.LocalIP != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(opt.LocalIP)}}
		dopts = append(dopts, grpc.WithContextDialer(func(ctx context.Context, a string) (net.Conn, error) {
			return d.DialContext(ctx, "tcp", a)
		}))
	}
	cc, err := grpc.NewClient(addr, dopts...)
	if err != nil {
		return nil, fmt.Errorf("remoteclient: dial %s: %w", addr, err)
	}
	c := &Client{opt: opt, cc: cc, pushes: make(chan *remote.Payload, 1024), done: make(chan struct{})}
	_, resp, err := c.Do(ctx, &remote.ServerCheckRequest{})
	if err != nil {
		cc.Close()
		return nil, fmt.Errorf("remoteclient: server check: %w", err)
	}
	if resp.Type != remote.TypeServerCheckResponse {
		cc.Close()
		return nil, fmt.Errorf("remoteclient: server check answered %s: %d %s", resp.Type, resp.ErrorCode, resp.Message)
	}
	c.ConnID = resp.Str("connectionId")
	if opt.NoStream {
		close(c.done)
		return c, nil
	}
	if err := c.openStream(ctx, resp.Bool("supportAbilityNegotiation")); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Client) openStream(ctx context.Context, negotiate bool) error {
	sctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	st, err := c.cc.NewStream(sctx, streamDesc, "/BiRequestStream/requestBiStream")
	if err != nil {
		return fmt.Errorf("remoteclient: open stream: %w", err)
	}
	c.stream = st
	ab := c.opt.Abilities
	if ab == nil && !c.opt.NoAbilities {
		ab = map[string]bool{}
	}
	setup := &remote.ConnectionSetupRequest{ClientVersion: c.opt.Version, Tenant: c.opt.Tenant, Labels: c.opt.Labels, AbilityTable: ab}
	acked := make(chan struct{})
	go c.recvLoop(acked)
	if err := c.send(remote.EncodeRequest(setup, c.opt.ClientIP)); err != nil {
		return fmt.Errorf("remoteclient: send setup: %w", err)
	}
	if !negotiate || ab == nil {
		// Java waits 100 ms for a server without ability negotiation
		time.Sleep(100 * time.Millisecond)
		return nil
	}
	select {
	case <-acked:
		return nil
	case <-c.done:
		return fmt.Errorf("remoteclient: stream ended before SetupAckRequest: %w", c.err)
	case <-time.After(c.opt.SetupTimeout):
		return errors.New("remoteclient: no SetupAckRequest")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) send(p *remote.Payload) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.stream.SendMsg(p)
}

// recvLoop reads the server's requests: SetupAckRequest closes acked; the
// others are answered (OnRequest or a success of the matching class) and
// queued for Pushes.
func (c *Client) recvLoop(acked chan struct{}) {
	defer close(c.done)
	for {
		p := new(remote.Payload)
		if err := c.stream.RecvMsg(p); err != nil {
			c.err = err
			return
		}
		req, _ := remote.DecodeRequest(p)
		if p.Metadata.Type == remote.TypeSetupAckRequest {
			c.ServerAbilities = setupAbilities(p)
			select {
			case <-acked:
			default:
				close(acked)
			}
			continue
		}
		var answer remote.Responder
		if c.opt.OnRequest != nil {
			answer = c.opt.OnRequest(p, req)
		} else {
			id := ""
			if req != nil {
				id = req.Base().RequestID
			}
			answer = remote.NewPlain(strings.TrimSuffix(p.Metadata.Type, "Request")+"Response", remote.Response{ResultCode: remote.CodeSuccess, RequestID: id})
		}
		if answer != nil {
			c.send(remote.Encode(answer))
		}
		select {
		case c.pushes <- p:
		default: // nobody reads: drop
		}
	}
}

func setupAbilities(p *remote.Payload) map[string]bool {
	d, err := remote.DecodeResponse(p.Metadata.Type, p.Body)
	if err != nil {
		return nil
	}
	return d.BoolMap("abilityTable")
}

// Pushes delivers the server's requests (after they were answered).
func (c *Client) Pushes() <-chan *remote.Payload { return c.pushes }

// Done is closed when the stream ends; Err then tells why.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err is the stream's end (after Done).
func (c *Client) Err() error { return c.err }

// Send sends a payload on the stream (an answer of the caller's own).
func (c *Client) Send(p *remote.Payload) error { return c.send(p) }

// Do sends a request on the unary service with the client's headers and
// returns the raw answer and its decoded common part.
func (c *Client) Do(ctx context.Context, r remote.Requester) (*remote.Payload, *remote.DecodedResponse, error) {
	p := remote.EncodeRequest(r, c.opt.ClientIP)
	if len(c.opt.Headers) > 0 {
		if p.Metadata.Headers == nil {
			p.Metadata.Headers = map[string]string{}
		}
		for k, v := range c.opt.Headers {
			if _, ok := p.Metadata.Headers[k]; !ok {
				p.Metadata.Headers[k] = v
			}
		}
	}
	out, err := c.Raw(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	d, err := remote.DecodeResponse(out.Metadata.Type, out.Body)
	if err != nil {
		return out, nil, err
	}
	return out, d, nil
}

// Raw sends a payload as it is on the unary service.
func (c *Client) Raw(ctx context.Context, p *remote.Payload) (*remote.Payload, error) {
	out := new(remote.Payload)
	if err := c.cc.Invoke(ctx, requestDesc, p, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Close ends the stream and the connection.
func (c *Client) Close() error {
	if c.cancel != nil {
		c.cancel()
	}
	return c.cc.Close()
}
