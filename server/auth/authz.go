package auth

import (
	"strings"

	"github.com/nacosd/nacosd/compat"
)

// Authorisation errors with Java's AuthFilter messages.
var (
	ErrResourceInvalid = compat.Forbidden("resource name invalid!")
	ErrForbidden       = compat.Forbidden("authorization failed!")
)

// Check is AuthFilter for one @Secured endpoint: a blank resource is
// refused, then the caller is authenticated and must hold action on
// resource. The returned Principal is the caller.
func (s *Service) Check(resource, action string, c Credentials) (Principal, error) {
	if strings.TrimSpace(resource) == "" {
		return Principal{}, ErrResourceInvalid
	}
	p, err := s.Authenticate(c)
	if err != nil {
		return Principal{}, err
	}
	if !s.HasPermission(p.Username, resource, action) {
		return p, ErrForbidden
	}
	return p, nil
}

// HasPermission is NacosRoleServiceImpl.hasPermission (§3.6): the password
// entry point is open to every user; ROLE_ADMIN may do anything; other
// roles never reach console/ resources; else a permission whose action
// contains the requested one and whose resource matches the whole requested
// resource, read as a literal name with * (or .*) for any run of characters.
func (s *Service) HasPermission(username, resource, action string) bool {
	if resource == passwordResource {
		return true
	}
	v := s.tables.get()
	roles := v.byUser[username]
	if len(roles) == 0 {
		return false
	}
	if hasRole(roles, GlobalAdminRole) {
		return true
	}
	if strings.HasPrefix(resource, consolePrefix) {
		return false
	}
	for _, r := range roles {
		for _, p := range v.byRole[r.Role] {
			if strings.Contains(p.Action, action) && MatchResource(p.Resource, resource) {
				return true
			}
		}
	}
	return false
}

// MatchResource reports whether a stored permission resource grants
// resource: the stored text is a literal name in which * (and .*, Java's
// regex spelling of it, kept so that such permissions keep working) stands
// for any run of characters, ':' and '/' included. Java compiles it as a
// regular expression with only * rewritten, so "config/app.yaml" also
// granted "config/app-yaml" and "nsA:(G1|G2):*" two groups; nacosd reads
// every other character literally (issue 26 item 6, docs/security.md).
// Linear in the lengths; no backtracking blow-up.
func MatchResource(stored, resource string) bool {
	p := strings.ReplaceAll(stored, ".*", "*")
	// iterative glob: on a mismatch, let the last * absorb one more byte
	pi, ri, star, mark := 0, 0, -1, 0
	for ri < len(resource) {
		switch {
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ri
			pi++
		case pi < len(p) && p[pi] == resource[ri]:
			pi++
			ri++
		case star >= 0:
			mark++
			pi, ri = star+1, mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
