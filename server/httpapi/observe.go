package httpapi

import (
	"errors"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/compat"
)

// ExceptionMethodNotSupported is the exception tag of a request whose
// method the path does not map (Spring's HttpRequestMethodNotSupportedException).
const ExceptionMethodNotSupported = "HttpRequestMethodNotSupportedException"

// Request is one finished request as the metrics and the access log see it.
// The header functions are valid only during the onRequest call: fiber
// reuses the request's memory afterwards. Path, Query, Protocol,
// BytesSent, RemoteIP, LocalAddr and the header functions are filled only
// for Observe's detail mode (the access log).
type Request struct {
	Start    time.Time
	Duration time.Duration
	Method   string
	// Path is the raw request path, Query the raw query string (without '?').
	Path, Query string
	Protocol    string
	Status      int
	// BytesSent is the response body length (0 for a streamed body, which
	// is still being written).
	BytesSent int
	RemoteIP  string
	LocalAddr string
	// URI is Spring's uri tag: the matched mapping below the context path
	// ("/v1/cs/configs"), "/**" for the console's static files and unmapped
	// paths, "root" when the method is not mapped.
	URI string
	// Exception is the Java exception's simple class name, "None" without one.
	Exception string
	// ConfigOp is "get" or "publish" for the requests Java's RequestLogAspect
	// counts into the getConfig and publish monitors, else "".
	ConfigOp string
	// Failed reports an error that was not a Java-shaped answer (a store
	// failure, a panic): Java's DataAccessException and its kin.
	Failed bool
	// ReqHeader and RespHeader read a header ("" when absent).
	ReqHeader, RespHeader func(name string) string
}

// Observe returns the middleware that times every request and hands it to
// onRequest once the response is complete (for a held long poll: once its
// answer is written, after the handler chain returned; see held.go). It
// runs the error handler itself for errors returned further down, so the
// status it reports is the one sent. Register it first, before recover, so panics are seen too.
// Without detail only what the metrics need is gathered (no allocation
// for a plain request).
func Observe(contextPath string, detail bool, onRequest func(Request)) fiber.Handler {
	if contextPath == "/" {
		contextPath = ""
	}
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		r := Request{Start: start, Exception: "None"}
		if err != nil {
			r.Exception, r.Failed = exceptionOf(err)
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				_ = c.SendStatus(fiber.StatusInternalServerError)
			}
		}
		held := heldOf(c) // a held long poll: reported once answered (held.go)
		r.Duration = time.Since(start)
		r.Method = methodName(c.Method())
		r.Status = c.Response().StatusCode()
		r.URI = springURI(c, contextPath, r.Exception)
		if r.URI == "/v1/cs/configs" {
			r.ConfigOp = configOp(c)
		}
		if detail {
			r.Path = string(c.Request().URI().PathOriginal())
			if i := strings.IndexByte(r.Path, '?'); i >= 0 {
				r.Path = r.Path[:i]
			}
			r.Query = string(c.Request().URI().QueryString())
			r.Protocol = string(c.Request().Header.Protocol())
			if !c.Response().IsBodyStream() { // Body() would drain a stream (server-sent events)
				r.BytesSent = len(c.Response().Body())
			}
			r.RemoteIP = c.Context().RemoteIP().String()
			r.LocalAddr = c.Context().LocalAddr().String()
			r.ReqHeader = func(k string) string { return string(c.Request().Header.Peek(k)) }
			r.RespHeader = func(k string) string { return string(c.Response().Header.Peek(k)) }
			if held != nil { // the request's memory is reused before the answer
				r.ReqHeader = requestHeaders(&c.Request().Header)
			}
		} else if r.Failed {
			r.Path = string(c.Request().URI().PathOriginal())
		}
		if held != nil {
			held.observe = observeAnswer(r, detail, onRequest)
			return nil
		}
		onRequest(r)
		return nil
	}
}

// observeAnswer completes r with a held poll's answer and hands it on (a
// function of its own, so r escapes only for held polls).
func observeAnswer(r Request, detail bool, onRequest func(Request)) func(*fasthttp.Response) {
	return func(resp *fasthttp.Response) {
		r.Duration = time.Since(r.Start)
		r.Status = resp.StatusCode()
		if detail {
			r.BytesSent = len(resp.Body())
			r.RespHeader = func(k string) string { return string(resp.Header.Peek(k)) }
		}
		onRequest(r)
	}
}

// methodName returns a string the metrics may keep: fiber's method string
// aliases the request buffer, which is reused.
func methodName(m string) string {
	for _, k := range []string{fiber.MethodGet, fiber.MethodPost, fiber.MethodPut, fiber.MethodDelete, fiber.MethodHead,
		fiber.MethodPatch, fiber.MethodOptions} {
		if m == k {
			return k
		}
	}
	return strings.Clone(m)
}

// exceptionOf names the Java exception behind an error a handler returned.
func exceptionOf(err error) (exception string, failed bool) {
	var ce *compat.Error
	if errors.As(err, &ce) {
		switch {
		case ce.Exception != "":
			return ce.Exception, false
		case ce.Status >= 500:
			return "NacosException", false
		}
		return "None", false
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		if fe.Code == fiber.StatusMethodNotAllowed {
			return ExceptionMethodNotSupported, false
		}
		return "None", false
	}
	return "RuntimeException", true
}

// springURI is WebMvcTags.uri: the best matching pattern (trailing slash
// dropped), NOT_FOUND/REDIRECTION without one, else root. Spring maps the
// console's static files and every unmapped path with "/**".
func springURI(c *fiber.Ctx, contextPath, exception string) string {
	if exception == ExceptionMethodNotSupported {
		return "root" // rejected before a handler mapping is chosen
	}
	rt := c.Route()
	if rt == nil || rt.Method == "USE" { // no route matched: a middleware was last
		return "/**"
	}
	p := rt.Path
	if contextPath != "" {
		if !strings.HasPrefix(p, contextPath) {
			return "/**"
		}
		p = p[len(contextPath):]
	}
	for len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	switch {
	case p == "" || p == "/":
		return "/**" // the console's index page: a static resource in Java
	case strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/actuator"):
		if strings.HasSuffix(p, "/*") { // fiber's wildcard is Spring's /**
			return p + "*"
		}
		return p
	}
	return "/**"
}

// configOp is what Java's RequestLogAspect counts: ConfigController.getConfig
// and publishConfig, entered once their required parameters are bound
// (dataId, group; content for a publish), before any validation.
func configOp(c *fiber.Ctx) string {
	p := ParamsOf(c)
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := p.Peek(n); !ok {
				return false
			}
		}
		return true
	}
	switch c.Method() {
	case fiber.MethodGet:
		for _, d := range [][2]string{{"show", "all"}, {"search", "accurate"}, {"search", "blur"}, {"beta", "true"}, {"export", "true"}, {"exportV2", "true"}} {
			if param(p, d[0], d[1]) {
				return ""
			}
		}
		if has("dataId", "group") {
			return "get"
		}
	case fiber.MethodPost:
		if param(p, "import", "true") || param(p, "clone", "true") {
			return ""
		}
		if has("dataId", "group", "content") {
			return "publish"
		}
	}
	return ""
}
