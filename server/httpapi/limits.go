package httpapi

import (
	"bytes"
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

// HeaderReceived returns the fasthttp hook that bounds what is read of a
// body, decided from the header before the body is read: BodyLimit plus
// swallow. A body within that is read and refused by ParamLimit with a
// clear 413; a larger one is refused by fasthttp (413, the connection
// closed), so no request makes the server buffer more.
func HeaderReceived(contextPath string) func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		return fasthttp.RequestConfig{MaxRequestBodySize: BodyLimit(h, contextPath) + swallow}
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
		if len(c.Request().Body()) > BodyLimit(&c.Request().Header, contextPath) {
			return SendSpringError(c, fiber.StatusRequestEntityTooLarge, tooLargeMessage)
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
