package compat

import (
	"reflect"
	"testing"
)

func TestJavaSplit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s, sep string
		want   []string
	}{
		{"", ",", []string{""}},
		{"abc", ",", []string{"abc"}},
		{",", ",", []string{}},
		{",a,,", ",", []string{"", "a"}},
		{"a,,b", ",", []string{"a", "", "b"}},
		{"g@@s@@", "@@", []string{"g", "s"}},
		{"=x", "=", []string{"", "x"}},
	} {
		if got := JavaSplit(c.s, c.sep); !reflect.DeepEqual(got, c.want) {
			t.Errorf("JavaSplit(%q, %q) = %q, want %q", c.s, c.sep, got, c.want)
		}
	}
}

func TestJavaStringPredicates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"true", "TRUE", true}, {"TrUe", "true", true}, {"true", "true ", false},
		{"snowflake", "SNOWFLAKE", true}, {"ſnowflake", "snowflake", true}, // long s upper-cases to S
		{"\u212Aey", "key", true}, // Kelvin sign lower-cases to k
		{"İ", "i", true},          // toLowerCase('İ') is 'i'
		{"ß", "SS", false}, {"", "", true}, {"a", "", false},
		{"\U0001F600", "\U0001F600", true}, {"\U00010428", "\U00010400", false}, // Deseret: Java 8 compares surrogates
	} {
		if got := JavaEqualsIgnoreCase(c.a, c.b); got != c.want {
			t.Errorf("JavaEqualsIgnoreCase(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	for s, want := range map[string]bool{"true": true, "TRUE": true, "1": false, "yes": false, "": false} {
		if JavaParseBoolean(s) != want {
			t.Errorf("JavaParseBoolean(%q) != %v", s, want)
		}
	}
	for s, want := range map[string]bool{"true": true, "On": true, "YES": true, "y": true, "T": true, "1": false, "no": false} {
		if CommonsToBoolean(s) != want {
			t.Errorf("CommonsToBoolean(%q) != %v", s, want)
		}
	}
	if !JavaIsBlank(" \t\u2003") || JavaIsBlank(" \u00a0") || !JavaIsBlank("") || JavaIsBlank("\x01") {
		t.Error("JavaIsBlank")
	}
	if JavaTrim("\x01 a \x00") != "a" || JavaTrim("\u00a0a") != "\u00a0a" {
		t.Error("JavaTrim")
	}
}
