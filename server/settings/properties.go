package settings

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Entry is one key=value of a .properties file.
type Entry struct {
	Key   string
	Value string
	Line  int // 1-based line where the key starts
}

// ParseProperties reads a .properties file the way Spring Boot 2.7 loads
// application.properties (OriginTrackedPropertiesLoader): ISO-8859-1 bytes;
// '#' and '!' comment lines; leading blanks (space, tab, form feed) skipped
// on every physical line; key ends at an unescaped '=' or ':' or at blanks;
// value starts after blanks and runs to the end of the line with its
// trailing blanks kept; '\' escapes \t \r \n \f, \uXXXX, continues a line
// before a line break and otherwise keeps the next character literally;
// "key[]=a,b" expands to key[0]=a, key[1]=b; "#---" separates documents
// (later documents override earlier ones, as later keys do). Unlike Spring
// a CR before LF ends the line too, so files edited on Windows read the same.
// A malformed \u escape is an error naming the line.
func ParseProperties(r io.Reader) ([]Entry, error) {
	br := bufio.NewReader(r)
	p := &propReader{r: br, line: 1}
	var out []Entry
	for {
		c, ok := p.readLineStart()
		if !ok {
			return out, p.err
		}
		if c.eol {
			continue
		}
		if !c.escaped && (c.ch == '#' || c.ch == '!') {
			p.skipLine()
			continue
		}
		startLine := p.line
		key, next, err := p.readKey(c)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(key, "[]") {
			base := key[:len(key)-2]
			vals, err := p.readValues(next, true)
			if err != nil {
				return nil, err
			}
			for i, v := range vals {
				out = append(out, Entry{Key: base + "[" + strconv.Itoa(i) + "]", Value: v, Line: startLine})
			}
			continue
		}
		vals, err := p.readValues(next, false)
		if err != nil {
			return nil, err
		}
		if key != "" {
			out = append(out, Entry{Key: key, Value: vals[0], Line: startLine})
		}
	}
}

type propReader struct {
	r    *bufio.Reader
	line int
	err  error
}

// char is one logical character: eol marks an unescaped line end (or EOF).
type char struct {
	ch      rune
	escaped bool
	eol     bool
	eof     bool
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' || b == '\f' }

// rawByte reads one byte; ok false at EOF.
func (p *propReader) rawByte() (byte, bool) {
	b, err := p.r.ReadByte()
	if err != nil {
		if err != io.EOF {
			p.err = err
		}
		return 0, false
	}
	return b, true
}

// readLineStart skips the blanks at the start of a physical line and returns
// its first character; ok is false at EOF.
func (p *propReader) readLineStart() (char, bool) {
	for {
		b, ok := p.rawByte()
		if !ok {
			return char{}, false
		}
		if isBlank(b) {
			continue
		}
		_ = p.r.UnreadByte()
		c, err := p.next()
		if err != nil {
			p.err = err
			return char{}, false
		}
		if c.eof {
			return char{}, false
		}
		return c, true
	}
}

// next reads one logical character, resolving escapes and continuations.
func (p *propReader) next() (char, error) {
	b, ok := p.rawByte()
	if !ok {
		return char{eol: true, eof: true}, nil
	}
	switch b {
	case '\n':
		p.line++
		return char{eol: true}, nil
	case '\r':
		if nb, ok := p.rawByte(); ok && nb != '\n' {
			_ = p.r.UnreadByte()
		}
		p.line++
		return char{eol: true}, nil
	case '\\':
		e, ok := p.rawByte()
		if !ok {
			return char{eol: true, eof: true}, nil
		}
		switch e {
		case 't':
			return char{ch: '\t', escaped: true}, nil
		case 'r':
			return char{ch: '\r', escaped: true}, nil
		case 'n':
			return char{ch: '\n', escaped: true}, nil
		case 'f':
			return char{ch: '\f', escaped: true}, nil
		case 'u':
			var v rune
			for i := 0; i < 4; i++ {
				d, ok := p.rawByte()
				h := hexVal(d)
				if !ok || h < 0 {
					return char{}, fmt.Errorf("line %d: malformed \\uxxxx encoding", p.line)
				}
				v = v<<4 | rune(h)
			}
			return char{ch: v, escaped: true}, nil
		case '\r', '\n':
			if e == '\r' {
				if nb, ok := p.rawByte(); ok && nb != '\n' {
					_ = p.r.UnreadByte()
				}
			}
			p.line++
			// continuation: leading blanks of the next line are skipped
			for {
				nb, ok := p.rawByte()
				if !ok {
					return char{eol: true, eof: true}, nil
				}
				if !isBlank(nb) {
					_ = p.r.UnreadByte()
					break
				}
			}
			return p.next()
		default:
			return char{ch: rune(e), escaped: true}, nil // ISO-8859-1: byte = code point
		}
	default:
		return char{ch: rune(b)}, nil
	}
}

func hexVal(b byte) int {
	switch {
	case b >= '0' && b <= '9':
		return int(b - '0')
	case b >= 'a' && b <= 'f':
		return int(b-'a') + 10
	case b >= 'A' && b <= 'F':
		return int(b-'A') + 10
	}
	return -1
}

func (p *propReader) skipLine() {
	for {
		b, ok := p.rawByte()
		if !ok {
			return
		}
		if b == '\n' {
			p.line++
			return
		}
		if b == '\r' {
			if nb, ok := p.rawByte(); ok && nb != '\n' {
				_ = p.r.UnreadByte()
			}
			p.line++
			return
		}
	}
}

// readKey reads the key starting with c and returns the first character of
// the value part (after the delimiter, if any).
func (p *propReader) readKey(c char) (string, char, error) {
	var sb strings.Builder
	prevBlank := false
	for !c.eol {
		blank := !c.escaped && (c.ch == ' ' || c.ch == '\t' || c.ch == '\f')
		if !c.escaped && (c.ch == '=' || c.ch == ':') {
			n, err := p.next()
			return strings.TrimSpace(sb.String()), n, err
		}
		if !blank && prevBlank {
			return strings.TrimSpace(sb.String()), c, nil
		}
		prevBlank = blank
		sb.WriteRune(c.ch)
		var err error
		if c, err = p.next(); err != nil {
			return "", char{}, err
		}
	}
	return strings.TrimSpace(sb.String()), c, nil
}

// readValues reads the value starting with c, split on unescaped commas
// when split is set (key[] syntax).
func (p *propReader) readValues(c char, split bool) ([]string, error) {
	var err error
	for !c.eol && !c.escaped && (c.ch == ' ' || c.ch == '\t' || c.ch == '\f') {
		if c, err = p.next(); err != nil {
			return nil, err
		}
	}
	var vals []string
	var sb strings.Builder
	for !c.eol {
		if split && !c.escaped && c.ch == ',' {
			vals = append(vals, sb.String())
			sb.Reset()
		} else {
			sb.WriteRune(c.ch)
		}
		if c, err = p.next(); err != nil {
			return nil, err
		}
	}
	return append(vals, sb.String()), nil
}
