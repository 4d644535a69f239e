// Package fastjson reads a strict subset of JSON without reflection or
// allocation, for the few shapes read often enough that encoding/json's cost
// shows: the beat parameter of every beat, and the stored records decoded at
// start. It handles strings without escapes, control characters or invalid
// UTF-8, numbers, true/false/null, objects with ASCII keys and arrays; a
// caller meeting anything else hands the input to encoding/json, so that
// every result is what encoding/json gives (each caller fuzzes the two
// against each other).
package fastjson

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Scanner reads one JSON text. Strings it returns share S's memory.
type Scanner struct {
	S string
	I int // the next byte to read
}

func (p *Scanner) ws() {
	for p.I < len(p.S) {
		switch p.S[p.I] {
		case ' ', '\t', '\n', '\r':
			p.I++
		default:
			return
		}
	}
}

// Peek skips white space and returns the next byte (0 at the end).
func (p *Scanner) Peek() byte {
	p.ws()
	if p.I < len(p.S) {
		return p.S[p.I]
	}
	return 0
}

// End reports whether only white space is left.
func (p *Scanner) End() bool {
	p.ws()
	return p.I == len(p.S)
}

// Object reads {"key": value, ...} with ASCII keys, calling member with the
// scanner at the value of each key; member reads the value and reports
// success. (Array's loop is the same; sharing it cost the beat parse 8 %.)
func (p *Scanner) Object(member func(key string) bool) bool {
	if p.Peek() != '{' {
		return false
	}
	p.I++
	if p.Peek() == '}' {
		p.I++
		return true
	}
	for {
		if p.Peek() != '"' {
			return false
		}
		k, ascii, ok := p.PlainStringASCII()
		if !ok || !ascii || p.Peek() != ':' {
			return false
		}
		p.I++
		p.ws()
		if !member(k) {
			return false
		}
		switch p.Peek() {
		case ',':
			p.I++
		case '}':
			p.I++
			return true
		default:
			return false
		}
	}
}

// Fields reads an object for the fields names, the way encoding/json reads
// it into a zero struct with those JSON names, calling set(i) with the
// scanner at the value of names[i]; set reads it and reports success. A
// null value leaves the field unset (encoding/json: a non-pointer stays
// zero, a pointer, map or slice nil). A field repeated, or matching one of
// names only case-insensitively, fails (encoding/json's merging and
// folding rules); other fields must have scalar values, skipped. At most
// 64 names.
func (p *Scanner) Fields(names []string, set func(i int) bool) bool {
	var seen uint64
	return p.Object(func(k string) bool {
		f := -1
		for i, name := range names {
			if k == name {
				f = i
				break
			}
		}
		if f < 0 {
			return !FoldsTo(k, names) && p.SkipScalar()
		}
		if seen&(1<<f) != 0 {
			return false
		}
		seen |= 1 << f
		return p.Null() || set(f)
	})
}

// Array reads [value, ...], calling elem with the scanner at each value;
// elem reads it and reports success.
func (p *Scanner) Array(elem func() bool) bool {
	if p.Peek() != '[' {
		return false
	}
	p.I++
	if p.Peek() == ']' {
		p.I++
		return true
	}
	for {
		p.ws()
		if !elem() {
			return false
		}
		switch p.Peek() {
		case ',':
			p.I++
		case ']':
			p.I++
			return true
		default:
			return false
		}
	}
}

// PlainString reads a string without escapes, control characters or
// invalid UTF-8, and returns its text.
func (p *Scanner) PlainString() (string, bool) {
	v, _, ok := p.PlainStringASCII()
	return v, ok
}

// PlainStringASCII is PlainString, also reporting whether the text is
// ASCII.
func (p *Scanner) PlainStringASCII() (v string, ascii, ok bool) {
	if p.Peek() != '"' {
		return "", false, false
	}
	start := p.I + 1
	var high byte
	for j := start; j < len(p.S); j++ {
		c := p.S[j]
		switch {
		case c == '"':
			v := p.S[start:j]
			if high >= 0x80 && !utf8.ValidString(v) {
				return "", false, false
			}
			p.I = j + 1
			return v, high < 0x80, true
		case c == '\\' || c < 0x20:
			return "", false, false
		}
		high |= c
	}
	return "", false, false
}

func (p *Scanner) literal(word string) bool {
	if strings.HasPrefix(p.S[p.I:], word) {
		p.I += len(word)
		return true
	}
	return false
}

// Null reads null.
func (p *Scanner) Null() bool { return p.Peek() == 'n' && p.literal("null") }

// Bool reads true or false: the value, then success.
func (p *Scanner) Bool() (bool, bool) {
	switch p.Peek() {
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	}
	return false, false
}

// Number reads a JSON number (RFC 8259 grammar) and returns its text.
func (p *Scanner) Number() (string, bool) {
	p.ws()
	s, start := p.S, p.I
	j := start
	if j < len(s) && s[j] == '-' {
		j++
	}
	switch {
	case j < len(s) && s[j] == '0':
		j++
	case j < len(s) && s[j] >= '1' && s[j] <= '9':
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
	default:
		return "", false
	}
	if j < len(s) && s[j] == '.' {
		j++
		d := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == d {
			return "", false
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		d := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == d {
			return "", false
		}
	}
	p.I = j
	return s[start:j], true
}

// Int reads a number without fraction or exponent that fits an int64 (the
// ones encoding/json reads into an int64; it refuses the others too).
func (p *Scanner) Int() (int64, bool) {
	num, ok := p.Number()
	if !ok || !IsInt(num) {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	return n, err == nil
}

// Float reads a number as a float64.
func (p *Scanner) Float() (float64, bool) {
	num, ok := p.Number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(num, 64)
	return f, err == nil
}

// SkipScalar skips the value of an unknown field: a plain string, a
// number, true, false or null (anything else goes to encoding/json).
func (p *Scanner) SkipScalar() bool {
	switch c := p.Peek(); {
	case c == '"':
		_, ok := p.PlainString()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		_, ok := p.Number()
		return ok
	case c == 't' || c == 'f':
		_, ok := p.Bool()
		return ok
	case c == 'n':
		return p.Null()
	}
	return false
}

// IsInt reports a number without fraction or exponent.
func IsInt(num string) bool { return !strings.ContainsAny(num, ".eE") }

// FoldsTo reports whether key, not one of names, matches one of them
// case-insensitively: encoding/json would then set that field, which a
// fast path leaves to it. Keys are ASCII here, so folding keeps lengths.
func FoldsTo(key string, names []string) bool {
	for _, name := range names {
		if len(key) == len(name) && strings.EqualFold(key, name) {
			return true
		}
	}
	return false
}
