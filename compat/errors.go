package compat

import "strings"

// Error is an error with the HTTP status and body Java Nacos 1.4.8 answers
// with. Domain packages return it (or wrap it); the HTTP layer's error handler
// writes Status and Body unchanged.
type Error struct {
	Status int
	Body   string
	// ContentType, when set, overrides the default text/plain content type.
	ContentType string
	// Exception is the simple name of the Java exception class behind the
	// answer, for the exception tag of http_server_requests_seconds
	// ("" when the constructor cannot know it: the metrics layer then
	// says NacosException for a 5xx and None otherwise).
	Exception string
}

// Error returns the body.
func (e *Error) Error() string { return e.Body }

// IllegalArgument is Java's IllegalArgumentException (including
// NumberFormatException) through ConsoleExceptionHandler: 400 "caused: msg;".
// Extra messages are appended as the cause chain (naming-v1.md §1.6).
func IllegalArgument(msg string, causes ...string) *Error {
	return &Error{Status: 400, Body: causedBody(msg, causes), Exception: "IllegalArgumentException"}
}

// ServerError is every other exception (NacosException whatever its code,
// IllegalStateException, missing @RequestParam, NPE): 500 "caused: msg;"; an
// empty message gives an empty body (naming-v1.md §1.6).
func ServerError(msg string, causes ...string) *Error {
	return &Error{Status: 500, Body: causedBody(msg, causes)}
}

// Forbidden is AccessException: 403 with the bare message.
func Forbidden(msg string) *Error { return &Error{Status: 403, Body: msg} }

func causedBody(msg string, causes []string) string {
	if msg == "" {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("caused: ")
	sb.WriteString(msg)
	sb.WriteString(";")
	for _, c := range causes {
		if c == "" {
			break
		}
		sb.WriteString("caused: ")
		sb.WriteString(c)
		sb.WriteString(";")
	}
	return sb.String()
}

// ParamRequired is WebUtils.required's message for a missing or blank value.
func ParamRequired(name string) *Error {
	return IllegalArgument("Param '" + name + "' is required.")
}

// NumberFormat is Integer.parseInt/Double.parseDouble's NumberFormatException.
func NumberFormat(input string) *Error {
	e := IllegalArgument(`For input string: "` + input + `"`)
	e.Exception = "NumberFormatException"
	return e
}

// MissingRequestParam is Spring's MissingServletRequestParameterException
// (Spring 5.3 / Boot 2.7 wording) for an @RequestParam of the given Java type.
func MissingRequestParam(name, javaType string) *Error {
	e := ServerError("Required request parameter '" + name + "' for method parameter type " + javaType + " is not present")
	e.Exception = "MissingServletRequestParameterException"
	return e
}

// DeserializeError is NacosDeserializationException (errCode 101) for a
// target class, through ConsoleExceptionHandler: 500 with the Jackson
// message as the cause. NacosRuntimeException formats "errCode: %d, errMsg:
// %s " and the class message ends "failed. ", hence the two spaces.
func DeserializeError(javaClass, cause string) *Error {
	e := ServerError("errCode: 101, errMsg: Nacos deserialize for class ["+javaClass+"] failed.  ", cause)
	e.Exception = "NacosDeserializationException"
	return e
}
