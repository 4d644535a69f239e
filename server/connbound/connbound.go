// Package connbound keeps the ephemeral instances of Nacos 2.x clients
// alive for as long as their connection lives. A 2.x client sends no
// beats: the member holding its connection (the holder) registers its
// instances on each service's owner, beats on the client's behalf, and
// deregisters them when the client asks or its connection ends. Where a
// write lands (this node, a nacosd owner in a batch, a Java 1.4.8 owner as
// 1.x calls) is the Writer's business: this package knows connections and
// instances, not transports.
//
// When the holder dies its beats stop and the owner expires the instances
// by the 1.x rules (unhealthy 15 s, deleted 30 s after the last beat),
// while the client reconnects to another member and registers them again
// (its redo) well before that.
package connbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/internal/expiry"
	"github.com/nacosd/nacosd/server/naming"
)

// Kind is what an Op does.
type Kind uint8

// Kinds of ops.
const (
	Register Kind = iota + 1
	Deregister
	Beat
)

var kindNames = [...]string{Register: "register", Deregister: "deregister", Beat: "beat"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s && n != "" {
			return Kind(k), true
		}
	}
	return 0, false
}

// Op is one write of a held instance, applied on its service's owner.
type Op struct {
	Kind        Kind
	NamespaceID string
	Service     string // grouped
	Instance    naming.Instance
	// Holder tags the write: the owner keeps the tag, and a deregistration
	// by another holder than the last one to write the instance changes
	// nothing (naming.Registry.DeregisterHeld).
	Holder string
}

// Writer applies ops on their services' owners: one error per op (nil:
// applied).
type Writer interface {
	Apply(ctx context.Context, ops []Op) []error
}

// Config configures a Manager.
type Config struct {
	Writer Writer
	// Self is this node's member address: holder tags are Self#connID.
	Self string
	// BeatInterval is the longest pause between two beats of an instance
	// (5 s, a 1.x client's); an instance whose metadata asks for a
	// shorter interval is beaten at its own.
	BeatInterval time.Duration
	// Tick is how often due beats are sent (1 s).
	Tick time.Duration
	// WriteTimeout bounds one batch of writes (5 s).
	WriteTimeout time.Duration
	// DropGrace is how long after its connection ended a client's
	// instances are deregistered (5 s): a client that moves to another
	// member (a ConnectResetRequest, or its own switch after a failed
	// health check) closes the old connection as soon as the new one is
	// up and registers again within its redo period (3 s), and the new
	// holder's registration makes the old holder's deregistration a no-op.
	// Deregistering at once would take its instances out of every list
	// for up to that redo period.
	DropGrace time.Duration
	Clock     clock.Clock
	Logger    *slog.Logger
}

// DefaultConfig returns the shipped settings; Writer and Self must be set.
func DefaultConfig() Config {
	return Config{BeatInterval: 5 * time.Second, Tick: time.Second, WriteTimeout: 5 * time.Second, DropGrace: 5 * time.Second, Clock: clock.Real{},
		Logger: slog.New(slog.DiscardHandler)}
}

// Validate checks c.
func (c Config) Validate() error {
	switch {
	case c.Writer == nil:
		return errors.New("connbound: Config.Writer is nil")
	case c.Self == "":
		return errors.New("connbound: Config.Self is empty")
	case c.BeatInterval <= 0 || c.Tick <= 0 || c.WriteTimeout <= 0:
		return fmt.Errorf("connbound: BeatInterval, Tick and WriteTimeout must be > 0, got %v, %v, %v", c.BeatInterval, c.Tick, c.WriteTimeout)
	case c.DropGrace < 0:
		return fmt.Errorf("connbound: DropGrace must not be negative, got %v", c.DropGrace)
	case c.Clock == nil || c.Logger == nil:
		return errors.New("connbound: Config.Clock and Config.Logger must be set")
	}
	return nil
}

// ErrDisconnected is a write for a connection that already ended.
var ErrDisconnected = errors.New("connbound: connection already disconnected")

// svcKey names a service.
type svcKey struct{ ns, svc string }

// held is one instance a connection holds.
type held struct {
	in       naming.Instance
	lastBeat time.Time // when it was last written or beaten
}

// Manager is the holder side: which connection holds which instances.
type Manager struct {
	cfg Config

	mu    sync.Mutex
	conns map[string]map[svcKey][]*held // connection id → service → instances
	// gone: connections dropped (a late write must not revive them),
	// forgotten goneFor after their drop (UnixNano)
	gone  expiry.Log[string]
	tasks *clock.Schedules
	// closed: the node shuts down; the instances it holds are left to
	// their owners' expiry while their clients move to other members
	closed bool

	failed sync.Map // last beat failure logged per service (rate limit)
}

// New returns a manager; Start begins beating.
func New(cfg Config) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Manager{cfg: cfg, conns: map[string]map[svcKey][]*held{}}, nil
}

// Start beats for the held instances every Tick.
func (m *Manager) Start() {
	m.tasks = clock.NewSchedules(m.cfg.Clock)
	m.tasks.Every(m.cfg.Tick, m.cfg.Tick, m.beat)
}

// Close stops beating (the instances then expire on their owners unless
// their clients register them elsewhere).
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	if m.tasks != nil {
		m.tasks.Close()
	}
}

// Holder is the tag of a connection's writes.
func (m *Manager) Holder(connID string) string { return m.cfg.Self + "#" + connID }

// Set makes ins the instances connection connID holds in a service
// (Java 2.x: one publish per client and service; a batch replaces it):
// the new ones are registered on the owner, the ones no longer in ins
// deregistered. An error of a registration is returned (the client's redo
// tries again; the beats register it meanwhile).
func (m *Manager) Set(ctx context.Context, connID, ns, svc string, ins []naming.Instance) error {
	now := m.cfg.Clock.Now()
	k := svcKey{ns, svc}
	m.mu.Lock()
	if _, dropped := m.gone.Get(connID); dropped {
		m.mu.Unlock()
		return ErrDisconnected
	}
	byKey := map[string]bool{}
	next := make([]*held, 0, len(ins))
	for _, in := range ins {
		key := in.DatumKey()
		if byKey[key] {
			continue
		}
		byKey[key] = true
		next = append(next, &held{in: in, lastBeat: now})
	}
	svcs := m.conns[connID]
	if svcs == nil {
		svcs = map[svcKey][]*held{}
		m.conns[connID] = svcs
	}
	old := svcs[k]
	if len(next) == 0 {
		delete(svcs, k)
	} else {
		svcs[k] = next
	}
	m.mu.Unlock()
	holder := m.Holder(connID)
	var ops []Op
	for _, h := range old {
		if !byKey[h.in.DatumKey()] {
			ops = append(ops, Op{Kind: Deregister, NamespaceID: ns, Service: svc, Instance: h.in, Holder: holder})
		}
	}
	for _, h := range next {
		ops = append(ops, Op{Kind: Register, NamespaceID: ns, Service: svc, Instance: h.in, Holder: holder})
	}
	err := m.apply(ctx, ops)
	m.mu.Lock()
	_, dropped := m.gone.Get(connID)
	m.mu.Unlock()
	if dropped {
		// the connection ended while the writes were on their way: what
		// Drop deregistered may have been registered after it
		undo := make([]Op, 0, len(next))
		for _, h := range next {
			undo = append(undo, Op{Kind: Deregister, NamespaceID: ns, Service: svc, Instance: h.in, Holder: holder})
		}
		m.apply(context.Background(), undo)
		return ErrDisconnected
	}
	return err
}

// Remove deregisters the instances connection connID holds in a service.
func (m *Manager) Remove(ctx context.Context, connID, ns, svc string) error {
	k := svcKey{ns, svc}
	m.mu.Lock()
	if _, dropped := m.gone.Get(connID); dropped {
		m.mu.Unlock()
		return ErrDisconnected
	}
	old := m.conns[connID][k]
	delete(m.conns[connID], k)
	m.mu.Unlock()
	holder := m.Holder(connID)
	ops := make([]Op, 0, len(old))
	for _, h := range old {
		ops = append(ops, Op{Kind: Deregister, NamespaceID: ns, Service: svc, Instance: h.in, Holder: holder})
	}
	return m.apply(ctx, ops)
}

// goneFor is how long a dropped connection's id is remembered.
const goneFor = 2 * time.Minute

// Drop deregisters everything a connection held (it closed or was
// ejected) DropGrace later; it does not wait. Beats stop at once. An owner
// that cannot be reached expires the instances (their beats stopped).
func (m *Manager) Drop(connID string) {
	now := m.cfg.Clock.Now()
	m.mu.Lock()
	svcs := m.conns[connID]
	delete(m.conns, connID)
	m.gone.Add(connID, now.UnixNano())
	m.gone.Prune(now.Add(-goneFor).UnixNano() - 1) // dropped more than goneFor ago
	closed := m.closed
	m.mu.Unlock()
	if len(svcs) == 0 || closed {
		return
	}
	holder := m.Holder(connID)
	var ops []Op
	for k, hs := range svcs {
		for _, h := range hs {
			ops = append(ops, Op{Kind: Deregister, NamespaceID: k.ns, Service: k.svc, Instance: h.in, Holder: holder})
		}
	}
	m.cfg.Clock.AfterFunc(m.cfg.DropGrace, func() { m.deregister(connID, ops, 1) })
}

// deregister sends a dropped connection's deregistrations, retrying the
// failed ones twice a second apart.
func (m *Manager) deregister(connID string, ops []Op, attempt int) {
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.WriteTimeout)
	errs := m.cfg.Writer.Apply(ctx, ops)
	cancel()
	var retry []Op
	for i, err := range errs {
		if err != nil {
			retry = append(retry, ops[i])
		}
	}
	switch {
	case len(retry) == 0:
	case attempt < 3:
		m.cfg.Logger.Warn("deregistering a closed connection's instances failed; retrying", "connectionId", connID,
			"failed", len(retry), "err", firstErr(errs))
		m.cfg.Clock.AfterFunc(time.Second, func() { m.deregister(connID, retry, attempt+1) })
	default:
		m.cfg.Logger.Warn("a closed connection's instances were not deregistered; their owners expire them", "connectionId", connID)
	}
}

// Count returns the number of held instances (metrics, tests).
func (m *Manager) Count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, svcs := range m.conns {
		for _, hs := range svcs {
			n += len(hs)
		}
	}
	return n
}

// HeldBy lists the instances a connection holds in a service.
func (m *Manager) HeldBy(connID, ns, svc string) []naming.Instance {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []naming.Instance
	for _, h := range m.conns[connID][svcKey{ns, svc}] {
		out = append(out, h.in)
	}
	return out
}

func (m *Manager) apply(ctx context.Context, ops []Op) error {
	if len(ops) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.WriteTimeout)
	defer cancel()
	errs := m.cfg.Writer.Apply(ctx, ops)
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("connbound: %s %s on its owner: %w", ops[i].Kind, ops[i].Service, err)
		}
	}
	return nil
}

// interval is how often an instance is beaten: at most BeatInterval, and
// at its own interval when its metadata asks for a shorter one.
func (m *Manager) interval(in *naming.Instance) time.Duration {
	d := time.Duration(in.HeartBeatInterval()) * time.Millisecond
	if d <= 0 || d > m.cfg.BeatInterval {
		d = m.cfg.BeatInterval
	}
	return d
}

// beat sends the beats that are due, in one batch.
func (m *Manager) beat() {
	now := m.cfg.Clock.Now()
	var ops []Op
	m.mu.Lock()
	for connID, svcs := range m.conns {
		holder := m.Holder(connID)
		for k, hs := range svcs {
			for _, h := range hs {
				// a tick early rather than late: the owner's timeout
				// counts from the last beat it saw
				if now.Sub(h.lastBeat)+m.cfg.Tick/2 >= m.interval(&h.in) {
					h.lastBeat = now
					ops = append(ops, Op{Kind: Beat, NamespaceID: k.ns, Service: k.svc, Instance: h.in, Holder: holder})
				}
			}
		}
	}
	m.mu.Unlock()
	if len(ops) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.WriteTimeout)
	defer cancel()
	for i, err := range m.cfg.Writer.Apply(ctx, ops) {
		if err == nil {
			continue
		}
		if last, ok := m.failed.Load(ops[i].Service); ok && now.Sub(last.(time.Time)) < time.Minute {
			continue
		}
		m.failed.Store(ops[i].Service, now)
		m.cfg.Logger.Warn("beat of a held instance failed", "service", ops[i].Service, "ip", ops[i].Instance.IP,
			"port", ops[i].Instance.Port, "err", err)
	}
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
