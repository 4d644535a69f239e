package httpapi

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/compat"
)

// Request limits of Java Nacos 1.4.8 as measured on the referee
// (docs/security.md, "Limits"): Tomcat and Spring Boot defaults.
const (
	// FormBodyLimit is Tomcat's maxPostSize (Spring Boot
	// server.tomcat.max-http-form-post-size, 2 MB): Java drops every
	// parameter of a larger form body; nacosd answers 413.
	FormBodyLimit = 2 << 20
	// MultipartBodyLimit is spring.servlet.multipart.max-request-size.
	MultipartBodyLimit = 10 << 20
	// MultipartFileLimit is spring.servlet.multipart.max-file-size (config
	// import's file).
	MultipartFileLimit = 1 << 20
	// NodeBodyLimit bounds the bodies of node-to-node calls (Distro datums
	// and checksum maps of a large registry; Java has no bound there).
	NodeBodyLimit = 32 << 20
	// MaxParams is Tomcat's maxParameterCount (query and form together):
	// Java ignores the parameters past it; nacosd answers 400.
	MaxParams = 10000
)

// nodePaths take NodeBodyLimit (below the context path).
var nodePaths = []string{"/v1/ns/distro/", "/v1/core/cluster/", "/v1/ns/service/status", "/v1/ns/instance/statuses",
	"/v1/cs/communication/", "/v1/ns/raft/"}

// swallow is what is read past a limit so the refusal still reaches the
// client (Tomcat's maxSwallowSize, 2 MB): closing a connection with unread
// input resets it, and the client sees the reset instead of the answer.
const swallow = 2 << 20

// BodyLimit is the largest body accepted for a request with this header:
// a form 2 MiB, a multipart upload 10 MiB, a node-to-node call 32 MiB,
// anything else 2 MiB.
func BodyLimit(h *fasthttp.RequestHeader, contextPath string) int {
	ct := h.ContentType()
	switch {
	case bytes.HasPrefix(ct, []byte("multipart/")):
		return MultipartBodyLimit
	case bytes.HasPrefix(ct, []byte("application/x-www-form-urlencoded")):
		return FormBodyLimit
	}
	p := utils.UnsafeString(h.RequestURI()) // only looked at
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if contextPath != "/" {
		p = strings.TrimPrefix(p, contextPath)
	}
	for _, n := range nodePaths {
		if strings.HasPrefix(p, n) {
			return NodeBodyLimit
		}
	}
	return FormBodyLimit
}

// unauthNodeBodyLimit bounds the body of a node-to-node call that does not
// carry the server identity while auth is on: it is refused (403) whatever
// it carries, so no more is read than a forged member report needs (fasthttp
// answers 413 and closes, unread, beyond it).
const unauthNodeBodyLimit = 64 << 10

// HeaderReceived returns the fasthttp hook that bounds what is read of a
// body, decided from the header before the body is read: BodyLimit plus
// swallow. A body within that is read and refused by ParamLimit with a
// clear 413; a larger one is refused by fasthttp (413, the connection
// closed), so no request makes the server buffer more. node reports
// whether a request may send a node-to-node body (auth off, or the server
// identity in its header; nil: always): a node-to-node path called without
// it gets unauthNodeBodyLimit, so a 30 MB body is not read before the
// identity check refuses it.
func HeaderReceived(contextPath string, node func(h *fasthttp.RequestHeader) bool) func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		limit := BodyLimit(h, contextPath)
		if limit == NodeBodyLimit && node != nil && !node(h) {
			return fasthttp.RequestConfig{MaxRequestBodySize: unauthNodeBodyLimit}
		}
		return fasthttp.RequestConfig{MaxRequestBodySize: limit + swallow}
	}
}

// tooLargeMessage is the 413 answer of a body over BodyLimit.
var tooLargeMessage = "request body too large: at most " + strconv.Itoa(FormBodyLimit) + " bytes for a form (Tomcat's maxPostSize; " +
	"Java ignores the parameters of a larger one), " + strconv.Itoa(MultipartBodyLimit) + " for a multipart upload, " +
	strconv.Itoa(NodeBodyLimit) + " for a node-to-node call, " + strconv.Itoa(FormBodyLimit) + " otherwise"

// ParamLimit refuses, before anything parses them, a body over BodyLimit
// (413) and a request with more than MaxParams parameters (query and form
// together; 400): Java's Tomcat drops every parameter of a form over 2 MB
// and silently ignores those past the 10000th, which can lose the very
// parameters a write needs.
func ParamLimit(contextPath string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		limit := BodyLimit(&c.Request().Header, contextPath)
		if len(c.Request().Body()) > limit {
			return SendSpringError(c, fiber.StatusRequestEntityTooLarge, tooLargeMessage)
		}
		if err := decodeBody(&c.Request().Header, c.Request(), limit); err != nil {
			return sendDecodeError(c, err)
		}
		n := 0
		if q := c.Request().URI().QueryString(); len(q) > 0 {
			n += bytes.Count(q, []byte{'&'}) + 1
		}
		if !c.Request().Header.IsGet() && bytes.HasPrefix(c.Request().Header.ContentType(), []byte("application/x-www-form-urlencoded")) {
			if b := c.Request().Body(); len(b) > 0 {
				n += bytes.Count(b, []byte{'&'}) + 1
			}
		}
		if n > MaxParams {
			return SendSpringError(c, fiber.StatusBadRequest, "more than "+strconv.Itoa(MaxParams)+
				" request parameters ("+strconv.Itoa(n)+"; Tomcat's maxParameterCount, past which Java ignores them)")
		}
		return c.Next()
	}
}

// importTooLarge is Spring's answer to an import file over
// MultipartFileLimit (500 "caused: ...;" per cause), as the referee gives it.
func importTooLarge() error {
	e := "The field file exceeds its maximum permitted size of " + strconv.Itoa(MultipartFileLimit) + " bytes."
	fe := "org.apache.tomcat.util.http.fileupload.impl.FileSizeLimitExceededException: " + e
	return compat.ServerError("Maximum upload size exceeded; nested exception is java.lang.IllegalStateException: "+fe, fe, e)
}

// Errors of decodeBody.
var (
	errBodyTooLarge = errors.New("decoded body over the limit")
	errEncoding     = errors.New("unsupported Content-Encoding")
	errCorrupt      = errors.New("corrupt compressed body")
)

// decodeBody undoes the request's Content-Encoding in place, so that no
// later reader (fiber's c.Body, which would inflate every listed coding
// without bound; fasthttp's multipart reader, which gunzips all of it; form
// parsing) sees an encoded body: at most one coding, gzip or deflate
// ("identity" ignored), inflated as a stream into at most limit bytes — a
// body growing past limit is refused as one sent that large (a 600-byte
// "gzip, gzip" body can hold 16 GB). Tomcat decodes no request body, and no
// Nacos client or node compresses one; Java nodes do send "Content-Encoding:
// gzip" over plain bodies, so a body claimed as gzip without gzip's magic
// bytes is taken as it is. The header is removed once the body is plain.
func decodeBody(h *fasthttp.RequestHeader, req *fasthttp.Request, limit int) error {
	ce := h.Peek(fiber.HeaderContentEncoding)
	if len(ce) == 0 {
		return nil
	}
	var coding string
	for _, f := range strings.Split(string(ce), ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" || f == "identity" {
			continue
		}
		if coding != "" {
			return errEncoding // more than one coding: no client sends that
		}
		coding = f
	}
	body := req.Body()
	var zr io.Reader
	switch coding {
	case "":
	case "gzip", "x-gzip":
		if len(body) < 2 || body[0] != 0x1f || body[1] != 0x8b {
			break // a Java node's plain body under "Content-Encoding: gzip"
		}
		r, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return errCorrupt
		}
		zr = r
	case "deflate":
		r, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			return errCorrupt
		}
		zr = r
	default:
		return errEncoding
	}
	if zr != nil {
		out, err := readAtMost(zr, limit)
		if err != nil {
			return err
		}
		req.SetBodyRaw(out)
	}
	h.Del(fiber.HeaderContentEncoding)
	return nil
}

// readAtMost reads r to its end, streaming, into a buffer that never grows
// past limit+1 bytes; errBodyTooLarge when r has more than limit.
func readAtMost(r io.Reader, limit int) ([]byte, error) {
	buf := make([]byte, 0, min(limit+1, 64<<10))
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return nil, errBodyTooLarge
			}
			grown := make([]byte, len(buf), min(2*cap(buf), limit+1))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case len(buf) > limit:
			return nil, errBodyTooLarge
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return nil, errCorrupt
		}
	}
}

func sendDecodeError(c *fiber.Ctx, err error) error {
	switch {
	case errors.Is(err, errBodyTooLarge):
		return SendSpringError(c, fiber.StatusRequestEntityTooLarge, tooLargeMessage+" (after decoding its Content-Encoding)")
	case errors.Is(err, errEncoding):
		return SendSpringError(c, fiber.StatusUnsupportedMediaType, "Content-Encoding '"+string(c.Request().Header.Peek(fiber.HeaderContentEncoding))+
			"' not supported: at most one of gzip, deflate")
	}
	return SendSpringError(c, fiber.StatusBadRequest, "malformed "+string(c.Request().Header.Peek(fiber.HeaderContentEncoding))+" request body")
}
