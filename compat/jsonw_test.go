package compat

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestJavaDouble(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   float64
		want string
	}{
		{1, "1.0"}, {0, "0.0"}, {0.5, "0.5"}, {100, "100.0"}, {1e-4, "1.0E-4"}, {0.001, "0.001"},
		{1e7, "1.0E7"}, {9999999, "9999999.0"}, {12345678.9, "1.23456789E7"}, {-2.5, "-2.5"},
		{0.1, "0.1"}, {10000, "10000.0"}, {0.01, "0.01"}, {123.456, "123.456"}, {1.5e-7, "1.5E-7"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Copysign(0, -1), "-0.0"}, {1e21, "1.0E21"},
	}
	for _, c := range cases {
		if got := FormatJavaDouble(c.in); got != c.want {
			t.Errorf("FormatJavaDouble(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	fc := []struct {
		in   float32
		want string
	}{{0, "0.0"}, {0.7, "0.7"}, {0.85, "0.85"}, {1, "1.0"}, {0.05, "0.05"}, {3.4e38, "3.4E38"}}
	for _, c := range fc {
		if got := FormatJavaFloat(c.in); got != c.want {
			t.Errorf("FormatJavaFloat(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestJavaString(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`a"b\c`, `"a\"b\\c"`},
		{"x\ny\tz\r\b\f", `"x\ny\tz\r\b\f"`},
		{"\x01\x1f", `"\u0001\u001F"`},
		{"</script>&", `"</script>&"`},
		{"中文\u2028", "\"中文\u2028\""},
		{"bad\xffutf8", "\"bad\uFFFDutf8\""},
	}
	for _, c := range cases {
		if got := string(AppendJavaString(nil, c.in)); got != c.want {
			t.Errorf("AppendJavaString(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// javaStringRef is AppendJavaString written rune by rune: the reference
// its eight-bytes-at-a-time scan is checked against.
func javaStringRef(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString("\uFFFD")
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

// Every byte value at every offset of a run longer than the 8-byte scan.
func TestJavaStringEveryByteEveryOffset(t *testing.T) {
	t.Parallel()
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 24; pos++ {
			in := []byte(strings.Repeat("abcdefgh", 3))
			in[pos] = byte(c)
			if got, want := string(AppendJavaString(nil, string(in))), javaStringRef(string(in)); got != want {
				t.Fatalf("byte %#x at %d: got %s want %s", c, pos, got, want)
			}
		}
	}
}

func FuzzJavaString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text, long enough", "a\"b\\c\x01\x7f\x80", "中文 \xff\xfe 😀 \u2028 tail.."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(AppendJavaString(nil, s)), javaStringRef(s); got != want {
			t.Fatalf("AppendJavaString(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestJSONWriterCommas(t *testing.T) {
	t.Parallel()
	w := NewJSON(0)
	w.BeginObject().Key("a").BeginArray().Int(1).Str("x").BeginObject().EndObject().EndArray().
		Key("b").Double(1).Key("c").Null().Key("d").StrList(nil).Key("n").Double(math.NaN()).Key("i").Float(float32(math.Inf(-1))).EndObject()
	if got, want := w.String(), `{"a":[1,"x",{}],"b":1.0,"c":null,"d":[],"n":"NaN","i":"-Infinity"}`; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestJavaStringHash(t *testing.T) {
	t.Parallel()
	cases := map[string]int32{"": 0, "a": 97, "hello": 99162322, "DEFAULT_GROUP@@demo": JavaStringHash("DEFAULT_GROUP@@demo"), "polygenelubricants": math.MinInt32, "😀": 1772899}
	for s, want := range cases {
		if got := JavaStringHash(s); got != want {
			t.Errorf("hash(%q) = %d, want %d", s, got, want)
		}
	}
}

func TestJavaHashMapOrder(t *testing.T) {
	t.Parallel()
	// ServerStateController: new HashMap<>(4) filled standalone_mode, function_mode, version
	// iterates version, standalone_mode, function_mode (console-auth-core-v1.md §5).
	got := JavaHashOrderStrings([]string{"standalone_mode", "function_mode", "version"}, 4)
	want := []string{"version", "standalone_mode", "function_mode"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
	// PushService: new HashMap<>(2) with type, data, lastRefTime (naming-v1.md §5.4)
	got = JavaHashOrderStrings([]string{"type", "data", "lastRefTime"}, 2)
	want = []string{"type", "data", "lastRefTime"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v want %v", got, want)
		}
	}
}
