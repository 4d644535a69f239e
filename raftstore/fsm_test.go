package raftstore

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/raft"
)

func cmdLog(index uint64, b Batch) *raft.Log {
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: encodeBatch(b)}
}

func newTestFSM(t *testing.T) *fsm {
	return newFSM(testLogger(t))
}

func TestFSMConds(t *testing.T) {
	t.Parallel()
	// State before each case: b/a = "1"@1, b/k = "2"@2.
	seed := []Batch{{Ops: []Op{put("b", "a", "1")}}, {Ops: []Op{put("b", "k", "2")}}}
	tests := []struct {
		name     string
		conds    []Cond
		failedAt int // -1: the batch applies
	}{
		{"no conds", nil, -1},
		{"absent holds", []Cond{{Kind: CondAbsent, Bucket: "b", Key: "zz"}}, -1},
		{"absent other bucket", []Cond{{Kind: CondAbsent, Bucket: "c", Key: "a"}}, -1},
		{"absent fails", []Cond{{Kind: CondAbsent, Bucket: "b", Key: "a"}}, 0},
		{"exists holds", []Cond{{Kind: CondExists, Bucket: "b", Key: "a"}}, -1},
		{"exists fails", []Cond{{Kind: CondExists, Bucket: "b", Key: "zz"}}, 0},
		{"rev holds", []Cond{{Kind: CondRev, Bucket: "b", Key: "k", Rev: 2}}, -1},
		{"rev differs", []Cond{{Kind: CondRev, Bucket: "b", Key: "k", Rev: 1}}, 0},
		{"rev of absent key", []Cond{{Kind: CondRev, Bucket: "b", Key: "zz", Rev: 0}}, 0},
		{"second of three fails", []Cond{
			{Kind: CondExists, Bucket: "b", Key: "a"},
			{Kind: CondRev, Bucket: "b", Key: "a", Rev: 2},
			{Kind: CondAbsent, Bucket: "b", Key: "zz"},
		}, 1},
		{"conds see state before ops", []Cond{{Kind: CondAbsent, Bucket: "b", Key: "new"}}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFSM(t)
			for i, b := range seed {
				if r := f.Apply(cmdLog(uint64(i+1), b)); r != nil {
					t.Fatalf("seed %d: %v", i, r)
				}
			}
			before := fsmDump(f)
			var events []Event
			f.watch(func(ev Event) { events = append(events, ev) })

			b := Batch{Conds: tt.conds, Ops: []Op{put("b", "new", "x"), del("b", "a"), put("c", "k", "y")}}
			resp := f.Apply(cmdLog(3, b))
			if tt.failedAt < 0 {
				if resp != nil {
					t.Fatalf("Apply = %v, want nil", resp)
				}
				want := map[string]map[string]string{"b": {"k": "2@2", "new": "x@3"}, "c": {"k": "y@3"}}
				if got := fsmDump(f); !reflect.DeepEqual(got, want) {
					t.Errorf("state = %v, want %v", got, want)
				}
				if len(events) != 1 || events[0].Index != 3 || !reflect.DeepEqual(events[0].Ops, b.Ops) {
					t.Errorf("events = %+v", events)
				}
				return
			}
			err, _ := resp.(error)
			if !errors.Is(err, ErrCondFailed) {
				t.Fatalf("Apply = %v, want ErrCondFailed", resp)
			}
			var ce *CondError
			if !errors.As(err, &ce) || ce.Index != tt.failedAt || ce.Cond != tt.conds[tt.failedAt] {
				t.Errorf("CondError = %+v, want index %d cond %+v", ce, tt.failedAt, tt.conds[tt.failedAt])
			}
			if got := fsmDump(f); !reflect.DeepEqual(got, before) {
				t.Errorf("rejected batch changed state: %v, want %v", got, before)
			}
			if len(events) != 0 {
				t.Errorf("rejected batch emitted events %+v", events)
			}
			if f.applied.get() != 3 {
				t.Errorf("applied = %d, want 3 (rejected entries are still applied)", f.applied.get())
			}
		})
	}
}

func TestFSMOpsInOrder(t *testing.T) {
	t.Parallel()
	f := newTestFSM(t)
	f.Apply(cmdLog(1, Batch{Ops: []Op{put("b", "k", "1"), del("b", "k"), put("b", "j", "1"), put("b", "j", "2"), del("x", "none")}}))
	want := map[string]map[string]string{"b": {"j": "2@1"}}
	if got := fsmDump(f); !reflect.DeepEqual(got, want) {
		t.Errorf("state = %v, want %v", got, want)
	}
	f.Apply(cmdLog(2, Batch{Ops: []Op{del("b", "j")}}))
	if got := fsmDump(f); len(got) != 0 {
		t.Errorf("state = %v, want empty (empty buckets dropped)", got)
	}
}

func TestFSMIgnoresNonCommands(t *testing.T) {
	t.Parallel()
	f := newTestFSM(t)
	for _, l := range []*raft.Log{
		{Index: 1, Type: raft.LogNoop},
		{Index: 2, Type: raft.LogConfiguration, Data: []byte{1, 2}},
		{Index: 3, Type: raft.LogCommand},
	} {
		if r := f.Apply(l); r != nil {
			t.Errorf("Apply(%+v) = %v", l, r)
		}
	}
	if f.applied.get() != 0 {
		t.Errorf("applied = %d", f.applied.get())
	}
}

func TestFSMPanicsOnBadEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"unknown command", []byte{99, 0, 0}, "unknown command type 99"},
		{"undecodable batch", []byte{byte(CmdBatch), 5}, "undecodable batch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newTestFSM(t)
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tt.want) {
					t.Errorf("panic = %v, want it to contain %q", r, tt.want)
				}
			}()
			f.Apply(&raft.Log{Index: 7, Type: raft.LogCommand, Data: tt.data})
		})
	}
}

// memSink is a raft.SnapshotSink in memory; failAfter > 0 makes writes
// fail after that many bytes.
type memSink struct {
	bytes.Buffer
	failAfter int
	cancelled bool
	closed    bool
}

func (s *memSink) Write(p []byte) (int, error) {
	if s.failAfter > 0 && s.Len()+len(p) > s.failAfter {
		return 0, errors.New("disk full")
	}
	return s.Buffer.Write(p)
}
func (s *memSink) ID() string        { return "mem" }
func (s *memSink) Cancel() error     { s.cancelled = true; return nil }
func (s *memSink) Close() error      { s.closed = true; return nil }
func (s *memSink) Reader() io.Reader { return bytes.NewReader(s.Bytes()) }

func TestFSMSnapshotRestore(t *testing.T) {
	t.Parallel()
	src := newTestFSM(t)
	big := strings.Repeat("v", 100<<10)
	src.Apply(cmdLog(1, Batch{Ops: []Op{put("b", "k", "1"), put("b", "e", ""), put("c", "k", big)}}))
	for i := 2; i <= 500; i++ {
		src.Apply(cmdLog(uint64(i), Batch{Ops: []Op{put("many", strings.Repeat("k", i), "x")}}))
	}
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Writes after Snapshot must not leak into the persisted copy.
	src.Apply(cmdLog(501, Batch{Ops: []Op{put("b", "later", "x"), del("b", "k")}}))
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	if !sink.closed || sink.cancelled {
		t.Fatalf("sink closed=%v cancelled=%v", sink.closed, sink.cancelled)
	}

	dst := newTestFSM(t)
	dst.Apply(cmdLog(1, Batch{Ops: []Op{put("old", "k", "gone")}}))
	var events []Event
	dst.watch(func(ev Event) {
		if got := fsmDump(dst); got["old"] != nil {
			t.Errorf("Reset emitted before the swap: %v", got["old"])
		}
		events = append(events, ev)
	})
	if err := dst.Restore(io.NopCloser(sink.Reader())); err != nil {
		t.Fatal(err)
	}
	want := fsmDump(src)
	delete(want["b"], "later")
	want["b"]["k"] = "1@1"
	if got := fsmDump(dst); !reflect.DeepEqual(got, want) {
		t.Errorf("restored state differs")
	}
	if r, ok := dst.get("b", "e"); !ok || r.Value == nil || len(r.Value) != 0 {
		t.Errorf("empty value restored as %#v, %v", r, ok)
	}
	if len(events) != 1 || !events[0].Reset || events[0].Index != 500 || events[0].Ops != nil {
		t.Errorf("events = %+v, want one Reset at 500", events)
	}
	if dst.applied.get() != 500 {
		t.Errorf("applied = %d, want 500", dst.applied.get())
	}
}

func TestFSMPersistCancelsOnError(t *testing.T) {
	t.Parallel()
	f := newTestFSM(t)
	for i := 1; i <= 100; i++ {
		f.Apply(cmdLog(uint64(i), Batch{Ops: []Op{put("b", strings.Repeat("k", i), strings.Repeat("v", 1000))}}))
	}
	snap, _ := f.Snapshot()
	sink := &memSink{failAfter: 1000}
	if err := snap.Persist(sink); err == nil {
		t.Fatal("Persist succeeded on a failing sink")
	}
	if !sink.cancelled || sink.closed {
		t.Errorf("sink cancelled=%v closed=%v, want cancelled only", sink.cancelled, sink.closed)
	}
}

func TestFSMRestoreRejectsBadSnapshot(t *testing.T) {
	t.Parallel()
	f := newTestFSM(t)
	f.Apply(cmdLog(1, Batch{Ops: []Op{put("b", "k", "v")}}))
	snap, _ := f.Snapshot()
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	good := sink.Bytes()
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"version 9", append([]byte{9}, good[1:]...)},
		{"truncated", good[:len(good)-1]},
		{"trailing", append(append([]byte{}, good...), 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := f.Restore(io.NopCloser(bytes.NewReader(tt.data))); err == nil {
				t.Fatal("Restore succeeded")
			}
			if r, ok := f.get("b", "k"); !ok || string(r.Value) != "v" {
				t.Errorf("failed restore changed state: %v %v", r, ok)
			}
		})
	}
}

func TestWatchCancel(t *testing.T) {
	t.Parallel()
	f := newFSM(slog.New(slog.DiscardHandler))
	var a, b, self int
	cancelA := f.watch(func(Event) { a++ })
	f.watch(func(Event) { b++ })
	var cancelSelf func()
	cancelSelf = f.watch(func(Event) { self++; cancelSelf() }) // cancel from inside the callback
	f.Apply(cmdLog(1, Batch{Ops: []Op{put("b", "k", "v")}}))
	cancelA()
	cancelA()
	f.Apply(cmdLog(2, Batch{Ops: []Op{put("b", "k", "v")}}))
	if a != 1 || b != 2 || self != 1 {
		t.Errorf("calls a=%d b=%d self=%d, want 1, 2, 1", a, b, self)
	}
}
