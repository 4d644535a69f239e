package auth

// Token epochs (issue 26 item 10). A token carries no rights, only its
// user's name, so Java keeps accepting it after the user's password changed
// (until it expires: 5 h by default) and, once a user of the same name is
// created again, after the user was deleted. nacosd keeps a token epoch per
// user name in the raft store (bucket auth.epoch, so every node refuses the
// same tokens): a password change or a deletion sets it to the time of the
// change (at least the previous epoch + 1), and a token minted before it is
// refused as "token invalid!". Epochs are never deleted: a user re-created
// under a deleted one's name must not get its tokens back.
//
// nacosd's tokens carry the user's epoch as the claim "epoch" (0 when it has
// none), which makes the check exact; tokens without it — Java's, in a mixed
// cluster, and nacosd's from before — are judged by their issue time, exp −
// TTL in whole seconds, and refused only when they were certainly issued
// before the epoch (such a token issued in the second before a change may
// survive it).
// Role changes do not move the epoch: a user's roles are read at every
// request, never from the token, so they apply at once anyway, and a
// refused token would leave a Java nacos-client 1.x app failing until its
// next scheduled login (SecurityProxy logs in again only after 0.9 × TTL).

// bucketEpoch holds username -> epochRecord.
const bucketEpoch = "auth.epoch"

type epochRecord struct {
	Epoch int64 `json:"epoch"` // unix ms of the last password change or deletion
}

// nextEpoch is the epoch a change of user's password or its deletion sets.
func (s *Service) nextEpoch(v *view, user string) int64 {
	return max(v.epochs[user]+1, s.cfg.Clock.Now().UnixMilli())
}

// putEpoch adds the write of user's new epoch to b.
func (b *batch) putEpoch(user string, epoch int64) {
	b.put(bucketEpoch, user, encodeRecord(epochRecord{Epoch: epoch}))
}

// revoked reports whether a token with claims c was minted before its
// user's epoch.
func (t tokens) revoked(c claims, epoch int64) bool {
	switch {
	case epoch <= 0:
		return false
	case c.hasEpoch:
		return c.epoch < epoch
	}
	// minted at exp − TTL, to the second: refused only when surely before
	return c.exp*1000-t.ttl.Milliseconds()+1000 <= epoch
}
