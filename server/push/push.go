// Package push is the Nacos 1.4.8 UDP push service (naming-v1.md §5): it keeps
// the table of UDP subscribers registered by instance/list, debounces service
// changes, sends `{"type":"dom",...}` datagrams from one server-wide UDP socket,
// receives acks on that same socket, retransmits once, expires subscribers and
// keeps the counters behind GET /v1/ns/operator/push/state.
//
// The naming domain renders the payloads (a Renderer); this package never
// imports naming. See DESIGN.md for the concurrency model.
package push

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/internal/clock"
)

// Renderer builds the ServiceInfo JSON for one subscriber: the exact
// instance/list body for that subscriber (its clusters, its agent's `dom`
// form, its IP for the selector) with cacheMillis already set to the push
// cache millis. It is called from push's own goroutines, never while a push
// lock is held, and may be called concurrently for different services.
type Renderer func(sub Subscriber) ([]byte, error)

// Config configures a Service. Start from DefaultConfig.
type Config struct {
	// ListenAddr is the UDP bind address. ":0" (all interfaces, ephemeral
	// port) in production: clients ack to the datagram's source address.
	ListenAddr string
	// Debounce is the delay between the first change of a service and its
	// push; further changes while a push is scheduled are ignored (§5.3).
	Debounce time.Duration
	// LeadingEdge pushes the first change of a quiet service at once and
	// coalesces further changes into at most one push per Debounce window;
	// a change during a running round schedules one more round instead of
	// being dropped. Off: Java's behaviour (every push Debounce after the
	// first change; changes during a round wait for the clients' poll).
	LeadingEdge bool
	// AckTimeout is the interval between a send and its ack check (§5.5).
	AckTimeout time.Duration
	// MaxRetry is how many times an un-acked packet is resent; the push is
	// given up (and counted failed) at the check after the last resend.
	MaxRetry int
	// SubscriberTTL is how long a subscriber lives without a refresh
	// (defaultPushCacheMillis, §5.6). Zombies satisfy now-LastRef > TTL.
	// When it is at least 20s, payloads are reused per agent within one push
	// round, as Java does (§5.3 item 4).
	SubscriberTTL time.Duration
	// SubscriberTTLFunc, when set, replaces SubscriberTTL at every use, so
	// the defaultPushCacheMillis switch can change it at run time.
	SubscriberTTLFunc func() time.Duration
	// SweepInterval is how often zombies are removed.
	SweepInterval time.Duration
	// MaxPending caps the un-acked map; a push beyond it is counted in total
	// and failed without being sent.
	MaxPending int
	// Clock drives debounce, retransmission, expiry and sweeping.
	Clock clock.Clock
	// Nano returns the envelope lastRefTime (Java System.nanoTime()). It must
	// be strictly increasing. Nil: nanoseconds since New plus a large base.
	Nano func() int64
	// Render builds payloads. Required.
	Render Renderer
	// Logger receives push logs. Nil discards them.
	Logger *slog.Logger
	// OnAck, when set, is called with the time from the (last) send of a
	// push to its ack (metrics: Java's pushCost).
	OnAck func(cost time.Duration)
	// TrustedSources are the addresses whose subscriptions are pushed to the
	// clientIP they name (Java's behaviour); a subscription from anywhere
	// else is pushed to its own source address (Subscriber.Source), so that
	// nobody can aim the pushes at a third party. A proxy or NAT gateway
	// between clients and nacosd belongs here
	// (nacosd.push.trusted-sources).
	TrustedSources []netip.Prefix
	// TargetBytesPerSecond and TargetBurst cap the push bytes sent to one
	// target address (ip:port), retransmissions included: a token bucket of
	// TargetBurst bytes refilled at TargetBytesPerSecond. A push beyond it is
	// not sent (counted failed; the client still polls every 10 s). Zero:
	// 1 MiB/s and 8 MiB, far above what a client subscribed to hundreds of
	// services receives.
	TargetBytesPerSecond, TargetBurst int
}

// DefaultConfig returns the Nacos 1.4.8 timings (§9.5) with the real clock.
// Render must still be set. Zero fields of a Config mean these defaults
// (nil Clock: the real clock; nil Logger: discard), the convention of every
// nacosd component config.
func DefaultConfig() Config {
	return Config{
		ListenAddr:    ":0",
		Debounce:      time.Second,
		AckTimeout:    10 * time.Second,
		MaxRetry:      1,
		SubscriberTTL: 10 * time.Second,
		SweepInterval: 20 * time.Second,
		MaxPending:    100000,
		Clock:         clock.Real{},

		TargetBytesPerSecond: 1 << 20,
		TargetBurst:          8 << 20,
	}
}

// withDefaults fills the zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.ListenAddr == "" {
		c.ListenAddr = d.ListenAddr
	}
	if c.Debounce == 0 {
		c.Debounce = d.Debounce
	}
	if c.AckTimeout == 0 {
		c.AckTimeout = d.AckTimeout
	}
	if c.MaxRetry == 0 {
		c.MaxRetry = d.MaxRetry
	}
	if c.SubscriberTTL == 0 {
		c.SubscriberTTL = d.SubscriberTTL
	}
	if c.SweepInterval == 0 {
		c.SweepInterval = d.SweepInterval
	}
	if c.MaxPending == 0 {
		c.MaxPending = d.MaxPending
	}
	if c.TargetBytesPerSecond == 0 {
		c.TargetBytesPerSecond = d.TargetBytesPerSecond
	}
	if c.TargetBurst == 0 {
		c.TargetBurst = d.TargetBurst
	}
	if c.Clock == nil {
		c.Clock = d.Clock
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports the first invalid field (after defaults are applied).
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Debounce < 0:
		return fmt.Errorf("push: config: Debounce must be > 0, got %v", c.Debounce)
	case c.AckTimeout < 0:
		return fmt.Errorf("push: config: AckTimeout must be > 0, got %v", c.AckTimeout)
	case c.MaxRetry < 0:
		return fmt.Errorf("push: config: MaxRetry must be >= 0, got %d", c.MaxRetry)
	case c.SubscriberTTL < 0:
		return fmt.Errorf("push: config: SubscriberTTL must be > 0, got %v", c.SubscriberTTL)
	case c.SweepInterval < 0:
		return fmt.Errorf("push: config: SweepInterval must be > 0, got %v", c.SweepInterval)
	case c.MaxPending < 0:
		return fmt.Errorf("push: config: MaxPending must be > 0, got %d", c.MaxPending)
	case c.TargetBytesPerSecond < 0 || c.TargetBurst < 0:
		return fmt.Errorf("push: config: TargetBytesPerSecond and TargetBurst must be > 0, got %d, %d", c.TargetBytesPerSecond, c.TargetBurst)
	case c.Render == nil:
		return errors.New("push: config: Render is nil")
	}
	return nil
}

// nanoBase makes the default sequence look like a JVM nanoTime (a large
// positive number) while staying far below 2^53, so JavaScript clients that
// parse the envelope as a double echo it back exactly.
const nanoBase = int64(1) << 40

// defaultNano returns a strictly increasing monotonic nanosecond sequence.
func defaultNano() func() int64 {
	start := time.Now()
	var last atomic.Int64
	return func() int64 {
		for {
			n := nanoBase + int64(time.Since(start))
			p := last.Load()
			if n <= p {
				n = p + 1
			}
			if last.CompareAndSwap(p, n) {
				return n
			}
		}
	}
}

// Service is the push service. All methods are safe for concurrent use.
type Service struct {
	cfg  Config
	log  *slog.Logger
	conn *net.UDPConn
	nano func() int64

	mu          sync.Mutex
	closed      bool
	subs        map[string]*serviceSubs // "ns##svc" → subscribers (Java clientMap)
	seq         int64                   // insertion counter for Java iteration order
	scheduled   map[string]clock.Timer  // "ns##svc" → debounced push
	lastRound   map[string]time.Time    // LeadingEdge: start of the last round
	running     map[string]bool         // LeadingEdge: a round is sending
	dirty       map[string]bool         // LeadingEdge: changed during a round
	pending     map[ackKey]*ackEntry    // un-acked pushes (Java ackMap)
	pendingSeq  int64                   // key insertion counter
	pendingPeak int                     // most keys ever pending: sizes Java's ackMap table
	total       int64                   // Java totalPush
	failed      int64                   // Java failedPush (give-ups, send errors, overflow)
	sends       int64                   // datagrams written (tests, debug)
	acked       int64                   // pushes acked (Counters)
	capped      int64                   // pushes not sent: their target's byte budget was spent
	budgets     map[string]*budget      // "ip:port" → push byte budget
	sweeper     clock.Timer

	gzPool   sync.Pool      // *gzip.Writer, reused across rounds
	acksRead atomic.Int64   // datagrams read by the ack reader (tests, debug)
	rounds   sync.WaitGroup // push rounds and retransmissions in flight
	readDone chan struct{}
}

// Config returns the effective configuration (defaults applied).
func (s *Service) Config() Config { return s.cfg }

// ackReadBuffer is the receive buffer asked for the push socket.
const ackReadBuffer = 4 << 20

// New binds the UDP socket and starts the ack reader and the sweeper.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	addr, err := net.ResolveUDPAddr("udp", cfg.ListenAddr)
	if err != nil {
		return nil, fmt.Errorf("push: resolve %s: %w", cfg.ListenAddr, err)
	}
	conn, err := net.ListenUDP("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("push: listen %s: %w", cfg.ListenAddr, err)
	}
	// the acks of a push to thousands of subscribers arrive at once: with
	// the default receive buffer (208 KiB here) the kernel dropped them by
	// hundreds (make bench-scale, 5 000 subscribers), each drop costing a
	// resend 10 s later. The kernel caps the size at net.core.rmem_max.
	if err := conn.SetReadBuffer(ackReadBuffer); err != nil {
		cfg.Logger.Debug("push: receive buffer", "err", err)
	}
	s := &Service{
		cfg:       cfg,
		log:       cfg.Logger,
		conn:      conn,
		nano:      cfg.Nano,
		subs:      make(map[string]*serviceSubs),
		scheduled: make(map[string]clock.Timer),
		lastRound: make(map[string]time.Time),
		running:   make(map[string]bool),
		dirty:     make(map[string]bool),
		pending:   make(map[ackKey]*ackEntry),
		budgets:   make(map[string]*budget),
		readDone:  make(chan struct{}),
	}
	if s.nano == nil {
		s.nano = defaultNano()
	}
	go s.readAcks()
	s.mu.Lock()
	s.sweeper = cfg.Clock.AfterFunc(cfg.SweepInterval, s.sweepTick)
	s.mu.Unlock()
	return s, nil
}

// Addr is the bound UDP address (the source of every push datagram).
func (s *Service) Addr() *net.UDPAddr {
	a, _ := s.conn.LocalAddr().(*net.UDPAddr)
	return a
}

// Close stops every timer, closes the socket and waits for the ack reader
// and any push round in progress. Later calls do nothing.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for k, t := range s.scheduled {
		t.Stop()
		delete(s.scheduled, k)
	}
	for _, e := range s.pending {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	if s.sweeper != nil {
		s.sweeper.Stop()
	}
	s.mu.Unlock()
	err := s.conn.Close()
	<-s.readDone
	s.rounds.Wait()
	if err != nil {
		return fmt.Errorf("push: close socket: %w", err)
	}
	return nil
}

// sweepTick removes zombies and reschedules itself (Java: every 20 s).
func (s *Service) sweepTick() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.sweepLocked(s.cfg.Clock.Now())
	s.sweeper = s.cfg.Clock.AfterFunc(s.cfg.SweepInterval, s.sweepTick)
}
