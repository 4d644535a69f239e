// Package config is the Nacos 1.4.8 configuration center: configs with their
// beta (gray) and tag variants, history, namespaces, import/export, and the
// 30 s MD5 long polling clients listen with (config-v1.md).
//
// All data lives in raftstore. A write is acknowledged only after Store.Apply
// returns (committed and durable); the leader fixes ids, times and MD5s
// before the batch enters the log. The in-memory cache (contents, MD5s,
// id index) is rebuilt with Scan on start and kept current by Watch events,
// which also wake long-poll holders. The package never imports fiber; the
// HTTP layer lives in server/httpapi.
package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/raftstore"
)

// Store is what the config service needs of raftstore. Subscribe's
// callbacks run synchronously on the store's apply goroutine, after the
// change is visible to Get and Scan; they must not block nor call Apply.
type Store interface {
	Apply(ctx context.Context, b raftstore.Batch) (uint64, error)
	// Update is raftstore.Store.Update: build runs under per-key locks and
	// its batch is applied before they are released.
	Update(ctx context.Context, keys []raftstore.Key, build func() (raftstore.Batch, error)) (uint64, error)
	Get(bucket, key string) (raftstore.Record, bool)
	Scan(bucket, prefix string, fn func(key string, r raftstore.Record) bool)
	// ScanReverse is Scan in descending key order; Count counts the keys
	// with a prefix. History (DiskBuckets) is read through them page by page.
	ScanReverse(bucket, prefix string, skip int, fn func(key string, r raftstore.Record) bool)
	Count(bucket, prefix string) int
	Subscribe(load func(), fn func(raftstore.Event)) (cancel func())
}

// Errors returned by the service besides *compat.Error values.
var (
	// ErrNotLeader aliases raftstore.ErrNotLeader: writes go to the leader.
	ErrNotLeader = raftstore.ErrNotLeader
	// ErrConflict is returned when a write kept losing races (CondFailed)
	// against concurrent writes of the same key.
	ErrConflict = errors.New("config: too many concurrent writes to the same config")
	// ErrCasMismatch refuses a conditional publish (PublishRequest.CasMD5)
	// whose MD5 is not the stored one's.
	ErrCasMismatch = errors.New("config: cas publish: the stored md5 differs")
)

// Config configures a Service.
type Config struct {
	Store  Store
	Clock  clock.Clock
	Logger *slog.Logger
	// MaxContent is the content limit in UTF-16 chars (maxContent, 10485760).
	MaxContent int
	// RetentionDays is nacos.config.retention.days: history rows older than
	// this are deleted every RetentionInterval (default 30; <= 0 disables).
	RetentionDays int
	// RetentionInterval is the history sweep period (10 min).
	RetentionInterval time.Duration
	// WorkerID is the snowflake worker id (0..1023) for config ids.
	WorkerID int64
	// Location is the server time zone for history timestamps and export
	// file names (time.Local when nil).
	Location *time.Location
	// LongPollDelay is SwitchService fixedDelayTime: a client timeout T is
	// held for max(10 s, T - delay) (500 ms).
	LongPollDelay time.Duration
	// MinLongPollHold is the shortest hold (10 s in Java; tests shorten it).
	MinLongPollHold time.Duration
	// Notified, when set, is called after a committed change of a main
	// config reached this node's cache and long polls, with the time since
	// the leader stamped the change (Java's notifyRt timer). It runs on the
	// store's apply goroutine: it must not block.
	Notified func(delay time.Duration)
}

// DefaultConfig returns Java Nacos's defaults; Store must still be set.
func DefaultConfig() Config {
	return Config{Clock: clock.Real{}, Logger: slog.Default(), MaxContent: compat.ConfigMaxContent,
		RetentionDays: 30, RetentionInterval: 10 * time.Minute, LongPollDelay: 500 * time.Millisecond,
		MinLongPollHold: 10 * time.Second}
}

// Validate checks cfg.
func (c Config) Validate() error {
	switch {
	case c.Store == nil:
		return errors.New("config: Config.Store is nil")
	case c.Clock == nil:
		return errors.New("config: Config.Clock is nil")
	case c.Logger == nil:
		return errors.New("config: Config.Logger is nil")
	case c.MaxContent < 0:
		return fmt.Errorf("config: MaxContent must be >= 0, got %d", c.MaxContent)
	case c.WorkerID < 0 || c.WorkerID > 1023:
		return fmt.Errorf("config: WorkerID must be 0..1023, got %d", c.WorkerID)
	case c.LongPollDelay < 0:
		return fmt.Errorf("config: LongPollDelay must be >= 0, got %s", c.LongPollDelay)
	}
	return nil
}

// Service is the config center of one node. It is safe for concurrent use.
type Service struct {
	cfg   Config
	store Store
	clk   clock.Clock
	log   *slog.Logger
	loc   *time.Location

	mu    sync.RWMutex
	items map[string]*item // groupKey → variants
	byID  map[int64]string // config id → groupKey

	ids idGen

	polls    *pollers
	switches atomic.Pointer[switches]
	aggr     atomic.Pointer[[]*regexp.Regexp]

	cancelWatch func()
	closeOnce   sync.Once
	shut        atomic.Bool // Close called: new long polls answer at once
	retention   clock.Timer
	retentionMu sync.Mutex
	closed      bool
	onClose     []func() // OnClose hooks, under retentionMu

	changeMu sync.RWMutex
	onChange map[int]func(groupKey string) // OnChange subscribers
	changeID int
}

// item holds the live variants of one group key. The pointed-to records are
// immutable: writers replace pointers under Service.mu.
type item struct {
	info *Info
	// infoRev is the store revision info was decoded from.
	infoRev uint64
	// infoMod is the cached last-modified time of info: it only moves when
	// the MD5 changes (ConfigCacheService.updateMd5), as Java's
	// Last-Modified header does.
	infoMod int64
	beta    *Beta
	// betaIPs is beta.BetaIps split on ',' without trimming.
	betaIPs []string
	tags    map[string]*Tag
}

func (it *item) empty() bool { return it.info == nil && it.beta == nil && len(it.tags) == 0 }

// New builds the cache from the store, subscribes to its changes and starts
// the history retention timer.
func New(cfg Config) (*Service, error) {
	if cfg.MaxContent == 0 {
		cfg.MaxContent = compat.ConfigMaxContent
	}
	if cfg.RetentionInterval <= 0 {
		cfg.RetentionInterval = 10 * time.Minute
	}
	if cfg.MinLongPollHold <= 0 {
		cfg.MinLongPollHold = 10 * time.Second
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	loc := cfg.Location
	if loc == nil {
		loc = time.Local
	}
	s := &Service{cfg: cfg, store: cfg.Store, clk: cfg.Clock, log: cfg.Logger, loc: loc,
		items: map[string]*item{}, byID: map[int64]string{}}
	s.ids.worker = cfg.WorkerID
	s.polls = newPollers(s)
	// the cache is the state of one applied index, then every entry after
	s.cancelWatch = s.store.Subscribe(func() {
		s.mu.Lock()
		s.reloadLocked()
		s.mu.Unlock()
	}, s.onEvent)
	if cfg.RetentionDays > 0 {
		s.retention = s.clk.AfterFunc(cfg.RetentionInterval, s.retentionTick)
	}
	return s, nil
}

// Close stops watching the store, releases every long-poll holder with an
// empty answer and stops the retention timer.
func (s *Service) Close() error {
	s.closeOnce.Do(func() {
		s.shut.Store(true)
		s.cancelWatch()
		s.retentionMu.Lock()
		s.closed = true
		if s.retention != nil {
			s.retention.Stop()
		}
		hooks := s.onClose
		s.onClose = nil
		s.retentionMu.Unlock()
		s.polls.closeAll()
		for _, f := range hooks {
			f()
		}
	})
	return nil
}

// OnClose registers f to run at the end of Close, once every long-poll
// holder was released (at once when Close already ran). The HTTP layer
// waits there for the answers of holders it keeps without a goroutine.
func (s *Service) OnClose(f func()) {
	s.retentionMu.Lock()
	if !s.closed {
		s.onClose = append(s.onClose, f)
		s.retentionMu.Unlock()
		return
	}
	s.retentionMu.Unlock()
	f()
}

// Closing reports that Close was called: a long poll answered now is
// answered because the service stops.
func (s *Service) Closing() bool { return s.shut.Load() }

// reloadLocked rebuilds the whole cache from the store (start, snapshot
// restore).
func (s *Service) reloadLocked() {
	n := s.store.Count(BucketInfo, "")
	s.items = make(map[string]*item, n)
	s.byID = make(map[int64]string, n)
	s.store.Scan(BucketInfo, "", func(k string, r raftstore.Record) bool {
		var in Info
		if err := decode(r.Value, &in); err != nil {
			s.log.Error("skipping undecodable config", "key", k, "err", err)
			return true
		}
		s.setInfoLocked(k, &in, r.Rev)
		return true
	})
	s.store.Scan(BucketBeta, "", func(k string, r raftstore.Record) bool {
		var b Beta
		if err := decode(r.Value, &b); err != nil {
			s.log.Error("skipping undecodable beta config", "key", k, "err", err)
			return true
		}
		s.setBetaLocked(k, &b)
		return true
	})
	s.store.Scan(BucketTag, "", func(k string, r raftstore.Record) bool {
		var t Tag
		if err := decode(r.Value, &t); err != nil {
			s.log.Error("skipping undecodable tag config", "key", k, "err", err)
			return true
		}
		gk, _, _ := splitNulKey(k)
		s.setTagLocked(gk, &t)
		return true
	})
	var maxNid int64
	if r, ok := s.store.Get(BucketMeta, metaNidKey); ok {
		fmt.Sscan(string(r.Value), &maxNid)
	}
	s.store.ScanReverse(BucketHistoryNid, "", 0, func(k string, _ raftstore.Record) bool {
		if n, err := strconv.ParseInt(k, 10, 64); err == nil && n > maxNid {
			maxNid = n
		}
		return false // the newest nid only (keys are zero-padded)
	})
	s.ids.seenNid(maxNid)
	s.updateSwitchesLocked()
	s.updateAggrLocked()
}

func (s *Service) itemLocked(gk string) *item {
	it := s.items[gk]
	if it == nil {
		it = &item{}
		s.items[gk] = it
	}
	return it
}

func (s *Service) dropIfEmptyLocked(gk string, it *item) {
	if it.empty() {
		delete(s.items, gk)
	}
}

func (s *Service) setInfoLocked(gk string, in *Info, rev uint64) {
	it := s.itemLocked(gk)
	if it.info != nil && it.info.ID != in.ID {
		delete(s.byID, it.info.ID)
	}
	if it.info == nil || it.info.MD5 != in.MD5 {
		it.infoMod = in.Modified
	}
	it.info, it.infoRev = in, rev
	s.byID[in.ID] = gk
	s.ids.seenID(in.ID)
}

// cachedInfo is the cached decoded config of gk when it is the store's
// revision rev (a write's read-modify step then skips decoding it), else nil.
// The Info is shared: never modify it.
func (s *Service) cachedInfo(gk string, rev uint64) *Info {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if it := s.items[gk]; it != nil && it.info != nil && it.infoRev == rev {
		return it.info
	}
	return nil
}

func (s *Service) setBetaLocked(gk string, b *Beta) {
	it := s.itemLocked(gk)
	it.beta = b
	it.betaIPs = compat.JavaSplit(b.BetaIps, ",")
	s.ids.seenID(b.ID)
}

func (s *Service) setTagLocked(gk string, t *Tag) {
	it := s.itemLocked(gk)
	if it.tags == nil {
		it.tags = map[string]*Tag{}
	}
	it.tags[t.Tag] = t
	s.ids.seenID(t.ID)
}

// onEvent applies a committed batch to the cache and wakes long-poll holders
// of every config whose served MD5 may have changed (config-v1.md §4.3).
func (s *Service) onEvent(ev raftstore.Event) {
	if ev.Reset {
		s.mu.Lock()
		s.reloadLocked()
		s.mu.Unlock()
		s.polls.recheckAll()
		for _, f := range s.changedKeysOf() {
			f("")
		}
		return
	}
	type wake struct {
		gk      string
		betaIPs []string // non-nil: beta change, wake only these IPs
	}
	var wakes []wake
	var notified []int64 // modified times of the main configs written
	s.mu.Lock()
	for _, op := range ev.Ops {
		switch op.Bucket {
		case BucketInfo:
			gk := op.Key
			it := s.items[gk]
			if op.Kind == raftstore.OpDelete {
				if it == nil || it.info == nil {
					continue
				}
				delete(s.byID, it.info.ID)
				it.info = nil
				s.dropIfEmptyLocked(gk, it)
				wakes = append(wakes, wake{gk: gk})
				continue
			}
			var in Info
			if err := decode(op.Value, &in); err != nil {
				s.log.Error("undecodable config in log", "index", ev.Index, "key", gk, "err", err)
				continue
			}
			changed := it == nil || it.info == nil || it.info.MD5 != in.MD5
			s.setInfoLocked(gk, &in, ev.Index)
			if changed {
				wakes = append(wakes, wake{gk: gk})
			}
			notified = append(notified, in.Modified)
		case BucketBeta:
			gk := op.Key
			it := s.items[gk]
			if op.Kind == raftstore.OpDelete {
				if it == nil || it.beta == nil {
					continue
				}
				ips := it.betaIPs
				it.beta, it.betaIPs = nil, nil
				s.dropIfEmptyLocked(gk, it)
				wakes = append(wakes, wake{gk: gk, betaIPs: nonNil(ips)})
				continue
			}
			var b Beta
			if err := decode(op.Value, &b); err != nil {
				s.log.Error("undecodable beta config in log", "index", ev.Index, "key", gk, "err", err)
				continue
			}
			changed := it == nil || it.beta == nil || it.beta.MD5 != b.MD5 || it.beta.BetaIps != b.BetaIps
			s.setBetaLocked(gk, &b)
			if changed {
				wakes = append(wakes, wake{gk: gk, betaIPs: nonNil(s.items[gk].betaIPs)})
			}
		case BucketTag:
			gk, tag, ok := splitNulKey(op.Key)
			if !ok {
				continue
			}
			it := s.items[gk]
			if op.Kind == raftstore.OpDelete {
				if it == nil || it.tags[tag] == nil {
					continue
				}
				delete(it.tags, tag)
				s.dropIfEmptyLocked(gk, it)
				wakes = append(wakes, wake{gk: gk})
				continue
			}
			var t Tag
			if err := decode(op.Value, &t); err != nil {
				s.log.Error("undecodable tag config in log", "index", ev.Index, "key", op.Key, "err", err)
				continue
			}
			changed := it == nil || it.tags[tag] == nil || it.tags[tag].MD5 != t.MD5
			s.setTagLocked(gk, &t)
			if changed {
				wakes = append(wakes, wake{gk: gk})
			}
		case BucketHistory:
			if op.Kind == raftstore.OpPut {
				if n, ok := historyNid(op.Key); ok {
					s.ids.seenNid(n)
				}
			}
		}
	}
	for _, op := range ev.Ops {
		if op.Bucket == BucketInfo && op.Key == switchGroupKey {
			s.updateSwitchesLocked()
		}
		if op.Bucket == BucketInfo && op.Key == aggrGroupKey {
			s.updateAggrLocked()
		}
	}
	s.mu.Unlock()
	if !s.currentSwitches().fixedPolling { // LongPollingService ignores changes then
		for _, w := range wakes {
			s.polls.changed(w.gk, w.betaIPs)
		}
	}
	if subs := s.changedKeysOf(); len(subs) > 0 {
		changedTo(subs, wakes, func(w wake) string { return w.gk })
	}
	if s.cfg.Notified != nil && len(notified) > 0 {
		now := s.nowMs()
		for _, m := range notified {
			s.cfg.Notified(time.Duration(now-m) * time.Millisecond)
		}
	}
}

// OnChange subscribes f to the changes that wake 1.x long polls (a main or
// tag MD5 changed, a beta variant or its IPs changed, a removal): f gets
// the group key, or "" after a snapshot restore replaced everything. It is
// called on the store's apply goroutine, after the cache holds the change:
// it must not block. The 2.x push (server/grpcapi) subscribes here, so
// every write, whatever edge it came through, reaches both kinds of
// listeners.
func (s *Service) OnChange(f func(groupKey string)) (cancel func()) {
	s.changeMu.Lock()
	defer s.changeMu.Unlock()
	if s.onChange == nil {
		s.onChange = map[int]func(string){}
	}
	id := s.changeID
	s.changeID++
	s.onChange[id] = f
	return func() {
		s.changeMu.Lock()
		delete(s.onChange, id)
		s.changeMu.Unlock()
	}
}

func (s *Service) changedKeysOf() []func(string) {
	s.changeMu.RLock()
	defer s.changeMu.RUnlock()
	out := make([]func(string), 0, len(s.onChange))
	for _, f := range s.onChange {
		out = append(out, f)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// now is the leader's wall clock in epoch ms.
func (s *Service) nowMs() int64 { return s.clk.Now().UnixMilli() }

// apply runs a read-compute-apply through Store.Update: build reads the
// records named by keys (under the store's per-key locks, so concurrent
// writers of one config queue instead of failing; the last writer wins as
// in Java) and returns the batch, or false when there is nothing to do.
func (s *Service) apply(ctx context.Context, keys []raftstore.Key, build func() (raftstore.Batch, bool)) error {
	_, err := s.store.Update(ctx, keys, func() (raftstore.Batch, error) {
		b, ok := build()
		if !ok {
			return raftstore.Batch{}, nil
		}
		return b, nil
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raftstore.ErrCondFailed):
		return ErrConflict
	}
	return fmt.Errorf("config: apply: %w", err)
}

// idGen issues snowflake config ids and history nids on the leader.
type idGen struct {
	mu     sync.Mutex
	worker int64
	lastID int64
	nid    int64
}

// snowflakeEpoch is SnowFlowerIdGenerator's epoch (2018-08-05T00:34:00Z).
const snowflakeEpoch = 1533429240000

func (g *idGen) nextID(nowMs int64) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	id := (nowMs-snowflakeEpoch)<<22 | g.worker<<12
	if id <= g.lastID {
		id = g.lastID + 1
	}
	g.lastID = id
	return id
}

func (g *idGen) seenID(id int64) {
	g.mu.Lock()
	if id > g.lastID {
		g.lastID = id
	}
	g.mu.Unlock()
}

func (g *idGen) nextNid() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.nid++
	return g.nid
}

func (g *idGen) seenNid(n int64) {
	g.mu.Lock()
	if n > g.nid {
		g.nid = n
	}
	g.mu.Unlock()
}

// WorkerIDFromIP is the snowflake worker id Java derives from the node IP:
// its last 10 bits (0 for anything but an IPv4 address).
func WorkerIDFromIP(ip string) int64 {
	a, err := netip.ParseAddr(ip)
	if err != nil || !a.Unmap().Is4() {
		return 0
	}
	b := a.Unmap().As4()
	return (int64(b[2])<<8 | int64(b[3])) & 0x3FF
}

// changed hands the group keys of a committed change to the OnChange
// subscribers.
func changedTo[T any](subs []func(string), items []T, key func(T) string) {
	for _, it := range items {
		for _, f := range subs {
			f(key(it))
		}
	}
}
