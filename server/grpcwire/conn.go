package grpcwire

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2/hpack"
)

// Windows this server grants: 1 MiB for each stream and for the
// connection (grpc-java's default flow-control window), given back once a
// quarter of it is consumed.
const (
	recvWindow       = 1 << 20
	recvWindowRefill = recvWindow / 4
	readBufferSize   = 1 << 10
	handshakeTimeout = 20 * time.Second
)

// Conn is one client connection.
type Conn struct {
	s  *Server
	nc net.Conn
	// Value is the caller's state of the connection, set in OnConnect.
	Value any

	// the reader goroutine's own state
	br           *bufio.Reader
	dec          *hpack.Decoder
	req          reqHeaders // the fields of the header block being read
	fieldBytes   int
	contStream   uint32 // a header block continues on this stream (CONTINUATION expected)
	contEnd      bool   // ... and its HEADERS frame ended the stream
	lastStreamID uint32
	unackedConn  int
	lastPingAt   time.Time
	pingStrikes  int
	hdr          [frameHeaderLen]byte

	ready        atomic.Bool  // the server's SETTINGS went out: frames may follow
	lastRead     atomic.Int64 // UnixNano of the last frame read
	pingSentAt   atomic.Int64 // a keep-alive ping is out since then (0: none)
	resetStrikes atomic.Bool  // the server sent headers or data since the last client ping

	// mu guards the stream table, the send windows and closed; cond is
	// signalled when a window grows or the connection closes.
	mu           sync.Mutex
	cond         sync.Cond
	streams      map[uint32]*stream
	sendWin      int64
	peerInitWin  int64
	peerMaxFrame int
	closed       bool
	goingAway    bool

	// wmu guards the writes to the socket (write.go) and the header
	// encoding state; wcond is signalled when a flusher ends or the queue
	// is written.
	wmu             sync.Mutex
	wcond           sync.Cond
	pending         *[]byte // queued behind the write in progress, or by the reader
	flushing        bool    // a goroutine is writing to the socket
	peerTableSize   uint32
	needTableUpdate bool
	wclosed         bool
}

func newConn(s *Server, nc net.Conn) *Conn {
	c := &Conn{s: s, nc: nc, streams: map[uint32]*stream{}, sendWin: defaultWindow, peerInitWin: defaultWindow,
		peerMaxFrame: defaultMaxFrame, peerTableSize: defaultHeaderTableSize}
	c.cond.L = &c.mu
	c.wcond.L = &c.wmu
	c.lastRead.Store(time.Now().UnixNano())
	return c
}

// RemoteAddr is the client's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// LocalAddr is the server's address of the connection.
func (c *Conn) LocalAddr() net.Addr { return c.nc.LocalAddr() }

// Close closes the connection; its streams end.
func (c *Conn) Close() error { return c.nc.Close() }

// serve reads the connection until it ends.
func (c *Conn) serve() {
	defer c.teardown()
	if c.s.cfg.OnConnect != nil {
		c.s.cfg.OnConnect(c)
	}
	if err := c.handshake(); err != nil {
		c.s.log.Debug("grpc handshake failed", "remote", c.nc.RemoteAddr(), "err", err)
		return
	}
	err := c.readLoop()
	var ce *connError
	if errors.As(err, &ce) {
		c.s.log.Debug("grpc connection error", "remote", c.nc.RemoteAddr(), "err", err)
		c.goAway(ce.code, ce.msg)
	}
}

// handshake reads the client preface and sends the server's settings and
// connection window.
func (c *Conn) handshake() error {
	c.nc.SetReadDeadline(time.Now().Add(handshakeTimeout))
	c.br = bufio.NewReaderSize(c.nc, readBufferSize)
	var p [len(clientPreface)]byte
	if _, err := io.ReadFull(c.br, p[:]); err != nil {
		return err
	}
	if string(p[:]) != clientPreface {
		return errors.New("grpcwire: bad client preface")
	}
	c.nc.SetReadDeadline(time.Time{})
	c.dec = hpack.NewDecoder(defaultHeaderTableSize, c.onField)
	c.dec.SetMaxStringLength(maxHeaderListBytes)
	b := appendSettings(nil, [2]uint32{settingMaxFrameSize, defaultMaxFrame},
		[2]uint32{settingInitialWindowSize, recvWindow}, [2]uint32{settingMaxHeaderListSize, maxHeaderListBytes})
	b = appendWindowUpdate(b, 0, recvWindow-defaultWindow)
	// queued: they leave with the ack of the client's SETTINGS when those
	// came with the preface (the reader flushes before it waits for input)
	if err := c.queue(b); err != nil {
		return err
	}
	c.ready.Store(true)
	return nil
}

// reqHeaders are the request fields a call needs; the others are read
// and dropped.
type reqHeaders struct {
	method, path, ctype, timeout, encoding string
}

func (c *Conn) onField(f hpack.HeaderField) {
	c.fieldBytes += int(f.Size())
	switch f.Name {
	case ":method":
		c.req.method = f.Value
	case ":path":
		c.req.path = f.Value
	case "content-type":
		c.req.ctype = f.Value
	case "grpc-timeout":
		c.req.timeout = f.Value
	case "grpc-encoding":
		c.req.encoding = f.Value
	}
}

// readLoop reads and handles frames until the connection ends.
func (c *Conn) readLoop() error {
	for {
		if c.br.Buffered() < frameHeaderLen {
			if err := c.flushQueued(); err != nil {
				return err
			}
		}
		if _, err := io.ReadFull(c.br, c.hdr[:]); err != nil {
			return err
		}
		h := parseFrameHeader(c.hdr[:])
		c.lastRead.Store(time.Now().UnixNano())
		if h.length > defaultMaxFrame {
			return &connError{code: errCodeFrameSize, msg: "frame larger than SETTINGS_MAX_FRAME_SIZE"}
		}
		if c.br.Buffered() < int(h.length) {
			if err := c.flushQueued(); err != nil {
				return err
			}
		}
		bp := c.s.getBuf(int(h.length))
		p := (*bp)[:h.length]
		if _, err := io.ReadFull(c.br, p); err != nil {
			c.s.putBuf(bp)
			return err
		}
		err := c.handleFrame(h, p)
		c.s.putBuf(bp)
		if err != nil {
			return err
		}
	}
}

func (c *Conn) handleFrame(h frameHeader, p []byte) error {
	if c.contStream != 0 && (h.typ != frameContinuation || h.streamID != c.contStream) {
		return protocolError("expected CONTINUATION of stream %d", c.contStream)
	}
	switch h.typ {
	case frameData:
		return c.onData(h, p)
	case frameHeaders:
		return c.onHeaders(h, p)
	case frameContinuation:
		if c.contStream == 0 {
			return protocolError("unexpected CONTINUATION")
		}
		return c.headerFragment(h.streamID, p, h.flags&flagEndHeaders != 0, c.contEnd)
	case frameRSTStream:
		if len(p) != 4 || h.streamID == 0 {
			return &connError{code: errCodeFrameSize, msg: "bad RST_STREAM"}
		}
		c.resetStream(h.streamID)
	case frameSettings:
		return c.onSettings(h, p)
	case framePing:
		return c.onPing(h, p)
	case frameGoAway:
		c.mu.Lock()
		c.goingAway = true
		c.mu.Unlock()
	case frameWindowUpdate:
		return c.onWindowUpdate(h, p)
	case framePushPromise:
		return protocolError("PUSH_PROMISE from a client")
	case framePriority:
		// ignored
	}
	return nil
}

func (c *Conn) onHeaders(h frameHeader, p []byte) error {
	if h.streamID == 0 {
		return protocolError("HEADERS on stream 0")
	}
	p, err := stripPadding(h, p)
	if err != nil {
		return err
	}
	if h.flags&flagPriority != 0 {
		if len(p) < 5 {
			return protocolError("HEADERS priority too short")
		}
		p = p[5:]
	}
	c.req, c.fieldBytes = reqHeaders{}, 0
	return c.headerFragment(h.streamID, p, h.flags&flagEndHeaders != 0, h.flags&flagEndStream != 0)
}

// headerFragment decodes a piece of a header block; at its end the block
// opens a stream (or is the client's trailers).
func (c *Conn) headerFragment(id uint32, p []byte, endHeaders, endStream bool) error {
	if _, err := c.dec.Write(p); err != nil {
		return &connError{code: 0x9, msg: "HPACK: " + err.Error()} // COMPRESSION_ERROR
	}
	if !endHeaders {
		c.contStream, c.contEnd = id, endStream
		return nil
	}
	c.contStream, c.contEnd = 0, false
	if err := c.dec.Close(); err != nil {
		return &connError{code: 0x9, msg: "HPACK: " + err.Error()}
	}
	err := c.onHeaderBlock(id, endStream)
	c.req = reqHeaders{}
	return err
}

// onHeaderBlock handles a complete header block.
func (c *Conn) onHeaderBlock(id uint32, endStream bool) error {
	c.mu.Lock()
	st := c.streams[id]
	c.mu.Unlock()
	if st != nil { // the client's trailers
		if endStream {
			c.endRecv(st)
		}
		return nil
	}
	if id%2 == 0 || id <= c.lastStreamID {
		return protocolError("stream id %d not a new client stream", id)
	}
	c.mu.Lock()
	c.lastStreamID = id
	c.mu.Unlock()
	if c.fieldBytes > maxHeaderListBytes {
		return c.writeEarly(id, endStream, 200, &Status{Code: Internal, Msg: "header list size to recv exceeds the limit"})
	}
	method, path, ctype, timeout, encoding := c.req.method, c.req.path, c.req.ctype, c.req.timeout, c.req.encoding
	if !isGRPCContentType(ctype) {
		return c.writeEarly(id, endStream, 415, &Status{Code: InvalidArgument, Msg: "invalid gRPC request content-type \"" + ctype + "\""})
	}
	if method != "POST" {
		return c.writeEarly(id, endStream, 405, &Status{Code: Internal, Msg: "invalid gRPC request method \"" + method + "\""})
	}
	if encoding != "" && encoding != "identity" {
		return c.writeEarly(id, endStream, 200, &Status{Code: Unimplemented, Msg: "grpc: Decompressor is not installed for grpc-encoding \"" + encoding + "\""})
	}
	kind := c.s.cfg.Methods[path]
	if kind == 0 {
		return c.writeEarly(id, endStream, 200, &Status{Code: Unimplemented, Msg: unknownMethod(path, c.s.cfg.Methods)})
	}
	c.mu.Lock()
	if c.closed || c.goingAway {
		c.mu.Unlock()
		return c.queue(appendRSTStream(nil, id, errCodeRefusedStream))
	}
	st = &stream{id: id, method: path, kind: kind, sendWin: c.peerInitWin, ctype: ctype}
	c.streams[id] = st
	c.mu.Unlock()
	if kind == UnaryMethod {
		if d, ok := parseTimeout(timeout); ok && timeout != "" {
			st.deadline = time.Now().Add(d)
		}
	} else {
		rcv, err := c.s.cfg.Handler.OpenStream(&Stream{c: c, st: st})
		if err != nil {
			c.finish(st, statusOf(err))
			return nil
		}
		st.rcv = rcv
	}
	if endStream {
		c.endRecv(st)
	}
	return nil
}

func isGRPCContentType(ct string) bool {
	if !strings.HasPrefix(ct, "application/grpc") {
		return false
	}
	rest := ct[len("application/grpc"):]
	return rest == "" || rest[0] == '+' || rest[0] == ';'
}

// unknownMethod is grpc-go's message for a path it does not serve.
func unknownMethod(path string, methods map[string]Kind) string {
	if path != "" && path[0] == '/' {
		path = path[1:]
	}
	pos := strings.LastIndex(path, "/")
	if pos == -1 {
		return "malformed method name: \"/" + path + "\""
	}
	service, method := path[:pos], path[pos+1:]
	for m := range methods {
		if strings.HasPrefix(m, "/"+service+"/") {
			return "unknown method " + method + " for service " + service
		}
	}
	return "unknown service " + service
}

func (c *Conn) onData(h frameHeader, p []byte) error {
	if h.streamID == 0 {
		return protocolError("DATA on stream 0")
	}
	if h.streamID > c.lastStreamID {
		return protocolError("DATA on idle stream %d", h.streamID)
	}
	// the connection window is given back for every DATA frame, whatever
	// becomes of its stream
	c.unackedConn += int(h.length)
	if c.unackedConn >= recvWindowRefill {
		if err := c.queue(appendWindowUpdate(nil, 0, uint32(c.unackedConn))); err != nil {
			return err
		}
		c.unackedConn = 0
	}
	c.mu.Lock()
	st := c.streams[h.streamID]
	c.mu.Unlock()
	if st == nil || st.recvEnded || st.failed {
		return nil // a stream that ended (reset, refused, failed or answered)
	}
	p, err := stripPadding(h, p)
	if err != nil {
		return err
	}
	if err := c.onMessages(st, p); err != nil {
		return err
	}
	st.unacked += int(h.length)
	if h.flags&flagEndStream != 0 {
		c.endRecv(st)
		return nil
	}
	if st.unacked >= recvWindowRefill {
		n := st.unacked
		st.unacked = 0
		return c.queue(appendWindowUpdate(nil, st.id, uint32(n)))
	}
	return nil
}

// onMessages cuts a stream's bytes into gRPC messages (a flag byte, a
// 4-byte length, the message).
func (c *Conn) onMessages(st *stream, p []byte) error {
	max := c.s.cfg.MaxRecvMsgSize
	for len(p) > 0 {
		if st.need == 0 { // reading a message header
			k := copy(st.hdr[st.hdrN:], p)
			st.hdrN, p = st.hdrN+k, p[k:]
			if st.hdrN < grpcMsgHeaderLen {
				return nil
			}
			st.hdrN = 0
			h := &st.hdr
			n := int(uint32(h[1])<<24 | uint32(h[2])<<16 | uint32(h[3])<<8 | uint32(h[4]))
			if h[0] != 0 {
				return c.failStream(st, &Status{Code: Internal, Msg: "grpc: compressed flag set with identity or empty encoding"})
			}
			if n > max {
				return c.failStream(st, &Status{Code: ResourceExhausted,
					Msg: "grpc: received message larger than max (" + strconv.Itoa(n) + " vs. " + strconv.Itoa(max) + ")"})
			}
			st.rbuf, st.need = nil, n+1 // need-1 bytes of body to come
			if n == 0 {
				st.need = 0
				if err := c.message(st, []byte{}); err != nil {
					return err
				}
			}
			continue
		}
		k := min(st.need-1-len(st.rbuf), len(p))
		if st.rbuf == nil && k == st.need-1 { // the whole message in this frame
			msg := make([]byte, k)
			copy(msg, p[:k])
			p, st.need = p[k:], 0
			if err := c.message(st, msg); err != nil {
				return err
			}
			continue
		}
		if st.rbuf == nil {
			st.rbuf = make([]byte, 0, st.need-1)
		}
		st.rbuf, p = append(st.rbuf, p[:k]...), p[k:]
		if len(st.rbuf) < st.need-1 {
			return nil
		}
		msg := st.rbuf
		st.rbuf, st.need = nil, 0
		if err := c.message(st, msg); err != nil {
			return err
		}
	}
	return nil
}

// message hands a complete message to its call.
func (c *Conn) message(st *stream, msg []byte) error {
	if st.kind == StreamMethod {
		c.enqueue(st, msg, false)
		return nil
	}
	if st.req != nil {
		return c.failStream(st, &Status{Code: Internal, Msg: "grpc: client streaming protocol violation: get <nil>, want <EOF>"})
	}
	st.req = msg
	return nil
}

// endRecv is the client's END_STREAM: a unary call runs, a stream's
// receiver is told after its last message.
func (c *Conn) endRecv(st *stream) {
	if st.recvEnded {
		return
	}
	c.mu.Lock() // endStream reads it from a worker
	st.recvEnded = true
	c.mu.Unlock()
	st.rbuf = nil
	if st.kind == StreamMethod {
		c.enqueue(st, nil, true)
		return
	}
	if st.failed {
		return
	}
	req := st.req
	st.req = nil
	if req == nil {
		c.finish(st, &Status{Code: Internal, Msg: "grpc: server received no request message"})
		return
	}
	if c.s.cfg.Inline != nil && c.s.cfg.Inline(c, st.method, req) {
		// it ends before the reader reads on: nothing cancels it, and its
		// deadline is checked when it ends (no timer)
		st.ctx = context.Background()
		c.runUnary(st, req, true)
		return
	}
	if st.deadline.IsZero() {
		st.ctx, st.cancel = context.WithCancel(context.Background())
	} else {
		st.ctx, st.cancel = context.WithDeadline(context.Background(), st.deadline)
	}
	c.s.run(func() { c.runUnary(st, req, false) })
}

// failStream ends a call with a status (a unary call before its handler
// runs; a stream after its receiver is told). The answer is written on a
// worker: a Send of the stream may hold its lock while it waits for a
// window that only this reader can open.
func (c *Conn) failStream(st *stream, status *Status) error {
	st.failed, st.req, st.rbuf = true, nil, nil
	if st.kind == StreamMethod {
		st.endStatus = status
		c.enqueue(st, nil, true)
		return nil
	}
	c.s.run(func() { c.finish(st, status) })
	return nil
}

func (c *Conn) resetStream(id uint32) {
	c.mu.Lock()
	st := c.streams[id]
	if st != nil {
		delete(c.streams, id)
		st.reset = true
		c.cond.Broadcast()
	}
	c.mu.Unlock()
	if st == nil {
		return
	}
	if st.cancel != nil {
		st.cancel()
	}
	if st.kind == StreamMethod && st.rcv != nil {
		c.enqueue(st, nil, true)
	}
}

func (c *Conn) onSettings(h frameHeader, p []byte) error {
	if h.streamID != 0 {
		return protocolError("SETTINGS on a stream")
	}
	if h.flags&flagAck != 0 {
		return nil
	}
	if len(p)%6 != 0 {
		return &connError{code: errCodeFrameSize, msg: "bad SETTINGS length"}
	}
	for ; len(p) > 0; p = p[6:] {
		id, v := uint16(p[0])<<8|uint16(p[1]), uint32(p[2])<<24|uint32(p[3])<<16|uint32(p[4])<<8|uint32(p[5])
		switch id {
		case settingHeaderTableSize:
			c.wmu.Lock()
			if v < c.peerTableSize || v < defaultHeaderTableSize {
				c.needTableUpdate = true
			}
			c.peerTableSize = v
			c.wmu.Unlock()
		case settingEnablePush:
			if v > 1 {
				return protocolError("bad SETTINGS_ENABLE_PUSH")
			}
		case settingInitialWindowSize:
			if v > maxWindow {
				return &connError{code: errCodeFlowControl, msg: "SETTINGS_INITIAL_WINDOW_SIZE too large"}
			}
			c.mu.Lock()
			delta := int64(v) - c.peerInitWin
			c.peerInitWin = int64(v)
			for _, st := range c.streams {
				st.sendWin += delta
			}
			c.cond.Broadcast()
			c.mu.Unlock()
		case settingMaxFrameSize:
			if v < defaultMaxFrame || v > maxAllowedFrame {
				return protocolError("bad SETTINGS_MAX_FRAME_SIZE %d", v)
			}
			c.mu.Lock()
			c.peerMaxFrame = int(v)
			c.mu.Unlock()
		}
	}
	return c.queue(appendFrameHeader(nil, 0, frameSettings, flagAck, 0))
}

func (c *Conn) onPing(h frameHeader, p []byte) error {
	if len(p) != 8 || h.streamID != 0 {
		return &connError{code: errCodeFrameSize, msg: "bad PING"}
	}
	if h.flags&flagAck != 0 {
		return nil // the keep-alive check sees the read
	}
	var data [8]byte
	copy(data[:], p)
	if err := c.queue(appendPing(nil, true, data)); err != nil {
		return err
	}
	now := time.Now()
	last := c.lastPingAt
	c.lastPingAt = now
	if c.resetStrikes.Swap(false) {
		c.pingStrikes = 0
		return nil
	}
	if !last.IsZero() && last.Add(c.s.cfg.PermitKeepAliveTime).After(now) {
		c.pingStrikes++
	}
	if c.pingStrikes > maxPingStrikes {
		return &connError{code: errCodeEnhanceYourCalm, msg: "too_many_pings"}
	}
	return nil
}

func (c *Conn) onWindowUpdate(h frameHeader, p []byte) error {
	if len(p) != 4 {
		return &connError{code: errCodeFrameSize, msg: "bad WINDOW_UPDATE"}
	}
	incr := int64(uint32(p[0])<<24|uint32(p[1])<<16|uint32(p[2])<<8|uint32(p[3])) & maxWindow
	c.mu.Lock()
	defer c.mu.Unlock()
	if h.streamID == 0 {
		if incr == 0 {
			return protocolError("WINDOW_UPDATE of 0")
		}
		c.sendWin += incr
		if c.sendWin > maxWindow {
			return &connError{code: errCodeFlowControl, msg: "connection window overflow"}
		}
		c.cond.Broadcast()
		return nil
	}
	if st := c.streams[h.streamID]; st != nil && incr > 0 {
		st.sendWin += incr
		c.cond.Broadcast()
	}
	return nil
}

// checkAlive is the keep-alive check at now (UnixNano): a connection that
// read nothing since its ping was sent for KeepAliveTimeout is closed; one
// silent for KeepAliveTime is pinged.
func (c *Conn) checkAlive(now int64) {
	if !c.ready.Load() { // the handshake's own deadline covers it
		return
	}
	last := c.lastRead.Load()
	if sent := c.pingSentAt.Load(); sent != 0 {
		if last > sent {
			c.pingSentAt.Store(0)
			return
		}
		if now-sent >= int64(c.s.cfg.KeepAliveTimeout) {
			c.s.log.Debug("grpc keep-alive ping not answered; closing", "remote", c.nc.RemoteAddr())
			c.Close()
		}
		return
	}
	if now-last >= int64(c.s.cfg.KeepAliveTime) {
		c.pingSentAt.Store(now)
		go c.write(appendPing(nil, false, [8]byte{'k', 'e', 'e', 'p', 'a', 'l', 'i', 'v'}))
	}
}

// goAway tells the client no new stream is taken.
func (c *Conn) goAway(code uint32, debug string) {
	if !c.ready.Load() {
		return
	}
	c.mu.Lock()
	c.goingAway = true
	last := c.lastStreamID
	c.mu.Unlock()
	_ = c.writeAndWait(appendGoAway(nil, last, code, debug))
}

// teardown ends every stream of a closed connection.
func (c *Conn) teardown() {
	c.nc.Close()
	c.mu.Lock()
	c.closed = true
	streams := c.streams
	c.streams = map[uint32]*stream{}
	for _, st := range streams {
		st.reset = true
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	for _, st := range streams {
		if st.cancel != nil {
			st.cancel()
		}
		if st.kind == StreamMethod && st.rcv != nil {
			c.enqueue(st, nil, true)
		}
	}
	c.s.removeConn(c)
	if c.s.cfg.OnClose != nil {
		c.s.cfg.OnClose(c)
	}
}
