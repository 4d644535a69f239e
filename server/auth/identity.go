package auth

import (
	"crypto/subtle"

	"github.com/nacosd/nacosd/compat"
)

// Identity is the node-to-node credential (nacos.core.auth.server.identity
// key/value, §3.7): every call a node makes to another carries header
// Key: Value, and a receiver with auth enabled accepts a request carrying
// its own identity without a token.
//
// Use on the sending side:
//
//	id.Sign(func(k, v string) { req.Header.Set(k, v) })
//
// and on the receiving side, for endpoints only nodes call:
//
//	if !id.Verify(func(k string) string { return req.Header.Get(k) }) { refuse with ErrNotNode }
//
// (httpapi.RequireServerIdentity wraps the latter as fiber middleware.)
type Identity struct{ Key, Value string }

// Configured reports whether both key and value are set.
func (id Identity) Configured() bool { return id.Key != "" && id.Value != "" }

// Sign adds the identity header through set (a no-op when not configured).
func (id Identity) Sign(set func(key, value string)) {
	if id.Configured() {
		set(id.Key, id.Value)
	}
}

// Verify reports whether the request whose headers get returns carries
// this node's identity; constant time in the value.
func (id Identity) Verify(get func(key string) string) bool {
	if !id.Configured() {
		return false
	}
	got := get(id.Key)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(id.Value)) == 1
}

// ErrNotNode answers a node-to-node endpoint called without the server
// identity while auth is enabled (Java leaves these endpoints open).
var ErrNotNode = compat.Forbidden("server identity required: this endpoint is only for nacos cluster members")
