package auth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/raftstore/raftstoretest"
)

// testSecret is Base64 of 32 bytes; testIdentity a random-looking value.
const (
	testSecret   = "dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI="
	testIdentity = "c0ffee-7b9d-4a1e-identity"
)

func onSettings() Settings {
	return Settings{Enabled: true, TokenSecret: testSecret, IdentityKey: "X-Nacos-Identity", IdentityValue: testIdentity}
}

func newService(t *testing.T, st Settings) (*Service, *clocktest.Fake) {
	t.Helper()
	clk := clocktest.New(time.UnixMilli(1700000000123))
	s, err := New(Config{Settings: st, Store: raftstoretest.New(t), Clock: clk, Logger: raftstoretest.Logger(t), BcryptCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, clk
}

func status(err error) int {
	var ce *compat.Error
	if errors.As(err, &ce) {
		return ce.Status
	}
	return 0
}

func TestLoginBuiltInUser(t *testing.T) {
	s, clk := newService(t, onSettings())
	r, err := s.Login(Credentials{Username: "nacos", Password: "nacos"})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(r.Token, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	if parts[0] != jwtHeader || string(payload) != `{"sub":"nacos","exp":1700018000,"epoch":0}` {
		t.Fatalf("token %s payload %s", r.Token, payload)
	}
	if want := `{"accessToken":"` + r.Token + `","tokenTtl":18000,"globalAdmin":true,"username":"nacos"}`; string(r.JSON()) != want {
		t.Fatalf("body %s", r.JSON())
	}
	// a presented valid token short-circuits the password, as Java
	if r2, err := s.Login(Credentials{AccessToken: r.Token, Username: "x", Password: "y"}); err != nil || r2.Token != r.Token {
		t.Fatalf("token login: %v", err)
	}
	for _, c := range [][2]string{{"nacos", "wrong"}, {"admin", "nacos"}, {"", ""}} {
		if _, err := s.Login(Credentials{Username: c[0], Password: c[1], Source: "10.0.0." + c[0]}); err != ErrUnknownUser {
			t.Errorf("%v: %v", c, err)
		}
	}
	// valid until exp inclusive, then "token expired!"
	clk.Advance(DefaultTokenTTL - 123*time.Millisecond)
	if _, err := s.Authenticate(Credentials{Bearer: r.Token}); err != nil {
		t.Fatalf("at exp: %v", err)
	}
	clk.Advance(time.Millisecond)
	if _, err := s.Authenticate(Credentials{Bearer: r.Token}); err != ErrTokenExpired {
		t.Fatalf("after exp: %v", err)
	}
}

func forge(key []byte, header, payload string) string {
	u := b64.EncodeToString([]byte(header)) + "." + b64.EncodeToString([]byte(payload))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(u))
	return u + "." + b64.EncodeToString(m.Sum(nil))
}

func TestForgedTokens(t *testing.T) {
	s, _ := newService(t, onSettings())
	good := s.Token("nacos")
	defKey, err := DecodeSecret(DefaultTokenSecret)
	if err != nil || len(defKey) != 51 {
		t.Fatalf("default key: %d %v", len(defKey), err)
	}
	exp := `,"exp":1900000000}`
	cases := map[string]string{
		"published default secret": forge(defKey, `{"alg":"HS256"}`, `{"sub":"nacos"`+exp),
		"alg none":                 b64.EncodeToString([]byte(`{"alg":"none"}`)) + "." + b64.EncodeToString([]byte(`{"sub":"nacos"`+exp)) + ".",
		"alg none signed":          forge(s.tok.key, `{"alg":"none"}`, `{"sub":"nacos"`+exp),
		"HS512 header, our key":    forge(s.tok.key, `{"alg":"HS512"}`, `{"sub":"nacos"`+exp),
		"RS256 confusion":          forge(s.tok.key, `{"alg":"RS256"}`, `{"sub":"nacos"`+exp),
		"no exp":                   forge(s.tok.key, `{"alg":"HS256"}`, `{"sub":"nacos"}`),
		"string exp":               forge(s.tok.key, `{"alg":"HS256"}`, `{"sub":"nacos","exp":"1900000000"}`),
		"trailing json":            forge(s.tok.key, `{"alg":"HS256"}`, `{"sub":"nacos"`+exp+`{}`),
		"crit header":              forge(s.tok.key, `{"alg":"HS256","crit":["x"]}`, `{"sub":"nacos"`+exp),
		"tampered payload":         good[:strings.Index(good, ".")+1] + b64.EncodeToString([]byte(`{"sub":"nacos","exp":1999999999}`)) + good[strings.LastIndex(good, "."):],
		"tampered signature":       good[:len(good)-3] + "AAA",
		"two parts":                good[:strings.LastIndex(good, ".")],
		"four parts":               good + ".x",
		"huge":                     strings.Repeat("a", 10000),
	}
	for name, tok := range cases {
		if _, err := s.Authenticate(Credentials{Bearer: tok}); err != ErrTokenInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	// a correctly signed token with our key works (control)
	if _, err := s.Authenticate(Credentials{Bearer: forge(s.tok.key, `{"alg":"HS256","typ":"JWT"}`, `{"sub":"nacos"`+exp)}); err != nil {
		t.Fatalf("control: %v", err)
	}
	if _, err := s.Authenticate(Credentials{}); err != ErrUnknownUser {
		t.Fatalf("no credentials: %v (Java: unknown user!)", err)
	}
}

// base64Default is the Base64 spelling of DefaultTokenSecret (Java 2.2.x's
// conf/application.properties).
const base64Default = "U2VjcmV0S2V5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5"

func TestSettingsRefused(t *testing.T) {
	ok := onSettings()
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	mod := func(f func(*Settings)) Settings { s := ok; f(&s); return s }
	for name, c := range map[string]struct {
		s    Settings
		want string
	}{
		"default secret":   {mod(func(s *Settings) { s.TokenSecret = DefaultTokenSecret }), "NACOS_AUTH_TOKEN"},
		"empty secret":     {mod(func(s *Settings) { s.TokenSecret = "" }), "openssl rand -base64 32"},
		"short secret":     {mod(func(s *Settings) { s.TokenSecret = base64.StdEncoding.EncodeToString(make([]byte, 31)) }), "31 bytes"},
		"empty identity":   {mod(func(s *Settings) { s.IdentityKey, s.IdentityValue = "", "" }), "NACOS_AUTH_IDENTITY_KEY"},
		"default identity": {mod(func(s *Settings) { s.IdentityKey, s.IdentityValue = "serverIdentity", "security" }), "identity"},
		"short identity":   {mod(func(s *Settings) { s.IdentityValue = "abc123" }), "16 characters"},
		"system type":      {mod(func(s *Settings) { s.SystemType = "ldap" }), "system.type"},
		// issue 26 item 4: the published secrets in every spelling
		"default in Base64 (2.2.x)": {mod(func(s *Settings) { s.TokenSecret = base64Default }), "published"},
		"nacos.io guide example":    {mod(func(s *Settings) { s.TokenSecret = "VGhpc0lzTXlDdXN0b21TZWNyZXRLZXkwMTIzNDU2Nzg=" }), "published"},
		"default with line breaks": {mod(func(s *Settings) {
			s.TokenSecret = "SecretKey01\n2345678901234567890123456789012345678901234567890123456789"
		}), "published"},
		"default with CRLF": {mod(func(s *Settings) {
			s.TokenSecret = "SecretKey0123456789012345678901234567890\r\n123456789012345678901234567890123456789"
		}), "published"},
		"Base64 default, URL, no pad": {mod(func(s *Settings) {
			s.TokenSecret = strings.TrimRight(strings.NewReplacer("+", "-", "/", "_").Replace(base64Default), "=")
		}), "published"},
		"guide example with line breaks": {mod(func(s *Settings) { s.TokenSecret = "VGhpc0lzTXlDdXN0b21T\nZWNyZXRLZXkwMTIzNDU2Nzg=" }), "published"},
		"guide text, longer, in Base64": {mod(func(s *Settings) {
			s.TokenSecret = base64.StdEncoding.EncodeToString([]byte("ThisIsMyCustomSecretKey0123456789abcdef"))
		}), "published"},
		"identity in capitals": {mod(func(s *Settings) { s.IdentityKey, s.IdentityValue = "serverIdentity", "SECURITY" }), "identity"},
	} {
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// auth off: the default secret is only unused, not refused
	if err := (Settings{TokenSecret: DefaultTokenSecret}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestUsersRolesPermissions(t *testing.T) {
	s, _ := newService(t, onSettings())
	ctx := context.Background()
	if err := s.CreateUser(ctx, "alice", "pw-a"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateUser(ctx, "alice", "x"); status(err) != 400 || err.(*compat.Error).Body != "caused: user 'alice' already exist!;" {
		t.Fatalf("duplicate: %v", err)
	}
	if err := s.CreateUser(ctx, strings.Repeat("u", 51), "x"); status(err) != 400 {
		t.Fatalf("long name: %v", err)
	}
	if err := s.AddRole(ctx, "dev", "bob"); status(err) != 400 {
		t.Fatalf("role of missing user: %v", err)
	}
	if err := s.AddRole(ctx, GlobalAdminRole, "alice"); status(err) != 400 {
		t.Fatalf("ROLE_ADMIN: %v", err)
	}
	if err := s.AddPermission(ctx, "dev", "ns1:*:*", "rw"); status(err) != 400 {
		t.Fatalf("permission of unbound role: %v", err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.AddRole(ctx, "dev", "alice"))
	must(s.AddPermission(ctx, "dev", "ns1:*:*", "rw"))
	must(s.AddPermission(ctx, "dev", ":DEFAULT_GROUP:config/app.yaml", "r"))
	for _, c := range []struct {
		res, act string
		want     bool
	}{
		{"ns1:g:config/x", "r", true}, {"ns1:g:naming/s", "w", true},
		{"ns2:g:config/x", "r", false}, {"ns10:g:config/x", "r", false},
		{":DEFAULT_GROUP:config/app.yaml", "r", true}, {":DEFAULT_GROUP:config/app.yaml", "w", false},
		{":DEFAULT_GROUP:config/appXyaml", "r", false}, // '.' is a dot (Java: a regex dot)
		{":DEFAULT_GROUP:config/app-yaml", "r", false},
		{"console/users", "r", false}, {"console/user/password", "w", true},
	} {
		if got := s.HasPermission("alice", c.res, c.act); got != c.want {
			t.Errorf("%s %s = %v", c.res, c.act, got)
		}
	}
	if !s.HasPermission("nacos", "console/users", "w") {
		t.Fatal("admin")
	}
	pg, err := s.Users(1, 1)
	if err != nil || pg.TotalCount != 2 || pg.PagesAvailable != 2 || len(pg.Items) != 1 || pg.Items[0].Username != "nacos" || pg.Items[0].Password != "" {
		t.Fatalf("users page %+v %v", pg, err)
	}
	if pg, _ := s.Users(3, 1); len(pg.Items) != 0 || pg.TotalCount != 2 {
		t.Fatalf("past the end %+v", pg)
	}
	if _, err := s.Users(0, 1); err != ErrPaging {
		t.Fatal(err)
	}
	if got := s.SearchUsers("li"); len(got) != 1 || got[0] != "alice" {
		t.Fatalf("search %v", got)
	}
	if got := s.SearchUsers("_"); len(got) != 2 { // LIKE wildcard, unescaped as in Java
		t.Fatalf("search _ %v", got)
	}
	if err := s.DeleteUser(ctx, "nacos"); status(err) != 400 {
		t.Fatalf("delete admin: %v", err)
	}
	tok := s.Token("alice")
	must(s.DeleteUser(ctx, "alice"))
	if _, err := s.Authenticate(Credentials{Bearer: tok}); err != ErrNoToken {
		t.Fatalf("deleted user's token: %v", err)
	}
	if pg, _ := s.Roles("alice", 1, 10); pg.TotalCount != 0 {
		t.Fatalf("roles of deleted user kept: %+v", pg)
	}
	if err := s.DeleteRole(ctx, GlobalAdminRole, ""); status(err) != 400 {
		t.Fatalf("unbinding the last admin: %v", err)
	}
}

func TestUpdatePassword(t *testing.T) {
	s, _ := newService(t, onSettings())
	ctx := context.Background()
	if err := s.CreateUser(ctx, "bob", "old"); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdatePassword(ctx, Principal{Username: "eve"}, "bob", "x"); err != ErrNotSelf {
		t.Fatalf("other user: %v", err)
	}
	if err := s.UpdatePassword(ctx, Principal{Username: "bob"}, "bob", "new"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Login(Credentials{Username: "bob", Password: "new"}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdatePassword(ctx, Principal{Username: "nacos", GlobalAdmin: true}, "nobody", "x"); status(err) != 400 {
		t.Fatalf("missing user: %v", err)
	}
}

func TestLoginBackoff(t *testing.T) {
	s, clk := newService(t, onSettings())
	try := func(user, pass, src string) error {
		_, err := s.Login(Credentials{Username: user, Password: pass, Source: src})
		return err
	}
	for i := 0; i < 5; i++ {
		if err := try("nacos", "bad", "1.1.1.1"); err != ErrUnknownUser {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	// the pair is locked: even the right password is refused, for 1 s
	err := try("nacos", "nacos", "1.1.1.1")
	var le *LockedError
	if !errors.As(err, &le) || le.RetryAfter != time.Second || status(err) != 429 {
		t.Fatalf("locked: %v", err)
	}
	// never the user on an address that has not failed
	if err := try("nacos", "nacos", "2.2.2.2"); err != nil {
		t.Fatalf("user locked out of an address that never failed: %v", err)
	}
	clk.Advance(time.Second)
	if err := try("nacos", "bad", "1.1.1.1"); err != ErrUnknownUser {
		t.Fatal(err)
	}
	if err := try("nacos", "nacos", "1.1.1.1"); !errors.As(err, &le) || le.RetryAfter != 2*time.Second {
		t.Fatalf("doubled: %v", err)
	}
	clk.Advance(2 * time.Second)
	if err := try("nacos", "nacos", "1.1.1.1"); err != nil {
		t.Fatalf("after backoff: %v", err)
	}
	// per source: 20 failures across many user names lock the address
	for i := 0; i < 20; i++ {
		_ = try("user"+itoa(i), "x", "9.9.9.9")
	}
	if err := try("nacos", "nacos", "9.9.9.9"); !errors.As(err, &le) {
		t.Fatalf("source not locked: %v", err)
	}
	if err := try("nacos", "nacos", "8.8.8.8"); err != nil {
		t.Fatalf("other source: %v", err)
	}
}

// Issue 26 item 2: a guesser sending 33 wrong passwords in 25 s (as it did
// against nacosd's per-user lock) slows only himself: the admin logs in from
// every address that has not failed, at once, while the guesser's own pair
// and address stay locked with a growing backoff.
func TestLoginGuesserLocksOnlyHimself(t *testing.T) {
	s, clk := newService(t, onSettings())
	try := func(user, pass, src string) error {
		_, err := s.Login(Credentials{Username: user, Password: pass, Source: src})
		return err
	}
	var le *LockedError
	refused := 0
	for i := 0; i < 33; i++ {
		if err := try("nacos", "guess"+itoa(i), "6.6.6.6"); errors.As(err, &le) {
			refused++
		}
		if err := try("nacos", "nacos", "10.0.0."+itoa(i%250+1)); err != nil {
			t.Fatalf("guess %d: the admin is locked out of a fresh address: %v", i, err)
		}
		clk.Advance(25 * time.Second / 33)
	}
	if refused == 0 {
		t.Fatal("the guesser was never throttled")
	}
	// backoff: the lockout doubled with every failure let through
	if err := try("nacos", "nacos", "6.6.6.6"); !errors.As(err, &le) || le.RetryAfter <= 2*time.Second {
		t.Fatalf("the guesser's pair is not locked with a grown backoff: %v", err)
	}
}

// Issue 26 item 6: a permission resource is a literal name with * as the
// only wildcard (and .*, Java's spelling of it); Java reads it as a regular
// expression, so "config/app.yaml" also granted "config/app-yaml".
func TestMatchResource(t *testing.T) {
	for _, c := range []struct {
		stored, res string
		want        bool
	}{
		{"nsA:*:*", "nsA:G1:config/x", true},
		{"nsA:*:*", "nsAB:G1:config/x", false},
		{"nsA:G1:config/app.yaml", "nsA:G1:config/app.yaml", true},
		{"nsA:G1:config/app.yaml", "nsA:G1:config/app-yaml", false},
		{"nsA:G1:config/app.yaml", "nsA:G1:config/appXyaml", false},
		{"nsA:(G1|G2):*", "nsA:G2:config/x", false},
		{"nsA:(G1|G2):*", "nsA:(G1|G2):config/x", true},
		{"nsA:G[12]:*", "nsA:G1:config/x", false},
		{"nsA:G1?:*", "nsA:G:config/x", false},
		{"nsA:G1+:*", "nsA:G11:config/x", false},
		{"^nsA:*", "nsA:G1:config/x", false},
		{"nsA:.*:.*", "nsA:G1:config/x", true},
		{"nsA:G1:config/app.*", "nsA:G1:config/app.yaml", true},
		{"*", "anything:at:all", true},
		{"*:*:naming/*", "nsB:G:naming/svc", true},
		{"*:*:naming/*", "nsB:G:config/svc", false},
		{"team_a:*:*", "team-a:G:config/x", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"", "", true},
		{"", "x", false},
		{":*:*", ":G:config/x", true},
		{":*:*", "nsA:G:config/x", false},
		{strings.Repeat("*a", 50), strings.Repeat("a", 5000) + "b", false},
	} {
		if got := MatchResource(c.stored, c.res); got != c.want {
			t.Errorf("MatchResource(%q, %q) = %v", c.stored, c.res, got)
		}
	}
}

func TestLikeMatch(t *testing.T) {
	for _, c := range []struct {
		s, p string
		want bool
	}{{"alice", "%li%", true}, {"alice", "%x%", false}, {"a", "%%", true}, {"ab", "_b", true}, {"ab", "a_c", false}, {"abc", "%b%c", true}} {
		if likeMatch(c.s, c.p) != c.want {
			t.Errorf("%q LIKE %q", c.s, c.p)
		}
	}
}

func TestIdentity(t *testing.T) {
	id := Identity{Key: "X-Id", Value: "v"}
	h := map[string]string{}
	id.Sign(func(k, v string) { h[k] = v })
	if !id.Verify(func(k string) string { return h[k] }) {
		t.Fatal("own signature refused")
	}
	if id.Verify(func(string) string { return "w" }) || (Identity{}).Verify(func(string) string { return "" }) {
		t.Fatal("wrong or unconfigured identity accepted")
	}
}

// A pair that logged in lately is exempt from its address's lockout: a
// misconfigured client on an app's host cannot lock out the other users
// there; the pair's own failures still lock it. A guesser elsewhere locks
// nothing of it.
func TestLoginBackoffKnownGood(t *testing.T) {
	s, clk := newService(t, onSettings())
	try := func(user, pass, src string) error {
		_, err := s.Login(Credentials{Username: user, Password: pass, Source: src})
		return err
	}
	if err := s.CreateUser(context.Background(), "app", "app-password"); err != nil {
		t.Fatal(err)
	}
	if err := try("app", "app-password", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if err := try("nacos", "nacos", "10.0.0.1"); err != nil {
		t.Fatal(err)
	}
	// a guesser on another address locks only himself
	for i := 0; i < 5; i++ {
		_ = try("app", "guess"+itoa(i), "6.6.6.6")
	}
	var le *LockedError
	if err := try("app", "app-password", "7.7.7.7"); err != nil {
		t.Fatalf("user locked for a new address by a guesser elsewhere: %v", err)
	}
	if err := try("app", "app-password", "10.0.0.1"); err != nil {
		t.Fatalf("known-good pair locked out by a guesser elsewhere: %v", err)
	}
	// misconfigured clients on 10.0.0.1 fail 25 times (as six users)
	for i := 0; i < 25; i++ {
		_ = try("stale"+itoa(i%6), "x", "10.0.0.1")
	}
	if err := try("nacos", "nacos", "10.0.0.1"); err != nil {
		t.Fatalf("known-good pair locked out by its address's failures: %v", err)
	}
	if err := try("newcomer", "x", "10.0.0.1"); !errors.As(err, &le) {
		t.Fatalf("address not locked for pairs never seen: %v", err)
	}
	// the pair's own failures lock the pair
	for i := 0; i < 5; i++ {
		_ = try("app", "typo", "10.0.0.1")
	}
	if err := try("app", "app-password", "10.0.0.1"); !errors.As(err, &le) {
		t.Fatalf("pair not locked by its own failures: %v", err)
	}
	clk.Advance(le.RetryAfter)
	if err := try("app", "app-password", "10.0.0.1"); err != nil {
		t.Fatalf("after the pair's backoff: %v", err)
	}
}

// A client sending username/password on every request costs one bcrypt
// comparison per verifiedTTL: later checks hit the memory of the success;
// a password change ends it at once, and a wrong password never hits it.
func TestPasswordChecksRemembered(t *testing.T) {
	s, clk := newService(t, onSettings())
	ctx := context.Background()
	if err := s.CreateUser(ctx, "app", "app-password"); err != nil {
		t.Fatal(err)
	}
	creds := Credentials{Username: "app", Password: "app-password", Source: "10.0.0.1"}
	if _, err := s.Authenticate(creds); err != nil {
		t.Fatal(err)
	}
	u := s.tables.get().byName["app"]
	if !s.verified.ok("app", "app-password", u.Password, clk.Now()) {
		t.Fatal("success not remembered")
	}
	if s.verified.ok("app", "app-passwore", u.Password, clk.Now()) {
		t.Fatal("another password hits the memory")
	}
	if _, err := s.Authenticate(Credentials{Username: "app", Password: "wrong", Source: "10.0.0.1"}); err != ErrUnknownUser {
		t.Fatalf("wrong password: %v", err)
	}
	clk.Advance(verifiedTTL + time.Second)
	if s.verified.ok("app", "app-password", u.Password, clk.Now()) {
		t.Fatal("memory outlived verifiedTTL")
	}
	if _, err := s.Authenticate(creds); err != nil {
		t.Fatal(err)
	}
	if err := s.UpdatePassword(ctx, Principal{Username: "nacos", GlobalAdmin: true}, "app", "new-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(creds); err != ErrUnknownUser {
		t.Fatalf("old password after a change: %v", err)
	}
	if _, err := s.Authenticate(Credentials{Username: "app", Password: "new-password", Source: "10.0.0.1"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(ctx, "app"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(Credentials{Username: "app", Password: "new-password", Source: "10.0.0.1"}); err != ErrUnknownUser {
		t.Fatalf("deleted user: %v", err)
	}
}

// A password check costs one bcrypt comparison at the users' cost whether
// or not the user exists (the dummy hash stands in for a missing one), so
// the answer's timing does not tell which user names exist.
func TestLoginSameWorkForUnknownUsers(t *testing.T) {
	s, _ := newService(t, onSettings())
	if err := s.CreateUser(context.Background(), "known", "known-password"); err != nil {
		t.Fatal(err)
	}
	u := s.tables.get().byName["known"]
	uc, err := bcrypt.Cost([]byte(u.Password))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := bcrypt.Cost(s.dummy)
	if err != nil || dc != uc {
		t.Fatalf("dummy hash cost %d (%v), users' %d", dc, err, uc)
	}
	for _, c := range []Credentials{
		{Username: "known", Password: "wrong", Source: "1.1.1.1"},
		{Username: "unknown", Password: "wrong", Source: "1.1.1.2"},
		{Username: "known", Password: "known-password", Source: "1.1.1.3"},
	} {
		before := s.compares.Load()
		_, _ = s.Authenticate(c)
		if n := s.compares.Load() - before; n != 1 {
			t.Errorf("%s: %d bcrypt comparisons, want 1", c.Username, n)
		}
	}
	// a built-in-cost service compares against Java's own hash of nacos
	s10, err := New(Config{Settings: onSettings(), Store: raftstoretest.New(t), Clock: clocktest.New(time.Now()), Logger: raftstoretest.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s10.Close()
	if c, _ := bcrypt.Cost(s10.dummy); c != 10 {
		t.Fatalf("default dummy cost %d, want Java's 10", c)
	}
}

// TestDefaultPasswordWarningUsesContextPath: the warning names the API
// under the server's own context path (it said /nacos whatever it was).
func TestDefaultPasswordWarningUsesContextPath(t *testing.T) {
	for _, tc := range []struct{ ctx, want string }{{"/registry", "PUT /registry/v1/auth/users"}, {"", "PUT /v1/auth/users"}, {"/nacos", "PUT /nacos/v1/auth/users"}} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		s, err := New(Config{Settings: onSettings(), Store: raftstoretest.New(t), Clock: clocktest.New(time.Now()), Logger: log,
			BcryptCost: 4, ContextPath: tc.ctx})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.Close()
		if !strings.Contains(buf.String(), "default password") || !strings.Contains(buf.String(), tc.want) ||
			(tc.ctx != "/nacos" && strings.Contains(buf.String(), "/nacos/")) {
			t.Errorf("context path %q: warning lacks %q:\n%s", tc.ctx, tc.want, buf.String())
		}
	}
}

// Issue 26 item 10: a password change or a deletion ends the user's tokens
// (a per-user epoch in the raft store); a re-created user of the same name
// gets none of them back; tokens minted after the change, and tokens of
// Java's format (no epoch claim) minted after it, work; a role change ends
// nothing (roles are read at every request).
func TestTokenEpoch(t *testing.T) {
	s, clk := newService(t, onSettings())
	ctx := context.Background()
	if err := s.CreateUser(ctx, "alice", "pw-1"); err != nil {
		t.Fatal(err)
	}
	login := func(pw string) string {
		t.Helper()
		r, err := s.Login(Credentials{Username: "alice", Password: pw, Source: "10.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		return r.Token
	}
	valid := func(tok string) error { _, err := s.Authenticate(Credentials{AccessToken: tok}); return err }
	t1 := login("pw-1")
	if p := decodePayload(t, t1); !strings.HasPrefix(p, `{"sub":"alice","exp":`) || !strings.HasSuffix(p, `,"epoch":0}`) {
		t.Fatalf("token payload %s", p)
	}
	// a Java node's token (no claim) minted before the change
	javaOld := s.tok.mint("alice", 0)
	javaOld = strings.Join(strings.Split(javaOld, ".")[:1], "") + "." + b64.EncodeToString([]byte(
		strings.Replace(decodePayload(t, javaOld), `,"epoch":0`, "", 1)))
	javaOld += "." + b64.EncodeToString(s.tok.sign(javaOld))
	if err := valid(javaOld); err != nil {
		t.Fatalf("Java-format token: %v", err)
	}
	clk.Advance(2 * time.Second)
	admin := Principal{Username: "nacos", GlobalAdmin: true}
	if err := s.UpdatePassword(ctx, admin, "alice", "pw-2"); err != nil {
		t.Fatal(err)
	}
	if err := valid(t1); err != ErrTokenInvalid {
		t.Fatalf("token minted before the password change: %v", err)
	}
	if err := valid(javaOld); err != ErrTokenInvalid {
		t.Fatalf("Java-format token minted 2 s before the password change: %v", err)
	}
	t2 := login("pw-2")
	if err := valid(t2); err != nil {
		t.Fatalf("token minted after the change: %v", err)
	}
	// a Java node's token (no claim) minted after the change works
	java := s.tok.mint("alice", 0)
	java = strings.Split(java, ".")[0] + "." + b64.EncodeToString([]byte(strings.Replace(decodePayload(t, java), `,"epoch":0`, "", 1)))
	java += "." + b64.EncodeToString(s.tok.sign(java))
	clk.Advance(time.Second)
	if err := valid(java); err != nil {
		t.Fatalf("Java-format token minted after the change: %v", err)
	}
	// exact for nacosd's tokens: a change in the same millisecond ends t2
	if err := s.UpdatePassword(ctx, Principal{Username: "alice"}, "alice", "pw-3"); err != nil {
		t.Fatal(err)
	}
	if err := valid(t2); err != ErrTokenInvalid {
		t.Fatalf("token minted before the second change: %v", err)
	}
	t3 := login("pw-3")
	// a role change ends nothing
	if err := s.AddRole(ctx, "dev", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRole(ctx, "dev", "alice"); err != nil {
		t.Fatal(err)
	}
	if err := valid(t3); err != nil {
		t.Fatalf("token after a role change: %v", err)
	}
	// deleted, then re-created under the same name: the old token stays dead
	if err := s.DeleteUser(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if err := valid(t3); err != ErrNoToken {
		t.Fatalf("token of a deleted user: %v", err)
	}
	if err := s.CreateUser(ctx, "alice", "pw-3"); err != nil {
		t.Fatal(err)
	}
	if err := valid(t3); err != ErrTokenInvalid {
		t.Fatalf("token of the deleted user, valid for the re-created one: %v", err)
	}
	if err := valid(login("pw-3")); err != nil {
		t.Fatalf("the re-created user's own token: %v", err)
	}
}

func decodePayload(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Issue 26 item 11: an empty password and one longer than the 72 bytes
// bcrypt reads are refused at creation and change (Java stores both; a
// different password with the same first 72 bytes logged in), with Java's
// shape of a refused argument.
func TestPasswordRules(t *testing.T) {
	s, _ := newService(t, onSettings())
	ctx := context.Background()
	admin := Principal{Username: "nacos", GlobalAdmin: true}
	long := strings.Repeat("p", 72)
	for _, c := range []struct {
		pw   string
		body string
	}{
		{"", "caused: password must not be empty;"},
		{long + "x", "caused: password is longer than 72 bytes (bcrypt reads only the first 72);"},
		{strings.Repeat("é", 37), "caused: password is longer than 72 bytes (bcrypt reads only the first 72);"}, // 74 bytes
	} {
		err := s.CreateUser(ctx, "bob", c.pw)
		var ce *compat.Error
		if !errors.As(err, &ce) || ce.Status != 400 || ce.Body != c.body {
			t.Errorf("create with a %d-byte password: %v", len(c.pw), err)
		}
	}
	if err := s.CreateUser(ctx, "bob", long); err != nil {
		t.Fatalf("72 bytes: %v", err)
	}
	if _, err := s.Login(Credentials{Username: "bob", Password: long, Source: "1.1.1.1"}); err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{"", long + "y"} {
		err := s.UpdatePassword(ctx, admin, "bob", pw)
		var ce *compat.Error
		if !errors.As(err, &ce) || ce.Status != 400 || !strings.HasPrefix(ce.Body, "caused: newPassword ") {
			t.Errorf("change to a %d-byte password: %v", len(pw), err)
		}
	}
}

// Issue 26 item 12: nacosd.auth.admin-password gives the built-in user nacos
// another password at first start, and later while nacos still has the
// published one (its tokens end with it); a password changed since is left
// alone. DefaultPasswordInForce (the console banner, the metric) follows.
func TestAdminPassword(t *testing.T) {
	login := func(s *Service, pw string) error {
		_, err := s.Login(Credentials{Username: DefaultUser, Password: pw, Source: "10.0.0.9"})
		return err
	}
	// first start with the setting
	st := onSettings()
	st.AdminPassword = "first-Start-pw"
	s, _ := newService(t, st)
	if err := login(s, "nacos"); err != ErrUnknownUser {
		t.Fatalf("nacos/nacos at a first start with an admin password: %v", err)
	}
	if err := login(s, "first-Start-pw"); err != nil {
		t.Fatal(err)
	}
	if s.DefaultPasswordInForce() {
		t.Fatal("default reported in force")
	}

	// a store initialised with nacos/nacos, then a start with the setting
	store := raftstoretest.New(t)
	clk := clocktest.New(time.UnixMilli(1700000000123))
	start := func(st Settings) *Service {
		s, err := New(Config{Settings: st, Store: store, Clock: clk, Logger: raftstoretest.Logger(t), BcryptCost: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		if err := s.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s
	}
	old := start(onSettings())
	if !old.DefaultPasswordInForce() {
		t.Fatal("default not reported in force")
	}
	r, err := old.Login(Credentials{Username: DefaultUser, Password: "nacos", Source: "10.0.0.9"})
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	s2 := start(st)
	if err := login(s2, "nacos"); err != ErrUnknownUser {
		t.Fatalf("nacos/nacos after a restart with an admin password: %v", err)
	}
	if err := login(s2, "first-Start-pw"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Authenticate(Credentials{AccessToken: r.Token}); err != ErrTokenInvalid {
		t.Fatalf("a token got with nacos/nacos: %v", err)
	}
	if s2.DefaultPasswordInForce() || old.DefaultPasswordInForce() {
		t.Fatal("default reported in force after the change")
	}
	// changed since: a later start with another setting leaves it alone
	if err := s2.UpdatePassword(context.Background(), Principal{Username: DefaultUser, GlobalAdmin: true}, DefaultUser, "changed-by-the-admin"); err != nil {
		t.Fatal(err)
	}
	st3 := onSettings()
	st3.AdminPassword = "yet-another-pw"
	s3 := start(st3)
	if err := login(s3, "changed-by-the-admin"); err != nil {
		t.Fatalf("the admin's own password after a restart: %v", err)
	}
	// auth off: never "in force"
	off := onSettings()
	off.Enabled = false
	if s4 := start(off); s4.DefaultPasswordInForce() {
		t.Fatal("in force with auth off")
	}
	// refused settings
	for _, pw := range []string{"nacos", strings.Repeat("x", 73)} {
		bad := onSettings()
		bad.AdminPassword = pw
		if err := bad.Validate(); err == nil {
			t.Errorf("admin password of %d bytes %q accepted", len(pw), pw[:min(len(pw), 5)])
		}
	}
}
