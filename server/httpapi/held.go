package httpapi

import (
	"net"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/config"
)

// Held long polls without a goroutine (config-v1.md §4).
//
// A long poll that has to wait leaves fasthttp: the handler hijacks the
// connection without an answer, and the hijack handler copies the answer's
// headers (everything the middlewares, the handler and fasthttp set: the
// Content-Type, "Connection: close" when the request asked for it), takes
// the bare connection and returns. The worker goroutine, its RequestCtx
// and its buffers go back to their pools; while held, a poll costs its
// config.Poll, a heldPoll and the connection. Once the poll is answered
// (config.Poll.AfterDone) a new goroutine writes the answer as fasthttp
// would have (same status line, headers and body), waits for the
// connection's next request and hands the connection back to the server
// (fasthttp's ServeConn), which serves it as any keep-alive connection.
//
// What else sees a held poll:
//   - the connection limits: the listener (internal/connlimit) counts the
//     connection until it is closed, so shedLoad's reserve and the hard cap
//     include held polls; fasthttp's own Concurrency counts only the
//     connections it is serving, not the held ones.
//   - Observe (metrics, access log): the handler chain returns when the poll
//     is held; Observe then hands its record to the heldPoll, which reports
//     it once the answer is written, with the whole duration, the status
//     and the bytes sent, as for an answer fasthttp writes.
//   - shutdown: config.Service.Close answers every holder (empty 200, here
//     with "Connection: close") and the connection is closed after the
//     answer; connections answered earlier and waiting here for their next
//     request are closed too (fasthttp's Shutdown would close them when
//     idle, but it does not know of them). Close returns once the answers
//     are written.
//   - a client that went away is noticed when the answer is written (as
//     before: nothing reads a held connection).

// heldWriteTimeout bounds the write of a held poll's answer.
const heldWriteTimeout = 10 * time.Second

// heldKey holds the *heldPoll of a hijacked request in c.Locals.
type heldKey struct{}

// heldPolls is the held long polls of one config API.
type heldPolls struct {
	srv *fasthttp.Server
	svc *config.Service

	mu     sync.Mutex
	closed bool
	// answering counts the polls held and not yet answered.
	answering sync.WaitGroup
	// idle holds the connections answered and waiting for their next request.
	idle map[net.Conn]struct{}
}

func newHeldPolls(srv *fasthttp.Server, svc *config.Service) *heldPolls {
	srv.KeepHijackedConns = true // the hijack handler returns while the connection lives on
	hs := &heldPolls{srv: srv, svc: svc, idle: map[net.Conn]struct{}{}}
	svc.OnClose(hs.shutdown)
	return hs
}

// heldPoll is one held long poll.
type heldPoll struct {
	hs   *heldPolls
	poll *config.Poll
	ctx  *fasthttp.RequestCtx // until hijacked runs
	conn net.Conn
	// pending are bytes the client sent after the request (pipelined),
	// which fasthttp had read.
	pending []byte
	// hdr is the answer's header as the handler chain left it.
	hdr fasthttp.ResponseHeader
	// observe reports the answer to Observe (nil: not observed).
	observe func(resp *fasthttp.Response)
}

// hold takes the connection of c off fasthttp until poll is answered; false
// when the service is closing (the caller waits for the answer, which is
// then at hand).
func (hs *heldPolls) hold(c *fiber.Ctx, poll *config.Poll) bool {
	hs.mu.Lock()
	if hs.closed {
		hs.mu.Unlock()
		return false
	}
	hs.answering.Add(1)
	hs.mu.Unlock()
	hp := &heldPoll{hs: hs, poll: poll, ctx: c.Context()}
	c.Locals(heldKey{}, hp)
	emptyOK(c) // the status the middlewares see
	c.Context().HijackSetNoResponse(true)
	c.Context().Hijack(hp.hijacked)
	return true
}

// heldOf returns the held poll of a request the handler chain returned
// from, nil when it was answered.
func heldOf(c *fiber.Ctx) *heldPoll {
	if !c.Context().Hijacked() {
		return nil
	}
	hp, _ := c.Locals(heldKey{}).(*heldPoll)
	return hp
}

// hijacked runs once fasthttp is done with the request (the handler chain
// returned), before the RequestCtx is released.
func (hp *heldPoll) hijacked(conn net.Conn) {
	hp.ctx.Response.Header.CopyTo(&hp.hdr)
	hp.ctx = nil
	hp.conn, hp.pending = bareConn(conn)
	hp.poll.AfterDone(hp.answer)
}

// aLongTimeAgo is a read deadline that makes a read return at once.
var aLongTimeAgo = time.Unix(1, 0)

// bareConn returns the connection under fasthttp's hijacked one, and the
// bytes fasthttp had read past the request: its reader goes back to a pool
// when the hijack handler returns. A read with a past deadline returns
// what is buffered and never waits for, nor consumes, the socket's data.
func bareConn(c net.Conn) (net.Conn, []byte) {
	var pending []byte
	if c.SetReadDeadline(aLongTimeAgo) == nil {
		var buf [256]byte
		for {
			n, err := c.Read(buf[:])
			pending = append(pending, buf[:n]...)
			if err != nil || n == 0 {
				break
			}
		}
		_ = c.SetReadDeadline(time.Time{})
	}
	if u, ok := c.(interface{ UnsafeConn() net.Conn }); ok {
		c = u.UnsafeConn()
	}
	if pc, ok := c.(*prefixConn); ok { // an earlier hold's wrapper: its bytes were read above
		c = pc.Conn
	}
	return c, pending
}

// answer writes the answer, then serves the connection's next requests.
func (hp *heldPoll) answer() {
	hs := hp.hs
	resp := fasthttp.AcquireResponse()
	hp.hdr.CopyTo(&resp.Header)
	hp.hdr.Reset()
	if changed := hp.poll.Result(); len(changed) > 0 {
		setNoCache(&resp.Header)
		resp.SetBodyString(compat.EncodeChangedKeys(changed))
	}
	if hs.svc.Closing() {
		resp.Header.SetConnectionClose()
	}
	keepAlive := !resp.Header.ConnectionClose()
	// as fasthttp's Response.Write
	body := resp.Body()
	resp.Header.SetContentLength(len(body))
	b := append(resp.Header.AppendBytes(make([]byte, 0, 256)), body...)
	conn := hp.conn
	_ = conn.SetWriteDeadline(time.Now().Add(heldWriteTimeout))
	_, err := conn.Write(b)
	if hp.observe != nil {
		hp.observe(resp)
	}
	fasthttp.ReleaseResponse(resp)
	hs.answering.Done()
	if err != nil || !keepAlive {
		_ = conn.Close()
		return
	}
	_ = conn.SetWriteDeadline(time.Time{})
	hs.serveNext(conn, hp.pending)
}

// serveNext waits for the next request on an answered connection, as
// fasthttp waits on an idle keep-alive connection (IdleTimeout), and gives
// the connection back to the server. It waits here rather than in
// ServeConn: fasthttp does not track a connection given to ServeConn until
// its first request is read, so its Shutdown could neither close it nor
// stop waiting for it.
func (hs *heldPolls) serveNext(conn net.Conn, pending []byte) {
	if len(pending) == 0 {
		d := hs.srv.IdleTimeout
		if d == 0 {
			d = hs.srv.ReadTimeout
		}
		if d > 0 {
			_ = conn.SetReadDeadline(time.Now().Add(d))
		}
		if !hs.idleAdd(conn) {
			_ = conn.Close()
			return
		}
		first := make([]byte, 1)
		n, _ := conn.Read(first)
		hs.idleRemove(conn)
		if n == 0 { // closed by the client, idle too long, or shutdown
			_ = conn.Close()
			return
		}
		_ = conn.SetReadDeadline(time.Time{}) // fasthttp sets its ReadTimeout now
		pending = first
	}
	_ = hs.srv.ServeConn(&prefixConn{Conn: conn, pre: pending}) // closes conn unless hijacked again
}

func (hs *heldPolls) idleAdd(c net.Conn) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.closed {
		return false
	}
	hs.idle[c] = struct{}{}
	return true
}

func (hs *heldPolls) idleRemove(c net.Conn) {
	hs.mu.Lock()
	delete(hs.idle, c)
	hs.mu.Unlock()
}

// shutdown runs at the end of config.Service.Close, which answered every
// holder: it closes the connections waiting for a next request and waits
// for the answers to be written.
func (hs *heldPolls) shutdown() {
	hs.mu.Lock()
	hs.closed = true
	idle := hs.idle
	hs.idle = map[net.Conn]struct{}{}
	hs.mu.Unlock()
	for c := range idle {
		_ = c.Close()
	}
	done := make(chan struct{})
	go func() {
		hs.answering.Wait()
		close(done)
	}()
	t := time.NewTimer(heldWriteTimeout + time.Second) // a poll fasthttp never handed over
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// prefixConn reads pre before the connection.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// setNoCache is noCache on a fasthttp header.
func setNoCache(h *fasthttp.ResponseHeader) {
	h.Set("Pragma", "no-cache")
	h.Set("Expires", "Thu, 01 Jan 1970 00:00:00 GMT")
	h.Set("Cache-Control", "no-cache,no-store")
}

// requestHeaders copies the request's headers for a lookup after the
// request's memory is reused (the access log of a held poll): first value
// of a name, case-insensitive, as Peek.
func requestHeaders(h *fasthttp.RequestHeader) func(string) string {
	var sb strings.Builder
	h.VisitAll(func(k, v []byte) {
		sb.Write(k)
		sb.WriteByte(0)
		sb.Write(v)
		sb.WriteByte('\n')
	})
	all := sb.String()
	return func(name string) string {
		for rest := all; rest != ""; {
			var line string
			line, rest, _ = strings.Cut(rest, "\n")
			if k, v, ok := strings.Cut(line, "\x00"); ok && strings.EqualFold(k, name) {
				return v
			}
		}
		return ""
	}
}
