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
	// AdminPassword is nacosd.auth.admin-password [NACOSD_AUTH_ADMIN_PASSWORD,
	// NACOS_AUTH_ADMIN_PASSWORD]: the built-in user nacos gets it instead of
	// the published nacos at first start, and later while nacos still has
	// that one (admin.go). Java 1.4.8 has no such setting; Java 2.4+ creates
	// no built-in user and asks for the admin password at the first login.
	AdminPassword string
}

// DefaultTokenSecret is the secret shipped in every Java Nacos 1.4.x
// distribution: anyone can sign an admin token with it, so nacosd refuses
// it when auth is enabled.
const DefaultTokenSecret = "SecretKey012345678901234567890123456789012345678901234567890123456789"

// PublishedTokenSecrets are token secrets printed in Nacos's distributions
// and documentation, with their sources. Anyone can sign an admin token with
// them, so with auth on nacosd refuses every secret that decodes to the same
// key (whatever its spelling: line breaks, padding, the URL alphabet) or
// whose text or key starts like one of them.
var PublishedTokenSecrets = []struct{ Secret, Source string }{
	{DefaultTokenSecret, "conf/application.properties of Java Nacos 1.x and 2.0–2.2.0 (nacos.core.auth.default.token.secret.key, " +
		"later nacos.core.auth.plugin.nacos.token.secret.key), the nacos/nacos-server image's NACOS_AUTH_TOKEN default"},
	{"U2VjcmV0S2V5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5",
		"the Base64 spelling of that default, in conf/application.properties of Java Nacos 2.2.x–2.5.x and widely copied"},
	{"VGhpc0lzTXlDdXN0b21TZWNyZXRLZXkwMTIzNDU2Nzg=", "the example secret of the nacos.io authentication guide (\"ThisIsMyCustomSecretKey012345678\")"},
}

// publishedKeyPrefixes: a key or secret text starting with one of these is
// a published secret with a character changed at its end.
var publishedKeyPrefixes = []string{"SecretKey0123456789", "ThisIsMyCustomSecretKey", "U2VjcmV0S2V5MDEyMzQ1Njc4OTAx", "VGhpc0lzTXlDdXN0b21TZWNyZXRLZXk"}

// publishedSecret reports whether secret is, or decodes to, a published one.
func publishedSecret(secret string) bool {
	text := strings.Join(strings.Fields(secret), "")
	key, _ := DecodeSecret(secret)
	for _, p := range publishedKeyPrefixes {
		if strings.HasPrefix(text, p) || strings.HasPrefix(string(key), p) {
			return true
		}
	}
	for _, p := range PublishedTokenSecrets {
		if pk, err := DecodeSecret(p.Secret); err == nil && key != nil && string(pk) == string(key) {
			return true
		}
	}
	return false
}

// publishedIdentities are identity values seen in the Nacos documentation,
// distributions and docker examples (serverIdentity/security in the
// authentication guide and nacos-docker, example/example in the 2.x
// conf/application.properties); with auth on they are as good as none. They
// are compared without case.
var publishedIdentities = map[string]bool{"": true, "security": true, "serveridentity": true, "nacos": true, "example": true}

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
	if s.AdminPassword != "" {
		if s.AdminPassword == DefaultPassword {
			return errors.New("auth: nacosd.auth.admin-password (env NACOSD_AUTH_ADMIN_PASSWORD) is the published password nacos: choose another")
		}
		if len(s.AdminPassword) > MaxPasswordLen {
			return fmt.Errorf("auth: nacosd.auth.admin-password (env NACOSD_AUTH_ADMIN_PASSWORD) is longer than %d bytes, all bcrypt reads", MaxPasswordLen)
		}
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
	if publishedSecret(s.TokenSecret) {
		return errors.New("auth: refusing a token secret published in the Java Nacos distribution or documentation (anyone could forge an admin token): " +
			"set nacos.core.auth.default.token.secret.key (env NACOS_AUTH_TOKEN) to the Base64 text of at least 32 random bytes, e.g. `openssl rand -base64 32`")
	}
	if _, err := DecodeSecret(s.TokenSecret); err != nil {
		return err
	}
	if strings.TrimSpace(s.IdentityKey) == "" || publishedIdentities[strings.ToLower(strings.TrimSpace(s.IdentityValue))] {
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
