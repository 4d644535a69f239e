package grpcapi

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/server/connections"
)

// Push retry settings (RpcConfigChangeNotifier): each ack waits 3 s; the
// n-th retry comes 2n s after the failure; after MaxPushRetry attempts
// (nacos.config.push.maxRetryTime, 50) the connection is unregistered.
const (
	pushAckTimeout      = 3 * time.Second
	DefaultMaxPushRetry = 50
)

// ConfigNotifier is the 2.x side of config listening
// (ConfigChangeListenContext and RpcConfigChangeNotifier): which
// connection listens to which config, and the ConfigChangeNotifyRequest
// pushed to each of them when a config changes, whatever edge wrote it.
type ConfigNotifier struct {
	s        *Server
	svc      ConfigService
	maxRetry int

	mu     sync.Mutex
	byKey  map[string]map[string]struct{}         // groupKey → connection ids
	byConn map[string]map[string]remote.ConfigKey // connection id → groupKey → key

	pushes, failures atomic.Int64
}

func newConfigNotifier(s *Server, svc ConfigService) *ConfigNotifier {
	n := &ConfigNotifier{s: s, svc: svc, maxRetry: DefaultMaxPushRetry,
		byKey: map[string]map[string]struct{}{}, byConn: map[string]map[string]remote.ConfigKey{}}
	s.conns.OnDisconnect(func(c *connections.Conn) { n.clear(c.ID) })
	return n
}

// SetMaxRetry sets the push attempts before a connection is dropped (tests).
func (n *ConfigNotifier) SetMaxRetry(max int) { n.maxRetry = max }

func (n *ConfigNotifier) add(connID, gk string, lc remote.ConfigListenContext) {
	n.mu.Lock()
	defer n.mu.Unlock()
	m := n.byKey[gk]
	if m == nil {
		m = map[string]struct{}{}
		n.byKey[gk] = m
	}
	m[connID] = struct{}{}
	keys := n.byConn[connID]
	if keys == nil {
		keys = map[string]remote.ConfigKey{}
		n.byConn[connID] = keys
	}
	keys[gk] = remote.ConfigKey{DataID: lc.DataID, Group: lc.Group, Tenant: lc.Tenant}
}

func (n *ConfigNotifier) remove(connID, gk string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if m := n.byKey[gk]; m != nil {
		delete(m, connID)
		if len(m) == 0 {
			delete(n.byKey, gk)
		}
	}
	if keys := n.byConn[connID]; keys != nil {
		delete(keys, gk)
		if len(keys) == 0 {
			delete(n.byConn, connID)
		}
	}
}

// clear drops everything a connection listened to (ConfigConnectionEventListener).
func (n *ConfigNotifier) clear(connID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for gk := range n.byConn[connID] {
		if m := n.byKey[gk]; m != nil {
			delete(m, connID)
			if len(m) == 0 {
				delete(n.byKey, gk)
			}
		}
	}
	delete(n.byConn, connID)
}

// Listeners is the number of (connection, config) listen pairs.
func (n *ConfigNotifier) Listeners() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, m := range n.byConn {
		c += len(m)
	}
	return c
}

// ListenedBy lists the group keys a connection listens to.
func (n *ConfigNotifier) ListenedBy(connID string) []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.byConn[connID]))
	for gk := range n.byConn[connID] {
		out = append(out, gk)
	}
	return out
}

// Changed is the config service's change hook: every connection listening
// to groupKey is sent a ConfigChangeNotifyRequest ("" — a snapshot restore
// — notifies every listener). It does not block.
func (n *ConfigNotifier) Changed(groupKey string) {
	type target struct {
		conn string
		key  remote.ConfigKey
	}
	var ts []target
	n.mu.Lock()
	if groupKey == "" {
		for conn, keys := range n.byConn {
			for _, k := range keys {
				ts = append(ts, target{conn, k})
			}
		}
	} else {
		for conn := range n.byKey[groupKey] {
			ts = append(ts, target{conn, n.byConn[conn][groupKey]})
		}
	}
	n.mu.Unlock()
	for _, t := range ts {
		k := t.key
		go n.push(t.conn, remote.ConfigKey{DataID: k.DataID, Group: k.Group, Tenant: k.Tenant}, 1)
	}
}

// push sends one notification; a failure is retried after 2×attempt
// seconds while the connection lives, up to maxRetry attempts, after which
// the connection is dropped (RpcPushTask).
func (n *ConfigNotifier) push(connID string, k remote.ConfigKey, attempt int) {
	n.pushes.Add(1)
	err := n.s.conns.RequestAsync(connID, &remote.ConfigChangeNotifyRequest{ConfigKey: k}, pushAckTimeout,
		func(r *remote.DecodedResponse, err error) {
			if err != nil {
				n.retry(connID, k, attempt, err)
			}
		})
	if err != nil {
		n.retry(connID, k, attempt, err)
	}
}

func (n *ConfigNotifier) retry(connID string, k remote.ConfigKey, attempt int, cause error) {
	n.failures.Add(1)
	if n.maxRetry > 0 && attempt >= n.maxRetry {
		n.s.log.Warn("config push failed too often: dropping the connection", "connectionId", connID, "dataId", k.DataID,
			"group", k.Group, "tenant", k.Tenant, "err", cause)
		n.s.conns.Unregister(connID)
		return
	}
	if !n.s.conns.Valid(connID) {
		return // the client is gone
	}
	n.s.cfg.Clock.AfterFunc(time.Duration(attempt)*2*time.Second, func() { n.push(connID, k, attempt+1) })
}

// Stats are the push counters.
func (n *ConfigNotifier) Stats() (pushes, failures int64) { return n.pushes.Load(), n.failures.Load() }
