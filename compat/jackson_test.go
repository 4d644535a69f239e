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

// TestSpringBodyError: the clone endpoint's answers on the 1.4.8 reference.
func TestSpringBodyError(t *testing.T) {
	const typ = "java.util.ArrayList<com.alibaba.nacos.config.server.controller.parameters.SameNamespaceCloneConfigBean>"
	for _, c := range []struct{ body, want string }{
		{`{not json`, "caused: JSON parse error: Cannot deserialize value of type `" + typ + "` from Object value (token `JsonToken.START_OBJECT`); nested exception is com.fasterxml.jackson.databind.exc.MismatchedInputException: Cannot deserialize value of type `" + typ + "` from Object value (token `JsonToken.START_OBJECT`)\n at [Source: (org.springframework.util.StreamUtils$NonClosingInputStream); line: 1, column: 1];caused: Cannot deserialize value of type `" + typ + "` from Object value (token `JsonToken.START_OBJECT`)\n at [Source: (org.springframework.util.StreamUtils$NonClosingInputStream); line: 1, column: 1];"},
		{`[{"cfgId":1,"dataId":"a","group":"b"}`, "caused: JSON parse error: Unexpected end-of-input: expected close marker for Array (start marker at [Source: (org.springframework.util.StreamUtils$NonClosingInputStream); line: 1, column: 1]); nested exception is com.fasterxml.jackson.core.io.JsonEOFException: Unexpected end-of-input: expected close marker for Array (start marker at [Source: (org.springframework.util.StreamUtils$NonClosingInputStream); line: 1, column: 1])\n at [Source: (org.springframework.util.StreamUtils$NonClosingInputStream); line: 1, column: 38];caused: Unexpected end-of-input: expected close marker for Array (start marker at [Source: (org.springframework.util.StreamUtils$NonClosingInputStream); line: 1, column: 1])\n at [Source: (org.springframework.util.StreamUtils$NonClosingInputStream); line: 1, column: 38];"},
	} {
		msg, cause, ok := SpringBodyError(c.body, typ, true)
		if got := ConfigServerError(msg, cause).Body; !ok || got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.body, got, c.want)
		}
	}
	if _, _, ok := SpringBodyError(`[]`, typ, true); ok {
		t.Error("[] is no error")
	}
}
