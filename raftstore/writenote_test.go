package raftstore

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// A write refused because the log cannot be written (also the refusal of
// a node that stepped down after such a failure, before any raft round)
// counts as a write that reached raft: the edge answers the disk's error
// instead of confirming the leadership and answering no-leader (the
// full-disk process test's persistent register).
func TestWriteNoteStorageErrorCountsAsProposed(t *testing.T) {
	ctx, note := WithWriteNote(context.Background())
	noteWrite(ctx, fmt.Errorf("naming: %w", storageError("update", syscall.ENOSPC)))
	if !note.Proposed() {
		t.Error("storage error: not Proposed")
	}
	if note.Err() != nil {
		t.Errorf("storage error recorded as a leadership error: %v", note.Err())
	}

	ctx, note = WithWriteNote(context.Background())
	noteWrite(ctx, &NotLeaderError{})
	if note.Proposed() || note.Err() == nil {
		t.Errorf("not-leader: proposed %v, err %v; want false and the error", note.Proposed(), note.Err())
	}
}

// TestWriteIDAppliesOnce is checker seed 705's shape: a write sent again
// after its outcome was unknown, whose first copy was applied too, must
// not apply a second time over another client's write made in between.
func TestWriteIDAppliesOnce(t *testing.T) {
	s, _ := newTestStore(t)
	id := NewWriteID()
	first := mustApplyCtx(t, WithWriteID(context.Background(), id), s, Batch{Ops: []Op{put("b", "k", "retried")}})
	mustApply(t, s, Batch{Ops: []Op{put("b", "k", "between")}})
	// the copy sent again: same id, same first write of its request
	idx, err := s.Apply(WithWriteID(context.Background(), id), Batch{Ops: []Op{put("b", "k", "retried")}})
	if err != nil || idx < first {
		t.Fatalf("second copy: index %d, %v; want success at or after %d", idx, err, first)
	}
	if r, _ := s.Get("b", "k"); string(r.Value) != "between" {
		t.Fatalf("k = %q after the second copy; want the write made in between", r.Value)
	}

	// the request's second write is its own: applied
	ctx := WithWriteID(context.Background(), id)
	mustApplyCtx(t, ctx, s, Batch{Ops: []Op{put("b", "x", "1")}}) // .1 again: no-op
	mustApplyCtx(t, ctx, s, Batch{Ops: []Op{put("b", "x", "2")}}) // .2: new
	if r, _ := s.Get("b", "x"); string(r.Value) != "2" {
		t.Fatalf("x = %q; want the request's second write", r.Value)
	}

	// a failed condition of the caller keeps its own numbering
	_, err = s.Apply(WithWriteID(context.Background(), NewWriteID()), Batch{
		Conds: []Cond{{Kind: CondExists, Bucket: "b", Key: "k"}, {Kind: CondAbsent, Bucket: "b", Key: "k"}},
		Ops:   []Op{put("b", "y", "1")}})
	var ce *CondError
	if !errors.As(err, &ce) || ce.Index != 1 {
		t.Fatalf("failed condition: %v; want CondError at index 1", err)
	}

	// Update: one id for every attempt of one call
	uid := NewWriteID()
	update := func(v string) error {
		_, err := s.Update(WithWriteID(context.Background(), uid), []Key{{Bucket: "b", Key: "u"}}, func() (Batch, error) {
			return Batch{Ops: []Op{put("b", "u", v)}}, nil
		})
		return err
	}
	if err := update("once"); err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, Batch{Ops: []Op{put("b", "u", "later")}})
	if err := update("once"); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Get("b", "u"); string(r.Value) != "later" {
		t.Fatalf("u = %q; the update's second copy applied again", r.Value)
	}
}

// TestWriteIDsExpire: the leader deletes ids older than WriteIDKeep; a
// write without an id leaves none.
func TestWriteIDsExpire(t *testing.T) {
	cfg := testConfig(t, testLogger(t), t.TempDir())
	cfg.WriteIDKeep = 200 * time.Millisecond
	s := mustOpen(t, cfg)
	eventually(t, 5*time.Second, func() error {
		if !s.IsLeader() {
			return errors.New("not leader yet")
		}
		return nil
	})
	mustApply(t, s, Batch{Ops: []Op{put("b", "plain", "1")}})
	for i := range 3 {
		mustApplyCtx(t, WithWriteID(context.Background(), NewWriteID()), s, Batch{Ops: []Op{put("b", fmt.Sprint(i), "1")}})
	}
	if n := len(dump(s, BucketWriteIDs)[BucketWriteIDs]); n != 3 {
		t.Fatalf("%d write ids kept; want 3", n)
	}
	eventually(t, 5*time.Second, func() error {
		if n := len(dump(s, BucketWriteIDs)[BucketWriteIDs]); n != 0 {
			return fmt.Errorf("%d write ids left", n)
		}
		return nil
	})
}

func mustApplyCtx(t *testing.T, ctx context.Context, s *Store, b Batch) uint64 {
	t.Helper()
	idx, err := s.Apply(ctx, b)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return idx
}
