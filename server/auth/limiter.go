package auth

import (
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/nacosd/nacosd/compat"
)

// Limits throttle password checks (login, and username/password
// parameters on any secured request). Java has none.
//
// Failures are counted per (user, client address) pair and per client
// address, never per user alone: a user name is locked out only where it
// failed, so a guesser slows only himself and the real user keeps logging
// in from every other address (a per-user lock let 33 wrong passwords in
// 25 s keep the admin out of every fresh address). A pair that logged in
// successfully within GoodFor is exempt from its address's lockout, so a
// misconfigured client on a host does not shut out the apps already
// logging in from there; only the pair's own failures lock the pair.
type Limits struct {
	// SourceFailures are the failed attempts allowed from one client
	// address, all user names together, before the address is locked out
	// (for pairs not known good).
	SourceFailures int
	// PairFailures are the failed attempts allowed for one user from one
	// address before that pair is locked out, known good or not.
	PairFailures int
	// Backoff is the first lockout; each further failure doubles it up to
	// MaxBackoff.
	Backoff, MaxBackoff time.Duration
	// Forget drops the failure count of a key idle this long.
	Forget time.Duration
	// GoodFor is how long a successful login keeps its pair known good.
	GoodFor time.Duration
	// MaxEntries bounds the memory of the limiter (failure counts and
	// known-good pairs each).
	MaxEntries int
}

// DefaultLimits: 5 failures per pair, 20 per address, then 1 s doubling to
// 5 min; a login keeps its pair known good for 24 h.
func DefaultLimits() Limits {
	return Limits{SourceFailures: 20, PairFailures: 5, Backoff: time.Second, MaxBackoff: 5 * time.Minute,
		Forget: 15 * time.Minute, GoodFor: 24 * time.Hour, MaxEntries: 100_000}
}

// LockedError is the answer while a user or address is locked out: 429
// with the seconds to wait.
type LockedError struct{ RetryAfter time.Duration }

func (e *LockedError) Error() string { return e.compat().Body }

func (e *LockedError) compat() *compat.Error {
	secs := int64((e.RetryAfter + time.Second - 1) / time.Second)
	return &compat.Error{Status: 429, Body: "too many failed login attempts, retry after " + strconv.FormatInt(secs, 10) + " s"}
}

// As lets errors.As(err, **compat.Error) render it.
func (e *LockedError) As(target any) bool {
	if t, ok := target.(**compat.Error); ok {
		*t = e.compat()
		return true
	}
	return false
}

type failures struct {
	count int
	last  time.Time
	until time.Time
}

type limiter struct {
	lim  Limits
	now  func() time.Time
	mu   sync.Mutex
	m    map[string]*failures
	good map[string]time.Time // pair -> last successful login
	// cpu bounds concurrent bcrypt comparisons to the core count, so a
	// flood of logins queues instead of starving every other request.
	cpu chan struct{}
}

func newLimiter(l Limits, now func() time.Time) *limiter {
	d := DefaultLimits()
	if l.SourceFailures <= 0 {
		l.SourceFailures = d.SourceFailures
	}
	if l.PairFailures <= 0 {
		l.PairFailures = d.PairFailures
	}
	if l.Backoff <= 0 {
		l.Backoff = d.Backoff
	}
	if l.MaxBackoff <= 0 {
		l.MaxBackoff = d.MaxBackoff
	}
	if l.Forget <= 0 {
		l.Forget = d.Forget
	}
	if l.GoodFor <= 0 {
		l.GoodFor = d.GoodFor
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	return &limiter{lim: l, now: now, m: map[string]*failures{}, good: map[string]time.Time{},
		cpu: make(chan struct{}, max(1, runtime.NumCPU()))}
}

func sourceKey(source string) string     { return "a\x00" + source }
func pairKey(user, source string) string { return "p\x00" + user + "\x00" + source }

// locked returns how long key is still locked out.
func (l *limiter) locked(key string, now time.Time) time.Duration {
	if f := l.m[key]; f != nil && now.Before(f.until) {
		return f.until.Sub(now)
	}
	return 0
}

// check refuses while the pair is locked out, or, for a pair not known
// good, while the address is.
func (l *limiter) check(user, source string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	d := l.locked(pairKey(user, source), now)
	if t, ok := l.good[pairKey(user, source)]; !ok || now.Sub(t) > l.lim.GoodFor {
		d = max(d, l.locked(sourceKey(source), now))
	}
	if d > 0 {
		return &LockedError{RetryAfter: d}
	}
	return nil
}

func (l *limiter) fail(user, source string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.bump(pairKey(user, source), l.lim.PairFailures, now)
	l.bump(sourceKey(source), l.lim.SourceFailures, now)
}

func (l *limiter) bump(key string, allowed int, now time.Time) {
	f := l.m[key]
	if f != nil && now.Sub(f.last) > l.lim.Forget && now.After(f.until) {
		f.count = 0
	}
	if f == nil {
		if len(l.m) >= l.lim.MaxEntries {
			l.sweep(now)
		}
		f = &failures{}
		l.m[key] = f
	}
	f.count++
	f.last = now
	if f.count >= allowed {
		d := l.lim.Backoff
		for i := allowed; i < f.count && d < l.lim.MaxBackoff; i++ {
			d *= 2
		}
		f.until = now.Add(min(d, l.lim.MaxBackoff))
	}
}

// sweep drops forgotten entries, and if none is, an arbitrary one: memory
// stays bounded under a flood of distinct names.
func (l *limiter) sweep(now time.Time) {
	for k, f := range l.m {
		if now.Sub(f.last) > l.lim.Forget && now.After(f.until) {
			delete(l.m, k)
		}
	}
	for k := range l.m {
		if len(l.m) < l.lim.MaxEntries {
			break
		}
		delete(l.m, k)
	}
}

// succeed clears the pair's failures and marks it known good. The
// address's count stays: a guesser there does not get a fresh allowance
// each time a real user logs in from the same address.
func (l *limiter) succeed(user, source string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	k := pairKey(user, source)
	delete(l.m, k)
	if _, ok := l.good[k]; !ok && len(l.good) >= l.lim.MaxEntries {
		for g, t := range l.good {
			if now.Sub(t) > l.lim.GoodFor {
				delete(l.good, g)
			}
		}
		for g := range l.good { // still full: forget arbitrary half
			if len(l.good) < l.lim.MaxEntries/2 {
				break
			}
			delete(l.good, g)
		}
	}
	l.good[k] = now
}

func hashPassword(password string, cost int) ([]byte, error) {
	if len(password) > 72 {
		// bcrypt reads 72 bytes; Java's BCryptPasswordEncoder silently
		// truncates, Go's refuses: hash the same 72 bytes Java would.
		password = password[:72]
	}
	return bcrypt.GenerateFromPassword([]byte(password), cost)
}

// checkPassword verifies username/password against the user table. It
// costs one bcrypt comparison whether or not the user exists, and refuses
// at once (without comparing) while the user or source is locked out. A
// request without a user name (no token, no credentials: a client before
// its login, or a scan) is refused at once: it is no guess, so it neither
// costs a bcrypt comparison nor counts against the source address (Java:
// the same "unknown user!").
//
// It returns the user's token epoch as of the table it checked against.
func (s *Service) checkPassword(username, password, source string) (int64, error) {
	if username == "" {
		return 0, ErrUnknownUser
	}
	if err := s.limiter.check(username, source); err != nil {
		return 0, err
	}
	hash := s.dummy
	v := s.tables.get()
	u := v.byName[username]
	if u != nil {
		hash = []byte(u.Password)
	}
	if len(password) > 72 {
		password = password[:72]
	}
	if u != nil && s.verified.ok(username, password, u.Password, s.cfg.Clock.Now()) {
		s.limiter.succeed(username, source)
		return v.epochs[username], nil
	}
	s.limiter.cpu <- struct{}{}
	s.compares.Add(1)
	err := bcrypt.CompareHashAndPassword(hash, []byte(password))
	<-s.limiter.cpu
	if u == nil || err != nil {
		s.limiter.fail(username, source)
		return 0, ErrUnknownUser
	}
	s.verified.add(username, password, u.Password, s.cfg.Clock.Now())
	s.limiter.succeed(username, source)
	return v.epochs[username], nil
}
