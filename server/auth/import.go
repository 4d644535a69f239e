package auth

import (
	"context"
	"errors"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/nacosd/nacosd/compat"
)

// Outcomes of ImportUser.
const (
	ImportCreated   = "created"
	ImportUpdated   = "updated"
	ImportUnchanged = "unchanged"
)

// ImportUser stores a user with the bcrypt hash a Java Nacos keeps in its
// users table (`nacosd migrate`), so the same password logs in: created
// when absent, the hash replaced when it differs (roles stay), nothing
// when equal. With dryRun nothing is written.
func (s *Service) ImportUser(ctx context.Context, username, hash string, dryRun bool) (string, error) {
	if err := tooLong("username", username, MaxNameLen); err != nil {
		return "", err
	}
	if strings.TrimSpace(username) == "" {
		return "", compat.IllegalArgument("import: username is blank")
	}
	if _, err := bcrypt.Cost([]byte(hash)); err != nil || !strings.HasPrefix(hash, "$2") {
		return "", compat.IllegalArgument("import: password of user " + username + " is not a bcrypt hash")
	}
	v := s.tables.get()
	u := v.byName[username]
	b := batch{}
	outcome := ImportCreated
	switch {
	case u == nil:
		b.absent(bucketUser, username)
		b.put(bucketUser, username, encodeRecord(userRecord{Password: hash, Created: s.now()}))
	case u.Password == hash:
		return ImportUnchanged, nil
	default:
		outcome = ImportUpdated
		b.exists(bucketUser, username)
		b.put(bucketUser, username, encodeRecord(userRecord{Password: hash, Created: u.created}))
		b.putEpoch(username, s.nextEpoch(v, username)) // a password change
	}
	if dryRun {
		return outcome, nil
	}
	if err := s.apply(ctx, b); errors.Is(err, errCond) {
		return "", compat.ServerError("import: user " + username + " changed meanwhile; run again")
	} else if err != nil {
		return "", err
	}
	return outcome, nil
}

// ImportRole binds role to username as a Java Nacos's roles table does,
// ROLE_ADMIN included (the HTTP API refuses to grant it; a Java database
// may hold several admins). The user must exist.
func (s *Service) ImportRole(ctx context.Context, role, username string, dryRun bool) (string, error) {
	if err := errors.Join(tooLong("role", role, MaxNameLen), tooLong("username", username, MaxNameLen)); err != nil {
		return "", err
	}
	if strings.TrimSpace(role) == "" {
		return "", compat.IllegalArgument("import: role is blank")
	}
	v := s.tables.get()
	if v.byName[username] == nil {
		return "", compat.IllegalArgument("user '" + username + "' not found!")
	}
	if hasRole(v.byUser[username], role) {
		return ImportUnchanged, nil
	}
	if dryRun {
		return ImportCreated, nil
	}
	b := batch{}
	b.exists(bucketUser, username)
	b.absent(bucketRole, roleKey(role, username))
	b.put(bucketRole, roleKey(role, username), encodeRecord(rowRecord{Created: s.now()}))
	if err := s.apply(ctx, b); errors.Is(err, errCond) {
		if hasRole(s.tables.get().byUser[username], role) {
			return ImportUnchanged, nil
		}
		return "", compat.IllegalArgument("user '" + username + "' not found!")
	} else if err != nil {
		return "", err
	}
	return ImportCreated, nil
}
