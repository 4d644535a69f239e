package grpcwire

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"
)

// stream is one call.
type stream struct {
	id     uint32
	method string
	kind   Kind
	ctype  string

	// the reader goroutine's: the message header and the message being
	// read, and the request of a unary call
	hdr       [grpcMsgHeaderLen]byte
	hdrN      int // bytes of hdr read
	rbuf      []byte
	need      int // 0: reading a message header; else 1 + the message's length
	req       []byte
	unacked   int
	recvEnded bool // written by the reader under Conn.mu
	failed    bool

	// unary calls: the deadline (grpc-timeout; zero: none) and, once the
	// call runs, its context (cancel is nil for an inline call)
	deadline time.Time
	ctx      context.Context
	cancel   context.CancelFunc

	sendWin int64 // under Conn.mu
	reset   bool  // under Conn.mu: the client reset it or the connection ended

	sendMu      sync.Mutex // one message at a time (a message may take several writes)
	headersSent bool       // under Conn.wmu
	done        bool       // under Conn.wmu: the server ended it

	// a stream's receiver runs on a worker, one message at a time
	qmu     sync.Mutex
	queue   [][]byte
	closing bool
	running bool
	rcv     StreamReceiver
	// endStatus ends a stream the server failed (set before its end is
	// queued); nil: OK
	endStatus *Status
}

// Stream is a call of a streaming method.
type Stream struct {
	c  *Conn
	st *stream
}

// Conn is the stream's connection.
func (s *Stream) Conn() *Conn { return s.c }

// Send writes one message to the client; it waits while the client's
// flow-control windows are full. Sends may come from any goroutine.
func (s *Stream) Send(msg []byte) error {
	s.st.sendMu.Lock()
	defer s.st.sendMu.Unlock()
	return s.c.send(s.st, msg, true, nil, false)
}

// Finish ends the stream with err's status (nil: OK) after the message
// being handled: the receiver's Closed follows.
func (s *Stream) Finish(err error) {
	if err != nil {
		st := statusOf(err)
		s.st.qmu.Lock()
		if s.st.endStatus == nil && !s.st.closing {
			s.st.endStatus = st
		}
		s.st.qmu.Unlock()
	}
	s.c.enqueue(s.st, nil, true)
}

// enqueue gives a stream's receiver a message (or, with end, its end).
func (c *Conn) enqueue(st *stream, msg []byte, end bool) {
	st.qmu.Lock()
	if st.closing {
		st.qmu.Unlock()
		return
	}
	if end {
		st.closing = true
	} else {
		st.queue = append(st.queue, msg)
	}
	start := !st.running
	st.running = true
	st.qmu.Unlock()
	if start {
		c.s.run(func() { c.drain(st) })
	}
}

// drain runs a stream's receiver over its queue.
func (c *Conn) drain(st *stream) {
	for {
		st.qmu.Lock()
		if len(st.queue) > 0 {
			m := st.queue[0]
			st.queue[0] = nil
			st.queue = st.queue[1:]
			if len(st.queue) == 0 {
				st.queue = nil
			}
			st.qmu.Unlock()
			c.safely(st, func() { st.rcv.Message(m) })
			continue
		}
		if st.closing {
			end := st.endStatus
			st.qmu.Unlock()
			c.safely(st, st.rcv.Closed)
			if end == nil {
				end = &Status{Code: OK}
			}
			c.finish(st, end)
			return
		}
		st.running = false
		st.qmu.Unlock()
		return
	}
}

// safely runs a receiver's callback; a panic closes the connection (one
// client, not the process).
func (c *Conn) safely(st *stream, f func()) {
	defer func() {
		if e := recover(); e != nil {
			c.s.log.Error("grpc stream receiver panic", "method", st.method, "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
			c.Close()
		}
	}()
	f()
}

// runUnary runs a unary call's handler and answers it. An inline call
// runs on the reader: its answer is queued with the reader's other frames,
// or, when the client's windows cannot take it now, sent by a worker.
func (c *Conn) runUnary(st *stream, req []byte, inline bool) {
	var resp []byte
	var err error
	func() {
		defer func() {
			if e := recover(); e != nil {
				c.s.log.Error("grpc handler panic", "method", st.method, "panic", fmt.Sprint(e), "stack", string(debug.Stack()))
				err = &Status{Code: Unknown, Msg: fmt.Sprint(e)}
			}
		}()
		resp, err = c.s.cfg.Handler.Unary(st.ctx, c, st.method, req)
	}()
	if err == nil && (st.ctx.Err() == context.DeadlineExceeded || inline && !st.deadline.IsZero() && !time.Now().Before(st.deadline)) {
		err = &Status{Code: DeadlineExceeded, Msg: "context deadline exceeded"}
	}
	if st.cancel != nil {
		st.cancel()
	}
	if err != nil {
		c.finish(st, statusOf(err))
		return
	}
	st.sendMu.Lock()
	err = c.send(st, resp, true, &Status{Code: OK}, inline)
	st.sendMu.Unlock()
	if err == errWouldWait {
		c.s.run(func() {
			st.sendMu.Lock()
			_ = c.send(st, resp, true, &Status{Code: OK}, false)
			st.sendMu.Unlock()
		})
	}
}

// finish ends a call with a status and no (further) message.
func (c *Conn) finish(st *stream, status *Status) {
	st.sendMu.Lock()
	defer st.sendMu.Unlock()
	_ = c.send(st, nil, false, status, false)
}

// errWouldWait: send with queued set found the client's windows too small
// for the whole message, and sent nothing.
var errWouldWait = errors.New("grpcwire: the client's windows are full")

// send writes a message (with hasMsg) and, with trailers, the call's end,
// preceded by the response headers if they were not sent yet. The
// message is cut to the client's windows; sendMu is held. With queued (the
// reader answering an inline call) the frames are queued for the reader's
// flush, and a message the windows cannot take whole at once is not sent
// (errWouldWait): only the reader reads their updates, so it must not wait.
func (c *Conn) send(st *stream, msg []byte, hasMsg bool, trailers *Status, queued bool) error {
	total := 0
	if hasMsg {
		total = grpcMsgHeaderLen + len(msg)
	}
	prefix := [grpcMsgHeaderLen]byte{0, byte(len(msg) >> 24), byte(len(msg) >> 16), byte(len(msg) >> 8), byte(len(msg))}
	bp := c.s.getBuf(0)
	defer c.s.putBuf(bp)
	for sent := 0; ; {
		n, maxFrame, err := c.reserve(st, total-sent, queued)
		if err != nil {
			return err
		}
		last := sent+n == total
		b := (*bp)[:0]
		c.wmu.Lock()
		c.waitRoomLocked()
		if st.done || c.wclosed {
			c.wmu.Unlock()
			return errClosed
		}
		if !st.headersSent && (n > 0 || trailers == nil) {
			b = c.appendHeaderBlock(b, st.id, appendResponseHeaders(nil, "application/grpc"), false, maxFrame)
			st.headersSent = true
		}
		if n > 0 {
			b = appendMessageData(b, st.id, prefix[:], msg, sent, sent+n, maxFrame)
			c.resetStrikes.Store(true)
		}
		if last && trailers != nil {
			var block []byte
			if st.headersSent {
				block = appendTrailers(nil, trailers)
			} else {
				block = appendEarlyAbort(nil, 200, trailers)
			}
			b = c.appendHeaderBlock(b, st.id, block, true, maxFrame)
			st.headersSent, st.done = true, true
		}
		*bp = b
		if queued {
			err = c.queueLocked(b)
		} else {
			err = c.writeLocked(b)
		}
		c.wmu.Unlock()
		if err != nil {
			return err
		}
		sent += n
		if last {
			break
		}
	}
	if trailers != nil {
		c.endStream(st)
	}
	return nil
}

// endStream forgets a call the server ended; a client still sending on it
// is told to stop (RST_STREAM NO_ERROR, as grpc-go does).
func (c *Conn) endStream(st *stream) {
	c.mu.Lock()
	if c.streams[st.id] == st {
		delete(c.streams, st.id)
	}
	rst := !st.recvEnded && !st.reset
	c.mu.Unlock()
	if rst {
		_ = c.write(appendRSTStream(nil, st.id, errCodeNo))
	}
}

// reserve takes up to want bytes of the connection's and the stream's
// send windows, waiting until some are free (all: want whole or
// errWouldWait, without waiting); it returns the client's largest frame
// too.
func (c *Conn) reserve(st *stream, want int, all bool) (int, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.closed {
			return 0, 0, errClosed
		}
		if st.reset {
			return 0, 0, fmt.Errorf("grpcwire: stream %d was reset", st.id)
		}
		if want == 0 {
			return 0, c.peerMaxFrame, nil
		}
		if avail := min(c.sendWin, st.sendWin); all && avail < int64(want) {
			return 0, 0, errWouldWait
		} else if avail > 0 {
			n := int(min(int64(want), avail))
			c.sendWin -= int64(n)
			st.sendWin -= int64(n)
			return n, c.peerMaxFrame, nil
		}
		c.cond.Wait()
	}
}

// appendHeaderBlock appends a header block, with a table size update
// first when the client lowered its table (wmu held).
func (c *Conn) appendHeaderBlock(b []byte, id uint32, block []byte, end bool, maxFrame int) []byte {
	if c.needTableUpdate {
		block = append(appendTableSizeUpdate(nil, min(c.peerTableSize, defaultHeaderTableSize)), block...)
		c.needTableUpdate = false
	}
	return appendHeaders(b, id, block, maxFrame, end)
}

// appendMessageData appends DATA frames for bytes [from, to) of prefix
// followed by msg.
func appendMessageData(b []byte, id uint32, prefix, msg []byte, from, to, maxFrame int) []byte {
	for from < to {
		n := min(to-from, maxFrame)
		b = appendFrameHeader(b, n, frameData, 0, id)
		end := from + n
		if from < len(prefix) {
			b = append(b, prefix[from:min(end, len(prefix))]...)
		}
		if end > len(prefix) {
			b = append(b, msg[max(from-len(prefix), 0):end-len(prefix)]...)
		}
		from = end
	}
	return b
}

// writeEarly answers a stream that is refused before it starts with a
// trailers-only response (and RST_STREAM when the client is still sending:
// clientDone is false). The reader calls it: the answer is queued until
// the reader has handled what it has read (queue).
func (c *Conn) writeEarly(id uint32, clientDone bool, httpStatus int, st *Status) error {
	c.mu.Lock()
	maxFrame := c.peerMaxFrame
	c.mu.Unlock()
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.waitRoomLocked()
	b := c.appendHeaderBlock(nil, id, appendEarlyAbort(nil, httpStatus, st), true, maxFrame)
	if !clientDone {
		b = appendRSTStream(b, id, errCodeNo)
	}
	return c.queueLocked(b)
}
