package auth

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Settings are the nacos.core.auth.* properties of Java Nacos 1.4.8
// (console-auth-core-v1.md §3.1), with the environment names of the
// nacos/nacos-server image. The zero value is auth switched off, as shipped.
type Settings struct {
	// Enabled is nacos.core.auth.enabled [NACOS_AUTH_ENABLE]: every
	// @Secured naming, config and console endpoint then requires a token.
	Enabled bool
	// SystemType is nacos.core.auth.system.type [NACOS_AUTH_SYSTEM_TYPE];
	// only "nacos" (any case) exists. Empty means "nacos".
	SystemType string
	// TokenSecret is nacos.core.auth.default.token.secret.key
	// [NACOS_AUTH_TOKEN]: the Base64 text of the HMAC-SHA256 key. With auth
	// enabled it must decode to at least 32 bytes and must not be the secret
	// published in the Java distribution. Empty with auth off: a random
	// per-process key (tokens from /v1/auth/users/login then only work on
	// this process, which with auth off checks none).
	TokenSecret string
	// TokenExpire is nacos.core.auth.default.token.expire.seconds
	// [NACOS_AUTH_TOKEN_EXPIRE_SECONDS]; 0 means 18000 s.
	TokenExpire time.Duration
	// IdentityKey and IdentityValue are nacos.core.auth.server.identity.key
	// and .value [NACOS_AUTH_IDENTITY_KEY, NACOS_AUTH_IDENTITY_VALUE]: the
	// header nodes put on node-to-node calls. Required with auth enabled.
	IdentityKey, IdentityValue string
	// CachingEnabled is nacos.core.auth.caching.enabled
	// [NACOS_AUTH_CACHE_ENABLE]. Accepted for compatibility; nacosd's
	// user/role/permission view is always current (it follows the raft
	// store), so neither value delays a change as Java's 15 s cache does.
	CachingEnabled bool
	// UserAgentAuthWhite is nacos.core.auth.enable.userAgentAuthWhite
	// [NACOS_AUTH_USER_AGENT_AUTH_WHITE_ENABLE]. Accepted and ignored: nacosd
	// never trusts User-Agent (CVE-2021-29441); true only logs a warning.
	UserAgentAuthWhite bool
}

// DefaultTokenSecret is the secret shipped in every Java Nacos 1.4.x
// distribution: anyone can sign an admin token with it, so nacosd refuses
// it when auth is enabled.
const DefaultTokenSecret = "SecretKey012345678901234567890123456789012345678901234567890123456789"

// publishedIdentities are identity values seen in the Nacos documentation
// and docker examples; with auth on they are as good as none.
var publishedIdentities = map[string]bool{"": true, "security": true, "serverIdentity": true, "nacos": true, "example": true}

// MinKeyBytes is the shortest HMAC key accepted (jjwt's HS256 minimum).
const MinKeyBytes = 32

// Validate reports settings nacosd refuses to start with. With auth off
// everything but a malformed value is accepted; with auth on the published
// default secret, a key shorter than 32 bytes and an empty or published
// identity are refused with a message saying how to set them.
func (s Settings) Validate() error {
	if s.SystemType != "" && !strings.EqualFold(s.SystemType, "nacos") {
		return fmt.Errorf("auth: nacos.core.auth.system.type %q is not supported; only \"nacos\" exists", s.SystemType)
	}
	if s.TokenExpire < 0 {
		return errors.New("auth: nacos.core.auth.default.token.expire.seconds must be positive")
	}
	if !s.Enabled {
		if s.TokenSecret != "" {
			if _, err := DecodeSecret(s.TokenSecret); err != nil {
				return err
			}
		}
		return nil
	}
	if s.TokenSecret == "" {
		return errors.New("auth: nacos.core.auth.enabled=true needs a token secret: set nacos.core.auth.default.token.secret.key " +
			"(env NACOS_AUTH_TOKEN) to the Base64 text of at least 32 random bytes, e.g. `openssl rand -base64 32`")
	}
	if strings.TrimSpace(s.TokenSecret) == DefaultTokenSecret || strings.HasPrefix(strings.TrimSpace(s.TokenSecret), "SecretKey0123456789") {
		return errors.New("auth: refusing the token secret published in the Java Nacos distribution (anyone could forge an admin token): " +
			"set nacos.core.auth.default.token.secret.key (env NACOS_AUTH_TOKEN) to the Base64 text of at least 32 random bytes, e.g. `openssl rand -base64 32`")
	}
	if _, err := DecodeSecret(s.TokenSecret); err != nil {
		return err
	}
	if strings.TrimSpace(s.IdentityKey) == "" || publishedIdentities[strings.TrimSpace(s.IdentityValue)] {
		return errors.New("auth: nacos.core.auth.enabled=true needs a server identity that is neither empty nor a published example: " +
			"set nacos.core.auth.server.identity.key and nacos.core.auth.server.identity.value (env NACOS_AUTH_IDENTITY_KEY, NACOS_AUTH_IDENTITY_VALUE) " +
			"to the same secret values on every node, e.g. value `openssl rand -hex 24`")
	}
	if len(s.IdentityValue) < 16 {
		return errors.New("auth: nacos.core.auth.server.identity.value (env NACOS_AUTH_IDENTITY_VALUE) must be at least 16 characters of a random secret, e.g. `openssl rand -hex 24`")
	}
	if strings.ContainsAny(s.IdentityKey, " \t\r\n:") || strings.ContainsAny(s.IdentityValue, "\r\n") {
		return errors.New("auth: nacos.core.auth.server.identity.key must be an HTTP header name and the value a single line")
	}
	return nil
}

// TTL is the token lifetime (18000 s unless set).
func (s Settings) TTL() time.Duration {
	if s.TokenExpire <= 0 {
		return DefaultTokenTTL
	}
	return s.TokenExpire
}

// DecodeSecret decodes a nacos.core.auth.default.token.secret.key value as
// jjwt's lenient Base64 decoder does (standard or URL alphabet, padding
// optional, a dangling last character ignored) and checks the 32-byte
// minimum.
func DecodeSecret(secret string) ([]byte, error) {
	s := strings.TrimRight(strings.TrimSpace(secret), "=")
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	if len(s)%4 == 1 { // jjwt drops a dangling sextet
		s = s[:len(s)-1]
	}
	key, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("auth: nacos.core.auth.default.token.secret.key (env NACOS_AUTH_TOKEN) is not Base64 text: %w", err)
	}
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("auth: nacos.core.auth.default.token.secret.key (env NACOS_AUTH_TOKEN) decodes to %d bytes; "+
			"at least %d are needed (Base64 text of 32 random bytes, e.g. `openssl rand -base64 32`)", len(key), MinKeyBytes)
	}
	return key, nil
}
