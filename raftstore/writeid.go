package raftstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strconv"
	"sync/atomic"
	"time"
)

// Write ids make a write that is sent again apply once. A write routed to
// the raft leader whose outcome is unknown (the leader was killed, paused
// or cut off after it took the write) is sent again to the next leader,
// but the first copy may still commit: it was in the old leader's log,
// and the next leader commits what it finds there. Applied twice, with
// another client's write in between, it undoes that write (checker seed
// 705: a re-registration applied again after a metadata batch that had
// seen it, so the batch's change vanished).
//
// A write whose context carries a write id (WithWriteID: the edge that
// received the client's request chose it, and it travels with every copy
// sent on) records the id in BucketWriteIDs, in the same raft entry, under
// the condition that it is absent there. The copy applied second finds it
// and changes nothing; Apply reports it as the success it was. The ids are
// ordinary raft state, so every node (and every snapshot) agrees on them;
// the leader deletes those older than Config.WriteIDKeep (a raft write
// too).

// BucketWriteIDs is the reserved bucket of write ids (key: the id and the
// write's number within its request; value: the proposer's clock, unix
// milliseconds, 8 bytes big endian).
const BucketWriteIDs = "nacosd.writeids"

// writeIDChunk bounds the deletions of one sweep entry.
const writeIDChunk = 512

type writeIDKey struct{}

type writeIDs struct {
	id  string
	seq atomic.Uint32 // the request's writes, numbered from 1
}

// NewWriteID returns a fresh random write id.
func NewWriteID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// WithWriteID returns ctx carrying id: every Apply and Update made with it
// applies once, however many copies of the request reach a leader. The
// writes of one request are told apart by their order, so a request sent
// again must make its writes in the same order (a handler that runs the
// same code on the same request does).
func WithWriteID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, writeIDKey{}, &writeIDs{id: id})
}

// nextWriteKey returns the key of ctx's next write ("" without an id).
func nextWriteKey(ctx context.Context) string {
	w, _ := ctx.Value(writeIDKey{}).(*writeIDs)
	if w == nil {
		return ""
	}
	return w.id + "." + strconv.FormatUint(uint64(w.seq.Add(1)), 10)
}

// withWriteKey returns b with the write id's condition first and its put
// last; b's slices are not modified.
func withWriteKey(b Batch, key string, now time.Time) Batch {
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(now.UnixMilli()))
	conds := make([]Cond, 0, len(b.Conds)+1)
	conds = append(conds, Cond{Kind: CondAbsent, Bucket: BucketWriteIDs, Key: key})
	b.Conds = append(conds, b.Conds...)
	b.Ops = append(b.Ops[:len(b.Ops):len(b.Ops)], Op{Kind: OpPut, Bucket: BucketWriteIDs, Key: key, Value: v[:]})
	return b
}

// writeKeyOutcome maps the result of a batch made by withWriteKey: its
// first condition failing means an earlier copy was applied (success);
// another failed condition is reported with the caller's numbering.
func writeKeyOutcome(index uint64, err error, applied func() uint64) (uint64, error) {
	var ce *CondError
	if !errors.As(err, &ce) {
		return index, err
	}
	if ce.Index == 0 {
		if index == 0 {
			index = applied()
		}
		return index, nil
	}
	return 0, &CondError{Index: ce.Index - 1, Cond: ce.Cond}
}

// sweepWriteIDs runs on the leader every quarter of Config.WriteIDKeep
// (two minutes: far longer than a write is sent again, within the
// router's election wait) and deletes the ids older than that.
func (s *Store) sweepWriteIDs(done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(s.cfg.WriteIDKeep / 4)
	defer tick.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-tick.C:
		}
		if !s.IsLeader() {
			continue
		}
		cutoff := uint64(time.Now().Add(-s.cfg.WriteIDKeep).UnixMilli())
		var old []Op
		s.Scan(BucketWriteIDs, "", func(key string, r Record) bool {
			if len(r.Value) == 8 && binary.BigEndian.Uint64(r.Value) < cutoff {
				old = append(old, Op{Kind: OpDelete, Bucket: BucketWriteIDs, Key: key})
			}
			return true
		})
		for len(old) > 0 {
			n := min(len(old), writeIDChunk)
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ApplyTimeout)
			_, err := s.Apply(ctx, Batch{Ops: old[:n]})
			cancel()
			if err != nil {
				s.log.Debug("raftstore: deleting expired write ids failed; next sweep retries", "err", err)
				break
			}
			old = old[n:]
		}
	}
}
