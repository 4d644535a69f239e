package servertest

import (
	"encoding/json"
	"net/url"
	"time"

	"github.com/nacosd/nacosd/server"
)

// The token secret and server identity value AuthOn sets.
const (
	TestSecret   = "dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI="
	TestIdentity = "9f2c4e1a7b3d4c5e8f60"
)

// AuthOn turns nacos.core.auth.enabled on in cfg with fixed test secrets
// and a token lifetime of an hour; the admin is nacos/nacos.
func AuthOn(cfg *server.Config) {
	cfg.Auth = server.AuthConfig{Enabled: true, SecretKey: TestSecret, ServerIdentityKey: "serverIdentity",
		ServerIdentityValue: TestIdentity, TokenExpire: time.Hour}
}

// Login logs user in through /nacos/v1/auth/users/login and returns the
// access token; the test fails when there is none.
func (n *Node) Login(user, pass string) string {
	n.t.Helper()
	r := n.Do("POST", "/nacos/v1/auth/users/login", nil, url.Values{"username": {user}, "password": {pass}}, nil)
	var v struct{ AccessToken string }
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &v) != nil || v.AccessToken == "" {
		n.t.Fatalf("login %s: %d %s", user, r.Status, r.Body)
	}
	return v.AccessToken
}
