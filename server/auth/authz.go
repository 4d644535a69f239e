package auth

import (
	"regexp"
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
// contains the requested one and whose resource, with each * read as .*,
// matches the whole requested resource.
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
			if strings.Contains(p.Action, action) && s.matchResource(p.Resource, resource) {
				return true
			}
		}
	}
	return false
}

// matchResource is Pattern.matches(stored.replaceAll("\\*", ".*"), resource).
// Other regex metacharacters keep their meaning, as in Java. Go's regexp is
// linear-time, so a hostile stored pattern cannot stall a request; a pattern
// RE2 cannot compile (Java-only syntax) matches nothing.
func (s *Service) matchResource(stored, resource string) bool {
	if !strings.ContainsAny(stored, `*.\[](){}|?+^$`) {
		return stored == resource
	}
	re, ok := s.patterns.Load(stored)
	if !ok {
		r, err := regexp.Compile(`^(?:` + strings.ReplaceAll(stored, "*", ".*") + `)$`)
		if err != nil {
			r = nil
		}
		re, _ = s.patterns.LoadOrStore(stored, r)
	}
	r := re.(*regexp.Regexp)
	return r != nil && r.MatchString(resource)
}
