package compat

import (
	"strings"
	"unicode"
	"unicode/utf16"
)

// Java's string helpers, as the Nacos 1.4.8 code paths call them. Every
// package uses these (one copy each); naming and httpapi used to carry
// their own variants.

// JavaIsWhitespace is Character.isWhitespace.
func JavaIsWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', 0x0B, '\f', '\r', 0x1C, 0x1D, 0x1E, 0x1F:
		return true
	case 0x00A0, 0x2007, 0x202F:
		return false
	}
	return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

// JavaIsBlank is StringUtils.isBlank (Nacos' and commons-lang3's): empty
// or only Character.isWhitespace characters.
func JavaIsBlank(s string) bool {
	for _, r := range s {
		if !JavaIsWhitespace(r) {
			return false
		}
	}
	return true
}

// JavaTrim is String.trim: every char <= ' ' removed at both ends.
// JavaTrim(s) == "" is the test `s.trim().isEmpty()`.
func JavaTrim(s string) string {
	// bytes <= ' ' are whole runes in UTF-8 (every byte of a multi-byte
	// rune is >= 0x80), so trimming bytes is trimming those chars
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// JavaSplit is String.split with a literal (non-regex-special) separator,
// or with an escaped one ("\\." is JavaSplit(s, ".")): no match gives the
// whole string, trailing empty strings are removed (so "," gives none),
// and "" splits into [""].
func JavaSplit(s, sep string) []string {
	if s == "" {
		return []string{""}
	}
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// JavaEqualsIgnoreCase is String.equalsIgnoreCase (Java 8): the same
// number of UTF-16 chars, each equal, or equal after Character.toUpperCase,
// or after toUpperCase then toLowerCase. Characters outside the BMP are
// compared as their surrogate chars, which have no case.
func JavaEqualsIgnoreCase(a, b string) bool {
	if len(a) == len(b) && a == b {
		return true
	}
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	if len(ua) != len(ub) {
		return false
	}
	for i := range ua {
		c1, c2 := rune(ua[i]), rune(ub[i])
		if c1 == c2 {
			continue
		}
		if utf16.IsSurrogate(c1) || utf16.IsSurrogate(c2) {
			return false
		}
		u1, u2 := unicode.ToUpper(c1), unicode.ToUpper(c2)
		if u1 == u2 || unicode.ToLower(u1) == unicode.ToLower(u2) {
			continue
		}
		return false
	}
	return true
}

// JavaParseBoolean is Boolean.parseBoolean: "true" in any case.
func JavaParseBoolean(s string) bool { return JavaEqualsIgnoreCase(s, "true") }

// CommonsToBoolean is commons-lang BooleanUtils.toBoolean(String): true,
// on, yes, y or t in any case.
func CommonsToBoolean(s string) bool {
	switch strings.ToLower(s) {
	case "true", "on", "yes", "y", "t":
		return true
	}
	return false
}
