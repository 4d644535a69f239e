package config

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/nacosd/nacosd/raftstore"
)

// fakeStore is an in-memory Store with raftstore's semantics: atomic
// conditional batches, revisions = log index, synchronous watchers after the
// change is visible.
type fakeStore struct {
	mu       sync.Mutex
	applyMu  sync.Mutex // serialises Apply like raft's apply goroutine
	updateMu sync.Mutex // serialises Update like raftstore's key locks
	index    uint64
	data     map[string]map[string]raftstore.Record
	watchers map[int]func(raftstore.Event)
	nextW    int
	failNext error
}

func newFakeStore() *fakeStore {
	return &fakeStore{data: map[string]map[string]raftstore.Record{}, watchers: map[int]func(raftstore.Event){}}
}

func (f *fakeStore) Apply(_ context.Context, b raftstore.Batch) (uint64, error) {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	f.mu.Lock()
	if err := f.failNext; err != nil {
		f.failNext = nil
		f.mu.Unlock()
		return 0, err
	}
	for i, c := range b.Conds {
		r, ok := f.data[c.Bucket][c.Key]
		hold := true
		switch c.Kind {
		case raftstore.CondAbsent:
			hold = !ok
		case raftstore.CondExists:
			hold = ok
		case raftstore.CondRev:
			hold = ok && r.Rev == c.Rev
		}
		if !hold {
			f.mu.Unlock()
			return 0, &raftstore.CondError{Index: i, Cond: c}
		}
	}
	f.index++
	for _, op := range b.Ops {
		m := f.data[op.Bucket]
		if m == nil {
			m = map[string]raftstore.Record{}
			f.data[op.Bucket] = m
		}
		if op.Kind == raftstore.OpDelete {
			delete(m, op.Key)
		} else {
			m[op.Key] = raftstore.Record{Value: append([]byte(nil), op.Value...), Rev: f.index}
		}
	}
	ev := raftstore.Event{Index: f.index, Ops: append([]raftstore.Op(nil), b.Ops...)}
	ws := f.watchList()
	f.mu.Unlock()
	for _, w := range ws {
		w(ev)
	}
	return ev.Index, nil
}

// Update serialises every read-compute-apply (one lock for all keys is
// enough for a fake) and rebuilds on a failed condition like raftstore.
func (f *fakeStore) Update(ctx context.Context, _ []raftstore.Key, build func() (raftstore.Batch, error)) (uint64, error) {
	f.updateMu.Lock()
	defer f.updateMu.Unlock()
	var err error
	for range 8 {
		var b raftstore.Batch
		if b, err = build(); err != nil || len(b.Ops) == 0 {
			return 0, err
		}
		var idx uint64
		if idx, err = f.Apply(ctx, b); !errors.Is(err, raftstore.ErrCondFailed) {
			return idx, err
		}
	}
	return 0, err
}

func (f *fakeStore) watchList() []func(raftstore.Event) {
	ws := make([]func(raftstore.Event), 0, len(f.watchers))
	for _, w := range f.watchers {
		ws = append(ws, w)
	}
	return ws
}

// reset replaces the whole state (a snapshot restore) and sends Reset.
func (f *fakeStore) reset(data map[string]map[string]raftstore.Record) {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	f.mu.Lock()
	f.data = data
	f.index++
	ws := f.watchList()
	f.mu.Unlock()
	for _, w := range ws {
		w(raftstore.Event{Index: f.index, Reset: true})
	}
}

// snapshot copies the state.
func (f *fakeStore) snapshot() map[string]map[string]raftstore.Record {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]map[string]raftstore.Record{}
	for b, m := range f.data {
		out[b] = map[string]raftstore.Record{}
		for k, r := range m {
			out[b][k] = r
		}
	}
	return out
}

func (f *fakeStore) Get(bucket, key string) (raftstore.Record, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.data[bucket][key]
	return r, ok
}

func (f *fakeStore) Scan(bucket, prefix string, fn func(string, raftstore.Record) bool) {
	f.mu.Lock()
	var keys []string
	var recs []raftstore.Record
	for k, r := range f.data[bucket] {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
			recs = append(recs, r)
		}
	}
	f.mu.Unlock()
	for i := range keys {
		if !fn(keys[i], recs[i]) {
			return
		}
	}
}

func (f *fakeStore) ScanReverse(bucket, prefix string, skip int, fn func(string, raftstore.Record) bool) {
	type kr struct {
		k string
		r raftstore.Record
	}
	var all []kr
	f.Scan(bucket, prefix, func(k string, r raftstore.Record) bool { all = append(all, kr{k, r}); return true })
	sort.Slice(all, func(i, j int) bool { return all[i].k > all[j].k })
	for i, e := range all {
		if i < skip {
			continue
		}
		if !fn(e.k, e.r) {
			return
		}
	}
}

func (f *fakeStore) Count(bucket, prefix string) int {
	n := 0
	f.Scan(bucket, prefix, func(string, raftstore.Record) bool { n++; return true })
	return n
}

// Subscribe is raftstore's: load runs while no batch is applied.
func (f *fakeStore) Subscribe(load func(), fn func(raftstore.Event)) func() {
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	load()
	return f.watch(fn)
}

func (f *fakeStore) watch(fn func(raftstore.Event)) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.nextW
	f.nextW++
	f.watchers[id] = fn
	return func() {
		f.mu.Lock()
		delete(f.watchers, id)
		f.mu.Unlock()
	}
}
