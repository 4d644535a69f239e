package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
)

// Content types used by the handlers.
const (
	ContentTypeText = "text/plain;charset=UTF-8"
	ContentTypeJSON = "application/json"
)

// ErrorHandler turns errors returned by handlers into the status and body Java
// Nacos gives: *compat.Error as is; fiber errors (unknown route, bad method,
// body too large) as Spring's /error JSON; anything else as a 500 "caused:"
// body, logged.
func ErrorHandler(log *slog.Logger) fiber.ErrorHandler {
	return ErrorHandlerIn(log, "/nacos")
}

// ErrorHandlerIn is ErrorHandler for an application under contextPath:
// an unknown path outside it is Tomcat's own 404 page (no Spring servlet
// serves there).
func ErrorHandlerIn(log *slog.Logger, contextPath string) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var nf *fiber.Error
		if errors.As(err, &nf) && nf.Code == fiber.StatusNotFound && contextPath != "" {
			if p := string(c.Request().URI().Path()); p != contextPath && !strings.HasPrefix(p, contextPath+"/") {
				c.Set(fiber.HeaderContentType, "text/html;charset=utf-8")
				c.Set("Content-Language", "en")
				return c.Status(fiber.StatusNotFound).SendString(tomcatNotFound)
			}
		}
		var ce *compat.Error
		if errors.As(err, &ce) {
			ct := ce.ContentType
			if ct == "" {
				ct = ContentTypeText
			}
			c.Set(fiber.HeaderContentType, ct)
			return c.Status(ce.Status).SendString(ce.Body)
		}
		var fe *fiber.Error
		if errors.As(err, &fe) {
			msg := fe.Message
			switch fe.Code {
			case fiber.StatusNotFound:
				msg = "No message available"
			case fiber.StatusRequestEntityTooLarge:
				msg = tooLargeMessage
			}
			return SendSpringError(c, fe.Code, msg)
		}
		log.Error("request failed", "method", c.Method(), "path", c.Path(), "err", err)
		c.Set(fiber.HeaderContentType, ContentTypeText)
		return c.Status(fiber.StatusInternalServerError).SendString(compat.ServerError(err.Error()).Body)
	}
}

// tomcatNotFound is Tomcat 9's error page for a path no application serves.
const tomcatNotFound = `<!doctype html><html lang="en"><head><title>HTTP Status 404 – Not Found</title><style type="text/css">body {font-family:Tahoma,Arial,sans-serif;} h1, h2, h3, b {color:white;background-color:#525D76;} h1 {font-size:22px;} h2 {font-size:16px;} h3 {font-size:14px;} p {font-size:12px;} a {color:black;} .line {height:1px;background-color:#525D76;border:none;}</style></head><body><h1>HTTP Status 404 – Not Found</h1></body></html>`

// rfdSafeExtensions are the extensions after which Spring writes a JSON
// answer without its reflected-file-download guard
// (AbstractMessageConverterMethodProcessor.SAFE_EXTENSIONS).
var rfdSafeExtensions = map[string]bool{"txt": true, "text": true, "yml": true, "properties": true, "csv": true,
	"json": true, "xml": true, "atom": true, "rss": true, "png": true, "jpe": true, "jpeg": true, "jpg": true,
	"gif": true, "wbmp": true, "bmp": true}

// rfdGuard sets Spring's Content-Disposition: inline;filename=f.txt on a
// JSON error for a path whose last segment has an extension that is not
// safe.
func rfdGuard(c *fiber.Ctx) {
	p := string(c.Request().URI().Path())
	seg := p[strings.LastIndexByte(p, '/')+1:]
	if i := strings.LastIndexByte(seg, '.'); i >= 0 {
		if ext := strings.ToLower(seg[i+1:]); ext != "" && !rfdSafeExtensions[ext] {
			c.Set(fiber.HeaderContentDisposition, "inline;filename=f.txt")
		}
	}
}

// SendSpringError writes Spring Boot's /error JSON, the body of every
// response.sendError in Java Nacos (console-auth-core-v1.md §1.5):
// {"timestamp","status","error","message","path"}.
func SendSpringError(c *fiber.Ctx, status int, message string) error {
	w := compat.NewJSON(160)
	w.BeginObject().
		Key("timestamp").Str(time.Now().Format("2006-01-02T15:04:05.000-07:00")).
		Key("status").Int(int64(status)).
		Key("error").Str(http.StatusText(status)).
		Key("message").Str(message).
		Key("path").Str(string(c.Request().URI().Path())).
		EndObject()
	ct := ContentTypeJSON
	if strings.Contains(string(c.Request().URI().Path()), "/v1/cs/") {
		// NacosWebFilter's preset on /v1/cs/* survives the error dispatch
		ct = compat.ConfigContentTypeJSON
	}
	c.Set(fiber.HeaderContentType, ct)
	rfdGuard(c)
	return c.Status(status).Send(w.Bytes())
}

// SendJSON writes an already-encoded JSON body with status 200.
func SendJSON(c *fiber.Ctx, body []byte) error {
	c.Set(fiber.HeaderContentType, ContentTypeJSON)
	return c.Send(body)
}

// sendJSONCopy is SendJSON for a body in the caller's (stack) buffer: it
// is copied into the response's own pooled buffer.
func sendJSONCopy(c *fiber.Ctx, body []byte) error {
	c.Set(fiber.HeaderContentType, ContentTypeJSON)
	c.Response().SetBody(body)
	return nil
}

// SendText writes a plain-text body (the "ok" of Java handlers) with status 200.
func SendText(c *fiber.Ctx, body string) error {
	c.Set(fiber.HeaderContentType, ContentTypeText)
	return c.SendString(body)
}
