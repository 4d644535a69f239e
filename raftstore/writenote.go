package raftstore

import (
	"context"
	"errors"
	"sync"
)

// WriteNote records the leadership errors met by the writes (Apply,
// Update) made with a context. The edge that routes writes to the leader
// puts one in the request's context: it then learns that a write found the
// leadership gone even where the code in between turned the error into an
// answer of its own (Java's "remove beta data error" body), and sends the
// write on to the new leader instead of relaying that answer.
//
// It also records whether any write reached raft (Proposed): a write
// route whose handler decided from local state that there was nothing
// to write made no raft round, so nothing told a leader that was paused
// or cut off that another node leads now; the edge confirms the
// leadership before it answers such a request.
type WriteNote struct {
	mu       sync.Mutex
	err      error
	proposed bool
}

type writeNoteKey struct{}

// WithWriteNote returns ctx carrying a new WriteNote.
func WithWriteNote(ctx context.Context) (context.Context, *WriteNote) {
	n := &WriteNote{}
	return context.WithValue(ctx, writeNoteKey{}, n), n
}

// Err returns the first leadership error a write with the context met
// (errors.Is ErrNotLeader: nothing written; ErrLeadershipLost: outcome
// unknown), or nil.
func (n *WriteNote) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.err
}

// Proposed reports whether a write with the context reached raft, or was
// refused because this node cannot write its raft log (ErrStorage: the
// answer is the disk's error, not a view of local state, and confirming
// the leadership would only hide that error behind a no-leader answer).
func (n *WriteNote) Proposed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.proposed
}

// NoteProposal records in ctx's WriteNote that a write reached raft
// (Store.Apply does; for other stores, e.g. tests' fakes).
func NoteProposal(ctx context.Context) {
	n, _ := ctx.Value(writeNoteKey{}).(*WriteNote)
	if n == nil {
		return
	}
	n.mu.Lock()
	n.proposed = true
	n.mu.Unlock()
}

// NoteWrite records err in ctx's WriteNote when it is a leadership error
// (Store's writes do; for other stores, e.g. tests' fakes).
func NoteWrite(ctx context.Context, err error) { noteWrite(ctx, err) }

// noteWrite records err in ctx's WriteNote when it is a leadership error,
// and a storage error as a write that reached raft (Proposed).
func noteWrite(ctx context.Context, err error) {
	if err == nil {
		return
	}
	storage := errors.Is(err, ErrStorage)
	if !storage && !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrLeadershipLost) {
		return
	}
	n, _ := ctx.Value(writeNoteKey{}).(*WriteNote)
	if n == nil {
		return
	}
	n.mu.Lock()
	if storage {
		n.proposed = true
	} else if n.err == nil {
		n.err = err
	}
	n.mu.Unlock()
}
