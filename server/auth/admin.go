package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// The built-in admin (issue 26 item 12). Java 1.4.8 writes nacos/nacos and
// only its documentation asks to change it; nacosd keeps that user, so apps
// configured with it keep working, but an operator can give it another
// password at first start (Settings.AdminPassword), the console shows a
// banner while the published one is in force, the metric
// nacosd_auth_default_admin_password says so, and the log warns at start.

// defaultCheck remembers whether one stored hash is the password nacos.
type defaultCheck struct {
	hash string
	def  bool
}

// DefaultPasswordInForce reports that auth is on and the user nacos exists
// with the password nacos. The bcrypt comparison is made once per stored
// hash.
func (s *Service) DefaultPasswordInForce() bool {
	if !s.Enabled() {
		return false
	}
	u := s.tables.get().byName[DefaultUser]
	if u == nil {
		return false
	}
	if c := s.defaultPW.Load(); c != nil && c.hash == u.Password {
		return c.def
	}
	def := u.Password == defaultUserHash || bcrypt.CompareHashAndPassword([]byte(u.Password), []byte(DefaultPassword)) == nil
	s.defaultPW.Store(&defaultCheck{hash: u.Password, def: def})
	return def
}

// applyAdminPassword gives nacos the configured admin password while it
// still has the published one (a node restarted with the setting after its
// first start, or a cluster whose first leader did not have it). A password
// changed since is left alone.
func (s *Service) applyAdminPassword(ctx context.Context) error {
	pw := s.cfg.Settings.AdminPassword
	if pw == "" {
		return nil
	}
	v := s.tables.get()
	u := v.byName[DefaultUser]
	if u == nil || !(u.Password == defaultUserHash || bcrypt.CompareHashAndPassword([]byte(u.Password), []byte(DefaultPassword)) == nil) {
		return nil
	}
	hash, err := hashPassword(pw, s.cfg.BcryptCost)
	if err != nil {
		return fmt.Errorf("auth: hash the admin password: %w", err)
	}
	b := batch{}
	b.exists(bucketUser, DefaultUser)
	b.put(bucketUser, DefaultUser, encodeRecord(userRecord{Password: string(hash), Created: u.created}))
	b.putEpoch(DefaultUser, s.nextEpoch(v, DefaultUser)) // tokens got with nacos/nacos end
	if err := s.apply(ctx, b); err != nil && !errors.Is(err, errCond) {
		return fmt.Errorf("auth: set the admin password: %w", err)
	}
	s.log.Info("auth: user nacos had the default password; it now has nacosd.auth.admin-password")
	return nil
}

func (s *Service) warnDefaultPassword() {
	if s.DefaultPasswordInForce() {
		ctx := strings.TrimSuffix(s.cfg.ContextPath, "/")
		s.log.Warn(fmt.Sprintf("auth is enabled and user nacos still has the default password nacos: change it on the console's Users page (%s/#/users) "+
			"or with PUT %s/v1/auth/users, or start with nacosd.auth.admin-password (env NACOSD_AUTH_ADMIN_PASSWORD)", ctx, ctx))
	}
}
