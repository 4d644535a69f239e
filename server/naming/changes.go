package naming

import (
	"sync"
	"sync/atomic"
)

// ChangeKind says what a Change changed (bits).
type ChangeKind uint8

// Kinds of changes.
const (
	// ChangedEphemeral: the service's ephemeral instances (the list, or an
	// instance's health) changed by this node, which owns the service:
	// Distro ships the list to the other members.
	ChangedEphemeral ChangeKind = 1 << iota
	// ChangedPersistent: persistent instances (a raft entry applied).
	ChangedPersistent
	// ChangedMeta: the service's metadata or clusters (a raft entry
	// applied), or the service was removed.
	ChangedMeta
	// ChangedHealth: the health of instances, in memory only (a probe, a
	// beat recovering an instance, the owner's status sync).
	ChangedHealth
	// ChangedRemote: applied from another member (its Distro datum or
	// status): nothing to ship.
	ChangedRemote
	// ChangedRemoved: the service left the registry (with ChangedMeta),
	// and its instance lists with it.
	ChangedRemoved
)

// EditOp says how a change edited the keys (Instance.DatumKey) of a
// service's ephemeral instance list: what a consumer that keeps its own
// per-instance state, such as Distro's view of the lists in the order a
// Java node sends them, needs to follow the list without reading it.
type EditOp uint8

// Edits of the ephemeral list.
const (
	// EditNone: no instance was added or removed (a health flip, metadata,
	// or not an ephemeral change).
	EditNone EditOp = iota
	// EditPut: the instance Key was written (registered, or registered
	// again).
	EditPut
	// EditRemove: the instance Key, or the instances Keys, were removed
	// (deregistration, expiry), in this order.
	EditRemove
	// EditReplace: the list was replaced by one another member sent
	// (ApplyRemote); Keys are its instances in its order.
	EditReplace
	// EditClear: the list was dropped (RemoveRemote); the service stays.
	EditClear
)

// Change is one committed mutation of a service: every mutation of the
// registry emits exactly one, after its locks are released. The changes
// that edit a service's ephemeral list (Edit != EditNone) and its removal
// are emitted in the order the registry applied them.
type Change struct {
	NamespaceID string
	Service     string // grouped
	Kind        ChangeKind
	Edit        EditOp
	// Key is the datum key of an edit of one instance, Keys those of an
	// edit of several (do not modify them): a register costs no
	// allocation for the event.
	Key  string
	Keys []string
	// Deregistered: the instance Key was removed by an explicit
	// deregistration (not an expiry): Distro keeps it from coming back
	// from a stale copy (distro/removed.go).
	Deregistered bool
}

// Ships reports whether Distro sends the service's list to the other
// members: an ephemeral change this node made as the service's owner.
func (c Change) Ships() bool { return c.Kind&ChangedEphemeral != 0 && c.Kind&ChangedRemote == 0 }

// Changes is the registry's change stream (hashicorp/raft's observers):
// consumers — UDP push, the gRPC push, Distro, the console's event streams —
// subscribe; nothing calls them by hand.
type Changes struct {
	mu   sync.Mutex
	subs atomic.Pointer[[]*changeSub] // copy on write
}

type changeSub struct {
	fn func(Change)
}

// Subscribe calls fn for every change, in the mutating goroutine, after
// the registry released its locks. fn must not block: mark what changed
// and return (push and Distro coalesce per service), or use Observe. The
// returned cancel is idempotent.
func (c *Changes) Subscribe(fn func(Change)) (cancel func()) {
	s := &changeSub{fn: fn}
	c.mu.Lock()
	var next []*changeSub
	if cur := c.subs.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, s)
	c.subs.Store(&next)
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			var keep []*changeSub
			for _, x := range *c.subs.Load() {
				if x != s {
					keep = append(keep, x)
				}
			}
			c.subs.Store(&keep)
		})
	}
}

// Observe sends every change to ch without blocking: a change that finds
// ch full is dropped and counted in dropped (the consumer resynchronises
// from the registry when it sees drops).
func (c *Changes) Observe(ch chan<- Change) (cancel func(), dropped *atomic.Uint64) {
	dropped = new(atomic.Uint64)
	cancel = c.Subscribe(func(ch2 Change) {
		select {
		case ch <- ch2:
		default:
			dropped.Add(1)
		}
	})
	return cancel, dropped
}

// emit delivers one change to every subscriber.
func (c *Changes) emit(ch Change) {
	subs := c.subs.Load()
	if subs == nil {
		return
	}
	for _, s := range *subs {
		s.fn(ch)
	}
}

// Changes is the registry's change stream.
func (r *Registry) Changes() *Changes { return &r.changes }

// emit is the one way a mutation announces itself.
func (r *Registry) emit(ns, grouped string, kind ChangeKind) {
	r.changes.emit(Change{NamespaceID: ns, Service: grouped, Kind: kind})
}

// emitEdit announces a mutation that edited the ephemeral list's keys (or
// removed the service). The caller holds s.emitMu, taken before s.mu and
// released after this call, so that the edits of one service reach the
// consumers in the order they were applied.
func (r *Registry) emitEdit(ns, grouped string, kind ChangeKind, edit EditOp, key string, keys []string) {
	r.changes.emit(Change{NamespaceID: ns, Service: grouped, Kind: kind, Edit: edit, Key: key, Keys: keys})
}

// emitDeregistered emits the explicit deregistration of the ephemeral
// instance key.
func (r *Registry) emitDeregistered(ns, grouped, key string) {
	r.changes.emit(Change{NamespaceID: ns, Service: grouped, Kind: ChangedEphemeral, Edit: EditRemove, Key: key, Deregistered: true})
}
