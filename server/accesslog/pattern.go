package accesslog

import (
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Tomcat's pattern aliases.
const (
	patternCommon   = `%h %l %u %t "%r" %s %b`
	patternCombined = patternCommon + ` "%{Referer}i" "%{User-Agent}i"`
)

// redacted replaces every secret value.
const redacted = "***"

// secretParams are query parameters whose values are never written
// (lower case).
var secretParams = map[string]bool{"accesstoken": true, "password": true, "token": true}

// element is one piece of a compiled pattern: literal text (code 0) or a
// %-code with its {argument}.
type element struct {
	code byte
	arg  string
	text string
}

// parsePattern compiles a Tomcat AccessLogValve pattern.
func parsePattern(p string) []element {
	switch p {
	case "", "common":
		p = patternCommon
	case "combined":
		p = patternCombined
	}
	var out []element
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, element{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '%' || i+1 >= len(p) {
			lit.WriteByte(c)
			continue
		}
		i++
		if p[i] == '{' {
			end := strings.IndexByte(p[i:], '}')
			if end < 0 || i+end+1 >= len(p) { // Tomcat keeps an unterminated {…} as text
				lit.WriteString(p[i-1:])
				break
			}
			arg := p[i+1 : i+end]
			i += end + 1
			flush()
			out = append(out, element{code: p[i], arg: arg})
			continue
		}
		flush()
		out = append(out, element{code: p[i]})
	}
	flush()
	return out
}

func (l *Log) format(b []byte, e *Entry) []byte {
	for _, el := range l.pattern {
		if el.code == 0 {
			b = append(b, el.text...)
			continue
		}
		b = l.element(b, el, e)
	}
	return b
}

func (l *Log) element(b []byte, el element, e *Entry) []byte {
	if el.arg != "" && el.code != 'i' && el.code != 'o' && el.code != 't' {
		return append(b, '-') // cookies, request and session attributes: none
	}
	localHost, localPort, _ := net.SplitHostPort(e.LocalAddr)
	switch el.code {
	case 'a', 'h':
		return appendOr(b, e.RemoteIP)
	case 'A':
		return appendOr(b, localHost)
	case 'p':
		return appendOr(b, localPort)
	case 'b':
		if e.BytesSent == 0 {
			return append(b, '-')
		}
		return strconv.AppendInt(b, int64(e.BytesSent), 10)
	case 'B':
		return strconv.AppendInt(b, int64(e.BytesSent), 10)
	case 'H':
		return appendOr(b, e.Protocol)
	case 'm':
		return appendOr(b, e.Method)
	case 'q':
		if e.Query == "" {
			return b
		}
		b = append(b, '?')
		return escape(b, redactQuery(e.Query))
	case 'r':
		b = escape(b, e.Method)
		b = append(b, ' ')
		b = escape(b, e.Path)
		if e.Query != "" {
			b = append(b, '?')
			b = escape(b, redactQuery(e.Query))
		}
		b = append(b, ' ')
		return escape(b, e.Protocol)
	case 'U':
		return escapeOr(b, e.Path)
	case 's':
		return strconv.AppendInt(b, int64(e.Status), 10)
	case 't':
		return e.Start.In(l.cfg.Location).AppendFormat(b, "[02/Jan/2006:15:04:05 -0700]")
	case 'D': // Tomcat 9: milliseconds
		return strconv.AppendInt(b, e.Duration.Milliseconds(), 10)
	case 'T':
		ms := e.Duration.Milliseconds()
		b = strconv.AppendInt(b, ms/1000, 10)
		b = append(b, '.')
		frac := strconv.FormatInt(ms%1000+1000, 10)[1:]
		return append(b, frac...)
	case 'F': // time to commit the response: nacosd commits at the end
		return strconv.AppendInt(b, e.Duration.Milliseconds(), 10)
	case 'v':
		host := ""
		if e.ReqHeader != nil {
			host = e.ReqHeader("Host")
		}
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		return escapeOr(b, host)
	case 'i':
		if e.ReqHeader == nil {
			return append(b, '-')
		}
		v := e.ReqHeader(el.arg)
		if v != "" && l.redact[lower(el.arg)] {
			v = redactHeader(v)
		}
		return escapeOr(b, v)
	case 'o':
		if e.RespHeader == nil {
			return append(b, '-')
		}
		return escapeOr(b, e.RespHeader(el.arg))
	case 'l', 'u', 'S':
		return append(b, '-')
	case 'I':
		return append(b, "http-nio"...)
	}
	// Tomcat prints unknown codes as ???X???
	return append(append(append(b, "???"...), el.code), "???"...)
}

// redactHeader keeps an Authorization scheme ("Bearer ***").
func redactHeader(v string) string {
	if i := strings.IndexByte(v, ' '); i > 0 {
		return v[:i+1] + redacted
	}
	return redacted
}

// redactQuery replaces the values of secret parameters, leaving the rest
// of the query byte for byte.
func redactQuery(q string) string {
	if !hasSecret(q) {
		return q
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, hasVal := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasVal && secretParams[lower(name)] {
			parts[i] = k + "=" + redacted
		}
	}
	return strings.Join(parts, "&")
}

// hasSecret is a cheap pre-check: only a query naming a secret (possibly
// percent-encoded) needs the split.
func hasSecret(q string) bool {
	lq := lower(q)
	return strings.Contains(lq, "token") || strings.Contains(lq, "password") || strings.Contains(lq, "%")
}

func appendOr(b []byte, s string) []byte {
	if s == "" {
		return append(b, '-')
	}
	return append(b, s...)
}

func escapeOr(b []byte, s string) []byte {
	if s == "" {
		return append(b, '-')
	}
	return escape(b, s)
}

// escape is AbstractAccessLogValve.escapeAndAppend: backslash and double
// quote escaped, control characters as \n, \r, \t, \f, \b or \u00XX, bytes
// from 0x7f up as \u00XX (Tomcat reads header bytes as ISO-8859-1).
func escape(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '"':
			b = append(b, '\\', '"')
		case c >= 32 && c < 127:
			b = append(b, c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\b':
			b = append(b, '\\', 'b')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		}
	}
	return b
}
