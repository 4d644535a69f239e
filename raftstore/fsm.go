package raftstore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/hashicorp/raft"
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
	ring     *sizeRing          // entry sizes, for size-triggered snapshots (compact.go)
	outcomes *outcomeRing       // recent entries' results, for Apply after a lost leadership (outcome.go)
	onBytes  func(since uint64) // set once before raft starts; called on the FSM goroutine

	watchMu  sync.Mutex
	watchers []*watcher // copy on write: Apply iterates a snapshot of the slice
}

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

// Apply implements raft.FSM. It must stay deterministic: it depends only on
// the state and the entry, never on time or randomness.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand || len(l.Data) == 0 {
		return nil
	}
	defer f.applied.set(l.Index)
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
	res := f.applyBatch(l.Index, b)
	f.outcomes.record(l.Index, l.Data, res)
	return res
}

// applyBatch checks every condition, then applies every op, at index. A
// failed condition returns a *CondError and changes nothing.
func (f *fsm) applyBatch(index uint64, b Batch) error {
	f.mu.Lock()
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
			f.mu.Unlock()
			return &CondError{Index: i, Cond: c}
		}
	}
	for _, op := range b.Ops {
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
	f.mu.Unlock()
	if len(b.Ops) > 0 {
		f.notify(Event{Index: index, Ops: b.Ops})
	}
	return nil
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
	f.mu.RLock()
	r, ok := f.data[bucket][key]
	f.mu.RUnlock()
	return r, ok
}

func (f *fsm) len(bucket string) int {
	f.mu.RLock()
	n := len(f.data[bucket])
	f.mu.RUnlock()
	return n
}

type kv struct {
	key string
	rec Record
}

// scan copies the matching entries under the read lock, then calls fn
// without holding it, so fn may call anything (even Apply).
func (f *fsm) scan(bucket, prefix string, fn func(string, Record) bool) {
	f.mu.RLock()
	m := f.data[bucket]
	entries := make([]kv, 0, len(m))
	for k, r := range m {
		if strings.HasPrefix(k, prefix) {
			entries = append(entries, kv{k, r})
		}
	}
	f.mu.RUnlock()
	for _, e := range entries {
		if !fn(e.key, e.rec) {
			return
		}
	}
}

// Snapshot implements raft.FSM: it copies the maps (records are immutable,
// so a shallow copy is a consistent snapshot); Persist does the I/O.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.ring.snapshotted()
	f.mu.RLock()
	defer f.mu.RUnlock()
	cp := make(buckets, len(f.data))
	for b, m := range f.data {
		mc := make(map[string]Record, len(m))
		for k, r := range m {
			mc[k] = r
		}
		cp[b] = mc
	}
	return &fsmSnapshot{data: cp, applied: f.applied.get(), ring: f.ring}, nil
}

// Restore implements raft.FSM: it decodes into fresh state, swaps it in,
// then tells watchers with a Reset event.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	raw, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("raftstore: restore: read snapshot: %w", err)
	}
	data, applied, err := decodeSnapshot(raw)
	if err != nil {
		return fmt.Errorf("raftstore: restore: %w", err)
	}
	f.mu.Lock()
	f.data = data
	f.mu.Unlock()
	f.applied.reset(applied)
	f.ring.reset()
	f.log.Info("raftstore: restored snapshot", "applied", applied, "buckets", len(data))
	f.notify(Event{Index: applied, Reset: true})
	return nil
}

// snapshotVersion is the first byte of a persisted snapshot. Snapshots
// live on disk and travel between nodes: add a version, keep decoding the
// old ones.
const snapshotVersion byte = 1

// Snapshot format, version 1 (integers are uvarints, strings and bytes
// length-prefixed with a uvarint):
//
//	byte 1
//	uvarint applied index
//	uvarint bucket count, then per bucket:
//	  string name, uvarint record count, then per record: string key, uvarint rev, bytes value

type fsmSnapshot struct {
	data    buckets
	applied uint64
	ring    *sizeRing // told the size written
}

// Persist implements raft.FSMSnapshot. It runs concurrently with Apply,
// on its own copy of the maps.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	cw := &countingWriter{w: sink}
	if err := s.write(cw); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("raftstore: persist snapshot: %w", err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("raftstore: persist snapshot: close: %w", err)
	}
	if s.ring != nil {
		s.ring.persisted(cw.n)
	}
	return nil
}

type countingWriter struct {
	w io.Writer
	n uint64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += uint64(n)
	return n, err
}

func (s *fsmSnapshot) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var scratch []byte
	flushScratch := func() error {
		_, err := bw.Write(scratch)
		scratch = scratch[:0]
		return err
	}
	scratch = append(scratch, snapshotVersion)
	scratch = binary.AppendUvarint(scratch, s.applied)
	scratch = binary.AppendUvarint(scratch, uint64(len(s.data)))
	for name, m := range s.data {
		scratch = appendString(scratch, name)
		scratch = binary.AppendUvarint(scratch, uint64(len(m)))
		for k, r := range m {
			scratch = appendString(scratch, k)
			scratch = binary.AppendUvarint(scratch, r.Rev)
			scratch = appendBytes(scratch, r.Value)
			if len(scratch) >= 32<<10 {
				if err := flushScratch(); err != nil {
					return err
				}
			}
		}
	}
	if err := flushScratch(); err != nil {
		return err
	}
	return bw.Flush()
}

// Release implements raft.FSMSnapshot.
func (s *fsmSnapshot) Release() {}

func decodeSnapshot(raw []byte) (buckets, uint64, error) {
	d := decoder{buf: raw}
	if v := d.byte(); d.err == nil && v != snapshotVersion {
		return nil, 0, fmt.Errorf("unknown snapshot version %d", v)
	}
	applied := d.uvarint()
	nb := d.count()
	data := make(buckets, nb)
	for i := 0; i < nb && d.err == nil; i++ {
		name := d.string()
		n := d.count()
		m := make(map[string]Record, n)
		for j := 0; j < n && d.err == nil; j++ {
			k := d.string()
			rev := d.uvarint()
			m[k] = Record{Rev: rev, Value: d.bytes()}
		}
		if d.err == nil && len(m) > 0 {
			data[name] = m
		}
	}
	d.end()
	if d.err != nil {
		return nil, 0, fmt.Errorf("decode snapshot: %w", d.err)
	}
	return data, applied, nil
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
