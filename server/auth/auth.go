// Package auth is Nacos 1.4.8's access control (console-auth-core-v1.md §3):
// users with bcrypt passwords, roles, permissions, the jjwt-compatible HS256
// tokens of /v1/auth/users/login, and the permission decision of
// NacosRoleServiceImpl. It is plain Go: server/httpapi maps routes to
// resources and actions (the @Secured table) and calls Check.
//
// Storage: three raftstore buckets (auth.user, auth.role, auth.perm) written
// through Store.Apply, so every node sees the same tables; the in-memory view
// is rebuilt after any store event touching them, so a change applies at once
// (Java caches for up to 15 s). The built-in user nacos (password nacos,
// Java's bcrypt hash) with ROLE_ADMIN is written once by Bootstrap, as Java's
// schema inserts it.
//
// Node-to-node calls: a node adds the server identity header to every call
// it makes to another node (Identity.Sign on the outgoing request headers)
// and the receiving node lets such requests through without a token
// (Identity.Verify, also what Check does first). With auth enabled,
// node-to-node endpoints (cluster report, config dataChange, ...) must call
// RequireIdentity / httpapi.RequireServerIdentity so that they are refused
// without it. The identity is compared in constant time and never logged.
//
// Deliberate differences from Java (docs/security.md): no User-Agent bypass,
// published secrets refused at start, tokens of deleted users and tokens
// from before a password change refused (epochs.go), permission resources
// read as literal names with * (authz.go), empty and over-72-byte passwords
// refused, password hashes never listed, every user/role/permission read
// needs ROLE_ADMIN, login rate limited with backoff per (user, address) and
// address (limiter.go), the built-in admin's password settable (admin.go).
package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
)

// Defaults of a fresh Java Nacos 1.4.8.
const (
	DefaultUser      = "nacos"
	DefaultPassword  = "nacos"
	DefaultTokenTTL  = 18000 * time.Second // nacos.core.auth.default.token.expire.seconds
	GlobalAdminRole  = "ROLE_ADMIN"
	defaultUserHash  = "$2a$10$EuWPZHzz32dJN7jexM34MOeYirDdFAZm2kuWj7VEOJhhZkDrxfvUu" // nacos, as Java's schema.sql
	consolePrefix    = "console/"
	passwordResource = "console/user/password"
)

// Actions of @Secured.
const (
	ActionRead  = "r"
	ActionWrite = "w"
)

// Config configures a Service.
type Config struct {
	Settings Settings
	Store    Store
	Clock    clock.Clock
	Logger   *slog.Logger
	// Limits throttle failed logins; zero fields take DefaultLimits.
	Limits Limits
	// BcryptCost is the cost of new password hashes (Java: 10).
	BcryptCost int
	// ContextPath is the server's context path ("/nacos"; "" or "/" for
	// none), for the paths messages name.
	ContextPath string
}

// Service is the access-control domain of one node.
type Service struct {
	cfg     Config
	tok     tokens
	tables  *tables
	limiter *limiter
	// verified remembers successful password checks (verified.go)
	verified  *verified
	log       *slog.Logger
	dummy     []byte // bcrypt hash compared when the user does not exist
	lastStamp atomic.Int64
	// defaultPW caches DefaultPasswordInForce per stored hash (admin.go)
	defaultPW atomic.Pointer[defaultCheck]
	// compares counts bcrypt comparisons (tests: one per password check,
	// known user or not)
	compares atomic.Int64
}

// New validates cfg (Settings.Validate: with auth enabled the published
// secret, short keys and empty identities are refused) and returns a
// Service reading its tables from cfg.Store.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Clock == nil || cfg.Logger == nil {
		return nil, errors.New("auth: Store, Clock and Logger must be set")
	}
	if err := cfg.Settings.Validate(); err != nil {
		return nil, err
	}
	if cfg.BcryptCost == 0 {
		cfg.BcryptCost = 10
	}
	var key []byte
	if cfg.Settings.TokenSecret != "" {
		k, err := DecodeSecret(cfg.Settings.TokenSecret)
		if err != nil {
			return nil, err
		}
		key = k
	} else {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("auth: random token key: %w", err)
		}
	}
	if cfg.Settings.Enabled && cfg.Settings.UserAgentAuthWhite {
		cfg.Logger.Warn("nacos.core.auth.enable.userAgentAuthWhite=true is ignored: nacosd never trusts User-Agent (CVE-2021-29441); nodes authenticate with the server identity header")
	}
	s := &Service{cfg: cfg, tok: tokens{key: key, ttl: cfg.Settings.TTL(), now: cfg.Clock.Now},
		limiter: newLimiter(cfg.Limits, cfg.Clock.Now), verified: newVerified(10_000), log: cfg.Logger}
	// the dummy costs what a real comparison costs: Java's built-in hash
	// has cost 10, the default; other costs (tests) hash one of their own
	s.dummy = []byte(defaultUserHash)
	if cfg.BcryptCost != 10 {
		dummy, err := hashPassword("nacosd-dummy-password", cfg.BcryptCost)
		if err != nil {
			return nil, err
		}
		s.dummy = dummy
	}
	s.tables = newTables(cfg.Store)
	return s, nil
}

// Close stops following the store.
func (s *Service) Close() { s.tables.close() }

// Enabled reports nacos.core.auth.enabled.
func (s *Service) Enabled() bool { return s.cfg.Settings.Enabled }

// TTL is the token lifetime.
func (s *Service) TTL() time.Duration { return s.tok.ttl }

// Identity returns the node-to-node identity of this node.
func (s *Service) Identity() Identity {
	return Identity{Key: s.cfg.Settings.IdentityKey, Value: s.cfg.Settings.IdentityValue}
}

// Bootstrap writes the built-in user nacos with ROLE_ADMIN once, when the
// tables were never initialised (Java's schema inserts the same rows), with
// Settings.AdminPassword when set, else Java's nacos. Later, while nacos
// still has the password nacos, a configured AdminPassword replaces it
// (admin.go). Only the raft leader can write; followers get
// raftstore.ErrNotLeader, which the caller may ignore.
func (s *Service) Bootstrap(ctx context.Context) error {
	if err := s.writeClusterKey(ctx); err != nil {
		return err
	}
	if _, ok := s.cfg.Store.Get(bucketMeta, "init"); ok {
		if err := s.applyAdminPassword(ctx); err != nil {
			return err
		}
		s.warnDefaultPassword()
		return nil
	}
	now := s.now()
	hash := defaultUserHash
	if pw := s.cfg.Settings.AdminPassword; pw != "" {
		h, err := hashPassword(pw, s.cfg.BcryptCost)
		if err != nil {
			return fmt.Errorf("auth: hash the admin password: %w", err)
		}
		hash = string(h)
	}
	b := batch{}
	b.absent(bucketMeta, "init")
	b.put(bucketMeta, "init", []byte{recordVersion, '1'})
	if _, ok := s.cfg.Store.Get(bucketUser, DefaultUser); !ok {
		b.put(bucketUser, DefaultUser, encodeRecord(userRecord{Password: hash, Created: now}))
		b.put(bucketRole, roleKey(GlobalAdminRole, DefaultUser), encodeRecord(rowRecord{Created: now}))
	}
	if err := s.apply(ctx, b); err != nil && !errors.Is(err, errCond) {
		return fmt.Errorf("auth: write built-in user: %w", err)
	}
	s.warnDefaultPassword()
	return nil
}

// Initialized reports whether the built-in user was written (by this node
// or any other: the record is replicated), and, with no token secret
// configured, the cluster's token key.
func (s *Service) Initialized() bool {
	if _, ok := s.cfg.Store.Get(bucketMeta, "init"); !ok {
		return false
	}
	if s.cfg.Settings.TokenSecret == "" {
		_, ok := s.cfg.Store.Get(bucketMeta, clusterKeyKey)
		return ok
	}
	return true
}

// clusterKeyKey is bucketMeta's cluster token key: with no secret
// configured (auth off), the HMAC key of every member's tokens, so that a
// token issued by one member holds on the others (a user-management call
// with auth off is checked as ROLE_ADMIN, and a follower forwards it to
// the raft leader with the caller's token).
const clusterKeyKey = "tokenkey"

// writeClusterKey writes the cluster token key once (no secret configured).
func (s *Service) writeClusterKey(ctx context.Context) error {
	if s.cfg.Settings.TokenSecret != "" {
		return nil
	}
	if _, ok := s.cfg.Store.Get(bucketMeta, clusterKeyKey); ok {
		return nil
	}
	key := make([]byte, 1+32)
	key[0] = recordVersion
	if _, err := rand.Read(key[1:]); err != nil {
		return fmt.Errorf("auth: cluster token key: %w", err)
	}
	b := batch{}
	b.absent(bucketMeta, clusterKeyKey)
	b.put(bucketMeta, clusterKeyKey, key)
	if err := s.apply(ctx, b); err != nil && !errors.Is(err, errCond) {
		return fmt.Errorf("auth: write the cluster token key: %w", err)
	}
	return nil
}

// tokens mints and verifies with the configured secret, else the cluster
// key once it is known, else this process's random key.
func (s *Service) tokens() tokens {
	if s.cfg.Settings.TokenSecret == "" {
		if r, ok := s.cfg.Store.Get(bucketMeta, clusterKeyKey); ok && len(r.Value) == 33 && r.Value[0] == recordVersion {
			t := s.tok
			t.key = r.Value[1:]
			return t
		}
	}
	return s.tok
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

// Credentials are what a request presents (§3.3), in Java's order of use.
type Credentials struct {
	Bearer      string // Authorization header value after "Bearer "
	AccessToken string // accessToken parameter
	// Username and Password are the parameters; used only when neither
	// token is present (Java checks them against the user store on every
	// such request).
	Username, Password string
	// Source is the client address (rate limiting only).
	Source string
}

func (c Credentials) token() string {
	if c.Bearer != "" {
		return c.Bearer
	}
	return c.AccessToken
}

// Principal is an authenticated user.
type Principal struct {
	Username    string
	Token       string
	GlobalAdmin bool
}

// Authenticate is NacosAuthManager.login: a token (Bearer, then
// accessToken) or else username/password. Errors are Java's 403 messages,
// or a 429 *compat.Error while the user or source is locked out.
func (s *Service) Authenticate(c Credentials) (Principal, error) {
	tok := c.token()
	if tok == "" {
		epoch, err := s.checkPassword(c.Username, c.Password, c.Source)
		if err != nil {
			return Principal{}, err
		}
		tok = s.tokens().mint(c.Username, epoch)
	}
	cl, err := s.tokens().verify(tok)
	if err != nil {
		return Principal{}, err
	}
	v := s.tables.get()
	if v.byName[cl.sub] == nil { // Java keeps accepting a deleted user's token
		return Principal{}, ErrNoToken
	}
	if s.tok.revoked(cl, v.epochs[cl.sub]) { // minted before a password change (epochs.go)
		return Principal{}, ErrTokenInvalid
	}
	return Principal{Username: cl.sub, Token: tok, GlobalAdmin: hasRole(v.byUser[cl.sub], GlobalAdminRole)}, nil
}

// Login is POST /v1/auth/users/login: Authenticate, then the login body.
func (s *Service) Login(c Credentials) (LoginResult, error) {
	p, err := s.Authenticate(c)
	if err != nil {
		return LoginResult{}, err
	}
	return LoginResult{Token: p.Token, TTLSeconds: int64(s.tok.ttl / time.Second), GlobalAdmin: p.GlobalAdmin, Username: p.Username}, nil
}

// Token mints a token for user (tests, tools).
func (s *Service) Token(user string) string {
	return s.tokens().mint(user, s.tables.get().epochs[user])
}

func hasRole(roles []RoleInfo, role string) bool {
	for _, r := range roles {
		if r.Role == role {
			return true
		}
	}
	return false
}
