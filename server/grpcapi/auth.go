package grpcapi

import (
	"errors"
	"strings"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/auth"
)

// Auth is the auth filter's view of the users, roles and permissions
// (RemoteRequestAuthFilter over the nacos auth plugin).
type Auth interface {
	Enabled() bool
	// CheckRemote authenticates the identity headers of a request and
	// checks action on resource: code 0 and the user name when allowed,
	// else Java's error code (403) and message.
	CheckRemote(h remote.Header, resource, action, clientIP string) (user string, code int, msg string)
}

// msgUserNotFound is the nacos auth plugin's refusal of missing or wrong
// credentials.
const msgUserNotFound = "user not found!"

// AuthService is what the gRPC auth filter needs of server/auth.
type AuthService interface {
	Enabled() bool
	Check(resource, action string, c auth.Credentials) (auth.Principal, error)
}

// NewAuth adapts server/auth to the filter: the identity headers are
// Authorization (a Bearer token), accessToken, then username and password,
// as the nacos auth plugin reads them; a refusal is 403 with the plugin's
// message ("user not found!", "token invalid!", "authorization failed!" …),
// the same users and permissions as over HTTP.
func NewAuth(a AuthService) Auth { return authAdapter{a} }

type authAdapter struct{ a AuthService }

func (x authAdapter) Enabled() bool { return x.a.Enabled() }

func (x authAdapter) CheckRemote(h remote.Header, resource, action, clientIP string) (string, int, string) {
	c := auth.Credentials{AccessToken: h.Get("accessToken"), Username: h.Get("username"), Password: h.Get("password"), Source: clientIP}
	if b := h.Get("Authorization"); strings.HasPrefix(b, "Bearer ") {
		c.Bearer = b[len("Bearer "):]
	}
	if c.Bearer == "" && c.AccessToken == "" && (compat.JavaIsBlank(c.Username) || compat.JavaIsBlank(c.Password)) {
		return "", remote.ErrNoRight, msgUserNotFound // AbstractAuthenticationManager.authenticate
	}
	p, err := x.a.Check(resource, action, c)
	if err == nil {
		return p.Username, 0, ""
	}
	if errors.Is(err, auth.ErrUnknownUser) {
		// 2.5.1's plugin says "user not found!" for a wrong password too
		return "", remote.ErrNoRight, msgUserNotFound
	}
	var ce *compat.Error
	if errors.As(err, &ce) {
		if ce.Status == 403 {
			return "", remote.ErrNoRight, ce.Body
		}
		return "", remote.ErrServer, ce.Body
	}
	return "", remote.ErrServer, err.Error()
}
