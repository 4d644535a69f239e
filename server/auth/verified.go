package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"sync"
	"time"
)

// verifiedTTL is how long a successful password check is remembered.
const verifiedTTL = 5 * time.Minute

// verified remembers successful password checks for a while, so a client
// that sends username and password on every request instead of a token
// (npm nacos 2.x does, and Java allows it on every endpoint) costs one
// bcrypt comparison every few minutes instead of one per request: with the
// comparisons bounded to the core count, a few such clients otherwise queue
// every login behind their beats. Entries are keyed by an HMAC of user and
// password under a per-process key (never the password itself) and hold the
// stored hash they were checked against, so a password change or a deleted
// user ends them at once. Only successes are kept: an unknown user or a
// wrong password always costs the full comparison, and a hit only tells a
// caller what the answer says anyway.
type verified struct {
	key []byte
	max int
	mu  sync.Mutex
	m   map[[sha256.Size]byte]verifiedEntry
}

type verifiedEntry struct {
	hash  string // the stored bcrypt hash the password matched
	until time.Time
}

func newVerified(max int) *verified {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand never fails on Linux; a zero key still works
	return &verified{key: key, max: max, m: map[[sha256.Size]byte]verifiedEntry{}}
}

func (v *verified) id(user, password string) [sha256.Size]byte {
	m := hmac.New(sha256.New, v.key)
	m.Write([]byte(user))
	m.Write([]byte{0})
	m.Write([]byte(password))
	var out [sha256.Size]byte
	copy(out[:], m.Sum(nil))
	return out
}

// ok reports whether user/password matched hash within verifiedTTL.
func (v *verified) ok(user, password, hash string, now time.Time) bool {
	id := v.id(user, password)
	v.mu.Lock()
	defer v.mu.Unlock()
	e, found := v.m[id]
	if !found {
		return false
	}
	if e.hash != hash || now.After(e.until) {
		delete(v.m, id)
		return false
	}
	return true
}

// add remembers a successful check.
func (v *verified) add(user, password, hash string, now time.Time) {
	id := v.id(user, password)
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.m) >= v.max {
		for k, e := range v.m {
			if now.After(e.until) || len(v.m) >= v.max {
				delete(v.m, k)
			}
			if len(v.m) < v.max/2 {
				break
			}
		}
	}
	v.m[id] = verifiedEntry{hash: hash, until: now.Add(verifiedTTL)}
}
