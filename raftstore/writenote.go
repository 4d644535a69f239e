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
type WriteNote struct {
	mu  sync.Mutex
	err error
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

// NoteWrite records err in ctx's WriteNote when it is a leadership error
// (Store's writes do; for other stores, e.g. tests' fakes).
func NoteWrite(ctx context.Context, err error) { noteWrite(ctx, err) }

// noteWrite records err in ctx's WriteNote when it is a leadership error.
func noteWrite(ctx context.Context, err error) {
	if err == nil || !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrLeadershipLost) {
		return
	}
	n, _ := ctx.Value(writeNoteKey{}).(*WriteNote)
	if n == nil {
		return
	}
	n.mu.Lock()
	if n.err == nil {
		n.err = err
	}
	n.mu.Unlock()
}
