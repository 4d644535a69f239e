// Package httpapi is nacosd's HTTP surface: fiber handlers that bind Java-Nacos
// style parameters, call the domain packages and render the exact Nacos 1.4.8
// bodies. Handlers stay thin; the wire formats live in compat and the logic in
// the domain packages.
package httpapi

import (
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/compat"
)

// Params reads request parameters the way a Java servlet does: query-string
// values first, then form-body values (application/x-www-form-urlencoded, any
// method but GET), first value wins (naming-v1.md §1.4). Returned strings are
// copies, safe to keep after the handler returns.
type Params struct {
	query *fasthttp.Args
	form  *fasthttp.Args
}

// ParamsOf returns the parameters of the request in c.
func ParamsOf(c *fiber.Ctx) Params {
	p := Params{query: c.Request().URI().QueryArgs()}
	if !c.Request().Header.IsGet() {
		p.form = c.Request().PostArgs()
	}
	return p
}

// Raw returns the first value of name and whether it is present at all.
func (p Params) Raw(name string) (string, bool) {
	if p.query != nil && p.query.Has(name) {
		return string(p.query.Peek(name)), true
	}
	if p.form != nil && p.form.Has(name) {
		return string(p.form.Peek(name)), true
	}
	return "", false
}

// Peek is Raw without the copy: the string shares the request's memory and
// is valid only until the handler returns, so use it for values that are
// only looked at (lookups, parsing) and strings.Clone what is kept.
func (p Params) Peek(name string) (string, bool) {
	if p.query != nil && p.query.Has(name) {
		return utils.UnsafeString(p.query.Peek(name)), true
	}
	if p.form != nil && p.form.Has(name) {
		return utils.UnsafeString(p.form.Peek(name)), true
	}
	return "", false
}

// PeekOptional is Optional on Peek: valid only until the handler returns.
func (p Params) PeekOptional(name, def string) string {
	v, ok := p.Peek(name)
	if !ok {
		return def
	}
	v = compat.JavaTrim(v)
	if v == "" {
		return def
	}
	return v
}

// Required is WebUtils.required: missing or empty → 400 "Param 'k' is
// required."; else the trimmed value.
func (p Params) Required(name string) (string, error) {
	v, ok := p.Raw(name)
	if !ok || v == "" {
		return "", compat.ParamRequired(name)
	}
	return compat.JavaTrim(v), nil
}

// Optional is WebUtils.optional: absent or blank → def; else trimmed.
func (p Params) Optional(name, def string) string {
	v, ok := p.Raw(name)
	if !ok {
		return def
	}
	v = compat.JavaTrim(v)
	if v == "" {
		return def
	}
	return v
}

// Spring is a Spring @RequestParam String with a default: absent or empty →
// def, otherwise the untrimmed value.
func (p Params) Spring(name, def string) string {
	v, ok := p.Raw(name)
	if !ok || v == "" {
		return def
	}
	return v
}

// SpringRequired is a required @RequestParam String: absent → 500 missing
// parameter; present (even empty) → the value.
func (p Params) SpringRequired(name string) (string, error) {
	v, ok := p.Raw(name)
	if !ok {
		return "", compat.MissingRequestParam(name, "String")
	}
	return v, nil
}

// ParseJavaInt is Integer.parseInt: errors are 400 NumberFormatException.
func ParseJavaInt(s string) (int, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || s == "" || strings.HasPrefix(s, "+-") {
		if s == "" {
			return 0, compat.IllegalArgument(`For input string: ""`)
		}
		return 0, compat.NumberFormat(s)
	}
	return int(n), nil
}

// ParseJavaLong is Long.parseLong.
func ParseJavaLong(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, compat.NumberFormat(s)
	}
	return n, nil
}

// ParseJavaDouble is Double.parseDouble (accepts NaN, Infinity, exponents,
// surrounding whitespace, a trailing d/D/f/F).
func ParseJavaDouble(s string) (float64, error) {
	t := compat.JavaTrim(s)
	if t == "" {
		return 0, compat.IllegalArgument("empty String")
	}
	u := t
	if n := len(u); n > 1 && strings.ContainsRune("dDfF", rune(u[n-1])) && !strings.HasSuffix(u, "Infinity") {
		u = u[:n-1]
	}
	switch strings.TrimLeft(u, "+-") {
	case "NaN", "Infinity":
	default:
		if strings.ContainsAny(strings.ToLower(u), "in_x") { // Go accepts inf/nan/hex/underscores; Java does not
			return 0, compat.NumberFormat(s)
		}
	}
	f, err := strconv.ParseFloat(u, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, nil // Java rounds to ±Infinity or 0
		}
		return 0, compat.NumberFormat(s)
	}
	return f, nil
}

// NumberUtilsToInt is commons-lang NumberUtils.toInt: invalid → def.
func NumberUtilsToInt(s string, def int) int {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return def
	}
	return int(n)
}

// NumberUtilsToFloat is NumberUtils.toFloat: invalid → def.
func NumberUtilsToFloat(s string, def float32) float32 {
	f, err := ParseJavaDouble(s)
	if err != nil || s == "" {
		return def
	}
	return float32(f)
}

// BooleanUtilsToBoolean is commons-lang BooleanUtils.toBoolean: true for
// true/on/yes/y/t (any case), false otherwise.
func BooleanUtilsToBoolean(s string) bool {
	switch strings.ToLower(s) {
	case "true", "on", "yes", "y", "t":
		return true
	}
	return false
}

// ParseBoolean is Boolean.parseBoolean: only "true", any case.
func ParseBoolean(s string) bool { return strings.EqualFold(s, "true") }
