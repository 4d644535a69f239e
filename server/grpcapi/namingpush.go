package grpcapi

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/server/connections"
	"github.com/nacosd/nacosd/server/serviceinfo"
)

// PushConfig configures NotifySubscriberRequest pushes (Java's PushConfig).
type PushConfig struct {
	// Delay coalesces the changes of a service before it is pushed (Java's
	// pushTaskDelay: 500 ms; nacosd: 100 ms).
	Delay time.Duration
	// AckTimeout is how long a push waits for its ack (pushTaskTimeout, 5 s).
	AckTimeout time.Duration
	// RetryDelay is the pause before a failed push is sent again to its
	// connection (pushTaskRetryDelay, 1 s); it is retried as long as the
	// connection lives, with the service's state at that moment.
	RetryDelay time.Duration
}

// DefaultPushConfig returns nacosd's push timings.
func DefaultPushConfig() PushConfig {
	return PushConfig{Delay: 100 * time.Millisecond, AckTimeout: 5 * time.Second, RetryDelay: time.Second}
}

// subscription is one connection's interest in one service.
type subscription struct {
	ns, svc  string // svc grouped
	key      remote.NamingKey
	clusters string
}

type svcID struct{ ns, svc string }

// NamingNotifier is the 2.x side of naming subscriptions (Java's
// NamingSubscriberServiceV2Impl and PushExecuteTask): which connection
// subscribed to which service, and the NotifySubscriberRequest pushed to
// each of them when the service changes, whatever changed it (a 1.x
// client, a 2.x client, another member through Distro or raft). It
// consumes the registry's change stream (Changed), as UDP push does.
type NamingNotifier struct {
	s     *Server
	r     NamingReader
	cfg   PushConfig
	clock clock.Clock

	mu      sync.Mutex
	bySvc   map[svcID]map[string]subscription // service → connection → subscription
	byConn  map[string]map[svcID]struct{}
	pending map[svcID]map[string]struct{} // service → connections due (nil map: all)
	timers  map[svcID]bool

	pushes, failures atomic.Int64
	lastRef          atomic.Int64 // the newest lastRefTime handed out (refTime)
}

func newNamingNotifier(s *Server, r NamingReader, cfg PushConfig) *NamingNotifier {
	d := DefaultPushConfig()
	if cfg.Delay <= 0 {
		cfg.Delay = d.Delay
	}
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = d.AckTimeout
	}
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = d.RetryDelay
	}
	n := &NamingNotifier{s: s, r: r, cfg: cfg, clock: s.cfg.Clock, bySvc: map[svcID]map[string]subscription{},
		byConn: map[string]map[svcID]struct{}{}, pending: map[svcID]map[string]struct{}{}, timers: map[svcID]bool{}}
	s.conns.OnDisconnect(func(c *connections.Conn) { n.clear(c.ID) })
	return n
}

// subscribe records a subscription and pushes the service to the
// connection shortly (ServiceSubscribedEvent).
func (n *NamingNotifier) subscribe(connID string, sub subscription) {
	id := svcID{sub.ns, sub.svc}
	n.mu.Lock()
	m := n.bySvc[id]
	if m == nil {
		m = map[string]subscription{}
		n.bySvc[id] = m
	}
	m[connID] = sub
	c := n.byConn[connID]
	if c == nil {
		c = map[svcID]struct{}{}
		n.byConn[connID] = c
	}
	c[id] = struct{}{}
	n.mu.Unlock()
	n.schedule(id, connID)
}

func (n *NamingNotifier) unsubscribe(connID string, sub subscription) {
	id := svcID{sub.ns, sub.svc}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.removeLocked(connID, id)
}

func (n *NamingNotifier) removeLocked(connID string, id svcID) {
	if m := n.bySvc[id]; m != nil {
		delete(m, connID)
		if len(m) == 0 {
			delete(n.bySvc, id)
		}
	}
	if c := n.byConn[connID]; c != nil {
		delete(c, id)
		if len(c) == 0 {
			delete(n.byConn, connID)
		}
	}
}

// clear drops a closed connection's subscriptions.
func (n *NamingNotifier) clear(connID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for id := range n.byConn[connID] {
		if m := n.bySvc[id]; m != nil {
			delete(m, connID)
			if len(m) == 0 {
				delete(n.bySvc, id)
			}
		}
	}
	delete(n.byConn, connID)
}

// Subscriptions is the number of (connection, service) subscriptions.
func (n *NamingNotifier) Subscriptions() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, m := range n.byConn {
		c += len(m)
	}
	return c
}

// Changed is the change stream's consumer: the service's subscribers are
// pushed after Delay (changes meanwhile are one push). It does not block.
func (n *NamingNotifier) Changed(ns, svc string) {
	id := svcID{ns, svc}
	n.mu.Lock()
	_, subscribed := n.bySvc[id]
	n.mu.Unlock()
	if subscribed {
		n.schedule(id, "")
	}
}

// schedule marks a push of service id to connID ("" every subscriber)
// and starts its timer unless one runs.
func (n *NamingNotifier) schedule(id svcID, connID string) {
	n.mu.Lock()
	p, ok := n.pending[id]
	switch {
	case connID == "":
		n.pending[id] = nil // everyone
	case !ok:
		n.pending[id] = map[string]struct{}{connID: {}}
	case p != nil:
		p[connID] = struct{}{}
	}
	if n.timers[id] {
		n.mu.Unlock()
		return
	}
	n.timers[id] = true
	n.mu.Unlock()
	n.clock.AfterFunc(n.cfg.Delay, func() { n.run(id) })
}

// run pushes the service's state now to the connections due.
func (n *NamingNotifier) run(id svcID) {
	n.mu.Lock()
	due, ok := n.pending[id]
	delete(n.pending, id)
	delete(n.timers, id)
	subs := n.bySvc[id]
	type target struct {
		conn string
		sub  subscription
	}
	var ts []target
	if ok {
		for conn, sub := range subs {
			if _, want := due[conn]; due == nil || want {
				ts = append(ts, target{conn, sub})
			}
		}
	}
	n.mu.Unlock()
	if len(ts) == 0 {
		return
	}
	v, found := n.r.View(id.ns, id.svc)
	cache := n.r.Switches().DefaultPushCacheMillis
	now := n.refTime()
	// subscribers that asked alike get the same bytes: rendered once
	rendered := make(map[subscription][]byte, 1)
	for _, t := range ts {
		body, ok := rendered[t.sub]
		if !ok {
			k := t.sub.key
			body = remote.ServiceInfoJSON(serviceinfo.Render(v, found, serviceinfo.Selection{Clusters: t.sub.clusters, EnabledOnly: true,
				Name: k.ServiceName, Group: k.GroupName, HasName: k.HasService, HasGroup: k.HasGroup}, cache, now))
			rendered[t.sub] = body
		}
		n.push(t.conn, id, body)
	}
}

// push sends one NotifySubscriberRequest; a failure is retried after
// RetryDelay with the service's state then, while the connection lives
// and still subscribes (Java's PushDelayTask for the one client).
func (n *NamingNotifier) push(connID string, id svcID, serviceInfo []byte) {
	n.pushes.Add(1)
	fail := func(err error) {
		n.failures.Add(1)
		if !n.s.conns.Valid(connID) {
			return // gone: NoRequiredRetryException
		}
		n.s.log.Debug("naming push failed; retrying", "connectionId", connID, "service", id.svc, "err", err)
		n.clock.AfterFunc(n.cfg.RetryDelay, func() { n.schedule(id, connID) })
	}
	err := n.s.conns.RequestAsync(connID, &remote.NotifySubscriberRequest{ServiceInfoJSON: serviceInfo}, n.cfg.AckTimeout,
		func(r *remote.DecodedResponse, err error) {
			if err == nil && !r.Success() {
				err = errPushRefused
			}
			if err != nil {
				fail(err)
			}
		})
	if err != nil {
		fail(err)
	}
}

var errPushRefused = &Error{Code: remote.ErrServer, Msg: "push refused by the client"}

// Stats are the push counters.
func (n *NamingNotifier) Stats() (pushes, failures int64) { return n.pushes.Load(), n.failures.Load() }

// refTime is the lastRefTime of a ServiceInfo this node sends: the clock's
// milliseconds, but above every value it handed out before. Java stamps
// currentTimeMillis, and nacos-sdk-python drops a ServiceInfo whose
// lastRefTime is not newer than the one it holds (Java's client drops only
// older ones): two answers within a millisecond, a push after a query,
// made it drop the push without a deregistered instance (the conformance
// suite's python kits on the cluster; its log: "out of date data
// received, old-t: X, new-t: X").
func (n *NamingNotifier) refTime() int64 {
	now := n.clock.Now().UnixMilli()
	for {
		last := n.lastRef.Load()
		next := max(now, last+1)
		if n.lastRef.CompareAndSwap(last, next) {
			return next
		}
	}
}
