package compat

import (
	"errors"
	"testing"
)

// TestJavaRegexErrors: PatternSyntaxException messages of the 1.4.8
// reference (GET /v1/ns/service/names?expr=...; the pattern is ".*expr.*").
func TestJavaRegexErrors(t *testing.T) {
	for _, c := range []struct{ expr, msg string }{
		{"(", "Unclosed group near index 5\n.*(.*"},
		{")", "Unmatched closing ')' near index 1\n.*).*\n ^"},
		{"[", "Unclosed character class near index 4\n.*[.*\n    ^"},
		{"*", "Dangling meta character '*' near index 2\n.**.*\n  ^"},
		{"a{", "Illegal repetition near index 4\n.*a{.*\n    ^"},
		{"x{2,1}", "Illegal repetition range near index 7\n.*x{2,1}.*\n       ^"},
		{"a)b", "Unmatched closing ')' near index 2\n.*a)b.*\n  ^"},
		{"[a", "Unclosed character class near index 5\n.*[a.*\n     ^"},
		{"[]", "Unclosed character class near index 5\n.*[].*\n     ^"},
		{"a**", "Dangling meta character '*' near index 4\n.*a**.*\n    ^"},
		{`\q`, "Illegal/unsupported escape sequence near index 3\n.*\\q.*\n   ^"},
		{"x{", "Illegal repetition near index 4\n.*x{.*\n    ^"},
		{"{", "Illegal repetition near index 3\n.*{.*\n   ^"},
		{"a|*", "Dangling meta character '*' near index 4\n.*a|*.*\n    ^"},
	} {
		_, err := CompileJavaRegex(".*" + c.expr + ".*")
		var ce *Error
		if !errors.As(err, &ce) || ce.Status != 400 || ce.Body != "caused: "+c.msg+";" {
			t.Errorf("%q: got %v, want %q", c.expr, err, c.msg)
		}
	}
	// valid in Java: the same matches
	for _, c := range []struct {
		expr, name string
		match      bool
	}{
		{"+x", "ax", true}, {"?", "a", true}, {`\`, "a.b", true}, {"(?<n>a)", "xa", true},
		{"a*+", "aaa", true}, {`\u0041`, "A", true}, {"(?i)abc", "xABC", true}, {"a{2}", "aa", true},
	} {
		re, err := CompileJavaRegex(".*" + c.expr + ".*")
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		if re.MatchString(c.name) != c.match {
			t.Errorf("%q on %q: match %v", c.expr, c.name, !c.match)
		}
	}
}
