package compat

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// JSON is an append-only JSON writer that reproduces what Jackson writes for
// Java Nacos: object keys in the order they are written, Java formatting for
// double and float values, and Jackson's string escaping. Commas are inserted
// automatically. The zero value is ready to use.
type JSON struct {
	b     []byte
	comma []bool // per open container: whether a value was already written
	key   bool   // a key was just written, the next value needs no comma
}

// NewJSON returns a writer whose buffer has the given capacity.
func NewJSON(capacity int) *JSON { return &JSON{b: make([]byte, 0, capacity)} }

// Bytes returns the encoded document.
func (w *JSON) Bytes() []byte { return w.b }

// String returns the encoded document as a string.
func (w *JSON) String() string { return string(w.b) }

// Reset empties the writer, keeping its buffer.
func (w *JSON) Reset() { w.b, w.comma, w.key = w.b[:0], w.comma[:0], false }

func (w *JSON) sep() {
	if w.key {
		w.key = false
		return
	}
	if n := len(w.comma); n > 0 {
		if w.comma[n-1] {
			w.b = append(w.b, ',')
		}
		w.comma[n-1] = true
	}
}

// BeginObject writes '{'.
func (w *JSON) BeginObject() *JSON {
	w.sep()
	w.b = append(w.b, '{')
	w.comma = append(w.comma, false)
	return w
}

// EndObject writes '}'.
func (w *JSON) EndObject() *JSON {
	w.comma = w.comma[:len(w.comma)-1]
	w.b = append(w.b, '}')
	return w
}

// BeginArray writes '['.
func (w *JSON) BeginArray() *JSON {
	w.sep()
	w.b = append(w.b, '[')
	w.comma = append(w.comma, false)
	return w
}

// EndArray writes ']'.
func (w *JSON) EndArray() *JSON {
	w.comma = w.comma[:len(w.comma)-1]
	w.b = append(w.b, ']')
	return w
}

// Key writes an object key; the next call writes its value.
func (w *JSON) Key(k string) *JSON {
	w.sep()
	w.b = AppendJavaString(w.b, k)
	w.b = append(w.b, ':')
	w.key = true
	return w
}

// Str writes a string value.
func (w *JSON) Str(s string) *JSON {
	w.sep()
	w.b = AppendJavaString(w.b, s)
	return w
}

// Int writes an integer value (Java int or long).
func (w *JSON) Int(i int64) *JSON {
	w.sep()
	w.b = strconv.AppendInt(w.b, i, 10)
	return w
}

// Double writes a Java double as Jackson does (Double.toString); NaN and
// the infinities are quoted (QUOTE_NON_NUMERIC_NUMBERS is on by default).
func (w *JSON) Double(f float64) *JSON {
	w.sep()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.b = append(AppendJavaDouble(append(w.b, '"'), f), '"')
		return w
	}
	w.b = AppendJavaDouble(w.b, f)
	return w
}

// Float writes a Java float as Jackson does (Float.toString); NaN and the
// infinities are quoted.
func (w *JSON) Float(f float32) *JSON {
	w.sep()
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		w.b = append(AppendJavaFloat(append(w.b, '"'), f), '"')
		return w
	}
	w.b = AppendJavaFloat(w.b, f)
	return w
}

// Bool writes true or false.
func (w *JSON) Bool(v bool) *JSON {
	w.sep()
	w.b = strconv.AppendBool(w.b, v)
	return w
}

// Null writes null.
func (w *JSON) Null() *JSON {
	w.sep()
	w.b = append(w.b, "null"...)
	return w
}

// Raw writes an already-encoded JSON value.
func (w *JSON) Raw(v []byte) *JSON {
	w.sep()
	w.b = append(w.b, v...)
	return w
}

// StrMap writes a map of strings in the given key order; a nil map is null when
// nullIfNil is set, else {}.
func (w *JSON) StrMap(keys []string, m map[string]string, nullIfNil bool) *JSON {
	if m == nil && nullIfNil {
		return w.Null()
	}
	w.BeginObject()
	for _, k := range keys {
		w.Key(k).Str(m[k])
	}
	return w.EndObject()
}

// StrList writes a JSON array of strings ([] for nil).
func (w *JSON) StrList(l []string) *JSON {
	w.BeginArray()
	for _, s := range l {
		w.Str(s)
	}
	return w.EndArray()
}

const hexUpper = "0123456789ABCDEF"

// plainASCII8 reports whether the 8 bytes of s (len 8) are ASCII that
// AppendJavaString writes as they are: none below 0x20, none at or above
// 0x80, no '"' and no '\\'.
func plainASCII8(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	if x&highs != 0 {
		return false
	}
	// with every byte below 0x80, a byte b < n makes (b - n) borrow into
	// bit 7 (a borrow may mark bytes above it too: only "any" is exact)
	below := (x - ones*0x20) & highs
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return below|hasZero(x^(ones*'"'))|hasZero(x^(ones*'\\')) == 0
}

// AppendJavaString appends s as a JSON string the way Jackson writes it: only
// '"', '\\' and control characters below 0x20 are escaped (\b \t \n \f \r, the
// rest as \u00XX with upper-case hex); '/', '<', '>', '&', U+2028/U+2029 and
// all non-ASCII text are written raw. Invalid UTF-8 is replaced by U+FFFD, as a
// Java String cannot hold it.
func AppendJavaString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// eight plain ASCII bytes at a time
		for i+8 <= len(s) && plainASCII8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\uFFFD"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xF])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendJavaDouble appends f formatted like Java's Double.toString: plain
// decimal with at least one fraction digit for 1e-3 <= |f| < 1e7, else
// computerized scientific notation ("1.0E7", "1.0E-4"); NaN and Infinity as
// Java's toString writes them (JSON.Double quotes those, as Jackson does).
func AppendJavaDouble(b []byte, f float64) []byte { return appendJava(b, f, 64) }

// AppendJavaFloat is AppendJavaDouble for Java float (Float.toString).
func AppendJavaFloat(b []byte, f float32) []byte { return appendJava(b, float64(f), 32) }

func appendJava(b []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "NaN"...)
	case math.IsInf(f, 1):
		return append(b, "Infinity"...)
	case math.IsInf(f, -1):
		return append(b, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	// Shortest digits that round-trip, as decimal mantissa and exponent.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, bits) // e.g. -1.2345e+07
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	ePos := 0
	for i, c := range e {
		if c == 'e' {
			ePos = i
			break
		}
	}
	mant := e[:ePos]
	exp, _ := strconv.Atoi(string(e[ePos+1:]))
	digits := make([]byte, 0, 20)
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	if neg {
		b = append(b, '-')
	}
	abs := math.Abs(f)
	if abs >= 1e-3 && abs < 1e7 {
		// plain notation: the decimal point sits after exp+1 digits
		point := exp + 1
		if point <= 0 {
			b = append(b, '0', '.')
			for i := 0; i < -point; i++ {
				b = append(b, '0')
			}
			return append(b, digits...)
		}
		for len(digits) < point {
			digits = append(digits, '0')
		}
		b = append(b, digits[:point]...)
		b = append(b, '.')
		if len(digits) == point {
			return append(b, '0')
		}
		return append(b, digits[point:]...)
	}
	b = append(b, digits[0], '.')
	if len(digits) == 1 {
		b = append(b, '0')
	} else {
		b = append(b, digits[1:]...)
	}
	b = append(b, 'E')
	return strconv.AppendInt(b, int64(exp), 10)
}

// FormatJavaDouble returns AppendJavaDouble as a string.
func FormatJavaDouble(f float64) string { return string(AppendJavaDouble(nil, f)) }

// FormatJavaFloat returns AppendJavaFloat as a string.
func FormatJavaFloat(f float32) string { return string(AppendJavaFloat(nil, f)) }

// JavaStringHash is Java's String.hashCode over UTF-16 code units.
func JavaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r1, r2 := utf16Surrogates(r)
			h = 31*h + int32(r1)
			h = 31*h + int32(r2)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

func utf16Surrogates(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}
