package compat

import (
	"fmt"
	"regexp"
	"strings"
)

// Java regular expressions as Nacos 1.4.8 applies them to what clients
// send (service name filters, the catalog's search): a translation to RE2
// whose errors are Java's own PatternSyntaxException texts, which clients
// read in 400 bodies.

// CompileJavaRegex compiles a java.util.regex pattern that Java Nacos
// matches with String.matches (a full match). The syntax errors Java
// reports most often come out as its PatternSyntaxException messages
// (an IllegalArgumentException: 400): unclosed group or character class,
// unmatched ')', dangling quantifier, illegal repetition, unsupported
// escape. Java escapes RE2 spells otherwise (\uhhhh, \e) are rewritten and
// possessive quantifiers become greedy ones; what RE2 cannot express at
// all (look-around, back references) is refused with Go's message.
func CompileJavaRegex(pattern string) (*regexp.Regexp, error) {
	goPattern, err := javaRegexToRE2(pattern)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile("^(?:" + goPattern + ")$")
	if err != nil {
		return nil, IllegalArgument(err.Error())
	}
	return re, nil
}

func patternError(desc string, index int, pattern string) error {
	msg := fmt.Sprintf("%s near index %d\n%s", desc, index, pattern)
	if index < len([]rune(pattern)) {
		msg += "\n" + strings.Repeat(" ", index) + "^"
	}
	return IllegalArgument(msg)
}

// javaRegexToRE2 checks pattern against Java's syntax and returns its RE2
// spelling.
func javaRegexToRE2(pattern string) (string, error) {
	rs := []rune(pattern)
	var out strings.Builder
	depth := 0
	// canQuantify: the previous item can take a quantifier; quantified:
	// the previous item already has one (a following + or ? modifies it)
	canQuantify, quantified := false, false
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch c {
		case '\\':
			if i+1 >= len(rs) {
				return "", patternError("Unexpected internal error", i+1, pattern)
			}
			n, esc, err := javaEscape(rs, i, pattern)
			if err != nil {
				return "", err
			}
			out.WriteString(esc)
			i = n
			canQuantify, quantified = true, false
		case '[':
			end := classEnd(rs, i)
			if end < 0 {
				return "", patternError("Unclosed character class", len(rs)-1, pattern)
			}
			out.WriteString(string(rs[i : end+1]))
			i = end
			canQuantify, quantified = true, false
		case '(':
			if i+1 < len(rs) && rs[i+1] == '?' {
				end, closes := groupPrefix(rs, i)
				out.WriteString(string(rs[i : end+1]))
				i = end
				if closes { // (?i): flags only
					canQuantify, quantified = false, false
					continue
				}
			} else {
				out.WriteRune(c)
			}
			depth++
			canQuantify, quantified = false, false
		case ')':
			if depth == 0 {
				return "", patternError("Unmatched closing ')'", i-1, pattern)
			}
			depth--
			out.WriteRune(c)
			canQuantify, quantified = true, false
		case '|':
			out.WriteRune(c)
			canQuantify, quantified = false, false
		case '*', '+', '?':
			switch {
			case quantified && (c == '+' || c == '?'):
				if c == '?' {
					out.WriteRune(c) // lazy
				} // possessive: greedy in RE2
				quantified = false
				canQuantify = false
			case !canQuantify:
				return "", patternError(fmt.Sprintf("Dangling meta character '%c'", c), i, pattern)
			default:
				out.WriteRune(c)
				quantified, canQuantify = true, false
			}
		case '{':
			end, ok, bad := repetition(rs, i)
			if !ok || !canQuantify {
				return "", patternError("Illegal repetition", i+1, pattern)
			}
			if bad {
				return "", patternError("Illegal repetition range", end, pattern)
			}
			out.WriteString(string(rs[i : end+1]))
			i = end
			quantified, canQuantify = true, false
		default:
			out.WriteRune(c)
			canQuantify, quantified = true, false
		}
	}
	if depth > 0 {
		return "", patternError("Unclosed group", len(rs), pattern)
	}
	return out.String(), nil
}

// groupPrefix reads the "(?..." construct at rs[i]: flags "(?i)" (closes
// true), or a group opener "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>",
// "(?<name>", "(?i:"; end is the index of its last rune.
func groupPrefix(rs []rune, i int) (end int, closes bool) {
	j := i + 2
	if j < len(rs) && rs[j] == '<' {
		if j+1 < len(rs) && (rs[j+1] == '=' || rs[j+1] == '!') {
			return j + 1, false
		}
		for k := j + 1; k < len(rs); k++ {
			if rs[k] == '>' {
				return k, false
			}
		}
		return len(rs) - 1, false
	}
	for ; j < len(rs); j++ {
		switch rs[j] {
		case ':', '=', '!', '>':
			return j, false
		case ')':
			return j, true
		}
	}
	return len(rs) - 1, false
}

// repetition reads {n}, {n,} or {n,m} at rs[i]; ok false when it is none
// of those, bad when m < n; end is the index of the closing brace.
func repetition(rs []rune, i int) (end int, ok, bad bool) {
	j := i + 1
	num := func() (int, bool) {
		v, k := 0, j
		for j < len(rs) && rs[j] >= '0' && rs[j] <= '9' {
			v = v*10 + int(rs[j]-'0')
			j++
		}
		return v, j > k
	}
	n, okN := num()
	if !okN {
		return 0, false, false
	}
	m := n
	if j < len(rs) && rs[j] == ',' {
		j++
		var okM bool
		if m, okM = num(); !okM {
			m = n
		}
	}
	if j >= len(rs) || rs[j] != '}' {
		return 0, false, false
	}
	return j, true, m < n
}

// classEnd returns the index of the ']' closing the class that opens at
// rs[i] (a ']' right after "[" or "[^" is literal, nested classes count),
// or -1.
func classEnd(rs []rune, i int) int {
	depth := 0
	for j := i; j < len(rs); j++ {
		switch rs[j] {
		case '\\':
			j++
		case '[':
			depth++
			if j+1 < len(rs) && rs[j+1] == '^' {
				j++
			}
			if j+1 < len(rs) && rs[j+1] == ']' {
				j++
			}
		case ']':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// javaEscape reads the escape at rs[i] ('\\') and returns the index of its
// last rune and its RE2 spelling.
func javaEscape(rs []rune, i int, pattern string) (int, string, error) {
	c := rs[i+1]
	switch {
	case strings.ContainsRune(`tnrfadDsSwWbBAzQE`, c):
		return i + 1, string(rs[i : i+2]), nil
	case c == 'e':
		return i + 1, `\x1b`, nil
	case c == 'u':
		if i+5 < len(rs) {
			hex := string(rs[i+2 : i+6])
			if isHex(hex) {
				return i + 5, `\x{` + hex + `}`, nil
			}
		}
		return 0, "", patternError("Illegal Unicode escape sequence", i+2, pattern)
	case c == 'x':
		if i+3 < len(rs) && isHex(string(rs[i+2:i+4])) {
			return i + 3, string(rs[i : i+4]), nil
		}
		return 0, "", patternError("Illegal hexadecimal escape sequence", i+2, pattern)
	case c == 'p' || c == 'P' || c == 'Z' || c == 'G' || c == 'k' || c == 'R' || c == 'X' || c == 'h' || c == 'H' || c == 'v' || c == 'V' || c == 'c' || (c >= '0' && c <= '9'):
		// valid in Java; RE2 takes some (\pL), refuses the rest at compile
		return i + 1, string(rs[i : i+2]), nil
	case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return 0, "", patternError("Illegal/unsupported escape sequence", i+1, pattern)
	default: // an escaped non-letter is that character
		return i + 1, regexp.QuoteMeta(string(c)), nil
	}
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return s != ""
}
