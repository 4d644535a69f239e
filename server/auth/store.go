package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/nacosd/nacosd/raftstore"
)

// Store is what the auth service needs of raftstore (the same subset
// server/config uses). Users, roles and permissions live there, so every
// node of a cluster sees the same ones.
type Store interface {
	Apply(ctx context.Context, b raftstore.Batch) (uint64, error)
	Get(bucket, key string) (raftstore.Record, bool)
	Scan(bucket, prefix string, fn func(key string, r raftstore.Record) bool)
	Watch(fn func(raftstore.Event)) (cancel func())
}

// Buckets (see DESIGN notes in the package comment). Keys of roles and
// permissions join their columns with NUL, which no HTTP parameter the
// handlers accept contains.
const (
	bucketUser = "auth.user" // username -> userRecord
	bucketRole = "auth.role" // role NUL username -> rowRecord
	bucketPerm = "auth.perm" // role NUL resource NUL action -> rowRecord
	bucketMeta = "auth.meta" // "init" -> "1" once the built-in user was written
)

// recordVersion is the first byte of every value; add a version, never
// change one.
const recordVersion = 1

type userRecord struct {
	Password string `json:"password"` // bcrypt, $2a$10$...
	Created  int64  `json:"created"`  // unix ns on the leader: listing order
}

type rowRecord struct {
	Created int64 `json:"created"`
}

func encodeRecord(v any) []byte {
	b, _ := json.Marshal(v) // plain structs of strings and ints
	return append([]byte{recordVersion}, b...)
}

func decodeRecord(raw []byte, v any) error {
	if len(raw) == 0 || raw[0] != recordVersion {
		return fmt.Errorf("auth: unknown record version")
	}
	return json.Unmarshal(raw[1:], v)
}

// User is a row of Java's users table.
type User struct {
	Username string
	Password string // bcrypt hash
	created  int64
}

// RoleInfo is a row of the roles table.
type RoleInfo struct {
	Role, Username string
	created        int64
}

// PermissionInfo is a row of the permissions table.
type PermissionInfo struct {
	Role, Resource, Action string
	created                int64
}

// view is an immutable picture of the three tables, rebuilt from the store
// after any change to them.
type view struct {
	gen    uint64
	users  []User // listing order
	byName map[string]*User
	roles  []RoleInfo
	byUser map[string][]RoleInfo
	roleOf map[string]bool // every role name bound to some user
	perms  []PermissionInfo
	byRole map[string][]PermissionInfo
	epochs map[string]int64 // token epochs (epochs.go)
}

// tables keeps the current view, invalidated by store events.
type tables struct {
	store  Store
	gen    atomic.Uint64
	mu     sync.Mutex
	cur    atomic.Pointer[view]
	cancel func()
}

func newTables(st Store) *tables {
	t := &tables{store: st}
	t.cancel = st.Watch(func(ev raftstore.Event) {
		if ev.Reset {
			t.gen.Add(1)
			return
		}
		for _, op := range ev.Ops {
			if strings.HasPrefix(op.Bucket, "auth.") {
				t.gen.Add(1)
				return
			}
		}
	})
	return t
}

func (t *tables) close() { t.cancel() }

// get returns a view no older than the last applied change.
func (t *tables) get() *view {
	g := t.gen.Load()
	if v := t.cur.Load(); v != nil && v.gen == g {
		return v
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	g = t.gen.Load()
	if v := t.cur.Load(); v != nil && v.gen == g {
		return v
	}
	v := t.load(g)
	t.cur.Store(v)
	return v
}

func (t *tables) load(gen uint64) *view {
	v := &view{gen: gen, byName: map[string]*User{}, byUser: map[string][]RoleInfo{}, roleOf: map[string]bool{},
		byRole: map[string][]PermissionInfo{}, epochs: map[string]int64{}}
	t.store.Scan(bucketUser, "", func(k string, r raftstore.Record) bool {
		var u userRecord
		if decodeRecord(r.Value, &u) == nil {
			v.users = append(v.users, User{Username: k, Password: u.Password, created: u.Created})
		}
		return true
	})
	sort.Slice(v.users, func(i, j int) bool {
		a, b := v.users[i], v.users[j]
		return a.created < b.created || a.created == b.created && a.Username < b.Username
	})
	for i := range v.users {
		v.byName[v.users[i].Username] = &v.users[i]
	}
	t.store.Scan(bucketRole, "", func(k string, r raftstore.Record) bool {
		var row rowRecord
		role, user, ok := strings.Cut(k, "\x00")
		if ok && decodeRecord(r.Value, &row) == nil {
			v.roles = append(v.roles, RoleInfo{Role: role, Username: user, created: row.Created})
		}
		return true
	})
	// Derby reads roles through the unique index (username, role)
	sort.Slice(v.roles, func(i, j int) bool {
		a, b := v.roles[i], v.roles[j]
		return a.Username < b.Username || a.Username == b.Username && a.Role < b.Role
	})
	for _, r := range v.roles {
		v.byUser[r.Username] = append(v.byUser[r.Username], r)
		v.roleOf[r.Role] = true
	}
	t.store.Scan(bucketPerm, "", func(k string, r raftstore.Record) bool {
		var row rowRecord
		f := strings.Split(k, "\x00")
		if len(f) == 3 && decodeRecord(r.Value, &row) == nil {
			v.perms = append(v.perms, PermissionInfo{Role: f[0], Resource: f[1], Action: f[2], created: row.Created})
		}
		return true
	})
	sort.Slice(v.perms, func(i, j int) bool {
		a, b := v.perms[i], v.perms[j]
		return a.created < b.created || a.created == b.created && permKey(a.Role, a.Resource, a.Action) < permKey(b.Role, b.Resource, b.Action)
	})
	for _, p := range v.perms {
		v.byRole[p.Role] = append(v.byRole[p.Role], p)
	}
	t.store.Scan(bucketEpoch, "", func(k string, r raftstore.Record) bool {
		var e epochRecord
		if decodeRecord(r.Value, &e) == nil {
			v.epochs[k] = e.Epoch
		}
		return true
	})
	return v
}

func roleKey(role, user string) string             { return role + "\x00" + user }
func permKey(role, resource, action string) string { return role + "\x00" + resource + "\x00" + action }
