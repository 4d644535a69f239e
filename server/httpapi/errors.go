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
	return func(c *fiber.Ctx, err error) error {
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
	return c.Status(status).Send(w.Bytes())
}

// SendJSON writes an already-encoded JSON body with status 200.
func SendJSON(c *fiber.Ctx, body []byte) error {
	c.Set(fiber.HeaderContentType, ContentTypeJSON)
	return c.Send(body)
}

// SendText writes a plain-text body (the "ok" of Java handlers) with status 200.
func SendText(c *fiber.Ctx, body string) error {
	c.Set(fiber.HeaderContentType, ContentTypeText)
	return c.SendString(body)
}
