package compat

import (
	"encoding/json"
	"os"
	"testing"
)

// TestJacksonSyntaxError replays messages the Java Nacos 1.4.8 reference
// gave for malformed selectors (GET /v1/ns/service/list?selector=...; "" is a
// well-formed first value, for which Java went on to a NullPointerException).
func TestJacksonSyntaxError(t *testing.T) {
	b, err := os.ReadFile("testdata/jackson_errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct{ Src, Want string }
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if got := JacksonSyntaxError(c.Src); got != c.Want {
			t.Errorf("%q:\n got %q\nwant %q", c.Src, got, c.Want)
		}
	}
}

func FuzzJacksonSyntaxError(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x\u0041"]}`, `{not`, `[1,`, `-`, `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		msg := JacksonSyntaxError(s)
		var v any
		if msg == "" && json.Valid([]byte(s)) != (json.Unmarshal([]byte(s), &v) == nil) {
			t.Fatal("inconsistent")
		}
		if msg != "" && json.Valid([]byte(s)) {
			t.Fatalf("valid JSON %q reported as %q", s, msg)
		}
	})
}
