package auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// Token errors, with Java's AccessException messages (§3.3).
var (
	ErrNoToken      = compat.Forbidden("user not found!")
	ErrTokenExpired = compat.Forbidden("token expired!")
	ErrTokenInvalid = compat.Forbidden("token invalid!")
)

// jwtHeader is {"alg":"HS256"} base64url-encoded, as jjwt writes it.
const jwtHeader = "eyJhbGciOiJIUzI1NiJ9"

// maxTokenLen bounds what is parsed at all: a nacosd or Java token for a
// 50-character user is about 180 bytes.
const maxTokenLen = 4096

var b64 = base64.RawURLEncoding

// tokens mints and verifies jjwt-compatible HS256 tokens
// {"sub":user,"exp":epochSeconds} (§3.4), plus "epoch" (the user's token
// epoch, epochs.go); jjwt ignores the extra claim, so Java nodes read
// nacosd's tokens.
type tokens struct {
	key []byte
	ttl time.Duration
	now func() time.Time
}

// claims are what a verified token says.
type claims struct {
	sub string
	exp int64 // seconds
	// epoch is the user's token epoch when the token was minted; hasEpoch
	// is false for tokens without the claim (Java's, and nacosd's before
	// issue 26).
	epoch    int64
	hasEpoch bool
}

// mint signs {"sub":user,"exp":floor((now ms + ttl ms)/1000),"epoch":epoch}.
func (t tokens) mint(user string, epoch int64) string {
	exp := (t.now().UnixMilli() + t.ttl.Milliseconds()) / 1000
	payload := compat.NewJSON(64)
	payload.BeginObject().Key("sub").Str(user).Key("exp").Int(exp).Key("epoch").Int(epoch).EndObject()
	unsigned := jwtHeader + "." + b64.EncodeToString(payload.Bytes())
	return unsigned + "." + b64.EncodeToString(t.sign(unsigned))
}

func (t tokens) sign(unsigned string) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write([]byte(unsigned))
	return m.Sum(nil)
}

// verify returns the claims of a valid token. It accepts only HS256 with
// nacosd's key: "alg":"none", other algorithms, a missing or non-numeric
// exp, unknown critical headers, trailing garbage and anything longer than
// maxTokenLen are "token invalid!"; a correctly signed token past its exp is
// "token expired!" (jjwt: valid while now <= exp).
func (t tokens) verify(token string) (claims, error) {
	if token == "" {
		return claims{}, ErrNoToken
	}
	if len(token) > maxTokenLen {
		return claims{}, ErrTokenInvalid
	}
	h, rest, ok := strings.Cut(token, ".")
	if !ok {
		return claims{}, ErrTokenInvalid
	}
	p, s, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(s, ".") {
		return claims{}, ErrTokenInvalid
	}
	sig, err := b64.DecodeString(s)
	if err != nil || !hmac.Equal(sig, t.sign(h+"."+p)) {
		return claims{}, ErrTokenInvalid
	}
	var header struct {
		Alg  string   `json:"alg"`
		Crit []string `json:"crit"`
	}
	if !decodeStrict(h, &header) || header.Alg != "HS256" || header.Crit != nil {
		return claims{}, ErrTokenInvalid
	}
	var raw struct {
		Sub   *string         `json:"sub"`
		Exp   json.RawMessage `json:"exp"`
		Epoch json.RawMessage `json:"epoch"`
	}
	if !decodeStrict(p, &raw) || raw.Sub == nil || *raw.Sub == "" || raw.Exp == nil {
		return claims{}, ErrTokenInvalid
	}
	exp, err := strconv.ParseInt(string(raw.Exp), 10, 64) // a JSON integer, not a string
	if err != nil {
		return claims{}, ErrTokenInvalid
	}
	c := claims{sub: *raw.Sub, exp: exp}
	if raw.Epoch != nil {
		if c.epoch, err = strconv.ParseInt(string(raw.Epoch), 10, 64); err != nil {
			return claims{}, ErrTokenInvalid
		}
		c.hasEpoch = true
	}
	if t.now().UnixMilli() > exp*1000 {
		return claims{}, ErrTokenExpired
	}
	return c, nil
}

func decodeStrict(part string, v any) bool {
	raw, err := b64.DecodeString(part)
	if err != nil {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(v) != nil {
		return false
	}
	_, err = d.Token()
	return err != nil // nothing after the object
}
