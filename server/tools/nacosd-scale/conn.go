package main

import (
	"bufio"
	"fmt"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// hconn is one keep-alive HTTP/1.1 connection carrying one request at a
// time: pre-built request bytes out, fasthttp's response parser in. It costs
// far less per request than net/http, so the server, not the client, is
// what a figure measures. Not pipelined: nacosd's fasthttp (v1.51 with
// ReduceMemoryUsage) loses the answers to pipelined requests.
type hconn struct {
	addr string
	conn net.Conn // nil after the server asked to close
	br   *bufio.Reader
	resp fasthttp.Response
}

func dial(addr string) (*hconn, error) {
	h := &hconn{addr: addr}
	return h, h.redial()
}

func (h *hconn) redial() error {
	c, err := net.DialTimeout("tcp", h.addr, 10*time.Second)
	if err != nil {
		return fmt.Errorf("dial %s: %w", h.addr, err)
	}
	h.conn, h.br = c, bufio.NewReaderSize(c, 16<<10)
	return nil
}

// do sends req and reads its answer into h.resp. It reconnects when the
// server closed the connection (Tomcat closes a keep-alive connection
// after 100 requests, answering the last with "Connection: close"; both
// servers close one idle for 20 s) and then sends req once more: every
// request sent here may be repeated.
func (h *hconn) do(req []byte) (*fasthttp.Response, error) {
	r, err := h.try(req)
	if err != nil {
		h.close()
		h.conn = nil
		r, err = h.try(req)
	}
	return r, err
}

func (h *hconn) try(req []byte) (*fasthttp.Response, error) {
	if h.conn == nil {
		if err := h.redial(); err != nil {
			return nil, err
		}
	}
	if err := h.write(req); err != nil {
		return nil, err
	}
	r, err := h.read()
	if err == nil && r.ConnectionClose() {
		h.close()
		h.conn = nil
	}
	return r, err
}

func (h *hconn) write(req []byte) error {
	if _, err := h.conn.Write(req); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

func (h *hconn) read() (*fasthttp.Response, error) {
	h.resp.Reset()
	if err := h.resp.Read(h.br); err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	return &h.resp, nil
}

func (h *hconn) close() {
	if h.conn != nil {
		_ = h.conn.Close()
	}
}

// request builds raw request bytes; body may be empty.
func request(method, uri, contentType string, extra map[string]string, body []byte) []byte {
	b := fmt.Appendf(nil, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Nacos-Java-Client:v1.4.8\r\n", method, uri)
	if contentType != "" {
		b = fmt.Appendf(b, "Content-Type: %s\r\n", contentType)
	}
	for k, v := range extra {
		b = fmt.Appendf(b, "%s: %s\r\n", k, v)
	}
	b = fmt.Appendf(b, "Content-Length: %d\r\n\r\n", len(body))
	return append(b, body...)
}

// doAll sends reqs over conns parallel connections and returns the number
// of non-200 answers with the first of them.
func doAll(addr string, reqs [][]byte, conns int) (bad int, first string, err error) {
	type res struct {
		bad   int
		first string
		err   error
	}
	ch := make(chan res, conns)
	for k := range conns {
		go func() {
			var r res
			h, err := dial(addr)
			if err != nil {
				ch <- res{err: err}
				return
			}
			defer h.close()
			for i := k; i < len(reqs); i += conns {
				resp, err := h.do(reqs[i])
				if err != nil {
					r.err = err
					break
				}
				if resp.StatusCode() != 200 {
					r.bad++
					if r.first == "" {
						r.first = fmt.Sprintf("%d %s", resp.StatusCode(), resp.Body())
					}
				}
			}
			ch <- r
		}()
	}
	for range conns {
		r := <-ch
		bad += r.bad
		if first == "" {
			first = r.first
		}
		if err == nil {
			err = r.err
		}
	}
	return bad, first, err
}
