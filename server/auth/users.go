package auth

import (
	"context"
	"errors"
	"sort"
	"strings"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// Column limits of Java's schema (users.username varchar(50), roles.role
// varchar(50), permissions.resource varchar(512) in the embedded schema,
// action varchar(8)). Java lets Derby refuse longer values (HTTP 500);
// nacosd answers 400 before writing anything.
const (
	MaxNameLen     = 50
	MaxResourceLen = 512
	MaxActionLen   = 8
	// MaxPasswordLen is the longest password a user may be given: bcrypt
	// reads only its first 72 bytes, so a longer one would be only as
	// strong as its beginning, and any password sharing those 72 bytes
	// would log in (Java truncates silently).
	MaxPasswordLen = 72
)

// checkNewPassword refuses what CreateUser and UpdatePassword must not hash:
// an empty password (Java stores it) and one longer than bcrypt reads.
// The answer has Java's shape for a refused argument (400 "caused: …;").
func checkNewPassword(what, pw string) error {
	switch {
	case pw == "":
		return compat.IllegalArgument(what + " must not be empty")
	case len(pw) > MaxPasswordLen:
		return compat.IllegalArgument(what + " is longer than " + itoa(MaxPasswordLen) + " bytes (bcrypt reads only the first " + itoa(MaxPasswordLen) + ")")
	}
	return nil
}

var errCond = raftstore.ErrCondFailed

type batch raftstore.Batch

func (b *batch) put(bucket, key string, v []byte) {
	b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: bucket, Key: key, Value: v})
}

func (b *batch) del(bucket, key string) {
	b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpDelete, Bucket: bucket, Key: key})
}

func (b *batch) absent(bucket, key string) {
	b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: bucket, Key: key})
}

func (b *batch) exists(bucket, key string) {
	b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondExists, Bucket: bucket, Key: key})
}

func (s *Service) apply(ctx context.Context, b batch) error {
	if len(b.Ops) == 0 {
		return nil
	}
	_, err := s.cfg.Store.Apply(ctx, raftstore.Batch(b))
	return err
}

func tooLong(what, v string, n int) error {
	if len(v) > n {
		return compat.IllegalArgument(what + " is longer than " + itoa(n) + " characters")
	}
	return nil
}

// checkName checks a user name, role, resource or action: its length, and no
// control character (NUL joins the columns of role and permission keys: a
// role "ROLE_ADMIN\x00x" would read back as ROLE_ADMIN of a user "x\x00…").
func checkName(what, v string, n int) error {
	if strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return compat.IllegalArgument(what + " contains a control character")
	}
	return tooLong(what, v, n)
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}

// now is the creation stamp of a new row: clock nanoseconds, strictly
// increasing on this node so rows list in the order they were written.
func (s *Service) now() int64 {
	for {
		last := s.lastStamp.Load()
		n := max(s.cfg.Clock.Now().UnixNano(), last+1)
		if s.lastStamp.CompareAndSwap(last, n) {
			return n
		}
	}
}

// CreateUser is POST /v1/auth/users.
func (s *Service) CreateUser(ctx context.Context, username, password string) error {
	if err := errors.Join(checkName("username", username, MaxNameLen), checkNewPassword("password", password)); err != nil {
		return err
	}
	if s.tables.get().byName[username] != nil {
		return compat.IllegalArgument("user '" + username + "' already exist!")
	}
	hash, err := hashPassword(password, s.cfg.BcryptCost)
	if err != nil {
		return err
	}
	b := batch{}
	b.absent(bucketUser, username)
	b.put(bucketUser, username, encodeRecord(userRecord{Password: string(hash), Created: s.now()}))
	if err := s.apply(ctx, b); errors.Is(err, errCond) {
		return compat.IllegalArgument("user '" + username + "' already exist!")
	} else if err != nil {
		return err
	}
	return nil
}

// DeleteUser is DELETE /v1/auth/users: an admin cannot be deleted; a
// missing user is no error. The user's role bindings go with it (Java
// keeps them, so a re-created user of the same name inherits them).
func (s *Service) DeleteUser(ctx context.Context, username string) error {
	v := s.tables.get()
	if hasRole(v.byUser[username], GlobalAdminRole) {
		return compat.IllegalArgument("cannot delete admin: " + username)
	}
	b := batch{}
	if v.byName[username] != nil {
		b.del(bucketUser, username)
		b.putEpoch(username, s.nextEpoch(v, username)) // a user re-created later gets none of its tokens
	}
	for _, r := range v.byUser[username] {
		b.del(bucketRole, roleKey(r.Role, username))
	}
	return s.apply(ctx, b)
}

// UpdatePassword is PUT /v1/auth/users: caller must be an admin or the
// user itself (Java checks its HTTP session for the same; nacosd the
// token's user).
func (s *Service) UpdatePassword(ctx context.Context, caller Principal, username, newPassword string) error {
	if err := checkNewPassword("newPassword", newPassword); err != nil {
		return err
	}
	if !caller.GlobalAdmin && caller.Username != username {
		return ErrNotSelf
	}
	v := s.tables.get()
	u := v.byName[username]
	if u == nil {
		return compat.IllegalArgument("user " + username + " not exist!")
	}
	hash, err := hashPassword(newPassword, s.cfg.BcryptCost)
	if err != nil {
		return err
	}
	b := batch{}
	b.exists(bucketUser, username)
	b.put(bucketUser, username, encodeRecord(userRecord{Password: string(hash), Created: u.created}))
	b.putEpoch(username, s.nextEpoch(v, username)) // the user's tokens end with the old password
	if err := s.apply(ctx, b); errors.Is(err, errCond) {
		return compat.IllegalArgument("user " + username + " not exist!")
	} else if err != nil {
		return err
	}
	return nil
}

// ErrNotSelf is UserController's RestResult(403, "authorization failed!")
// (HTTP 200), answered to a non-admin changing another user's password.
//
//lint:ignore ST1005 Java's message, answered to clients as it is
var ErrNotSelf = errors.New("authorization failed!")

// Page is model.Page.
type Page[T any] struct {
	TotalCount, PageNumber, PagesAvailable int
	Items                                  []T
}

// ErrPaging is PaginationHelper's IllegalArgumentException → 400.
var ErrPaging = compat.IllegalArgument("pageNo and pageSize must be greater than zero")

func paginate[T any](all []T, pageNo, pageSize int) (Page[T], error) {
	if pageNo <= 0 || pageSize <= 0 {
		return Page[T]{}, ErrPaging
	}
	n := len(all)
	pages := n / pageSize
	if n > pageSize*pages {
		pages++
	}
	p := Page[T]{TotalCount: n, PageNumber: pageNo, PagesAvailable: pages, Items: []T{}}
	if pageNo > pages {
		return p, nil
	}
	start := (pageNo - 1) * pageSize
	end := min(n, start+pageSize)
	p.Items = append(p.Items, all[start:end]...)
	return p, nil
}

// Users is GET /v1/auth/users (password hashes are cleared: nacosd never
// hands them out).
func (s *Service) Users(pageNo, pageSize int) (Page[User], error) {
	v := s.tables.get()
	out := make([]User, len(v.users))
	for i, u := range v.users {
		out[i] = User{Username: u.Username, created: u.created}
	}
	return paginate(out, pageNo, pageSize)
}

// SearchUsers is GET /v1/auth/users/search: names LIKE %username%, in
// name order (Derby answers from the primary key index).
func (s *Service) SearchUsers(username string) []string {
	out := []string{}
	for _, u := range s.tables.get().users {
		if likeContains(u.Username, username) {
			out = append(out, u.Username)
		}
	}
	sort.Strings(out)
	return out
}

// likeContains is SQL LIKE '%pat%' with pat's own % and _ as wildcards
// (Java never escapes them).
func likeContains(s, pat string) bool {
	return likeMatch(s, "%"+pat+"%")
}

func likeMatch(s, p string) bool {
	// iterative wildcard match over runes: % any run, _ one char
	sr, pr := []rune(s), []rune(p)
	si, pi, star, mark := 0, 0, -1, 0
	for si < len(sr) {
		switch {
		case pi < len(pr) && (pr[pi] == '_' || pr[pi] == sr[si]):
			si++
			pi++
		case pi < len(pr) && pr[pi] == '%':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pr) && pr[pi] == '%' {
		pi++
	}
	return pi == len(pr)
}

// Roles is GET /v1/auth/roles: every binding, or one user's when username
// is not blank.
func (s *Service) Roles(username string, pageNo, pageSize int) (Page[RoleInfo], error) {
	v := s.tables.get()
	all := v.roles
	if strings.TrimSpace(username) != "" {
		all = v.byUser[username]
	}
	return paginate(all, pageNo, pageSize)
}

// SearchRoles is GET /v1/auth/roles/search: one entry per binding whose
// role is LIKE %role%.
func (s *Service) SearchRoles(role string) []string {
	out := []string{}
	for _, r := range s.tables.get().roles {
		if likeContains(r.Role, role) {
			out = append(out, r.Role)
		}
	}
	return out
}

// AddRole is POST /v1/auth/roles.
func (s *Service) AddRole(ctx context.Context, role, username string) error {
	if err := checkName("role", role, MaxNameLen); err != nil {
		return err
	}
	if s.tables.get().byName[username] == nil {
		return compat.IllegalArgument("user '" + username + "' not found!")
	}
	if role == GlobalAdminRole {
		return compat.IllegalArgument("role '" + GlobalAdminRole + "' is not permitted to create!")
	}
	b := batch{}
	b.exists(bucketUser, username)
	b.absent(bucketRole, roleKey(role, username))
	b.put(bucketRole, roleKey(role, username), encodeRecord(rowRecord{Created: s.now()}))
	err := s.apply(ctx, b)
	if errors.Is(err, errCond) && s.tables.get().byName[username] != nil {
		return nil // Java: the unique index drops the duplicate, "add role ok!"
	}
	if errors.Is(err, errCond) {
		return compat.IllegalArgument("user '" + username + "' not found!")
	}
	return err
}

// DeleteRole is DELETE /v1/auth/roles: one binding, or with a blank
// username the role for every user. ROLE_ADMIN is never unbound from the
// last admin.
func (s *Service) DeleteRole(ctx context.Context, role, username string) error {
	v := s.tables.get()
	b := batch{}
	for _, r := range v.roles {
		if r.Role == role && (strings.TrimSpace(username) == "" || r.Username == username) {
			b.del(bucketRole, roleKey(r.Role, r.Username))
		}
	}
	if role == GlobalAdminRole {
		admins := 0
		for _, r := range v.roles {
			if r.Role == GlobalAdminRole {
				admins++
			}
		}
		if admins <= len(b.Ops) && len(b.Ops) > 0 {
			return compat.IllegalArgument("cannot remove role 'ROLE_ADMIN' from the last admin")
		}
	}
	return s.apply(ctx, b)
}

// Permissions is GET /v1/auth/permissions.
func (s *Service) Permissions(role string, pageNo, pageSize int) (Page[PermissionInfo], error) {
	v := s.tables.get()
	all := v.perms
	if strings.TrimSpace(role) != "" {
		all = v.byRole[role]
	}
	return paginate(all, pageNo, pageSize)
}

// AddPermission is POST /v1/auth/permissions: the role must be bound to
// some user.
func (s *Service) AddPermission(ctx context.Context, role, resource, action string) error {
	if err := errors.Join(checkName("resource", resource, MaxResourceLen), checkName("action", action, MaxActionLen)); err != nil {
		return err
	}
	if !s.tables.get().roleOf[role] {
		return compat.IllegalArgument("role " + role + " not found!")
	}
	b := batch{}
	k := permKey(role, resource, action)
	b.absent(bucketPerm, k)
	b.put(bucketPerm, k, encodeRecord(rowRecord{Created: s.now()}))
	if err := s.apply(ctx, b); err != nil && !errors.Is(err, errCond) {
		return err
	}
	return nil // a duplicate changes nothing: "add permission ok!" as Java
}

// DeletePermission is DELETE /v1/auth/permissions.
func (s *Service) DeletePermission(ctx context.Context, role, resource, action string) error {
	b := batch{}
	if _, ok := s.cfg.Store.Get(bucketPerm, permKey(role, resource, action)); ok {
		b.del(bucketPerm, permKey(role, resource, action))
	}
	return s.apply(ctx, b)
}
