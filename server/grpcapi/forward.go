package grpcapi

import (
	"context"
	"errors"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/raftstore"
)

// Forwarder sends a write that a raft follower refused to the leader and
// returns the leader's answer.
type Forwarder interface {
	Forward(ctx context.Context, c *Call) (remote.Responder, error)
}

// isNotLeader reports a write refused because this node is not the raft
// leader.
func isNotLeader(err error) bool {
	var nl *raftstore.NotLeaderError
	return errors.As(err, &nl) || errors.Is(err, raftstore.ErrNotLeader)
}
