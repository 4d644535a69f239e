package config

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// Policy is SameConfigPolicy for import and clone.
type Policy string

// Policies (case-sensitive enum names).
const (
	PolicyAbort     Policy = "ABORT"
	PolicySkip      Policy = "SKIP"
	PolicyOverwrite Policy = "OVERWRITE"
)

// ParsePolicy is SameConfigPolicy.valueOf; ok false for other names.
func ParsePolicy(s string) (Policy, bool) {
	switch p := Policy(s); p {
	case PolicyAbort, PolicySkip, PolicyOverwrite:
		return p, true
	}
	return "", false
}

// BatchItem is one config of an import or clone.
type BatchItem struct {
	DataID, Group, Content string
	AppName, Desc, Type    *string
}

// BatchInsert is batchInsertOrUpdate (config-v1.md §5.5): items in order,
// each validated (an invalid item stops the batch with its error after the
// earlier ones were written), conflicts handled by policy. Each item is its
// own committed write.
func (s *Service) BatchInsert(ctx context.Context, tenant string, items []BatchItem, policy Policy, srcUser *string, srcIP string) (compat.ImportResult, error) {
	var res compat.ImportResult
	for i, it := range items {
		if err := compat.CheckConfigWrite(it.DataID, it.Group, it.Content, s.cfg.MaxContent); err != nil {
			return res, err
		}
		typ := ""
		if it.Type != nil {
			typ = *it.Type
		}
		if compat.JavaIsBlank(typ) {
			typ = compat.ConfigTypeOfDataID(it.DataID)
		}
		r := PublishRequest{DataID: it.DataID, Group: it.Group, Tenant: tenant, Content: it.Content,
			AppName: it.AppName, SrcUser: srcUser, SrcIP: srcIP, Desc: it.Desc, Type: typ}
		if r.AppName == nil {
			empty := ""
			r.AppName = &empty
		}
		if !s.Exists(it.DataID, it.Group, tenant) {
			if err := s.insertOnly(ctx, r); err == nil {
				res.SuccCount++
				continue
			} else if !errors.Is(err, errExists) {
				return res, err
			}
		}
		switch policy {
		case PolicySkip:
			res.SkipCount++
			res.SkipData = append(res.SkipData, compat.ChangedKey{DataID: it.DataID, Group: it.Group})
			continue
		case PolicyOverwrite:
			if err := s.Publish(ctx, r); err != nil {
				return res, err
			}
			res.SuccCount++
			continue
		}
		res.FailData = append(res.FailData, compat.ChangedKey{DataID: it.DataID, Group: it.Group})
		for _, rest := range items[i+1:] {
			res.SkipData = append(res.SkipData, compat.ChangedKey{DataID: rest.DataID, Group: rest.Group})
		}
		break
	}
	return res, nil
}

var errExists = errors.New("config: exists")

// insertOnly creates a config, failing with errExists when it appeared.
func (s *Service) insertOnly(ctx context.Context, r PublishRequest) error {
	gk := groupKeyOf(r.DataID, r.Group, r.Tenant)
	now := s.nowMs()
	nid := s.ids.nextNid()
	in := Info{ID: s.ids.nextID(now), DataID: r.DataID, Group: r.Group, Tenant: r.Tenant, Content: r.Content,
		MD5: MD5Hex(r.Content), Created: now, Modified: now, SrcUser: r.SrcUser, SrcIP: r.SrcIP, Desc: r.Desc, Type: r.Type}
	if r.AppName != nil {
		in.AppName = *r.AppName
	}
	h := History{Nid: nid, ID: s.ids.nextID(now), DataID: r.DataID, Group: r.Group, Tenant: r.Tenant, AppName: in.AppName,
		Content: in.Content, MD5: in.MD5, SrcUser: r.SrcUser, SrcIP: r.SrcIP, Op: "I", Modified: now, Type: in.Type}
	_, err := s.store.Apply(ctx, raftstore.Batch{
		Conds: []raftstore.Cond{{Kind: raftstore.CondAbsent, Bucket: BucketInfo, Key: gk}},
		Ops: append(append([]raftstore.Op{{Kind: raftstore.OpPut, Bucket: BucketInfo, Key: gk, Value: encode(&in)}},
			historyOps(gk, &h)...),
			raftstore.Op{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: metaNidKey, Value: []byte(strconv.FormatInt(nid, 10))}),
	})
	if errors.Is(err, raftstore.ErrCondFailed) {
		return errExists
	}
	if err != nil {
		return fmt.Errorf("config: import %s: %w", gk, err)
	}
	return nil
}

// retentionTick deletes history rows older than RetentionDays, in batches
// of 1000, then schedules the next sweep. Followers fail with ErrNotLeader
// and simply try again next time.
func (s *Service) retentionTick() {
	cutoff := s.clk.Now().Add(-time.Duration(s.cfg.RetentionDays) * 24 * time.Hour).UnixMilli()
	if s.store.Count(BucketHistoryNid, "") < s.store.Count(BucketHistory, "") {
		s.indexHistory()
	}
	for {
		b := s.expiredHistory(cutoff, 1000)
		if len(b.Ops) == 0 {
			break
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := s.store.Apply(ctx, b)
		cancel()
		if err != nil {
			if !errors.Is(err, raftstore.ErrNotLeader) {
				s.log.Warn("history retention failed", "err", err)
			}
			break
		}
	}
	s.retentionMu.Lock()
	defer s.retentionMu.Unlock()
	if !s.closed {
		s.retention = s.clk.AfterFunc(s.cfg.RetentionInterval, s.retentionTick)
	}
}

// expiredHistory is a batch deleting up to n history rows modified before
// cutoff, oldest nid first, with their index entries. The nid index is in
// time order (nids are handed out as rows are written); the walk stops at
// the first row that is not expired.
func (s *Service) expiredHistory(cutoff int64, n int) raftstore.Batch {
	var b raftstore.Batch
	s.store.Scan(BucketHistoryNid, "", func(nk string, r raftstore.Record) bool {
		modified, hk, ok := nidIndexEntry(r.Value)
		if ok && modified >= cutoff {
			return false
		}
		b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpDelete, Bucket: BucketHistoryNid, Key: nk})
		if ok {
			b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpDelete, Bucket: BucketHistory, Key: hk})
		}
		return len(b.Ops) < 2*n
	})
	return b
}

// indexHistory adds nid index entries for history rows written before the
// index existed, in batches of 1000 (on the leader; followers fail with
// ErrNotLeader and leave it to the leader).
func (s *Service) indexHistory() {
	var b raftstore.Batch
	flush := func() bool {
		if len(b.Ops) == 0 {
			return true
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := s.store.Apply(ctx, b)
		cancel()
		b = raftstore.Batch{}
		if err != nil && !errors.Is(err, raftstore.ErrNotLeader) {
			s.log.Warn("history index failed", "err", err)
		}
		return err == nil
	}
	ok := true
	s.store.Scan(BucketHistory, "", func(k string, r raftstore.Record) bool {
		var h History
		if decode(r.Value, &h) != nil {
			return true
		}
		if _, indexed := s.store.Get(BucketHistoryNid, padNid(h.Nid)); !indexed {
			gk, _, _ := splitNulKey(k)
			b.Ops = append(b.Ops, historyOps(gk, &h)[1])
		}
		if len(b.Ops) >= 1000 {
			ok = flush()
		}
		return ok
	})
	if ok {
		flush()
	}
}

// RunRetention runs one history retention sweep now (tests, ops).
func (s *Service) RunRetention() {
	s.retentionMu.Lock()
	if s.retention != nil {
		s.retention.Stop()
	}
	s.retentionMu.Unlock()
	s.retentionTick()
}
