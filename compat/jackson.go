package compat

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// JacksonSyntaxError returns the message Jackson 2.13 (the version in Java
// Nacos 1.4.8) gives when ObjectMapper.readTree or readValue meets a syntax
// error in src, or "" when src starts with a well-formed JSON value. Like
// Jackson without FAIL_ON_TRAILING_TOKENS, only the first value is read;
// what follows it is ignored, except that a root-level number must be
// followed by white space or the end. Blank input is no error (readTree
// answers a missing node). The message ends with Jackson's location:
// "\n at [Source: (String)"<src>"; line: L, column: C]".
func JacksonSyntaxError(src string) string {
	p := &jparser{src: []rune(src), line: 1}
	msg, _ := p.run()
	return msg
}

// JacksonStreamError is JacksonSyntaxError for a body Spring hands Jackson
// as a stream (a @RequestBody): the locations name the stream, not the
// content. orig is the message without its trailing location (what
// Spring's "JSON parse error: " quotes), full the whole message, and eof
// tells a JsonEOFException from a JsonParseException. All "" when src
// starts with a well-formed value.
func JacksonStreamError(src string) (orig, full string, eof bool) {
	p := &jparser{src: []rune(src), line: 1, stream: true}
	full, orig = p.run()
	return orig, full, strings.HasPrefix(orig, "Unexpected end-of-input")
}

// JacksonStreamSource is the source description of a Spring request body.
const JacksonStreamSource = "(org.springframework.util.StreamUtils$NonClosingInputStream)"

type jctx struct {
	kind      byte // 'r' root, 'a' array, 'o' object
	line, col int  // where the container started (Jackson's start marker)
}

type jparser struct {
	src      []rune
	pos      int // index of the next rune
	line     int // 1-based
	rowStart int // column offset of the current row, in UTF-16 units
	units    int // UTF-16 units before pos
	stream   bool
}

type jerr struct{ msg, orig string }

func (p *jparser) run() (msg, orig string) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(jerr)
			if !ok {
				panic(r)
			}
			msg, orig = e.msg, e.orig
		}
	}()
	c, ok := p.skipWS()
	if !ok {
		return "", ""
	}
	root := jctx{kind: 'r', line: 1, col: 0}
	if c == ']' || c == '}' {
		p.next()
		p.mismatched(c, root)
	}
	p.value(c, root, true)
	return "", ""
}

// location renders Jackson's JsonLocation for the current position.
func (p *jparser) location(line, col int) string {
	if p.stream {
		return fmt.Sprintf("[Source: %s; line: %d, column: %d]", JacksonStreamSource, line, col)
	}
	s := string(p.src)
	desc := `(String)"` + s + `"`
	if n := len(utf16.Encode(p.src)); n > 500 {
		u := utf16.Encode(p.src)[:500]
		desc = `(String)"` + string(utf16.Decode(u)) + `"[truncated ` + strconv.Itoa(n-500) + ` chars]`
	}
	return fmt.Sprintf("[Source: %s; line: %d, column: %d]", desc, line, col)
}

func (p *jparser) here() string { return p.location(p.line, p.units-p.rowStart+1) }

func (p *jparser) fail(msg string) { panic(jerr{msg + "\n at " + p.here(), msg}) }

func (p *jparser) eof() bool { return p.pos >= len(p.src) }

func (p *jparser) peek() rune { return p.src[p.pos] }

func (p *jparser) next() rune {
	c := p.src[p.pos]
	p.pos++
	switch {
	case p.stream: // the byte stream parser counts bytes
		p.units += utf8.RuneLen(c)
	case c > 0xFFFF:
		p.units += 2
	default:
		p.units++
	}
	if c == '\n' {
		p.line++
		p.rowStart = p.units
	}
	return c
}

// skipWS skips Jackson's white space and returns the next rune without
// consuming it; false at the end of input.
func (p *jparser) skipWS() (rune, bool) {
	for !p.eof() {
		c := p.peek()
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.next()
		case c < 0x20:
			p.next()
			p.fail("Illegal character (" + charDesc(c) + "): only regular white space (\\r, \\n, \\t) is allowed between tokens")
		default:
			return c, true
		}
	}
	return 0, false
}

func charDesc(c rune) string {
	switch {
	case unicode.IsControl(c):
		return "(CTRL-CHAR, code " + strconv.Itoa(int(c)) + ")"
	case c > 255:
		return "'" + string(c) + "' (code " + strconv.Itoa(int(c)) + " / 0x" + strconv.FormatInt(int64(c), 16) + ")"
	default:
		return "'" + string(c) + "' (code " + strconv.Itoa(int(c)) + ")"
	}
}

func (p *jparser) unexpected(c rune, msg string) {
	p.fail("Unexpected character (" + charDesc(c) + "): " + msg)
}

func (p *jparser) unexpectedNum(c rune, msg string) {
	p.fail("Unexpected character (" + charDesc(c) + ") in numeric value: " + msg)
}

func (p *jparser) mismatched(c rune, ctx jctx) {
	exp, desc := '}', "root"
	if c == '}' {
		exp = ']'
	}
	switch ctx.kind {
	case 'a':
		desc = "Array"
	case 'o':
		desc = "Object"
	}
	p.fail(fmt.Sprintf("Unexpected close marker '%c': expected '%c' (for %s starting at %s)", c, exp, desc, p.location(ctx.line, ctx.col)))
}

const jValueExpected = "expected a valid value (JSON String, Number, Array, Object or token 'null', 'true' or 'false')"

// value parses the value starting with c (not consumed).
func (p *jparser) value(c rune, ctx jctx, root bool) {
	switch {
	case c == '{':
		p.object()
	case c == '[':
		p.array()
	case c == '"':
		p.next()
		p.str()
	case c == '-' || ('0' <= c && c <= '9'):
		p.number(root)
	case c == 't':
		p.literal("true")
	case c == 'f':
		p.literal("false")
	case c == 'n':
		p.literal("null")
	case c == 'N':
		p.nonStandard("NaN")
	case c == 'I':
		p.nonStandard("Infinity")
	case c == '+':
		p.next()
		if p.eof() {
			p.fail("Unexpected end-of-input in a Number value")
		}
		if p.nonStandardAt("+Infinity", 1) {
			return
		}
		p.unexpectedNum(p.next(), "expected digit (0-9) to follow minus sign, for valid numeric value")
	case unicode.IsLetter(c) || c == '_' || c == '$':
		p.invalidToken("")
	default:
		p.next()
		p.unexpected(c, jValueExpected)
	}
}

func isIdentPart(c rune) bool {
	return unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_' || c == '$'
}

// invalidToken is _reportInvalidToken: the token runs on while the
// characters are Java identifier parts, at most 256 of them.
func (p *jparser) invalidToken(matched string) {
	var b strings.Builder
	b.WriteString(matched)
	n := len([]rune(matched))
	for !p.eof() && isIdentPart(p.peek()) {
		b.WriteRune(p.next())
		n++
		if n >= 256 {
			b.WriteString("...")
			break
		}
	}
	p.fail("Unrecognized token '" + b.String() + "': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')")
}

func (p *jparser) literal(word string) {
	for i, w := range word {
		if p.eof() || p.peek() != w {
			p.invalidToken(word[:i])
		}
		p.next()
	}
	if !p.eof() && isIdentPart(p.peek()) {
		p.invalidToken(word)
	}
}

// nonStandardAt reports (and fails with) the non-numeric number word when
// the input continues with it; its first consumed runes are already read.
func (p *jparser) nonStandardAt(word string, consumed int) bool {
	rest := []rune(word)[consumed:]
	for i, w := range rest {
		if p.pos+i >= len(p.src) || p.src[p.pos+i] != w {
			return false
		}
	}
	for range rest {
		p.next()
	}
	p.fail("Non-standard token '" + word + "': enable JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS to allow")
	return true
}

func (p *jparser) nonStandard(word string) {
	p.next()
	if !p.nonStandardAt(word, 1) {
		p.invalidToken(word[:1])
	}
}

func isDigit(c rune) bool { return '0' <= c && c <= '9' }

func (p *jparser) number(root bool) {
	if p.peek() == '-' {
		p.next()
		if p.eof() {
			p.fail("Unexpected end-of-inputNo digit following minus sign")
		}
		if p.nonStandardAt("-Infinity", 1) {
			return
		}
		if !isDigit(p.peek()) {
			p.unexpectedNum(p.next(), "expected digit (0-9) to follow minus sign, for valid numeric value")
		}
	}
	if p.next() == '0' && !p.eof() && isDigit(p.peek()) {
		p.fail("Invalid numeric value: Leading zeroes not allowed")
	}
	for !p.eof() && isDigit(p.peek()) {
		p.next()
	}
	if !p.eof() && p.peek() == '.' {
		p.next()
		if p.eof() {
			p.fail("Unexpected end-of-input in a Number value")
		}
		if !isDigit(p.peek()) {
			p.unexpectedNum(p.peek(), "Decimal point not followed by a digit")
		}
		for !p.eof() && isDigit(p.peek()) {
			p.next()
		}
	}
	if !p.eof() && (p.peek() == 'e' || p.peek() == 'E') {
		p.next()
		if !p.eof() && (p.peek() == '+' || p.peek() == '-') {
			p.next()
		}
		if p.eof() {
			p.fail("Unexpected end-of-inputexpected a digit for number exponent")
		}
		if !isDigit(p.peek()) {
			p.unexpectedNum(p.peek(), "Exponent indicator not followed by a digit")
		}
		for !p.eof() && isDigit(p.peek()) {
			p.next()
		}
	}
	if root && !p.eof() {
		if c := p.peek(); c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			p.unexpected(p.next(), "Expected space separating root-level values")
		}
	}
}

// str reads a string after its opening quote.
func (p *jparser) str() {
	for {
		if p.eof() {
			p.fail("Unexpected end-of-input: was expecting closing quote for a string value")
		}
		c := p.next()
		switch {
		case c == '"':
			return
		case c == '\\':
			if p.eof() {
				p.fail("Unexpected end-of-input in character escape sequence")
			}
			e := p.next()
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for i := 0; i < 4; i++ {
					if p.eof() {
						p.fail("Unexpected end-of-input in character escape sequence")
					}
					h := p.next()
					if !isDigit(h) && !('a' <= h && h <= 'f') && !('A' <= h && h <= 'F') {
						p.unexpected(h, "expected a hex-digit for character escape sequence")
					}
				}
			default:
				p.fail("Unrecognized character escape " + charDesc(e))
			}
		case c < 0x20:
			p.fail("Illegal unquoted character (" + charDesc(c) + "): has to be escaped using backslash to be included in string value")
		}
	}
}

// startMarker is the location of the container opening at the current
// position (its column is the bracket's own).
func (p *jparser) open(kind byte) jctx {
	ctx := jctx{kind: kind, line: p.line, col: p.units - p.rowStart + 1}
	p.next()
	return ctx
}

func (p *jparser) eofIn(ctx jctx) {
	desc := "Object"
	if ctx.kind == 'a' {
		desc = "Array"
	}
	p.fail("Unexpected end-of-input: expected close marker for " + desc + " (start marker at " + p.location(ctx.line, ctx.col) + ")")
}

func (p *jparser) object() {
	ctx := p.open('o')
	first := true
	for {
		c, ok := p.skipWS()
		if !ok {
			if first {
				p.eofIn(ctx)
			}
			p.fail("Unexpected end-of-input within/between Object entries")
		}
		if first && (c == '}' || c == ']') {
			p.next()
			if c == '}' {
				return
			}
			p.mismatched(c, ctx)
		}
		p.next()
		if c != '"' {
			p.unexpected(c, "was expecting double-quote to start field name")
		}
		p.str()
		c, ok = p.skipWS()
		if !ok {
			p.fail("Unexpected end-of-input within/between Object entries")
		}
		p.next()
		if c != ':' {
			p.unexpected(c, "was expecting a colon to separate field name and value")
		}
		c, ok = p.skipWS()
		if !ok {
			p.fail("Unexpected end-of-input within/between Object entries")
		}
		p.value(c, ctx, false)
		c, ok = p.skipWS()
		if !ok {
			p.eofIn(ctx)
		}
		p.next()
		switch c {
		case '}':
			return
		case ']':
			p.mismatched(c, ctx)
		case ',':
		default:
			p.unexpected(c, "was expecting comma to separate Object entries")
		}
		first = false
	}
}

func (p *jparser) array() {
	ctx := p.open('a')
	c, ok := p.skipWS()
	if !ok {
		p.eofIn(ctx)
	}
	if c == ']' || c == '}' {
		p.next()
		if c == ']' {
			return
		}
		p.mismatched(c, ctx)
	}
	for {
		p.value(c, ctx, false)
		c, ok = p.skipWS()
		if !ok {
			p.eofIn(ctx)
		}
		p.next()
		switch c {
		case ']':
			return
		case '}':
			p.mismatched(c, ctx)
		case ',':
		default:
			p.unexpected(c, "was expecting comma to separate Array entries")
		}
		c, ok = p.skipWS()
		if !ok {
			p.fail("Unexpected end-of-input within/between Array entries")
		}
	}
}

// SpringBodyError is the HttpMessageNotReadableException Spring answers
// when Jackson cannot read body into javaType: a syntax error, or a first
// token of the wrong shape (array says javaType is a collection, else a
// bean). ok is false when neither applies (the body may still not bind:
// the caller reports that its own way). msg is "JSON parse error:
// <message>; nested exception is <exception>: <message with location>",
// caused by the located message.
func SpringBodyError(body, javaType string, array bool) (msg, cause string, ok bool) {
	trimmed := strings.TrimLeft(body, " \t\r\n")
	shape, token := "", ""
	if trimmed != "" {
		switch c := trimmed[0]; {
		case array && c == '{':
			shape, token = "Object value", "START_OBJECT"
		case array && c == '"':
			shape, token = "String value", "VALUE_STRING"
		case !array && c == '[':
			shape, token = "Array value", "START_ARRAY"
		}
	}
	if shape != "" {
		col := len(body) - len(trimmed) + 1
		orig := "Cannot deserialize value of type `" + javaType + "` from " + shape + " (token `JsonToken." + token + "`)"
		full := orig + "\n at [Source: " + JacksonStreamSource + "; line: 1, column: " + strconv.Itoa(col) + "]"
		return "JSON parse error: " + orig + "; nested exception is com.fasterxml.jackson.databind.exc.MismatchedInputException: " + full, full, true
	}
	orig, full, eof := JacksonStreamError(body)
	if full == "" {
		return "", "", false
	}
	cls := "com.fasterxml.jackson.core.JsonParseException"
	if eof {
		cls = "com.fasterxml.jackson.core.io.JsonEOFException"
	}
	return "JSON parse error: " + orig + "; nested exception is " + cls + ": " + full, full, true
}
