package naming

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/push"
	"github.com/nacosd/nacosd/server/switches"
)

// CPStore is what naming needs of raftstore (persistent instances, service
// metadata and switches). Subscribe's callbacks run on the FSM goroutine.
type CPStore interface {
	Apply(ctx context.Context, b raftstore.Batch) (uint64, error)
	Update(ctx context.Context, keys []raftstore.Key, build func() (raftstore.Batch, error)) (uint64, error)
	Get(bucket, key string) (raftstore.Record, bool)
	Scan(bucket, prefix string, fn func(key string, r raftstore.Record) bool)
	Subscribe(load func(), fn func(raftstore.Event)) (cancel func())
}

// Pusher is what naming needs of the UDP push service: the subscribers an
// instance list query registers. Pushes follow the change stream
// (Changes).
type Pusher interface {
	Subscribe(sub push.Subscriber)
}

// Buckets naming keeps in raftstore. Names live on disk: never rename.
const (
	BucketMeta     = "ns.meta"    // ServiceKey → ServiceMeta JSON
	BucketPersist  = "ns.persist" // ServiceKey → []Instance JSON (persistent instances)
	BucketSwitches = "ns.switch"  // "switches" → Switches JSON
	switchesKey    = "switches"
)

// Config configures a Registry. Zero fields mean the default (DefaultConfig),
// the convention of every nacosd component config: switches are phrased so
// that false is the shipped behaviour, and nil Clock and Logger mean the
// real clock and a discarding logger.
type Config struct {
	Store  CPStore
	Pusher Pusher // may be nil (no push)
	// Replicator is the cluster's AP protocol (Distro); nil in standalone
	// mode, where this node owns every service.
	Replicator Replicator
	Clock      clock.Clock
	Logger     *slog.Logger
	// DisableExpiry keeps ephemeral instances past their ip delete timeout
	// (nacos.naming.expireInstance=false; shipped: they are deleted).
	DisableExpiry bool
	// BeatCheckInterval is the period of the beat-expiry sweep (250 ms).
	// Java's ClientBeatCheckTask runs every 5 s, so an instance turns
	// unhealthy 15–20 s after its last beat there and is deleted 30–35 s
	// after it; a 250 ms sweep keeps the same 15 s and 30 s rules and makes
	// them 15–15.25 s and 30–30.25 s (the earliest Java could answer), so
	// that a stopped instance is gone from every member within 31 s.
	BeatCheckInterval time.Duration
	// DisableEmptyServiceClean keeps services that stayed empty (shipped:
	// nacos.naming.empty-service.auto-clean=true removes them after more
	// than three checks).
	DisableEmptyServiceClean bool
	EmptyServiceCleanInitial time.Duration // 50 s
	EmptyServiceCleanPeriod  time.Duration // 30 s
	// DisableHealthCheck turns off TCP/HTTP probing of persistent instances
	// (tests that register addresses nobody listens on).
	DisableHealthCheck bool
	// HealthCheckInterval, when positive, replaces Java's adaptive probe
	// schedule (first round 2–7 s after a cluster appears, then
	// checkRtNormalized: 1–5 s for TCP, 0.5–5 s for HTTP) with a fixed period.
	HealthCheckInterval time.Duration
	// WriteTimeout bounds one CP write, retries of a lost race included (10 s).
	WriteTimeout time.Duration
}

// DefaultConfig returns Java Nacos's shipped defaults.
func DefaultConfig() Config {
	return Config{Clock: clock.Real{}, Logger: slog.New(slog.DiscardHandler), BeatCheckInterval: 250 * time.Millisecond,
		EmptyServiceCleanInitial: 50 * time.Second, EmptyServiceCleanPeriod: 30 * time.Second, WriteTimeout: 10 * time.Second}
}

// withDefaults fills the zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Clock == nil {
		c.Clock = d.Clock
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	if c.BeatCheckInterval == 0 {
		c.BeatCheckInterval = d.BeatCheckInterval
	}
	if c.EmptyServiceCleanInitial == 0 {
		c.EmptyServiceCleanInitial = d.EmptyServiceCleanInitial
	}
	if c.EmptyServiceCleanPeriod == 0 {
		c.EmptyServiceCleanPeriod = d.EmptyServiceCleanPeriod
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = d.WriteTimeout
	}
	return c
}

// Validate checks the configuration (after defaults are applied).
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Store == nil:
		return errors.New("naming: Config.Store is nil")
	case c.BeatCheckInterval < 0:
		return fmt.Errorf("naming: Config.BeatCheckInterval must not be negative, got %v", c.BeatCheckInterval)
	case c.EmptyServiceCleanInitial < 0:
		return fmt.Errorf("naming: Config.EmptyServiceCleanInitial must not be negative, got %v", c.EmptyServiceCleanInitial)
	case c.EmptyServiceCleanPeriod < 0:
		return fmt.Errorf("naming: Config.EmptyServiceCleanPeriod must not be negative, got %v", c.EmptyServiceCleanPeriod)
	case c.HealthCheckInterval < 0:
		return fmt.Errorf("naming: Config.HealthCheckInterval must not be negative, got %v", c.HealthCheckInterval)
	case c.WriteTimeout < 0:
		return fmt.Errorf("naming: Config.WriteTimeout must not be negative, got %v", c.WriteTimeout)
	}
	return nil
}

// Registry is the naming domain of one node.
type Registry struct {
	cfg Config
	log *slog.Logger

	mu         sync.RWMutex
	namespaces map[string]map[string]*Service // namespace → grouped name → service
	nsOrder    []string                       // namespaces in creation order (Java's serviceMap)
	svcSeq     uint64                         // services created so far (Service.created); under mu

	rules    *rules                          // input checks (go-playground/validator)
	seq      atomic.Uint64                   // first-registration order of instances (Java hash-tie order)
	switches atomic.Pointer[switches.Domain] // live domain (GET /operator/switches, naming logic)
	stored   atomic.Pointer[switches.Domain] // last CP-stored domain; nil before the first write
	cancel   func()
	tasks    *clock.Schedules
	checker  *healthChecker
	stats    stats   // metrics counters (stats.go)
	changes  Changes // every mutation's one event (changes.go)
}

// Service is one service: its CP metadata and its two instance lists.
type Service struct {
	// emitMu orders the changes that edit the ephemeral list (emitEdit):
	// taken before mu, released after the change is emitted
	emitMu        sync.Mutex
	mu            sync.RWMutex
	meta          ServiceMeta
	persisted     bool                 // meta is in the CP store
	linked        bool                 // Java's clusterMap is a LinkedHashMap (see clusters)
	persistentCap int                  // capacity of the map the last persistent write built (0: none yet)
	ephemeral     map[string]*Instance // by DatumKey
	persistent    map[string]*Instance // by DatumKey
	lastModified  int64
	renders       map[renderKey]renderEntry // instance/list bodies by query shape, cleared by touch
	version       uint64                    // incremented by touch
	removed       bool                      // dropped from the registry; writers must look it up again
	checksum      string
	dirty         bool
	finalizeCount int
	owned         bool // this node was the service's owner at the last sweep
	// deregistered holds when ephemeral instances were explicitly
	// deregistered, for deregisterQuiet (beat.go)
	deregistered tombstones
	// beatsReported: the service's owner reports its instances' beats
	// (a nacosd owner, ApplyBeatTimes): the copies' last beats are true
	beatsReported bool
	// created orders services by creation here (view.go); set under r.mu
	created uint64
}

// New builds the registry from the CP store's current state and starts the
// beat sweeper, the empty-service cleaner and the health checker.
func New(cfg Config) (*Registry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	r := &Registry{cfg: cfg, log: cfg.Logger, namespaces: map[string]map[string]*Service{}, rules: newRules(),
		tasks: clock.NewSchedules(cfg.Clock)}
	sw := switches.Default()
	r.switches.Store(&sw)
	r.cancel = cfg.Store.Subscribe(r.rebuild, r.onEvent)
	r.tasks.Every(cfg.BeatCheckInterval, cfg.BeatCheckInterval, func() { r.Sweep(r.cfg.Clock.Now()) })
	if !cfg.DisableEmptyServiceClean {
		r.tasks.Every(cfg.EmptyServiceCleanInitial, cfg.EmptyServiceCleanPeriod, func() { r.CleanEmptyServices() })
	}
	if !cfg.DisableHealthCheck {
		r.checker = newHealthChecker(r)
	}
	return r, nil
}

// Close stops background work and returns once every callback that was
// already running (sweep, clean, health-check round and its probes) ended.
func (r *Registry) Close() error {
	r.cancel()
	r.tasks.Close()
	if r.checker != nil {
		r.checker.close()
	}
	return nil
}

// Config returns the effective configuration (defaults applied).
func (r *Registry) Config() Config { return r.cfg }

// Switches returns the current switch domain (do not modify).
func (r *Registry) Switches() *switches.Domain { return r.switches.Load() }

func (r *Registry) nowMillis() int64 { return r.cfg.Clock.Now().UnixMilli() }

// service returns the service or nil.
func (r *Registry) service(ns, grouped string) *Service {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namespaces[ns][grouped]
}

// getOrCreate returns the service, creating it (locally, not persisted) with
// name validation when absent.
func (r *Registry) getOrCreate(ns, grouped string) (*Service, error) {
	if s := r.service(ns, grouped); s != nil {
		return s, nil
	}
	if err := r.rules.serviceName(grouped); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.namespaces[ns]
	if m == nil {
		m = r.newNamespaceLocked(ns)
	}
	if s := m[grouped]; s != nil {
		return s, nil
	}
	s := newService(newServiceMeta(ns, grouped), r.nowMillis())
	r.svcSeq++
	s.created = r.svcSeq
	m[grouped] = s
	return s, nil
}

func newService(meta ServiceMeta, now int64) *Service {
	return &Service{meta: meta, ephemeral: map[string]*Instance{}, persistent: map[string]*Instance{}, lastModified: now, dirty: true}
}

// newNamespaceLocked adds an empty namespace. Caller holds r.mu.
func (r *Registry) newNamespaceLocked(ns string) map[string]*Service {
	m := map[string]*Service{}
	r.namespaces[ns] = m
	r.nsOrder = append(r.nsOrder, ns)
	return m
}

// namespaceIDs lists the namespaces in the order Java's serviceMap (a
// ConcurrentHashMap) iterates them: by bucket, colliding ones in creation
// order.
func (r *Registry) namespaceIDs() []string {
	r.mu.RLock()
	ids := append([]string(nil), r.nsOrder...)
	r.mu.RUnlock()
	return compat.JavaHashOrderStrings(ids, 16)
}

// InstanceForm is a parsed register/update/deregister request (§3.1).
type InstanceForm struct {
	NamespaceID string
	ServiceName string // grouped
	Instance    Instance
	Agent       string
}

// clampWeight applies Service.onChange's weight clamping.
func clampWeight(w float64) float64 {
	if w > 10000 {
		return 10000
	}
	if w > 0 && w < 0.01 {
		return 0.01
	}
	return w
}

// Register adds or replaces an instance (POST /instance).
func (r *Registry) Register(ctx context.Context, f InstanceForm) error {
	in := f.Instance
	in.ServiceName = f.ServiceName
	if err := r.rules.instance(&in); err != nil {
		return err
	}
	now := r.nowMillis()
	in.LastBeat = now
	if !in.Ephemeral {
		return r.writePersistent(ctx, f.NamespaceID, f.ServiceName, func(s *Service, list map[string]*Instance) error {
			r.addInstance(list, &in, false)
			return nil
		})
	}
	s, err := r.lockLive(f.NamespaceID, f.ServiceName)
	if err != nil {
		return err
	}
	if _, ok := s.meta.Clusters[in.ClusterName]; !ok {
		s.meta.addCluster(NewClusterMeta(in.ClusterName))
	}
	key := r.addInstance(s.ephemeral, &in, true)
	s.deregistered.remove(key)
	s.touch(now)
	s.mu.Unlock()
	r.emitEdit(f.NamespaceID, f.ServiceName, ChangedEphemeral, EditPut, key, nil)
	s.emitMu.Unlock()
	return nil
}

// lockLive returns the service, created if needed, not removed (a service
// dropped concurrently is looked up again), with s.emitMu and s.mu
// (write) held: the caller releases s.mu, emits its change (emitEdit),
// then releases s.emitMu.
func (r *Registry) lockLive(ns, grouped string) (*Service, error) {
	for {
		s, err := r.getOrCreate(ns, grouped)
		if err != nil {
			return nil, err
		}
		s.emitMu.Lock()
		s.mu.Lock()
		if !s.removed {
			return s, nil
		}
		s.mu.Unlock()
		s.emitMu.Unlock()
	}
}

// addInstance puts in into list (keyed by DatumKey) applying the instance-ID
// and health-preserving rules of §2.3/§3.1.10. live says list is the live map.
// It returns the instance's key.
func (r *Registry) addInstance(list map[string]*Instance, in *Instance, live bool) string {
	in = in.clone()
	in.Weight = clampWeight(in.Weight)
	key := in.DatumKey()
	if old, ok := list[key]; ok {
		in.InstanceID = old.InstanceID
		in.seq = old.seq
		if !old.sameJavaString(in) && !in.Marked {
			in.Healthy = old.Healthy
		}
		if live {
			in.checkOK, in.checkFail, in.mockValid = old.checkOK, old.checkFail, old.mockValid
		}
	} else {
		in.InstanceID = generateID(in, list)
		in.seq = r.seq.Add(1)
	}
	list[key] = in
	return key
}

func generateID(in *Instance, list map[string]*Instance) string {
	if g, _ := in.IDGenerator(); compat.JavaEqualsIgnoreCase(g, "snowflake") {
		used := map[string]bool{}
		for _, o := range list {
			used[o.InstanceID] = true
		}
		for i := 0; ; i++ {
			if id := strconv.Itoa(i); !used[id] {
				return id
			}
		}
	}
	return in.IP + "#" + strconv.Itoa(in.Port) + "#" + in.ClusterName + "#" + in.ServiceName
}

func (s *Service) touch(now int64) {
	s.renders = nil
	s.version++
	s.lastModified = now
	s.dirty = true
}

// Deregister removes an instance (DELETE /instance). A missing service is ok.
func (r *Registry) Deregister(ctx context.Context, f InstanceForm) error {
	in := f.Instance
	s := r.service(f.NamespaceID, f.ServiceName)
	if s == nil {
		return nil
	}
	if err := r.rules.clusterName(in.ClusterName); err != nil {
		return err
	}
	in.ServiceName = f.ServiceName
	key := in.DatumKey()
	if !in.Ephemeral {
		return r.writePersistent(ctx, f.NamespaceID, f.ServiceName, func(s *Service, list map[string]*Instance) error {
			delete(list, key)
			return nil
		})
	}
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	if _, ok := s.meta.Clusters[in.ClusterName]; !ok {
		s.meta.addCluster(NewClusterMeta(in.ClusterName))
	}
	_, found := s.ephemeral[key]
	delete(s.ephemeral, key)
	if found {
		now := r.nowMillis()
		s.touch(now)
		s.deregistered.add(key, now)
	}
	s.mu.Unlock()
	if found {
		r.emitDeregistered(f.NamespaceID, f.ServiceName, key)
	}
	return nil
}

// Update is PUT /instance: for Java clients >= 1.0.0 the instance must
// exist; every other agent registers (§3.1.3).
func (r *Registry) Update(ctx context.Context, f InstanceForm) error {
	if !GroupedForAgent(f.Agent) {
		return r.Register(ctx, f)
	}
	in := f.Instance
	if err := r.rules.instance(&in); err != nil {
		return err
	}
	s := r.service(f.NamespaceID, f.ServiceName)
	if s == nil {
		return compat.ServerError("service not found, namespace: " + f.NamespaceID + ", service: " + f.ServiceName)
	}
	in.ServiceName = f.ServiceName
	if !s.containsInstance(&in) {
		return compat.ServerError("instance not exist: " + in.JavaString())
	}
	return r.Register(ctx, f)
}

// containsInstance is service.allIPs().contains(instance): same ip, same
// ephemeral flag and same port (or port 0), any cluster.
func (s *Service) containsInstance(in *Instance) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	list := s.persistent
	if in.Ephemeral {
		list = s.ephemeral
	}
	for _, o := range list {
		if o.IP == in.IP && (o.Port == in.Port || in.Port == 0) {
			return true
		}
	}
	return false
}

// PatchForm is PATCH /instance (§3.1.4): nil fields are left unchanged.
type PatchForm struct {
	NamespaceID, ServiceName, ClusterName, IP string
	Port                                      int
	Metadata                                  map[string]string
	SetMetadata                               bool // Metadata replaces the instance's (nil: a null map)
	App                                       *string
	Weight                                    *float64
	Healthy, Enabled                          *bool
}

// Patch mutates an existing instance.
func (r *Registry) Patch(ctx context.Context, p PatchForm) error {
	s := r.service(p.NamespaceID, p.ServiceName)
	var cur *Instance
	if s != nil {
		s.mu.RLock()
		for _, list := range []map[string]*Instance{s.persistent, s.ephemeral} {
			for _, o := range list {
				if o.ClusterName == p.ClusterName && o.IP == p.IP && o.Port == p.Port {
					cur = o.clone()
				}
			}
		}
		s.mu.RUnlock()
	}
	if cur == nil {
		return compat.IllegalArgument("instance not found")
	}
	if p.SetMetadata {
		cur.Metadata = p.Metadata
	}
	if p.App != nil {
		cur.App = *p.App
	}
	if p.Weight != nil {
		cur.Weight = *p.Weight
	}
	if p.Healthy != nil {
		cur.Healthy = *p.Healthy
	}
	if p.Enabled != nil {
		cur.Enabled = *p.Enabled
	}
	if err := r.rules.instance(cur); err != nil {
		return err
	}
	return r.Register(ctx, InstanceForm{NamespaceID: p.NamespaceID, ServiceName: p.ServiceName, Instance: *cur})
}

// Detail is GET /instance (§3.1.7).
func (r *Registry) Detail(ns, grouped, cluster, ip string, port int) ([]byte, error) {
	s := r.service(ns, grouped)
	if s == nil {
		return nil, compat.ErrNoService(grouped)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var inCluster []*Instance
	for _, list := range []map[string]*Instance{s.persistent, s.ephemeral} {
		for _, o := range list {
			if o.ClusterName == cluster {
				inCluster = append(inCluster, o)
			}
		}
	}
	if len(inCluster) == 0 {
		return nil, compat.ErrNoIPsInCluster(cluster, grouped)
	}
	for _, o := range inCluster {
		if o.IP == ip && o.Port == port {
			return compat.InstanceDetail{Service: grouped, IP: o.IP, Port: o.Port, ClusterName: o.ClusterName, Weight: o.Weight,
				Healthy: o.Healthy, InstanceID: o.InstanceID, Metadata: o.Metadata}.JSON(), nil
		}
	}
	return nil, compat.ErrNoMatchedIP()
}

func (r *Registry) findInstance(ns, grouped, cluster, ip string, port int) *Instance {
	s := r.service(ns, grouped)
	if s == nil {
		return nil
	}
	var kb [128]byte
	key := appendDatumKey(kb[:0], ip, port, cluster)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if in, ok := s.persistent[string(key)]; ok {
		return in
	}
	return s.ephemeral[string(key)]
}

// IsPersistent reports whether the instance at cluster/ip/port that Patch
// would change is persistent (the edge sends writes of persistent
// instances to the raft leader).
func (r *Registry) IsPersistent(ns, grouped, cluster, ip string, port int) bool {
	s := r.service(ns, grouped)
	if s == nil {
		return false
	}
	at := func(list map[string]*Instance) bool {
		for _, in := range list {
			if in.ClusterName == cluster && in.IP == ip && in.Port == port {
				return true
			}
		}
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return at(s.persistent) && !at(s.ephemeral) // Patch takes an ephemeral match last
}

// HasInstance reports whether ip:port is registered in the cluster (either
// kind), as ServiceManager.getInstance finds it.
func (r *Registry) HasInstance(ns, grouped, cluster, ip string, port int) bool {
	return r.findInstance(ns, grouped, cluster, ip, port) != nil
}

// Sweep is ClientBeatCheckTask for every service this node owns, at time
// now: ephemeral instances past their heartbeat timeout turn unhealthy,
// past their delete timeout are removed (§4.2). A service whose owner this
// node has just become first gets a fresh heartbeat window (acquire).
func (r *Registry) Sweep(now time.Time) {
	ms := now.UnixMilli()
	if !r.Switches().HealthCheckEnabled {
		return
	}
	for _, ref := range r.servicesUnordered() {
		s := ref.svc
		owner := r.responsible(ref.name)
		if owner { // it may expire instances (emitEdit)
			s.emitMu.Lock()
		}
		s.mu.Lock()
		s.deregistered.prune(ms)
		if !owner {
			s.owned = false
			s.mu.Unlock()
			continue
		}
		if !s.owned {
			s.owned = true
			if r.cfg.Replicator != nil && !s.beatsReported {
				// the previous owner never reported beats (a Java member,
				// or the service is new here): its copies' last beats can
				// be long past
				s.acquire(ms)
			}
			s.beatsReported = false // this node reports them now
		}
		changed := false
		var expired []string
		for key, o := range s.ephemeral {
			if o.Marked {
				continue
			}
			if ms-o.LastBeat > o.HeartBeatTimeout() && o.Healthy {
				o.Healthy = false
				changed = true
				r.log.Info("instance beat timeout", "service", s.meta.Name, "ip", o.IP, "port", o.Port, "lastBeat", o.LastBeat)
			}
			if !r.cfg.DisableExpiry && ms-o.LastBeat > o.IPDeleteTimeout() {
				delete(s.ephemeral, key)
				expired = append(expired, key)
				changed = true
				r.log.Info("instance expired", "service", s.meta.Name, "ip", o.IP, "port", o.Port)
			}
		}
		if changed {
			s.touch(ms)
		}
		s.mu.Unlock()
		if changed {
			// health flips too: Java leaves them to the checksum and
			// status rounds (up to 5 s more before the other members list
			// the instance unhealthy); the owner's datum is the truth, so
			// it goes out at once
			edit := EditNone
			if len(expired) > 0 {
				edit = EditRemove
				slices.Sort(expired) // Java's check deletes them one by one; any order gives the same list
			}
			r.emitEdit(ref.ns, ref.name, ChangedEphemeral|ChangedHealth, edit, "", expired)
		}
		s.emitMu.Unlock()
	}
}

type serviceRef struct {
	ns, name string
	svc      *Service
}

// allServices returns every service, sorted by namespace and name.
func (r *Registry) allServices() []serviceRef {
	out := r.servicesUnordered()
	sort.Slice(out, func(i, j int) bool {
		if out[i].ns != out[j].ns {
			return out[i].ns < out[j].ns
		}
		return out[i].name < out[j].name
	})
	return out
}

// servicesUnordered is allServices in map order, for the periodic passes
// that need no order (sorting 10 000 names every health-check tick was
// most of its cost).
func (r *Registry) servicesUnordered() []serviceRef {
	r.mu.RLock()
	n := 0
	for _, m := range r.namespaces {
		n += len(m)
	}
	out := make([]serviceRef, 0, n)
	for ns, m := range r.namespaces {
		for name, s := range m {
			out = append(out, serviceRef{ns, name, s})
		}
	}
	r.mu.RUnlock()
	return out
}

// CleanEmptyServices is EmptyServiceAutoClean: a service found empty at
// more than three consecutive checks is removed (§2.7). In a cluster the
// removal is a CP delete of the service, which every member applies
// (Java's easyRemoveService), so a service that only ever had ephemeral
// instances leaves every node too. Java decides on the service's Distro
// owner and its JRaft layer sends the delete to the leader; nacosd decides
// on the raft leader itself, which holds every member's ephemeral lists
// (Distro replicates them), so the delete needs no extra hop and is never
// refused as "not the leader".
func (r *Registry) CleanEmptyServices() {
	decides := r.responsible
	if l, ok := r.cfg.Store.(interface{ IsLeader() bool }); ok && r.cfg.Replicator != nil {
		decides = func(string) bool { return l.IsLeader() }
	}
	for _, ref := range r.allServices() {
		s := ref.svc
		if !decides(ref.name) {
			continue
		}
		s.mu.Lock()
		empty := len(s.ephemeral) == 0 && len(s.persistent) == 0
		remove := false
		if empty { // Java compares before incrementing: removed at the 5th empty check
			remove = s.finalizeCount > 3
			s.finalizeCount++
		} else {
			s.finalizeCount = 0
		}
		persisted := s.persisted || r.cfg.Replicator != nil
		if remove && !persisted {
			s.removed = true // decided under the lock that saw it empty: no register can slip in
		}
		s.mu.Unlock()
		if !remove {
			continue
		}
		r.log.Info("removing empty service", "namespace", ref.ns, "service", ref.name)
		if persisted {
			ctx, cancel := context.WithTimeout(context.Background(), r.cfg.WriteTimeout)
			if err := r.deleteServiceCP(ctx, ref.ns, ref.name); err != nil {
				r.log.Warn("empty service clean failed", "service", ref.name, "err", err)
			}
			cancel()
			continue
		}
		r.dropService(ref.ns, ref.name, s)
	}
}

// dropService removes a local (not persisted) service if it is still s.
func (r *Registry) dropService(ns, name string, s *Service) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	s.removed = true
	s.mu.Unlock()
	r.mu.Lock()
	if r.namespaces[ns][name] == s {
		delete(r.namespaces[ns], name) // the namespace stays, as in Java's serviceMap
	}
	r.mu.Unlock()
	r.emitEdit(ns, name, ChangedMeta|ChangedRemoved, EditNone, "", nil)
}

// Counts returns the number of services and instances (all namespaces).
func (r *Registry) Counts() (services, instances int) {
	for _, ref := range r.servicesUnordered() {
		ref.svc.mu.RLock()
		instances += len(ref.svc.ephemeral) + len(ref.svc.persistent)
		ref.svc.mu.RUnlock()
		services++
	}
	return services, instances
}
