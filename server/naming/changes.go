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
)

// Change is one committed mutation of a service: every mutation of the
// registry emits exactly one, after its locks are released.
type Change struct {
	NamespaceID string
	Service     string // grouped
	Kind        ChangeKind
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
