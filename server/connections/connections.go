// Package connections keeps the Nacos 2.x client connections of one node:
// who is connected (ids, client IP, version, labels, tenant, abilities),
// requests the server sends a client over its stream and their acks, the
// keep-alive ejection and connection limits Java Nacos 2.5.1 applies
// (ConnectionManager, NacosRuntimeConnectionEjector), and the hooks through
// which everything a connection owned is released when it goes.
//
// The package knows the wire format (compat/remote) but not gRPC: the edge
// (server/grpcapi) hands each connection a Stream to write on and feeds the
// client's answers back through Ack. Time comes from an injectable clock.
package connections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/clock"
)

// Errors of the package.
var (
	// ErrOverLimit refuses a registration past Config.MaxConnections.
	ErrOverLimit = errors.New("connections: over the connection limit")
	// ErrNoConnection is returned for an id that is not registered.
	ErrNoConnection = errors.New("connections: connection is not registered")
	// ErrTimeout is a server request the client did not answer in time.
	ErrTimeout = errors.New("connections: request timed out")
	// ErrClosed is a server request whose connection closed before the answer.
	ErrClosed = errors.New("connections: connection closed")
	// ErrBusy is a send refused because the connection's previous send is
	// still blocked (Java's ConnectionBusyException).
	ErrBusy = errors.New("connections: too much bytes on sending queue of this stream")
)

// Stream is how the manager writes to a client. Send must be safe for
// concurrent use and may block while the transport is flow-controlled;
// Close ends the stream and its transport, making a blocked Send return.
type Stream interface {
	Send(p *remote.Payload) error
	Close()
}

// Label keys of ConnectionSetupRequest (RemoteConstants).
const (
	LabelSource        = "source"
	LabelSourceSDK     = "sdk"
	LabelSourceCluster = "cluster"
	LabelModule        = "module"
	LabelAppName       = "AppName"
	// appConnPrefix marks labels a client adds for gray rules ("app_conn_").
	appConnPrefix = "app_conn_"
)

// Conn is one registered connection. Its identity fields are set before
// Register and never change.
type Conn struct {
	// ID is "<ms>_<remoteIp>_<remotePort>", as Java names a transport.
	ID string
	// ClientIP is the client's own address (the setup payload's clientIp):
	// beta IPs and srcIp use it.
	ClientIP   string
	RemoteIP   string
	RemotePort int
	LocalPort  int
	// Version is the client version ("Nacos-Java-Client:v2.5.1").
	Version string
	// AppName is the "AppName" label, "-" when absent.
	AppName   string
	Tenant    string
	Labels    map[string]string
	Abilities map[string]bool
	Created   time.Time

	stream     Stream
	lastActive atomic.Int64 // unix ms
	closed     atomic.Bool

	sendSem chan struct{} // one send at a time; a waiter past sendWait is busy

	mu      sync.Mutex
	pending map[string]*call // requestId → waiting server request
	// firstBlock and lastBlock are the times of busy sends (ms, 0: none):
	// a connection busy for over five minutes is ejected.
	firstBlock, lastBlock int64
}

// NewConn builds a connection for Register.
func NewConn(id string, s Stream) *Conn {
	return &Conn{ID: id, stream: s, sendSem: make(chan struct{}, 1), pending: map[string]*call{}}
}

// SDK reports a client connection (label source=sdk).
func (c *Conn) SDK() bool { return strings.EqualFold(c.Labels[LabelSource], LabelSourceSDK) }

// Cluster reports a connection from another server (label source=cluster).
func (c *Conn) Cluster() bool { return strings.EqualFold(c.Labels[LabelSource], LabelSourceCluster) }

// LastActive is when the client was last heard from.
func (c *Conn) LastActive() time.Time { return time.UnixMilli(c.lastActive.Load()) }

// AppLabel is one of the labels gray rules match
// (ConnectionMeta.getAppLabels): AppName, ClientVersion, or a non-blank
// "app_conn_" label named without its prefix, which wins over the first
// two; "" when the connection has none.
func (c *Conn) AppLabel(name string) string {
	if v, ok := c.Labels[appConnPrefix+name]; ok && name != "" && strings.TrimSpace(v) != "" {
		return v
	}
	switch name {
	case "AppName":
		return c.Labels[LabelAppName]
	case "ClientVersion":
		return c.Version
	}
	return ""
}

// Closed reports that the connection was unregistered.
func (c *Conn) Closed() bool { return c.closed.Load() }

// call is a server request waiting for its answer.
type call struct {
	cb    func(*remote.DecodedResponse, error)
	timer clock.Timer
	done  atomic.Bool
}

func (k *call) finish(r *remote.DecodedResponse, err error) {
	if !k.done.CompareAndSwap(false, true) {
		return
	}
	if k.timer != nil {
		k.timer.Stop()
	}
	k.cb(r, err)
}

// Config configures a Manager.
type Config struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// ServerIP is the clientIp of the server's requests (Java puts its own
	// address there).
	ServerIP string
	// KeepAlive is how long a silent connection lives before it is asked
	// whether it is alive (RuntimeConnectionEjector.KEEP_ALIVE_TIME, 20 s).
	KeepAlive time.Duration
	// CheckDelay and CheckInterval schedule the ejection rounds (1 s, then
	// 3 s after the end of each).
	CheckDelay, CheckInterval time.Duration
	// DetectTimeout is how long a ClientDetectionRequest waits (5 s).
	DetectTimeout time.Duration
	// MaxConnections caps the connections: the nacos connection control
	// rule's countLimit, counting every connection but never refusing one
	// from another server (label source=cluster); <= 0 means no limit
	// (Java's default control manager applies none).
	MaxConnections int
	// BusyEject ejects a connection whose sends kept failing busy for this
	// long (300 s); SendWait is how long a send waits behind a blocked one
	// before it fails busy (3 s).
	BusyEject, SendWait time.Duration
}

// DefaultConfig returns Java Nacos 2.5.1's settings.
func DefaultConfig() Config {
	return Config{Clock: clock.Real{}, Logger: slog.Default(), ServerIP: "127.0.0.1", KeepAlive: 20 * time.Second,
		CheckDelay: time.Second, CheckInterval: 3 * time.Second, DetectTimeout: 5 * time.Second,
		BusyEject: 300 * time.Second, SendWait: 3 * time.Second}
}

// Validate checks c.
func (c Config) Validate() error {
	switch {
	case c.Clock == nil:
		return errors.New("connections: Config.Clock is nil")
	case c.Logger == nil:
		return errors.New("connections: Config.Logger is nil")
	case c.KeepAlive <= 0:
		return fmt.Errorf("connections: KeepAlive must be > 0, got %s", c.KeepAlive)
	case c.CheckInterval <= 0:
		return fmt.Errorf("connections: CheckInterval must be > 0, got %s", c.CheckInterval)
	case c.DetectTimeout <= 0:
		return fmt.Errorf("connections: DetectTimeout must be > 0, got %s", c.DetectTimeout)
	case c.SendWait <= 0 || c.BusyEject <= 0:
		return fmt.Errorf("connections: SendWait and BusyEject must be > 0, got %s and %s", c.SendWait, c.BusyEject)
	}
	return nil
}

// Manager is the connection table of one node. It is safe for concurrent
// use.
type Manager struct {
	cfg   Config
	clk   clock.Clock
	log   *slog.Logger
	sched *clock.Schedules

	mu    sync.RWMutex
	conns map[string]*Conn
	perIP map[string]int

	hooksMu sync.RWMutex
	onGone  []func(*Conn)
	onNew   []func(*Conn)

	nextID atomic.Int64 // server request ids (PushAckIdGenerator)

	roundBusy atomic.Bool
	// loadCount and redirect are a pending rebalance (Rebalance): the next
	// ejection round resets connections above loadCount.
	rebalanceMu sync.Mutex
	loadCount   int
	redirect    string
}

// New returns a manager; Start begins the ejection rounds.
func New(cfg Config) (*Manager, error) {
	d := DefaultConfig()
	if cfg.KeepAlive == 0 {
		cfg.KeepAlive = d.KeepAlive
	}
	if cfg.CheckDelay == 0 {
		cfg.CheckDelay = d.CheckDelay
	}
	if cfg.CheckInterval == 0 {
		cfg.CheckInterval = d.CheckInterval
	}
	if cfg.DetectTimeout == 0 {
		cfg.DetectTimeout = d.DetectTimeout
	}
	if cfg.BusyEject == 0 {
		cfg.BusyEject = d.BusyEject
	}
	if cfg.SendWait == 0 {
		cfg.SendWait = d.SendWait
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Manager{cfg: cfg, clk: cfg.Clock, log: cfg.Logger, sched: clock.NewSchedules(cfg.Clock),
		conns: map[string]*Conn{}, perIP: map[string]int{}, loadCount: -1}, nil
}

// Start schedules the ejection rounds until Close.
func (m *Manager) Start() {
	m.sched.Every(m.cfg.CheckDelay, m.cfg.CheckInterval, m.ejectRound)
}

// Close stops the rounds and unregisters every connection.
func (m *Manager) Close() {
	m.sched.Close()
	m.mu.RLock()
	ids := make([]string, 0, len(m.conns))
	for id := range m.conns {
		ids = append(ids, id)
	}
	m.mu.RUnlock()
	for _, id := range ids {
		m.Unregister(id)
	}
}

// OnDisconnect registers f to run (on the unregistering goroutine) for
// every connection that is unregistered: the owner of per-connection state
// (config listeners, ephemeral instances, subscriptions) releases it there.
func (m *Manager) OnDisconnect(f func(*Conn)) {
	m.hooksMu.Lock()
	m.onGone = append(m.onGone, f)
	m.hooksMu.Unlock()
}

// OnConnect registers f to run for every registered connection.
func (m *Manager) OnConnect(f func(*Conn)) {
	m.hooksMu.Lock()
	m.onNew = append(m.onNew, f)
	m.hooksMu.Unlock()
}

// Register adds c (ConnectionManager.register): an id already registered
// is left as it is; a client connection past MaxConnections is refused
// with ErrOverLimit.
func (m *Manager) Register(c *Conn) error {
	now := m.clk.Now()
	m.mu.Lock()
	if _, ok := m.conns[c.ID]; ok {
		m.mu.Unlock()
		return nil
	}
	if m.cfg.MaxConnections > 0 && !c.Cluster() && len(m.conns) >= m.cfg.MaxConnections {
		m.mu.Unlock()
		return ErrOverLimit
	}
	if c.Created.IsZero() {
		c.Created = now
	}
	c.lastActive.Store(now.UnixMilli())
	m.conns[c.ID] = c
	m.perIP[c.ClientIP]++
	m.mu.Unlock()
	m.log.Debug("connection registered", "connectionId", c.ID, "clientIp", c.ClientIP, "version", c.Version, "app", c.AppName)
	m.hooksMu.RLock()
	hooks := m.onNew
	m.hooksMu.RUnlock()
	for _, f := range hooks {
		f(c)
	}
	return nil
}

// Unregister removes a connection, fails its waiting requests, closes its
// stream and runs the OnDisconnect hooks. Unknown ids are ignored.
func (m *Manager) Unregister(id string) {
	m.mu.Lock()
	c, ok := m.conns[id]
	if ok {
		delete(m.conns, id)
		if m.perIP[c.ClientIP]--; m.perIP[c.ClientIP] <= 0 {
			delete(m.perIP, c.ClientIP)
		}
	}
	m.mu.Unlock()
	if !ok {
		return
	}
	c.closed.Store(true)
	c.mu.Lock()
	pending := c.pending
	c.pending = map[string]*call{}
	c.mu.Unlock()
	for _, k := range pending {
		k.finish(nil, ErrClosed)
	}
	if c.stream != nil {
		c.stream.Close()
	}
	m.log.Debug("connection unregistered", "connectionId", id)
	m.hooksMu.RLock()
	hooks := m.onGone
	m.hooksMu.RUnlock()
	for _, f := range hooks {
		f(c)
	}
}

// Get returns a registered connection (nil if none).
func (m *Manager) Get(id string) *Conn {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.conns[id]
}

// Valid reports whether id is registered (ConnectionManager.checkValid).
func (m *Manager) Valid(id string) bool { return m.Get(id) != nil }

// Touch records activity of a connection (refreshActiveTime).
func (m *Manager) Touch(id string) {
	if c := m.Get(id); c != nil {
		c.lastActive.Store(m.clk.Now().UnixMilli())
	}
}

// Count is the number of registered connections.
func (m *Manager) Count() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.conns)
}

// CountByIP is the number of connections of each client IP.
func (m *Manager) CountByIP() map[string]int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[string]int, len(m.perIP))
	for k, v := range m.perIP {
		out[k] = v
	}
	return out
}

// List returns the registered connections sorted by id.
func (m *Manager) List() []*Conn {
	m.mu.RLock()
	out := make([]*Conn, 0, len(m.conns))
	for _, c := range m.conns {
		out = append(out, c)
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// send writes p to c's stream, one send at a time: a send that waits more
// than SendWait behind a blocked one fails with ErrBusy (and the
// connection's busy time is recorded).
func (m *Manager) send(c *Conn, p *remote.Payload) error {
	select {
	case c.sendSem <- struct{}{}:
	default:
		t := time.NewTimer(m.cfg.SendWait)
		select {
		case c.sendSem <- struct{}{}:
			t.Stop()
		case <-t.C:
			now := m.clk.Now().UnixMilli()
			c.mu.Lock()
			if c.firstBlock == 0 {
				c.firstBlock = now
			} else {
				c.lastBlock = now
			}
			c.mu.Unlock()
			return ErrBusy
		}
	}
	defer func() { <-c.sendSem }()
	c.mu.Lock()
	c.firstBlock, c.lastBlock = 0, 0
	c.mu.Unlock()
	if c.closed.Load() {
		return ErrClosed
	}
	if err := c.stream.Send(p); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return nil
}

// Notify sends a server request without waiting for an answer
// (sendRequestNoAck: SetupAckRequest).
func (m *Manager) Notify(c *Conn, r remote.Requester) error {
	return m.send(c, remote.EncodeRequest(r, m.cfg.ServerIP))
}

// RequestAsync sends a server request to connection id with a fresh
// requestId and calls cb once with the client's answer, ErrTimeout after
// timeout, or ErrClosed. cb runs on the stream's or a timer's goroutine:
// it must not block. An error means cb will not be called.
func (m *Manager) RequestAsync(id string, r remote.Requester, timeout time.Duration, cb func(*remote.DecodedResponse, error)) error {
	c := m.Get(id)
	if c == nil {
		return ErrNoConnection
	}
	rid := fmt.Sprint(m.nextID.Add(1))
	r.Base().RequestID = rid
	k := &call{cb: cb}
	c.mu.Lock()
	if c.closed.Load() {
		c.mu.Unlock()
		return ErrClosed
	}
	c.pending[rid] = k
	c.mu.Unlock()
	k.timer = m.clk.AfterFunc(timeout, func() {
		c.mu.Lock()
		delete(c.pending, rid)
		c.mu.Unlock()
		k.finish(nil, ErrTimeout)
	})
	if err := m.send(c, remote.EncodeRequest(r, m.cfg.ServerIP)); err != nil {
		c.mu.Lock()
		delete(c.pending, rid)
		c.mu.Unlock()
		if k.done.CompareAndSwap(false, true) {
			k.timer.Stop()
			return err
		}
		return nil // the timer or a close already answered cb
	}
	return nil
}

// Request is RequestAsync waiting for the answer (or ctx).
func (m *Manager) Request(ctx context.Context, id string, r remote.Requester, timeout time.Duration) (*remote.DecodedResponse, error) {
	type result struct {
		r   *remote.DecodedResponse
		err error
	}
	ch := make(chan result, 1)
	if err := m.RequestAsync(id, r, timeout, func(d *remote.DecodedResponse, err error) { ch <- result{d, err} }); err != nil {
		return nil, err
	}
	select {
	case res := <-ch:
		return res.r, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Ack delivers a client's answer read from connection id's stream
// (RpcAckCallbackSynchronizer.ackNotify) and refreshes its activity. An
// answer nobody waits for is dropped.
func (m *Manager) Ack(id string, p *remote.Payload) {
	c := m.Get(id)
	if c == nil {
		return
	}
	c.lastActive.Store(m.clk.Now().UnixMilli())
	d, err := remote.DecodeResponse(p.Metadata.Type, p.Body)
	if err != nil {
		m.log.Debug("undecodable answer on a stream", "connectionId", id, "type", p.Metadata.Type, "err", err)
		return
	}
	c.mu.Lock()
	k := c.pending[d.RequestID]
	delete(c.pending, d.RequestID)
	c.mu.Unlock()
	if k == nil {
		return
	}
	if !d.Success() {
		k.finish(d, fmt.Errorf("connections: client answered %d: %s", d.ErrorCode, d.Message))
		return
	}
	k.finish(d, nil)
}
