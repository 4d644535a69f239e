package httpapi

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
)

// The Nacos 2.x Open API (/v2/cs, /v2/ns): every answer is a Result
// {"code","message","data"}, errors too, with the status the exception
// maps to (NacosApiExceptionHandler, 2.5.1).

// v2 error codes and their messages (api/model/v2/ErrorCode).
const (
	v2ParameterMissing  = 10000
	v2AccessDenied      = 10001
	v2ValidateError     = 20002
	v2ResourceNotFound  = 20004
	v2InstanceNotFound  = 21003
	v2ServiceNotExist   = 21008
	v2ServiceExists     = 21007
	v2ServerError       = 30000
	v2ContentTypeJSON   = "application/json"
	v2ContentTypeResult = "application/json;charset=UTF-8"
)

var v2Messages = map[int]string{0: "success", v2ParameterMissing: "parameter missing", v2AccessDenied: "access denied",
	v2ValidateError: "parameter validate error", v2ResourceNotFound: "resource not found", v2InstanceNotFound: "instance not found",
	v2ServiceNotExist: "service not exist", v2ServiceExists: "service already exist", v2ServerError: "server error",
	21000: "service name error", 21001: "weight error", 21002: "instance metadata error", 21005: "service metadata error",
	21006: "selector error", 21009: "service delete failure", 21010: "healthy param miss", 21011: "health check still running"}

// V2Error is an exception a v2 handler answers as Java's handler does.
type V2Error struct {
	Status int
	Code   int
	// Message is the Result's message ("" : the code's); Data its data
	// (nil: null).
	Message string
	Data    *string
	// NoType sends no Content-Type and Newline ends the body with a
	// newline (Java writes some answers straight to the servlet response).
	NoType, Newline bool
}

func (e *V2Error) Error() string {
	if e.Data != nil {
		return *e.Data
	}
	return e.Message
}

func v2Err(status, code int, data string) *V2Error {
	return &V2Error{Status: status, Code: code, Data: &data}
}

// v2Missing is a missing @RequestParam (MissingServletRequestParameterException).
func v2Missing(name, typ string) *V2Error {
	return v2Err(fiber.StatusBadRequest, v2ParameterMissing,
		"Required request parameter '"+name+"' for method parameter type "+typ+" is not present")
}

// v2FormMissing is a missing field of a form object (its validate()).
func v2FormMissing(name, typ string) *V2Error {
	return v2Err(fiber.StatusBadRequest, v2ParameterMissing, "Required parameter '"+name+"' type "+typ+" is not present")
}

// writeResult writes a Result.
func writeResult(w *compat.JSON, code int, message string, data func(w *compat.JSON)) {
	w.BeginObject()
	w.Key("code").Int(int64(code))
	w.Key("message").Str(message)
	w.Key("data")
	if data == nil {
		w.Null()
	} else {
		data(w)
	}
	w.EndObject()
}

// v2OK answers Result.success(data).
func v2OK(c *fiber.Ctx, data func(w *compat.JSON)) error {
	w := compat.NewJSON(128)
	writeResult(w, 0, "success", data)
	c.Set(fiber.HeaderContentType, v2ContentTypeJSON)
	return c.Send(w.Bytes())
}

// v2Str is a string datum.
func v2Str(s string) func(w *compat.JSON) { return func(w *compat.JSON) { w.Str(s) } }

// v2True is the datum true.
func v2True(w *compat.JSON) { w.Bool(true) }

// v2Wrap answers a v2 handler's error as Java's exception handlers do: a
// V2Error as it says, a compat error (the domain's, in 1.x words) as the
// NacosException it stands for (status kept, code 30000 "server error"
// for 5xx and 20002 "parameter validate error" for 4xx).
func v2Wrap(fn fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		err := fn(c)
		if err == nil {
			return nil
		}
		var ve *V2Error
		var ce *compat.Error
		switch {
		case errors.As(err, &ve):
		case errors.As(err, &ce):
			code := v2ServerError
			if ce.Status >= 400 && ce.Status < 500 {
				code = v2ValidateError
			}
			body := ce.Body
			ve = &V2Error{Status: ce.Status, Code: code, Data: &body}
		default:
			return err // not-leader errors go to the gate; others to the error handler
		}
		c.Response().Reset()
		msg := ve.Message
		if msg == "" {
			msg = v2Messages[ve.Code]
		}
		w := compat.NewJSON(128)
		var data func(w *compat.JSON)
		if ve.Data != nil {
			data = v2Str(*ve.Data)
		}
		writeResult(w, ve.Code, msg, data)
		if ve.NoType {
			c.Response().Header.SetNoDefaultContentType(true)
		} else {
			c.Set(fiber.HeaderContentType, v2ContentTypeJSON)
		}
		b := w.Bytes()
		if ve.Newline {
			b = append(b, '\n')
		}
		return c.Status(ve.Status).Send(b)
	}
}
