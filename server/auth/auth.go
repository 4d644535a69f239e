// Package auth is the part of Nacos 1.4.8's authentication that clients use
// with authorisation switched off (nacos.core.auth.enabled=false, the
// shipped default): POST /v1/auth/users/login for the built-in user, which
// mints the JWT Java Nacos would (console-auth-core-v1.md §3.4, §3.5). User,
// role and permission management and request authorisation are not here.
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// Defaults of a fresh Java Nacos 1.4.8.
const (
	DefaultUser     = "nacos"
	DefaultPassword = "nacos"
	DefaultTokenTTL = 18000 * time.Second // nacos.core.auth.default.token.expire.seconds
)

// defaultKeyHex is jjwt's Base64 decoding of the shipped
// nacos.core.auth.default.token.secret.key
// (SecretKey012345678901234567890123456789012345678901234567890123456789),
// as the spec reads it (§3.4).
const defaultKeyHex = "49e72b7ad29ecb4d76df8e7aefcf74d76df8e7aefcf74d76df8e7aefcf74d76df8e7aefcf74d76df8e7aefcf74d76df8e7aefc"

// Config configures the login service.
type Config struct {
	// Users maps user names to passwords. Default: the built-in nacos/nacos.
	Users map[string]string
	// Key is the HMAC-SHA256 key of the tokens (default: the shipped secret).
	Key []byte
	// TTL is the token lifetime.
	TTL time.Duration
	Now func() time.Time
}

// DefaultConfig returns the shipped defaults.
func DefaultConfig() Config {
	key, _ := hex.DecodeString(defaultKeyHex)
	return Config{Users: map[string]string{DefaultUser: DefaultPassword}, Key: key, TTL: DefaultTokenTTL, Now: time.Now}
}

// Validate checks cfg.
func (c Config) Validate() error {
	switch {
	case len(c.Key) < 32:
		return errors.New("auth: token key must be at least 32 bytes (jjwt's HS256 minimum)")
	case c.TTL <= 0:
		return errors.New("auth: token TTL must be positive")
	case c.Now == nil:
		return errors.New("auth: Config.Now is nil")
	}
	return nil
}

// Service logs users in.
type Service struct{ cfg Config }

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{cfg: cfg}, nil
}

// LoginResult is a successful login.
type LoginResult struct {
	Token       string
	TTLSeconds  int64
	GlobalAdmin bool
	Username    string
}

// JSON is the login body: {"accessToken","tokenTtl","globalAdmin","username"}.
func (r LoginResult) JSON() []byte {
	w := compat.NewJSON(256)
	return w.BeginObject().Key("accessToken").Str(r.Token).Key("tokenTtl").Int(r.TTLSeconds).
		Key("globalAdmin").Bool(r.GlobalAdmin).Key("username").Str(r.Username).EndObject().Bytes()
}

// ErrUnknownUser is AccessException("unknown user!") → 403 with the bare text.
var ErrUnknownUser = compat.Forbidden("unknown user!")

// Login checks the credentials (a presented valid token short-circuits, as
// NacosAuthManager.login does) and mints a token.
func (s *Service) Login(username, password, presentedToken string) (LoginResult, error) {
	if presentedToken != "" {
		if sub, ok := s.verify(presentedToken); ok {
			return LoginResult{Token: presentedToken, TTLSeconds: int64(s.cfg.TTL / time.Second), GlobalAdmin: sub == DefaultUser, Username: sub}, nil
		}
	}
	want, ok := s.cfg.Users[username]
	if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(password)) != 1 {
		return LoginResult{}, ErrUnknownUser
	}
	return LoginResult{Token: s.Token(username), TTLSeconds: int64(s.cfg.TTL / time.Second),
		GlobalAdmin: username == DefaultUser, Username: username}, nil
}

var b64 = base64.RawURLEncoding

// jwtHeader is {"alg":"HS256"} base64url-encoded, as jjwt writes it.
const jwtHeader = "eyJhbGciOiJIUzI1NiJ9"

// Token mints {"sub":user,"exp":now+ttl} signed with HS256.
func (s *Service) Token(user string) string {
	exp := (s.cfg.Now().UnixMilli() + s.cfg.TTL.Milliseconds()) / 1000
	payload := compat.NewJSON(64)
	payload.BeginObject().Key("sub").Str(user).Key("exp").Int(exp).EndObject()
	unsigned := jwtHeader + "." + b64.EncodeToString(payload.Bytes())
	return unsigned + "." + b64.EncodeToString(s.sign(unsigned))
}

func (s *Service) sign(unsigned string) []byte {
	m := hmac.New(sha256.New, s.cfg.Key)
	m.Write([]byte(unsigned))
	return m.Sum(nil)
}

// verify checks signature and expiry and returns the subject.
func (s *Service) verify(token string) (string, bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return "", false
	}
	sig, err := b64.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, s.sign(parts[0]+"."+parts[1])) {
		return "", false
	}
	raw, err := b64.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	sub, exp := claim(string(raw), "sub"), claim(string(raw), "exp")
	n, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || sub == "" || s.cfg.Now().Unix() >= n {
		return "", false
	}
	return sub, true
}

// claim extracts a top-level string or number claim from the compact JSON
// payload nacosd (and jjwt) write.
func claim(payload, name string) string {
	i := strings.Index(payload, `"`+name+`":`)
	if i < 0 {
		return ""
	}
	v := payload[i+len(name)+3:]
	if strings.HasPrefix(v, `"`) {
		if j := strings.Index(v[1:], `"`); j >= 0 {
			return v[1 : 1+j]
		}
		return ""
	}
	j := strings.IndexAny(v, ",}")
	if j < 0 {
		return ""
	}
	return v[:j]
}
