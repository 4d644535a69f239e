package grpcwire

import "fmt"

// Writes to the socket: one goroutine at a time writes (the flusher);
// what other goroutines write meanwhile is queued and written by the
// flusher in its next syscall, so the answers of concurrent calls on one
// connection share writes. The reader queues its own frames (window
// updates, SETTINGS and PING acks, refusals) and flushes them only before
// it waits for more input, so a burst of pings and calls read at once is
// answered in one write. Queued bytes are bounded (maxPending): a writer
// waits while more are queued behind a write in progress.

// maxPending is how many bytes may be queued behind a write in progress
// before writers wait.
const maxPending = 256 << 10

// write writes frames to the socket (or queues them behind the write in
// progress).
func (c *Conn) write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.waitRoomLocked()
	return c.writeLocked(b)
}

// writeAndWait writes frames and returns once they are written (GOAWAY
// before the connection closes).
func (c *Conn) writeAndWait(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.waitRoomLocked()
	if err := c.writeLocked(b); err != nil {
		return err
	}
	for c.flushing && !c.wclosed {
		c.wcond.Wait()
	}
	if c.wclosed {
		return errClosed
	}
	return nil
}

// queue queues the reader's frames until it flushes (flushQueued).
func (c *Conn) queue(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.waitRoomLocked()
	return c.queueLocked(b)
}

// flushQueued writes what is queued, unless a write is in progress (its
// goroutine writes it next).
func (c *Conn) flushQueued() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.writeLocked(nil)
}

// waitRoomLocked waits while maxPending bytes are queued behind a write in
// progress (wmu held). Callers wait before they change any state that the
// order of their frames depends on (the HPACK table size update).
func (c *Conn) waitRoomLocked() {
	for c.flushing && c.pending != nil && len(*c.pending) >= maxPending && !c.wclosed {
		c.wcond.Wait()
	}
}

// queueLocked appends b to the queued bytes (wmu held).
func (c *Conn) queueLocked(b []byte) error {
	if c.wclosed {
		return errClosed
	}
	if c.pending == nil {
		c.pending = c.s.getBuf(len(b))
	}
	*c.pending = append(*c.pending, b...)
	return nil
}

// writeLocked writes what is queued and then b (wmu held; released during
// the syscalls), and then what others queue meanwhile; behind a write in
// progress b is queued instead, and the call returns at once. b nil:
// only what is queued.
func (c *Conn) writeLocked(b []byte) error {
	if c.wclosed {
		return errClosed
	}
	if b != nil && (c.flushing || c.pending != nil) {
		_ = c.queueLocked(b)
		b = nil
	}
	if c.flushing || b == nil && c.pending == nil {
		return nil
	}
	c.flushing = true
	return c.flushLocked(b)
}

// flushLocked is the flusher (flushing set, wmu held): it writes b, then
// the queued bytes until none are left.
func (c *Conn) flushLocked(b []byte) error {
	var err error
	if b != nil {
		err = c.writeOut(b)
	}
	for err == nil && c.pending != nil {
		bp := c.pending
		c.pending = nil
		err = c.writeOut(*bp)
		c.s.putBuf(bp)
	}
	c.flushing = false
	c.wcond.Broadcast()
	return err
}

// writeOut writes b to the socket with wmu released; a failed write
// closes the connection and drops what is queued.
func (c *Conn) writeOut(b []byte) error {
	c.wmu.Unlock()
	_, err := c.nc.Write(b)
	c.wmu.Lock()
	if err == nil {
		return nil
	}
	if !c.wclosed {
		c.wclosed = true
		c.nc.Close()
	}
	if c.pending != nil {
		c.s.putBuf(c.pending)
		c.pending = nil
	}
	return fmt.Errorf("grpcwire: write: %w", err)
}

// getBuf is a frame or write buffer of capacity n or more from the
// server's pool; putBuf gives it back (large ones are dropped).
func (s *Server) getBuf(n int) *[]byte {
	bp, _ := s.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, max(n, 4096))
		return &b
	}
	if cap(*bp) < n {
		*bp = make([]byte, 0, n)
	}
	return bp
}

func (s *Server) putBuf(bp *[]byte) {
	if cap(*bp) > 64<<10 {
		return
	}
	*bp = (*bp)[:0]
	s.bufs.Put(bp)
}
