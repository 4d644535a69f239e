package raftstore

import (
	"context"
	"fmt"
	"syscall"
	"testing"
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
