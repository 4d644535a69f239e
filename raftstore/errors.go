package raftstore

import (
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// Sentinel errors returned by Store. Test them with errors.Is: most are
// wrapped with context on the way out.
var (
	// ErrNotLeader is returned by writes (Apply, AddVoter, RemoveServer)
	// on a node that is not the raft leader. Nothing was written; the
	// caller may forward the request to the leader, which the returned
	// *NotLeaderError names when one is known (use errors.As).
	ErrNotLeader = errors.New("raftstore: not the leader")

	// ErrCondFailed is returned by Apply when a Cond of the batch did not
	// hold. Nothing of the batch was applied. The returned error is a
	// *CondError naming the condition (use errors.As).
	ErrCondFailed = errors.New("raftstore: condition failed")

	// ErrClosed is returned by operations on a Store after Close.
	ErrClosed = errors.New("raftstore: store closed")

	// ErrInvalidBatch is returned by Apply for a batch that can never be
	// applied (unknown op or cond kind, empty bucket). Nothing was sent to
	// raft.
	ErrInvalidBatch = errors.New("raftstore: invalid batch")

	// ErrTimeout is returned when raft could not accept a write within
	// Config.ApplyTimeout (or the context deadline). Nothing was written.
	ErrTimeout = errors.New("raftstore: timed out enqueueing write")

	// ErrStorage is returned by writes when this node could not write its
	// raft log or stable store (a full disk, an I/O error): nothing was
	// written. The error also wraps the disk's error. Once the disk is
	// writable again the node takes writes again by itself.
	ErrStorage = errors.New("raftstore: cannot write the raft log")

	// ErrCorrupt is returned by Open when a file of the data directory is
	// damaged (a *CorruptError names the file and what to do). Nothing was
	// started and nothing written.
	ErrCorrupt = errors.New("raftstore: data directory damaged")

	// ErrLeadershipLost is returned by Apply when the node lost leadership
	// after the write was sent and could not find out within ApplyTimeout
	// whether the next leader committed it: the write may or may not be
	// applied. Do not blindly retry a non-idempotent write on another node.
	// (A lost leadership whose outcome was found answers the write's own
	// result, or ErrNotLeader when nothing was written.)
	ErrLeadershipLost = raft.ErrLeadershipLost
)

// CondError reports which condition of a Batch failed. It wraps
// ErrCondFailed, so errors.Is(err, ErrCondFailed) holds.
type CondError struct {
	// Index is the position of the failed condition in Batch.Conds.
	Index int
	// Cond is the failed condition.
	Cond Cond
}

// Error implements error.
func (e *CondError) Error() string {
	c := e.Cond
	switch c.Kind {
	case CondRev:
		return fmt.Sprintf("raftstore: condition %d failed: %s %q/%q rev %d", e.Index, c.Kind, c.Bucket, c.Key, c.Rev)
	default:
		return fmt.Sprintf("raftstore: condition %d failed: %s %q/%q", e.Index, c.Kind, c.Bucket, c.Key)
	}
}

// Unwrap returns ErrCondFailed.
func (e *CondError) Unwrap() error { return ErrCondFailed }

// NotLeaderError is the error of a write on a follower. It wraps
// ErrNotLeader and names the leader this node knows of, if any, so the
// caller can forward the write (rqlite's proxy pattern).
type NotLeaderError struct {
	// LeaderID and LeaderAddr are the leader's server ID and raft address;
	// both are empty when no leader is known (an election is under way, or
	// this node is cut off from a quorum).
	LeaderID, LeaderAddr string
}

// Error implements error.
func (e *NotLeaderError) Error() string {
	if e.LeaderID == "" {
		return "raftstore: not the leader; no leader known"
	}
	return "raftstore: not the leader; the leader is " + e.LeaderID + " at " + e.LeaderAddr
}

// Unwrap returns ErrNotLeader.
func (e *NotLeaderError) Unwrap() error { return ErrNotLeader }
