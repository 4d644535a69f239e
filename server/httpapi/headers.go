package httpapi

import (
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Response headers of the config reads, written in canonical form
// (SetCanonical skips fasthttp's key normalisation: the config get path
// sets six of them on every answer).
var (
	hdrConfigType   = []byte("Config-Type")
	hdrContentMD5   = []byte("Content-MD5")
	hdrLastModified = []byte("Last-Modified")
	hdrPragma       = []byte("Pragma")
	hdrExpires      = []byte("Expires")
	hdrCacheControl = []byte("Cache-Control")
	valNoCache      = []byte("no-cache")
	valEpoch        = []byte("Thu, 01 Jan 1970 00:00:00 GMT")
	valNoStore      = []byte("no-cache,no-store")
)

// noCache is the Pragma/Expires/Cache-Control triple Java's config reads send.
func noCache(c *fiber.Ctx) {
	h := &c.Response().Header
	h.SetCanonical(hdrPragma, valNoCache)
	h.SetCanonical(hdrExpires, valEpoch)
	h.SetCanonical(hdrCacheControl, valNoStore)
}

// httpDateLen is the length of an HTTP date of years 1000-9999.
const httpDateLen = len(http.TimeFormat)

const (
	httpDays   = "SunMonTueWedThuFriSat"
	httpMonths = "JanFebMarAprMayJunJulAugSepOctNovDec"
)

// appendHTTPDate appends ms (Unix milliseconds) as an HTTP date in UTC,
// time.Time.AppendFormat(http.TimeFormat) without parsing the layout on
// every call (it was a tenth of a config get). Years outside 1000-9999 go
// through AppendFormat.
func appendHTTPDate(dst []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	y, mo, d := t.Date()
	if y < 1000 || y > 9999 {
		return t.AppendFormat(dst, http.TimeFormat)
	}
	hh, mm, ss := t.Clock()
	wd := int(t.Weekday())
	dst = append(dst, httpDays[3*wd:3*wd+3]...)
	dst = append(dst, ',', ' ')
	dst = append2(dst, d)
	dst = append(dst, ' ')
	dst = append(dst, httpMonths[3*(int(mo)-1):3*int(mo)]...)
	dst = append(dst, ' ')
	dst = append2(dst, y/100)
	dst = append2(dst, y%100)
	dst = append(dst, ' ')
	dst = append2(dst, hh)
	dst = append(dst, ':')
	dst = append2(dst, mm)
	dst = append(dst, ':')
	dst = append2(dst, ss)
	return append(dst, " GMT"...)
}

// append2 appends n (0-99) as two digits.
func append2(dst []byte, n int) []byte { return append(dst, byte('0'+n/10), byte('0'+n%10)) }
