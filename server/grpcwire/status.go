package grpcwire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Code is a gRPC status code.
type Code uint32

// The status codes this server answers with.
const (
	OK                Code = 0
	Canceled          Code = 1
	Unknown           Code = 2
	InvalidArgument   Code = 3
	DeadlineExceeded  Code = 4
	ResourceExhausted Code = 8
	Unimplemented     Code = 12
	Internal          Code = 13
	Unavailable       Code = 14
)

// Status is a call's final status; a handler returns one as its error to
// end the call with that code.
type Status struct {
	Code Code
	Msg  string
}

func (s *Status) Error() string { return fmt.Sprintf("rpc error: code = %d desc = %s", s.Code, s.Msg) }

// Errorf is a Status error.
func Errorf(c Code, format string, args ...any) error {
	return &Status{Code: c, Msg: fmt.Sprintf(format, args...)}
}

// statusOf is the status a handler's error ends its call with: a *Status
// as it is, a context's end as its code, anything else Unknown (as grpc-go
// answers a plain error).
func statusOf(err error) *Status {
	if err == nil {
		return &Status{Code: OK}
	}
	var st *Status
	switch {
	case errors.As(err, &st):
		return st
	case errors.Is(err, context.DeadlineExceeded):
		return &Status{Code: DeadlineExceeded, Msg: err.Error()}
	case errors.Is(err, context.Canceled):
		return &Status{Code: Canceled, Msg: err.Error()}
	}
	return &Status{Code: Unknown, Msg: err.Error()}
}

// HPACK (RFC 7541) for what this server sends: the few response fields,
// each a literal without indexing (§6.2.2) and without Huffman coding, so
// no encoder state is kept per connection. ":status: 200" is static entry 8.
const (
	hpackStatus200      = 0x88
	hpackIdxContentType = 31
	hpackIdxStatus      = 8
)

// appendHPACKInt appends an HPACK integer with an n-bit prefix (§5.1).
func appendHPACKInt(b []byte, first byte, n uint, v uint64) []byte {
	limit := uint64(1)<<n - 1
	if v < limit {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(limit))
	v -= limit
	for v >= 128 {
		b = append(b, byte(v&0x7f|0x80))
		v >>= 7
	}
	return append(b, byte(v))
}

func appendHPACKString(b []byte, s string) []byte {
	b = appendHPACKInt(b, 0, 7, uint64(len(s)))
	return append(b, s...)
}

// appendLiteral appends a literal field without indexing with a new name.
func appendLiteral(b []byte, name, value string) []byte {
	b = append(b, 0)
	b = appendHPACKString(b, name)
	return appendHPACKString(b, value)
}

// appendLiteralIdx appends a literal field without indexing whose name is
// static entry idx.
func appendLiteralIdx(b []byte, idx uint64, value string) []byte {
	b = appendHPACKInt(b, 0, 4, idx)
	return appendHPACKString(b, value)
}

// appendTableSizeUpdate signals the peer's lowered table size (§6.3).
func appendTableSizeUpdate(b []byte, size uint32) []byte {
	return appendHPACKInt(b, 0x20, 5, uint64(size))
}

// appendResponseHeaders appends the header block of a response: status
// 200 and the content type.
func appendResponseHeaders(b []byte, contentType string) []byte {
	b = append(b, hpackStatus200)
	return appendLiteralIdx(b, hpackIdxContentType, contentType)
}

// appendTrailers appends a trailer block: grpc-status and, when set,
// grpc-message (percent-encoded as the gRPC spec says).
func appendTrailers(b []byte, st *Status) []byte {
	b = appendLiteral(b, "grpc-status", strconv.FormatUint(uint64(st.Code), 10))
	if st.Msg != "" {
		b = appendLiteral(b, "grpc-message", encodeGrpcMessage(st.Msg))
	}
	return b
}

// appendEarlyAbort is a trailers-only answer with an HTTP status (415 for
// a content type that is not gRPC, as grpc-go answers).
func appendEarlyAbort(b []byte, httpStatus int, st *Status) []byte {
	if httpStatus == 200 {
		b = append(b, hpackStatus200)
	} else {
		b = appendLiteralIdx(b, hpackIdxStatus, strconv.Itoa(httpStatus))
	}
	b = appendLiteralIdx(b, hpackIdxContentType, "application/grpc")
	return appendTrailers(b, st)
}

// encodeGrpcMessage percent-encodes what is outside printable ASCII and
// '%' (the gRPC HTTP/2 spec's Percent-Encoded).
func encodeGrpcMessage(msg string) string {
	clean := true
	for i := 0; i < len(msg); i++ {
		if c := msg[i]; c < ' ' || c > '~' || c == '%' {
			clean = false
			break
		}
	}
	if clean {
		return msg
	}
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, len(msg)+16)
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c < ' ' || c > '~' || c == '%' {
			out = append(out, '%', hex[c>>4], hex[c&15])
			continue
		}
		out = append(out, c)
	}
	return string(out)
}

// parseTimeout reads grpc-timeout ("1-8 digits and a unit of H M S m u n").
func parseTimeout(v string) (time.Duration, bool) {
	if len(v) < 2 || len(v) > 9 {
		return 0, false
	}
	n, err := strconv.ParseInt(v[:len(v)-1], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	var unit time.Duration
	switch v[len(v)-1] {
	case 'H':
		unit = time.Hour
	case 'M':
		unit = time.Minute
	case 'S':
		unit = time.Second
	case 'm':
		unit = time.Millisecond
	case 'u':
		unit = time.Microsecond
	case 'n':
		unit = time.Nanosecond
	default:
		return 0, false
	}
	if n > int64(1<<63-1)/int64(unit) {
		return 1<<63 - 1, true
	}
	return time.Duration(n) * unit, true
}
