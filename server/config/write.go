package config

import (
	"context"
	"strconv"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// PublishRequest is POST /v1/cs/configs (config-v1.md §3.2). Validation is
// done by the caller (CheckPublish); nil pointers are absent parameters.
type PublishRequest struct {
	DataID, Group, Tenant, Content string
	// Tag non-blank (and no BetaIps) publishes a tag variant.
	Tag string
	// BetaIps non-blank publishes a beta variant.
	BetaIps string
	AppName *string
	SrcUser *string
	SrcIP   string
	// ConfigTags, Desc, Use, Effect, Schema are the advance fields.
	ConfigTags, Desc, Use, Effect, Schema *string
	// Type is already normalised (compat.NormalizeConfigType).
	Type string
	// CasMD5, when not empty, makes the write conditional (2.x publishConfigCas):
	// an existing config (or beta/tag variant) whose MD5 differs is left
	// alone and Publish returns ErrCasMismatch; an absent one is created.
	CasMD5 string
}

// CheckPublish validates a publish in Java's order: tenant, dataId/group/
// content, tag, advance fields, aggregation whitelist.
func (s *Service) CheckPublish(r *PublishRequest) error {
	if err := compat.CheckTenant(r.Tenant); err != nil {
		return err
	}
	if err := compat.CheckConfigWrite(r.DataID, r.Group, r.Content, s.cfg.MaxContent); err != nil {
		return err
	}
	if err := compat.CheckTag(r.Tag); err != nil {
		return err
	}
	typ := r.Type
	if err := compat.CheckAdvance(compat.ConfigAdvance{ConfigTags: r.ConfigTags, Desc: r.Desc, Use: r.Use, Effect: r.Effect, Type: &typ, Schema: r.Schema}); err != nil {
		return err
	}
	if s.isAggr(r.DataID) { // NacosException(403) → 500 on the packaged server
		return compat.ConfigServerError("dataId:" + r.DataID + " is aggr")
	}
	return nil
}

// Publish stores a config (main, tag or beta variant) and returns once the
// write is committed. It does not validate (see CheckPublish).
func (s *Service) Publish(ctx context.Context, r PublishRequest) error {
	gk := groupKeyOf(r.DataID, r.Group, r.Tenant)
	switch {
	case !compat.JavaIsBlank(r.BetaIps):
		return s.publishBeta(ctx, gk, r)
	case !compat.JavaIsBlank(r.Tag):
		return s.publishTag(ctx, gk, r)
	}
	var casErr error
	err := s.apply(ctx, []raftstore.Key{{Bucket: BucketInfo, Key: gk}}, func() (raftstore.Batch, bool) {
		now := s.nowMs()
		old, exists := s.store.Get(BucketInfo, gk)
		var prev Info
		if c := s.cachedInfo(gk, old.Rev); exists && c != nil {
			prev = *c
		} else if exists {
			if err := decode(old.Value, &prev); err != nil {
				s.log.Error("overwriting undecodable config", "key", gk, "err", err)
				exists = false
			}
		}
		if r.CasMD5 != "" && exists && prev.MD5 != r.CasMD5 {
			casErr = ErrCasMismatch
			return raftstore.Batch{}, false
		}
		md5 := MD5Hex(r.Content)
		in := Info{DataID: r.DataID, Group: r.Group, Tenant: r.Tenant, Content: r.Content, MD5: md5,
			Modified: now, SrcUser: r.SrcUser, SrcIP: r.SrcIP, Desc: r.Desc, Use: r.Use, Effect: r.Effect,
			Type: r.Type, Schema: r.Schema}
		var b raftstore.Batch
		nid := s.ids.nextNid()
		h := History{Nid: nid, DataID: r.DataID, Group: r.Group, Tenant: r.Tenant, SrcUser: r.SrcUser, SrcIP: r.SrcIP, Modified: now}
		if exists {
			in.ID, in.Created = prev.ID, prev.Created
			in.AppName = prev.AppName
			if r.AppName != nil {
				in.AppName = *r.AppName
			}
			in.Tags = prev.Tags
			if r.ConfigTags != nil {
				in.Tags = splitTags(*r.ConfigTags)
			}
			h.ID, h.AppName, h.Content, h.MD5, h.Op, h.Type = prev.ID, prev.AppName, prev.Content, prev.MD5, "U", prev.Type
			b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondRev, Bucket: BucketInfo, Key: gk, Rev: old.Rev})
		} else {
			in.ID, in.Created = s.ids.nextID(now), now
			if r.AppName != nil {
				in.AppName = *r.AppName
			}
			if r.ConfigTags != nil {
				in.Tags = splitTags(*r.ConfigTags)
			}
			h.ID, h.AppName, h.Content, h.MD5, h.Op, h.Type = s.ids.nextID(now), in.AppName, in.Content, in.MD5, "I", in.Type
			b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketInfo, Key: gk})
		}
		b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: BucketInfo, Key: gk, Value: encode(&in)})
		b.Ops = append(b.Ops, historyOps(gk, &h)...)
		b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: metaNidKey, Value: []byte(strconv.FormatInt(nid, 10))})
		return b, true
	})
	if err == nil {
		err = casErr
	}
	return err
}

// casVariant reports whether a beta/tag write with casMD5 must be refused:
// the stored variant exists with another MD5.
func (s *Service) casVariant(bucket, key, casMD5 string) bool {
	if casMD5 == "" {
		return false
	}
	old, ok := s.store.Get(bucket, key)
	if !ok {
		return false
	}
	var md5 string
	if bucket == BucketBeta {
		var b Beta
		if decode(old.Value, &b) != nil {
			return false
		}
		md5 = b.MD5
	} else {
		var t Tag
		if decode(old.Value, &t) != nil {
			return false
		}
		md5 = t.MD5
	}
	return md5 != casMD5
}

// splitTags is addConfigTagsRelation's input: blank → none, else split on ','.
func splitTags(s string) []string {
	if compat.JavaIsBlank(s) {
		return nil
	}
	return compat.JavaSplit(s, ",")
}

// variantIdentity is what a beta or tag republish keeps of the row it
// replaces (both records share these JSON fields).
type variantIdentity struct {
	ID      int64  `json:"id"`
	Created int64  `json:"created"`
	AppName string `json:"appName,omitempty"`
}

// upsertVariant reads the stored beta/tag row: for a new row a fresh id and
// creation time with a CondAbsent, for an existing one its identity (and
// appName unless the request sets one) with a CondRev pinning it.
func (s *Service) upsertVariant(bucket, key string, now int64, appName *string) (variantIdentity, raftstore.Cond) {
	id := variantIdentity{}
	if appName != nil {
		id.AppName = *appName
	}
	old, ok := s.store.Get(bucket, key)
	if !ok {
		id.ID, id.Created = s.ids.nextID(now), now
		return id, raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: bucket, Key: key}
	}
	var prev variantIdentity
	if decode(old.Value, &prev) == nil {
		id.ID, id.Created = prev.ID, prev.Created
		if appName == nil {
			id.AppName = prev.AppName
		}
	}
	return id, raftstore.Cond{Kind: raftstore.CondRev, Bucket: bucket, Key: key, Rev: old.Rev}
}

func (s *Service) publishBeta(ctx context.Context, gk string, r PublishRequest) error {
	var casErr error
	err := s.apply(ctx, []raftstore.Key{{Bucket: BucketBeta, Key: gk}}, func() (raftstore.Batch, bool) {
		if s.casVariant(BucketBeta, gk, r.CasMD5) {
			casErr = ErrCasMismatch
			return raftstore.Batch{}, false
		}
		now := s.nowMs()
		id, cond := s.upsertVariant(BucketBeta, gk, now, r.AppName)
		b := Beta{ID: id.ID, Created: id.Created, AppName: id.AppName, DataID: r.DataID, Group: r.Group, Tenant: r.Tenant,
			Content: r.Content, MD5: MD5Hex(r.Content), BetaIps: r.BetaIps, Modified: now, SrcIP: r.SrcIP}
		return raftstore.Batch{Conds: []raftstore.Cond{cond},
			Ops: []raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketBeta, Key: gk, Value: encode(&b)}}}, true
	})
	if err == nil {
		err = casErr
	}
	return err
}

func (s *Service) publishTag(ctx context.Context, gk string, r PublishRequest) error {
	key := tagKey(gk, r.Tag)
	var casErr error
	err := s.apply(ctx, []raftstore.Key{{Bucket: BucketTag, Key: key}}, func() (raftstore.Batch, bool) {
		if s.casVariant(BucketTag, key, r.CasMD5) {
			casErr = ErrCasMismatch
			return raftstore.Batch{}, false
		}
		now := s.nowMs()
		id, cond := s.upsertVariant(BucketTag, key, now, r.AppName)
		t := Tag{ID: id.ID, Created: id.Created, AppName: id.AppName, DataID: r.DataID, Group: r.Group, Tenant: r.Tenant,
			Tag: r.Tag, Content: r.Content, MD5: MD5Hex(r.Content), Modified: now, SrcIP: r.SrcIP}
		return raftstore.Batch{Conds: []raftstore.Cond{cond},
			Ops: []raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketTag, Key: key, Value: encode(&t)}}}, true
	})
	if err == nil {
		err = casErr
	}
	return err
}

// DeleteRequest is DELETE /v1/cs/configs.
type DeleteRequest struct {
	DataID, Group, Tenant, Tag string
	SrcUser                    *string
	SrcIP                      string
}

// Delete removes the main config (writing a D history row) or, with Tag, the
// tag variant. Deleting something absent succeeds.
func (s *Service) Delete(ctx context.Context, r DeleteRequest) error {
	gk := groupKeyOf(r.DataID, r.Group, r.Tenant)
	if !compat.JavaIsBlank(r.Tag) {
		return s.apply(ctx, []raftstore.Key{{Bucket: BucketTag, Key: tagKey(gk, r.Tag)}}, func() (raftstore.Batch, bool) {
			if _, ok := s.store.Get(BucketTag, tagKey(gk, r.Tag)); !ok {
				return raftstore.Batch{}, false
			}
			return raftstore.Batch{Ops: []raftstore.Op{{Kind: raftstore.OpDelete, Bucket: BucketTag, Key: tagKey(gk, r.Tag)}}}, true
		})
	}
	return s.apply(ctx, []raftstore.Key{{Bucket: BucketInfo, Key: gk}}, func() (raftstore.Batch, bool) {
		return s.deleteBatch(gk, r.SrcUser, r.SrcIP)
	})
}

// deleteBatch builds the delete of one main config with its D history row;
// false when it does not exist.
func (s *Service) deleteBatch(gk string, srcUser *string, srcIP string) (raftstore.Batch, bool) {
	old, ok := s.store.Get(BucketInfo, gk)
	if !ok {
		return raftstore.Batch{}, false
	}
	var b raftstore.Batch
	s.appendDelete(&b, gk, old, srcUser, srcIP)
	return b, true
}

func (s *Service) appendDelete(b *raftstore.Batch, gk string, old raftstore.Record, srcUser *string, srcIP string) {
	var prev Info
	if err := decode(old.Value, &prev); err != nil {
		s.log.Error("deleting undecodable config", "key", gk, "err", err)
	}
	nid := s.ids.nextNid()
	h := History{Nid: nid, ID: prev.ID, DataID: prev.DataID, Group: prev.Group, Tenant: prev.Tenant, AppName: prev.AppName,
		Content: prev.Content, MD5: prev.MD5, SrcUser: srcUser, SrcIP: srcIP, Op: "D", Modified: s.nowMs(), Type: prev.Type}
	b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondRev, Bucket: BucketInfo, Key: gk, Rev: old.Rev})
	b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpDelete, Bucket: BucketInfo, Key: gk})
	b.Ops = append(b.Ops, historyOps(gk, &h)...)
	b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: metaNidKey, Value: []byte(strconv.FormatInt(nid, 10))})
}

// DeleteByIDs removes the main configs with these ids (unknown ids are
// ignored) in one atomic batch, each with a D history row.
func (s *Service) DeleteByIDs(ctx context.Context, ids []int64, srcIP string) error {
	var keys []raftstore.Key // the configs these ids name now; build re-resolves them
	s.mu.RLock()
	for _, id := range ids {
		if gk, ok := s.byID[id]; ok {
			keys = append(keys, raftstore.Key{Bucket: BucketInfo, Key: gk})
		}
	}
	s.mu.RUnlock()
	return s.apply(ctx, keys, func() (raftstore.Batch, bool) {
		var b raftstore.Batch
		seen := map[string]bool{}
		for _, id := range ids {
			s.mu.RLock()
			gk, ok := s.byID[id]
			s.mu.RUnlock()
			if !ok || seen[gk] {
				continue
			}
			seen[gk] = true
			old, ok := s.store.Get(BucketInfo, gk)
			if !ok {
				continue
			}
			s.appendDelete(&b, gk, old, nil, srcIP)
		}
		return b, len(b.Ops) > 0
	})
}

// StopBeta removes the beta variant.
func (s *Service) StopBeta(ctx context.Context, dataID, group, tenant string) error {
	gk := groupKeyOf(dataID, group, tenant)
	return s.apply(ctx, []raftstore.Key{{Bucket: BucketBeta, Key: gk}}, func() (raftstore.Batch, bool) {
		if _, ok := s.store.Get(BucketBeta, gk); !ok {
			return raftstore.Batch{}, false
		}
		return raftstore.Batch{Ops: []raftstore.Op{{Kind: raftstore.OpDelete, Bucket: BucketBeta, Key: gk}}}, true
	})
}

// Exists reports whether a main config exists.
func (s *Service) Exists(dataID, group, tenant string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	it := s.items[groupKeyOf(dataID, group, tenant)]
	return it != nil && it.info != nil
}
