package raftstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/nacosd/nacosd/raftstore/cold"
)

// Event describes one change of the state, delivered to Watch callbacks.
type Event struct {
	// Index is the raft log index of the applied batch, or for a Reset the
	// last index contained in the restored snapshot.
	Index uint64
	// Ops are the batch's operations, in order. Their Values are shared
	// with the stored records: never modify them.
	Ops []Op
	// Reset is true after a snapshot restore: the state was replaced
	// wholesale, Ops is nil, and watchers must rebuild from Scan.
	Reset bool
}

// buckets is the whole key/value state: bucket -> key -> record.
type buckets map[string]map[string]Record

// fsm is the raft.FSM holding the state. Apply, Snapshot and Restore are
// called by raft one at a time from its FSM goroutine; readers take mu.RLock
// and never wait for raft.
type fsm struct {
	log *slog.Logger

	mu   sync.RWMutex
	data buckets

	applied  appliedIndex
	cold     diskBuckets        // buckets kept in fsm.db (package cold); nil: none
	mark     *watermark         // the applied index kept across restarts (watermark.go); nil: none
	ring     *sizeRing          // entry sizes, for size-triggered snapshots (compact.go)
	outcomes *outcomeRing       // recent entries' results, for Apply after a lost leadership (outcome.go)
	onBytes  func(since uint64) // set once before raft starts; called on the FSM goroutine

	// gate is held while entries or a snapshot are applied and their
	// events delivered, and while a Subscribe's load runs: a load reads
	// the state of one applied index, and its subscriber then hears of
	// exactly the entries after it.
	gate sync.Mutex

	watchMu  sync.Mutex
	watchers []*watcher // copy on write: Apply iterates a snapshot of the slice
}

// diskBuckets is the disk-bucket engine (package cold: the buckets of
// Config.DiskBuckets, kept in fsm.db) as the FSM, its snapshots
// (snapshot.go, ship.go) and the store drive it.
type diskBuckets interface {
	// IsCold reports whether bucket is kept in the engine.
	IsCold(bucket string) bool
	// AppliedIndex is the newest index whose ops the file holds: a replay
	// skips the disk ops of the entries up to it.
	AppliedIndex() uint64
	// Write queues the disk ops of the entries up to index; reads see them
	// at once.
	Write(ops []cold.Op, index uint64)
	Get(bucket, key string) (cold.Record, bool)
	Len(bucket string) int
	Count(bucket, prefix string) int
	Scan(bucket, prefix string, reverse bool, skip int, fn func(string, cold.Record) bool)

	// Checkpoint writes what is queued and records index (a snapshot
	// leaves the disk buckets to the file); FileScan reads the file alone
	// (a shipped snapshot's cold section); BeginLoad replaces the
	// contents (a restore).
	Checkpoint(index uint64) error
	FileScan(bucket, prefix string, reverse bool, skip int, fn func(string, cold.Record) bool)
	BeginLoad() *cold.Load
	Buckets() []string
	Path() string

	// Empty drops every record (a file of another raft state).
	Empty() error
	Close() error
}

var _ diskBuckets = (*cold.Store)(nil)

// isCold reports whether bucket is a disk bucket.
func (f *fsm) isCold(bucket string) bool { return f.cold != nil && f.cold.IsCold(bucket) }

type watcher struct {
	fn func(Event)
}

func newFSM(log *slog.Logger) *fsm {
	return &fsm{log: log, data: buckets{}, applied: appliedIndex{ch: make(chan struct{})}, ring: newSizeRing(defaultTrailingLogs),
		outcomes: newOutcomeRing()}
}

// setOnBytes sets the callback told the bytes applied since the last
// snapshot after every entry. Call it before raft starts.
func (f *fsm) setOnBytes(fn func(since uint64)) { f.onBytes = fn }

// Apply implements raft.FSM (raft calls ApplyBatch; this is for tests).
func (f *fsm) Apply(l *raft.Log) any { return f.ApplyBatch([]*raft.Log{l})[0] }

// ApplyBatch implements raft.BatchingFSM. It must stay deterministic: it
// depends only on the state and the entries, never on time or randomness.
// Each entry's in-memory ops are applied in turn; the cold ops of the whole
// batch are written to fsm.db in one transaction at the end, before
// watchers hear of the entries. The applied index moves last, once every
// watcher has: whoever waits for an index (a follower relaying a
// forwarded write, WaitApplied) then reads the views built from it too.
func (f *fsm) ApplyBatch(logs []*raft.Log) []any {
	f.gate.Lock()
	defer f.gate.Unlock()
	res := make([]any, len(logs))
	var evs []Event
	var disk []cold.Op // the disk ops of the whole batch
	var last uint64
	skipBelow := uint64(0) // entries up to the file's applied index have their cold ops in it
	if f.cold != nil {
		skipBelow = f.cold.AppliedIndex()
	}
	for i, l := range logs {
		if l.Type != raft.LogCommand || len(l.Data) == 0 {
			continue
		}
		last = max(last, l.Index)
		if since := f.ring.add(len(l.Data)); f.onBytes != nil {
			f.onBytes(since)
		}
		b, err := decodeEntry(l.Data)
		if err != nil {
			// Every node would skip or apply it differently; stop instead.
			if errors.Is(err, errUnknownCommand) {
				panic(fmt.Sprintf("raftstore: log %d: %v", l.Index, err))
			}
			panic(fmt.Sprintf("raftstore: log %d: undecodable batch: %v", l.Index, err))
		}
		var r error
		disk, r = f.applyBatch(l.Index, b, disk, l.Index <= skipBelow)
		res[i] = r
		f.outcomes.record(l.Index, l.Data, r)
		if r == nil && len(b.Ops) > 0 {
			evs = append(evs, Event{Index: l.Index, Ops: b.Ops})
		}
	}
	if len(disk) > 0 {
		f.cold.Write(disk, disk[len(disk)-1].Index)
	}
	for _, ev := range evs {
		f.notify(ev)
	}
	if last > 0 {
		f.mark.set(last)
		f.applied.set(last)
	}
	return res
}

// applyBatch checks every condition, then applies every op, at index:
// in-memory ops at once, disk ops appended to disk (unless skipCold: the
// file has them). A failed condition returns a *CondError and changes
// nothing.
func (f *fsm) applyBatch(index uint64, b Batch, disk []cold.Op, skipCold bool) ([]cold.Op, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, c := range b.Conds {
		r, ok := f.data[c.Bucket][c.Key]
		var holds bool
		switch c.Kind {
		case CondAbsent:
			holds = !ok
		case CondExists:
			holds = ok
		case CondRev:
			holds = ok && r.Rev == c.Rev
		}
		if !holds {
			return disk, &CondError{Index: i, Cond: c}
		}
	}
	for _, op := range b.Ops {
		if f.isCold(op.Bucket) {
			if !skipCold {
				disk = append(disk, cold.Op{Index: index, Bucket: op.Bucket, Key: op.Key, Value: op.Value, Delete: op.Kind == OpDelete})
			}
			continue
		}
		switch op.Kind {
		case OpPut:
			m := f.data[op.Bucket]
			if m == nil {
				m = make(map[string]Record)
				f.data[op.Bucket] = m
			}
			m[op.Key] = Record{Value: op.Value, Rev: index}
		case OpDelete:
			if m := f.data[op.Bucket]; m != nil {
				delete(m, op.Key)
				if len(m) == 0 {
					delete(f.data, op.Bucket)
				}
			}
		}
	}
	return disk, nil
}

// notify calls every watcher, in registration order, on the caller's
// goroutine (raft's FSM goroutine), after the state lock is released.
func (f *fsm) notify(ev Event) {
	f.watchMu.Lock()
	ws := f.watchers
	f.watchMu.Unlock()
	for _, w := range ws {
		w.fn(ev)
	}
}

// subscribe runs load while nothing is applied, then registers fn
// before the next entry can be.
func (f *fsm) subscribe(load func(), fn func(Event)) (cancel func()) {
	f.gate.Lock()
	defer f.gate.Unlock()
	if load != nil {
		load()
	}
	return f.watch(fn)
}

func (f *fsm) watch(fn func(Event)) (cancel func()) {
	w := &watcher{fn: fn}
	f.watchMu.Lock()
	f.watchers = append(f.watchers[:len(f.watchers):len(f.watchers)], w)
	f.watchMu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.watchMu.Lock()
			defer f.watchMu.Unlock()
			ws := make([]*watcher, 0, len(f.watchers))
			for _, x := range f.watchers {
				if x != w {
					ws = append(ws, x)
				}
			}
			f.watchers = ws
		})
	}
}

func (f *fsm) get(bucket, key string) (Record, bool) {
	if f.isCold(bucket) {
		r, ok := f.cold.Get(bucket, key)
		return Record(r), ok
	}
	f.mu.RLock()
	r, ok := f.data[bucket][key]
	f.mu.RUnlock()
	return r, ok
}

func (f *fsm) len(bucket string) int {
	if f.isCold(bucket) {
		return f.cold.Len(bucket)
	}
	f.mu.RLock()
	n := len(f.data[bucket])
	f.mu.RUnlock()
	return n
}

// count is len of the records whose key starts with prefix (a memory
// bucket).
func (f *fsm) count(bucket, prefix string) int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	m := f.data[bucket]
	if prefix == "" {
		return len(m)
	}
	n := 0
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

type kv struct {
	key string
	rec Record
}

// scan copies the matching entries under the read lock, then calls fn
// without holding it, so fn may call anything (even Apply). In-memory
// buckets are scanned in no particular order, cold ones in key order
// (descending when reverse); reverse sorts an in-memory bucket's keys.
func (f *fsm) scan(bucket, prefix string, reverse bool, fn func(string, Record) bool) {
	f.scanSkip(bucket, prefix, reverse, 0, fn)
}

// scanSkip is scan that passes over the first skip records.
func (f *fsm) scanSkip(bucket, prefix string, reverse bool, skip int, fn func(string, Record) bool) {
	if f.isCold(bucket) {
		f.cold.Scan(bucket, prefix, reverse, skip, func(k string, r cold.Record) bool { return fn(k, Record(r)) })
		return
	}
	f.mu.RLock()
	m := f.data[bucket]
	entries := make([]kv, 0, len(m))
	for k, r := range m {
		if strings.HasPrefix(k, prefix) {
			entries = append(entries, kv{k, r})
		}
	}
	f.mu.RUnlock()
	if reverse {
		slices.SortFunc(entries, func(a, b kv) int { return strings.Compare(b.key, a.key) })
	}
	for i, e := range entries {
		if i < skip {
			continue
		}
		if !fn(e.key, e.rec) {
			return
		}
	}
}

// appliedIndex is the last log index applied by the FSM, with a broadcast
// channel closed and replaced whenever it moves.
type appliedIndex struct {
	mu  sync.Mutex
	idx uint64
	ch  chan struct{}
}

func (a *appliedIndex) get() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.idx
}

func (a *appliedIndex) set(i uint64) {
	a.mu.Lock()
	if i > a.idx {
		a.idx = i
		close(a.ch)
		a.ch = make(chan struct{})
	}
	a.mu.Unlock()
}

// reset sets the index even if it goes down (a restore replaces the
// state wholesale).
func (a *appliedIndex) reset(i uint64) {
	a.mu.Lock()
	a.idx = i
	close(a.ch)
	a.ch = make(chan struct{})
	a.mu.Unlock()
}

// wait blocks until the index reaches i, ctx ends or stop is closed.
func (a *appliedIndex) wait(ctx context.Context, i uint64, stop <-chan struct{}) error {
	for {
		a.mu.Lock()
		idx, ch := a.idx, a.ch
		a.mu.Unlock()
		if idx >= i {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("raftstore: wait for index %d (applied %d): %w", i, idx, ctx.Err())
		case <-stop:
			return ErrClosed
		}
	}
}
