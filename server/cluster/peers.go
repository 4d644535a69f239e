package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
)

// PeersConfig configures the node-to-node HTTP client.
type PeersConfig struct {
	// ContextPath is the peers' context path (Java assumes its own).
	ContextPath string
	// Version is sent as Client-Version and in User-Agent Nacos-Server:<v>.
	Version string
	// SourceIP, when set, is the local address outgoing connections bind
	// to (a node listening on one address talks from it too).
	SourceIP string
	// Identity adds the server identity header (auth's
	// nacos.core.auth.server.identity.key/value); nil adds none.
	Identity func(http.Header)
	// Timeout bounds a request without its own (default 5 s).
	Timeout time.Duration
	// MaxBody caps a response body (default 256 MiB).
	MaxBody int64
}

// Peers sends HTTP requests to other members as Java Nacos's server-side
// clients do: User-Agent Nacos-Server:<version>, Client-Version and the
// identity header on every request. Safe for concurrent use.
type Peers struct {
	cfg    PeersConfig
	client *http.Client
}

// NewPeers builds the client.
func NewPeers(cfg PeersConfig) *Peers {
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = 256 << 20
	}
	d := &net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}
	if cfg.SourceIP != "" {
		if ip := net.ParseIP(cfg.SourceIP); ip != nil && !ip.IsUnspecified() {
			d.LocalAddr = &net.TCPAddr{IP: ip}
		}
	}
	tr := &http.Transport{
		DialContext:         quickSYN(d),
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 32,
		// below the members' idle timeout (nacosd 20 s, Tomcat's 20 s): a
		// pooled connection the member already closed fails a POST with
		// EOF, which Go does not retry (the fault checker saw a forwarded
		// write fail so in a quiet cluster)
		IdleConnTimeout:    10 * time.Second,
		DisableCompression: true, // bodies are read as sent (Java sends Content-Encoding: gzip over plain bodies)
	}
	return &Peers{cfg: cfg, client: &http.Client{Transport: tr}}
}

// synRetry is how often a dial sends a fresh SYN to a member that does not
// answer (a partition dropping packets): the kernel's own retransmissions
// come after 1, 3, 7… s, so a member reachable again would wait for the
// next of them; a fresh attempt every synRetry connects within it (as the
// raft transport does, raftstore/transport.go). Distro's retries after a
// partition heals then reach the member at once.
const synRetry = 250 * time.Millisecond

// quickSYN dials with d in attempts of synRetry until d's timeout; an
// answer other than silence (refused: the member is down) ends it at once.
func quickSYN(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		deadline := time.Now().Add(d.Timeout)
		if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
			deadline = dl
		}
		for {
			a := *d
			a.Timeout = max(min(synRetry, time.Until(deadline)), time.Millisecond)
			c, err := a.DialContext(ctx, network, addr)
			var ne net.Error
			if err == nil || !errors.As(err, &ne) || !ne.Timeout() || !time.Now().Before(deadline) || ctx.Err() != nil {
				return c, err
			}
		}
	}
}

// Request is one call to a member.
type Request struct {
	Method string
	// Addr is the member address (ip:port).
	Addr string
	// Path follows the context path, e.g. /v1/ns/distro/datum.
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
	// Timeout overrides PeersConfig.Timeout.
	Timeout time.Duration
	// RawURI, when set, replaces Path and Query: the request URI as a
	// client sent it (context path included), for a request relayed on a
	// client's behalf; its headers are then sent as given (plus the
	// identity header), without the server User-Agent.
	RawURI string
}

// Response is a member's answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// URL is the request URL.
func (p *Peers) URL(r Request) string {
	if r.RawURI != "" {
		return "http://" + r.Addr + r.RawURI
	}
	u := "http://" + r.Addr + p.cfg.ContextPath + r.Path
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	return u
}

// ServerAgent is the User-Agent of node-to-node calls.
func (p *Peers) ServerAgent() string { return "Nacos-Server:" + p.cfg.Version }

// Do sends r and reads the whole answer (any status is a Response; only
// transport failures are errors).
func (p *Peers) Do(ctx context.Context, r Request) (Response, error) {
	timeout := r.Timeout
	if timeout == 0 {
		timeout = p.cfg.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, p.URL(r), body)
	if err != nil {
		return Response{}, fmt.Errorf("cluster: %s %s: %w", r.Method, r.Path, err)
	}
	for k, vs := range r.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if r.RawURI == "" {
		req.Header.Set("User-Agent", p.ServerAgent())
		req.Header.Set("Client-Version", p.cfg.Version)
	} else if req.Header.Get("User-Agent") == "" {
		req.Header["User-Agent"] = nil // Go's default agent must not stand in for a client that sent none
	}
	if p.cfg.Identity != nil {
		p.cfg.Identity(req.Header)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("cluster: %s http://%s%s%s: %w", r.Method, r.Addr, p.cfg.ContextPath, r.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, p.cfg.MaxBody+1))
	if err != nil {
		return Response{}, fmt.Errorf("cluster: read answer of %s %s from %s: %w", r.Method, r.Path, r.Addr, err)
	}
	if int64(len(b)) > p.cfg.MaxBody {
		return Response{}, fmt.Errorf("cluster: answer of %s %s from %s exceeds %d bytes", r.Method, r.Path, r.Addr, p.cfg.MaxBody)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}, nil
}

// Close drops idle connections.
func (p *Peers) Close() { p.client.CloseIdleConnections() }
