// Package distro is nacosd's AP protocol for ephemeral instances: Java Nacos
// 1.4.8's Distro (naming-v1.md §6), spoken over the same HTTP endpoints so
// that nacosd and Java nodes can share one cluster.
//
// Every ephemeral service has one owner among the healthy members, chosen
// by Java's hash (Responsible, MapSrv). Writes reach the owner (the HTTP
// edge proxies them, as DistroFilter does); the owner ships each changed
// instance list to every other member (PUT /v1/ns/distro/datum, batched),
// and every few seconds sends the checksums of the lists it owns
// (PUT /v1/ns/distro/checksum), from which a member with a different or
// missing list fetches it (GET /v1/ns/distro/datum) and drops lists the
// owner no longer has. A starting node loads every list from a peer
// (GET /v1/ns/distro/datums). The health of instances, which Java keeps in
// memory only, is reconciled by the service status sync
// (POST /v1/ns/service/status, GET /v1/ns/instance/statuses).
//
// Where members disagree on the membership (for seconds after a death, a
// restart or a healed partition), nacosd departs from Java so that no
// member drops a live instance: lists are dropped only on two rounds of an
// owner whose mapping agrees, lists are taken only from the member a
// service maps to (others are added or refused), and a member that has not
// loaded sends partial lists, which are added. DESIGN.md says why and what
// is guaranteed.
//
// The package is plain Go: the naming registry is behind Store (by
// ServiceRef; Java's key strings exist only in bodies), the order and
// checksums of the lists held are Distro's own view, fed by the registry's
// change stream (Changed), the member list is behind Members and
// node-to-node HTTP behind Transport.
package distro

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
)

// Store is the ephemeral data of this node's naming registry, by service.
// Which services hold a list, and in which order a list is sent, is
// Distro's own view (view.go), fed by the registry's change stream through
// Changed; the store holds the instances.
type Store interface {
	// Instances returns a service's ephemeral instances, in no particular
	// order (Distro orders them); ok is false when the service does not
	// exist here.
	Instances(ref ServiceRef) ([]compat.DistroInstance, bool)
	// Apply replaces a service's list with one its owner sent, creating the
	// service when needed (an invalid name is an error). The registry
	// reports it on its change stream (EditReplace, the list's order).
	Apply(ref ServiceRef, instances []compat.DistroInstance) error
	// Remove drops a service's list (the owner no longer has it): EditClear.
	Remove(ref ServiceRef)

	// ServiceChecksums returns, per namespace, the service checksum
	// (naming-v1.md §2.6) of every non-empty service the filter accepts.
	ServiceChecksums(owned func(groupedService string) bool) map[string]map[string]string
	// ServiceChecksum returns a service's checksum; ok is false when the
	// service does not exist here.
	ServiceChecksum(ref ServiceRef) (string, bool)
	// ApplyHealth sets each local instance's health from the owner's
	// statuses (ip:port → healthy; instances missing there become
	// unhealthy) and pushes when anything changed.
	ApplyHealth(ref ServiceRef, healthy map[string]bool)

	// BeatTimes lists the last beats after since (ms) of the instances of
	// the services the filter accepts (with all, every such service, an
	// empty map where none beat); ApplyBeatTimes records those its owner
	// reported.
	BeatTimes(owned func(groupedService string) bool, since int64, all bool) []ServiceBeats
	ApplyBeatTimes(ref ServiceRef, beats map[string]int64)
}

// Members is the cluster's member list (server/cluster.Manager).
type Members interface {
	// SelfAddress is this node's member address (ip:port).
	SelfAddress() string
	// Healthy is the sorted list of UP and SUSPICIOUS members (with self).
	Healthy() []string
	// Others lists every other member, any state, sorted.
	Others() []string
	// IsMember reports whether an address is a member.
	IsMember(addr string) bool
	// IsNacosd reports whether a member is a nacosd node (it takes
	// nacosd's own node-to-node calls; a Java member does not).
	IsNacosd(addr string) bool
}

// Request is a node-to-node HTTP call; Path follows the context path.
type Request struct {
	Method, Addr, Path string
	Query              url.Values
	Header             http.Header
	Body               []byte
	Timeout            time.Duration
}

// Response is a member's answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// HeaderStarting marks a nacosd member's answer while it starts (before it
// serves its API): it holds no lists yet, so a starting peer's load need
// not wait for it.
const HeaderStarting = "X-Nacosd-Starting"

// starting reports whether resp is a starting member's answer.
func starting(resp Response) bool {
	return resp.Status == http.StatusServiceUnavailable && resp.Header.Get(HeaderStarting) != ""
}

// Transport sends node-to-node requests with the server headers
// (User-Agent Nacos-Server, Client-Version, the identity header).
type Transport interface {
	Do(ctx context.Context, r Request) (Response, error)
}

// Config configures a Distro. Zero durations mean the defaults.
type Config struct {
	Store     Store
	Members   Members
	Transport Transport

	// SyncDelay is how long a changed key waits for more changes before it
	// joins a batch (Java: taskDispatchPeriod/2 = 1 s; nacosd 100 ms).
	SyncDelay time.Duration
	// BatchDelay is how long a batch to one member collects keys before it
	// is sent (Java: 1 s; nacosd 100 ms, growing with the size of the last
	// batch to that member up to MaxBatchDelay, so that a burst of changes
	// is shipped in fewer, larger syncs); BatchKeys sends it at once when
	// it holds that many (batchSyncKeyCount, 1000).
	BatchDelay, MaxBatchDelay time.Duration
	BatchKeys                 int
	// RetryDelay re-queues the keys of a failed sync (syncRetryDelay 5 s).
	RetryDelay time.Duration
	// VerifyInterval is the checksum round (verify_interval_ms, 5 s).
	VerifyInterval time.Duration
	// StatusInterval is the service status sync round
	// (serviceStatusSynchronizationPeriodMillis, 5 s) and StatusDelay its
	// first run after start (Java: 60 s; nacosd 5 s).
	StatusInterval, StatusDelay time.Duration
	// LoadRetry is the delay between start-up load attempts
	// (loadDataRetryDelayMillis, 30 s; nacosd 2 s) and LoadWait how long
	// the node waits for a first load before it counts as initialized
	// anyway (the checksum rounds fill it in).
	LoadRetry, LoadWait time.Duration
	// Tick is the period of the delay engine (100 ms).
	Tick time.Duration
	// BeatInterval is the period of the beat times sent to the nacosd
	// members (1 s).
	BeatInterval time.Duration
	// Timeout bounds one sync, verify or query call (5 s).
	Timeout time.Duration

	Clock  clock.Clock
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.SyncDelay, 100*time.Millisecond)
	def(&c.BatchDelay, 100*time.Millisecond)
	def(&c.MaxBatchDelay, time.Second)
	def(&c.RetryDelay, 5*time.Second)
	def(&c.VerifyInterval, 5*time.Second)
	def(&c.StatusInterval, 5*time.Second)
	def(&c.StatusDelay, 5*time.Second)
	def(&c.LoadRetry, 2*time.Second)
	def(&c.LoadWait, 10*time.Second)
	def(&c.Tick, 100*time.Millisecond)
	def(&c.BeatInterval, time.Second)
	def(&c.Timeout, 5*time.Second)
	if c.BatchKeys == 0 {
		c.BatchKeys = 1000
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Distro runs the protocol for one node. Safe for concurrent use.
type Distro struct {
	cfg  Config
	log  *slog.Logger
	self string

	mapping atomic.Pointer[mapping] // DistroMapper.healthyList
	view    *view                   // the lists held, their order and checksums

	mu       sync.Mutex
	pending  map[string]map[ServiceRef]time.Time // target → service → due
	batches  map[string]*batch                   // target → collecting batch
	sending  map[string][]ServiceRef             // target → the services of the sync in flight
	lastSize map[string]int                      // target → instances its last sync carried
	failing  map[string]bool                     // targets whose last sync failed (logged once)
	verifies map[string]bool                     // source → checksums being processed
	removed  removals                            // instances removed by an owner (removed.go)

	initialized atomic.Bool // loaded, or LoadWait passed
	loaded      atomic.Bool // a load succeeded
	stats       Stats
	parser      compat.DatumParser

	tasks *clock.Schedules
	// peerSums is the last checksum round of each member (guarded by mu)
	peerSums map[string]PeerChecksum
	// omitted holds, per member, the lists it owns by this node's mapping
	// that its last checksum round omitted (verify.go; mu)
	omitted map[string]map[ServiceRef]omission
	// beatsSince and beatsRound: the previous beat round (beats.go; mu)
	beatsSince int64
	beatsRound int
	ctx        context.Context
	cancel     context.CancelFunc
	wg         sync.WaitGroup
	// run runs background work (a sync, a checksum round, a fetch); nil
	// is a goroutine Close waits for. The tests over the in-memory hub run
	// it inline, so that a fake clock's Advance is the whole schedule.
	run func(func())
}

// spawn runs f in the background (run).
func (d *Distro) spawn(f func()) {
	if d.run != nil {
		d.run(f)
		return
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f()
	}()
}

type batch struct {
	since time.Time
	refs  []ServiceRef
	seen  map[ServiceRef]bool
}

// Stats are counters for the metrics endpoint.
type Stats struct {
	SyncSent, SyncFailed, SyncKeys       atomic.Int64
	VerifySent, VerifyReceived           atomic.Int64
	ChecksumMismatches, KeysFetched      atomic.Int64
	KeysRemoved, DatumsReceived          atomic.Int64
	DatumsRefused                        atomic.Int64 // lists a non-owner sent (OnDatums)
	Refreshed                            atomic.Int64 // lists fetched after a proxied write (Refresh)
	RemovedDropped                       atomic.Int64 // copies of removed instances dropped from applied lists (removed.go)
	StatusSent, StatusReceived, Statuses atomic.Int64
}

// New builds a Distro; Start begins its loops.
func New(cfg Config) (*Distro, error) {
	if cfg.Store == nil || cfg.Members == nil || cfg.Transport == nil {
		return nil, errors.New("distro: Config.Store, Members and Transport are required")
	}
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	d := &Distro{cfg: cfg, log: cfg.Logger, self: cfg.Members.SelfAddress(), view: newView(), pending: map[string]map[ServiceRef]time.Time{},
		batches: map[string]*batch{}, sending: map[string][]ServiceRef{}, lastSize: map[string]int{}, failing: map[string]bool{}, verifies: map[string]bool{},
		tasks: clock.NewSchedules(cfg.Clock), ctx: ctx, cancel: cancel}
	d.MembersChanged()
	return d, nil
}

// Start begins the delay engine, the checksum and status rounds and the
// start-up load. ctx (or Close) ends them.
func (d *Distro) Start(ctx context.Context) {
	go func() {
		select {
		case <-ctx.Done():
			d.cancel()
		case <-d.ctx.Done():
		}
	}()
	d.tasks.Every(d.cfg.Tick, d.cfg.Tick, d.tick)
	d.tasks.Every(d.cfg.VerifyInterval, d.cfg.VerifyInterval, d.verifyRound)
	d.tasks.Every(RemovedKeep/4, RemovedKeep/4, d.forgetRemovals)
	d.tasks.Every(d.cfg.StatusDelay, d.cfg.StatusInterval, d.statusRound)
	d.tasks.Every(d.cfg.BeatInterval, d.cfg.BeatInterval, d.beatRound)
	d.startLoad()
}

// Close stops the loops and waits for calls in flight.
func (d *Distro) Close() {
	d.cancel()
	d.tasks.Close()
	d.wg.Wait()
}

// Stats returns the protocol counters.
func (d *Distro) Stats() *Stats { return &d.stats }

// Initialized reports whether the start-up load is done
// (DistroProtocol.isInitialized).
func (d *Distro) Initialized() bool { return d.initialized.Load() }

// mapping is the owner mapping: the sorted healthy members and a digest
// that names this list (nacosd members compare theirs in the checksum
// rounds: verify.go).
type mapping struct {
	servers []string
	digest  string
}

func newMapping(servers []string) *mapping {
	h := fnv.New64a()
	for _, s := range servers {
		h.Write([]byte(s))
		h.Write([]byte{','})
	}
	return &mapping{servers: servers, digest: strconv.FormatUint(h.Sum64(), 36)}
}

// MembersChanged rebuilds the owner mapping from the member list; call it
// on every membership change (DistroMapper.onEvent).
func (d *Distro) MembersChanged() {
	h := slices.Clone(d.cfg.Members.Healthy())
	slices.Sort(h)
	d.mapping.Store(newMapping(h))
}

// Healthy is the owner mapping's member list.
func (d *Distro) Healthy() []string { return slices.Clone(d.mapping.Load().servers) }

// Hash is DistroMapper.distroHash: abs(hashCode % Integer.MAX_VALUE) with
// Java's String.hashCode.
func Hash(s string) int {
	h := int64(compat.JavaStringHash(s)) % 2147483647
	if h < 0 {
		h = -h
	}
	return int(h)
}

// Responsible is DistroMapper.responsible: whether this node owns the
// grouped service name. An empty list owns nothing; a node missing from
// the list owns everything (it cannot tell).
func (d *Distro) Responsible(groupedService string) bool {
	return d.mapping.Load().responsible(d.self, groupedService)
}

func (m *mapping) responsible(self, groupedService string) bool {
	servers := m.servers
	if len(servers) == 0 {
		return false
	}
	index := slices.Index(servers, self)
	if index < 0 {
		return true
	}
	last := index
	for last+1 < len(servers) && servers[last+1] == self {
		last++
	}
	target := Hash(groupedService) % len(servers)
	return target >= index && target <= last
}

// MapSrv is DistroMapper.mapSrv: the owner's address (self with an empty
// list).
func (d *Distro) MapSrv(groupedService string) string {
	return d.mapping.Load().owner(d.self, groupedService)
}

func (m *mapping) owner(self, groupedService string) string {
	if len(m.servers) == 0 {
		return self
	}
	return m.servers[Hash(groupedService)%len(m.servers)]
}

// do sends one call and maps a non-2xx answer to an error.
func (d *Distro) do(ctx context.Context, r Request) (Response, error) {
	if r.Timeout == 0 {
		r.Timeout = d.cfg.Timeout
	}
	resp, err := d.cfg.Transport.Do(ctx, r)
	if err != nil {
		return resp, err
	}
	if resp.Status < 200 || resp.Status > 299 {
		return resp, fmt.Errorf("distro: %s %s on %s: status %d: %s", r.Method, r.Path, r.Addr, resp.Status, truncate(resp.Body, 200))
	}
	return resp, nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// jsonHeader is the header of a JSON request body.
func jsonHeader() http.Header {
	return http.Header{"Content-Type": {"application/json;charset=UTF-8"}, "Accept-Charset": {"UTF-8"}}
}
