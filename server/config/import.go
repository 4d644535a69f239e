package config

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// ImportSet is one config as a Java Nacos stores it — the config_info row
// with its tag relations, the config_info_beta row, config_info_tag rows
// and his_config_info rows of one group key — for `nacosd migrate`. Every
// record must name the same dataId, group and tenant. A zero Created or
// Modified means the source did not tell (the HTTP API hides the times of
// beta and tag rows): the stored time is kept, or now is used. MD5s are
// recomputed from the contents.
type ImportSet struct {
	Info    *Info     `json:"info,omitempty"`
	Beta    *Beta     `json:"beta,omitempty"`
	Tags    []Tag     `json:"tags,omitempty"`
	History []History `json:"history,omitempty"`
}

// Import outcomes of one record.
const (
	ImportCreated   = "created"
	ImportUpdated   = "updated"
	ImportUnchanged = "unchanged"
)

// ImportCounts counts the outcomes of several records.
type ImportCounts struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
}

func (c *ImportCounts) add(outcome string) {
	switch outcome {
	case ImportCreated:
		c.Created++
	case ImportUpdated:
		c.Updated++
	case ImportUnchanged:
		c.Unchanged++
	}
}

// ImportResult is what Import did (or, dry, would do): the outcome of the
// main and beta rows ("" when the set had none) and counts for the rest.
type ImportResult struct {
	Info    string       `json:"info,omitempty"`
	Beta    string       `json:"beta,omitempty"`
	Tags    ImportCounts `json:"tags"`
	History ImportCounts `json:"history"`
}

// Import writes the sets in one raft batch, record by record: absent ones
// are created, differing ones replaced, equal ones left alone, so running
// it twice changes nothing the second time. The stored id of an existing
// config is kept; a new one keeps the source's id unless another config
// has it. A history row is the same row when a stored one of the group key
// has its operation, MD5 and time; a new row keeps the source's nid when
// it is above every stored nid and every nid before it in the batch (rows
// sent in nid order into a fresh node keep theirs), else takes the next
// one. Nothing is deleted. With dryRun nothing is written. One invalid set
// fails the whole call and writes nothing; the error names its index.
func (s *Service) Import(ctx context.Context, sets []ImportSet, dryRun bool) ([]ImportResult, error) {
	gks := make([]string, len(sets))
	for i := range sets {
		gk, err := s.checkImport(&sets[i])
		if err != nil {
			var ce *compat.Error
			if errors.As(err, &ce) {
				return nil, &compat.Error{Status: ce.Status, Body: fmt.Sprintf("set %d: %s", i, ce.Body), Exception: ce.Exception}
			}
			return nil, fmt.Errorf("config: import set %d: %w", i, err)
		}
		gks[i] = gk
	}
	res := make([]ImportResult, len(sets))
	// every record the batch reads to decide is locked (Store.Update): the
	// history nid counter, and each set's main, beta and tag rows
	keys := []raftstore.Key{{Bucket: BucketMeta, Key: metaNidKey}}
	for i, set := range sets {
		keys = append(keys, raftstore.Key{Bucket: BucketInfo, Key: gks[i]}, raftstore.Key{Bucket: BucketBeta, Key: gks[i]})
		for _, t := range set.Tags {
			keys = append(keys, raftstore.Key{Bucket: BucketTag, Key: tagKey(gks[i], t.Tag)})
		}
	}
	err := s.apply(ctx, keys, func() (raftstore.Batch, bool) {
		var b raftstore.Batch
		st := importState{next: s.maxNid()}
		for i := range sets {
			res[i] = ImportResult{}
			s.importBatch(gks[i], sets[i], &res[i], &b, &st)
		}
		if st.maxNid > 0 {
			s.putMetaNid(&b, st.maxNid)
			if !dryRun {
				s.ids.seenNid(st.maxNid) // reserved: a publish meanwhile takes the next one
			}
		}
		return b, !dryRun && len(b.Ops) > 0
	})
	return res, err
}

// importState carries nid allocation across the sets of one batch.
type importState struct {
	next   int64 // highest nid taken so far
	maxNid int64 // highest nid written by this batch
}

func (s *Service) maxNid() int64 {
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	return s.ids.nid
}

// putMetaNid bumps the meta nid as Publish does; the condition makes a
// concurrent publish that took one of the batch's nids lose the race.
func (s *Service) putMetaNid(b *raftstore.Batch, nid int64) {
	if old, ok := s.store.Get(BucketMeta, metaNidKey); ok {
		b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondRev, Bucket: BucketMeta, Key: metaNidKey, Rev: old.Rev})
	} else {
		b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: BucketMeta, Key: metaNidKey})
	}
	b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: metaNidKey, Value: []byte(strconv.FormatInt(nid, 10))})
}

// checkImport validates the set and returns its group key.
func (s *Service) checkImport(set *ImportSet) (string, error) {
	var dataID, group, tenant string
	first := true
	same := func(d, g, t, content string) error {
		if first {
			dataID, group, tenant, first = d, g, t, false
			if err := compat.CheckTenant(t); err != nil {
				return err
			}
		} else if d != dataID || g != group || t != tenant {
			return compat.IllegalArgument("import: every record of a set must have the same dataId, group and tenant")
		}
		return compat.CheckConfigWrite(d, g, content, s.cfg.MaxContent)
	}
	if in := set.Info; in != nil {
		if err := same(in.DataID, in.Group, in.Tenant, in.Content); err != nil {
			return "", err
		}
	}
	if b := set.Beta; b != nil {
		if err := same(b.DataID, b.Group, b.Tenant, b.Content); err != nil {
			return "", err
		}
		if compat.JavaIsBlank(b.BetaIps) {
			return "", compat.IllegalArgument("import: beta config without betaIps")
		}
	}
	for _, t := range set.Tags {
		if err := same(t.DataID, t.Group, t.Tenant, t.Content); err != nil {
			return "", err
		}
		if err := compat.CheckTag(t.Tag); err != nil {
			return "", err
		}
		if compat.JavaIsBlank(t.Tag) {
			return "", compat.IllegalArgument("import: tag config without tag")
		}
	}
	for _, h := range set.History {
		// a history row may hold an empty content (a D of an empty config)
		if err := same(h.DataID, h.Group, h.Tenant, "x"); err != nil {
			return "", err
		}
		switch h.Op {
		case "I", "U", "D":
		default:
			return "", compat.IllegalArgument("import: history op must be I, U or D, got " + strconv.Quote(h.Op))
		}
	}
	if first {
		return "", compat.IllegalArgument("import: empty set")
	}
	return groupKeyOf(dataID, group, tenant), nil
}

// importBatch compares the set with the store and builds the writes.
func (s *Service) importBatch(gk string, set ImportSet, res *ImportResult, b *raftstore.Batch, st *importState) {
	now := s.nowMs()
	put := func(bucket, key string, v any, old raftstore.Record, exists bool) {
		// a key written twice in one batch (two sets of one group key):
		// the second write's condition must not see the first as absent
		for _, op := range b.Ops {
			if op.Bucket == bucket && op.Key == key {
				b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: bucket, Key: key, Value: encode(v)})
				return
			}
		}
		if exists {
			b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondRev, Bucket: bucket, Key: key, Rev: old.Rev})
		} else {
			b.Conds = append(b.Conds, raftstore.Cond{Kind: raftstore.CondAbsent, Bucket: bucket, Key: key})
		}
		b.Ops = append(b.Ops, raftstore.Op{Kind: raftstore.OpPut, Bucket: bucket, Key: key, Value: encode(v)})
	}
	idMap := map[int64]int64{} // source config id → stored id
	if set.Info != nil {
		in := *set.Info
		in.MD5 = MD5Hex(in.Content)
		old, exists := s.store.Get(BucketInfo, gk)
		var prev Info
		if exists && decode(old.Value, &prev) != nil {
			exists = false
		}
		srcID := in.ID
		switch {
		case exists:
			in.ID = prev.ID
		case in.ID <= 0 || s.idTaken(in.ID, gk):
			in.ID = s.ids.nextID(now)
		}
		idMap[srcID] = in.ID
		fillTimes(&in.Created, &in.Modified, prev.Created, prev.Modified, exists, now)
		in.Tags = nonEmpty(in.Tags)
		prev.Tags = nonEmpty(prev.Tags)
		res.Info = outcome(exists, reflect.DeepEqual(in, prev))
		if res.Info != ImportUnchanged {
			put(BucketInfo, gk, &in, old, exists)
		}
	}
	if set.Beta != nil {
		bt := *set.Beta
		bt.MD5 = MD5Hex(bt.Content)
		old, exists := s.store.Get(BucketBeta, gk)
		var prev Beta
		if exists && decode(old.Value, &prev) != nil {
			exists = false
		}
		if exists {
			bt.ID = prev.ID
		} else if bt.ID <= 0 {
			bt.ID = s.ids.nextID(now)
		}
		fillTimes(&bt.Created, &bt.Modified, prev.Created, prev.Modified, exists, now)
		res.Beta = outcome(exists, bt == prev)
		if res.Beta != ImportUnchanged {
			put(BucketBeta, gk, &bt, old, exists)
		}
	}
	for _, t := range set.Tags {
		t.MD5 = MD5Hex(t.Content)
		key := tagKey(gk, t.Tag)
		old, exists := s.store.Get(BucketTag, key)
		var prev Tag
		if exists && decode(old.Value, &prev) != nil {
			exists = false
		}
		if exists {
			t.ID = prev.ID
		} else if t.ID <= 0 {
			t.ID = s.ids.nextID(now)
		}
		fillTimes(&t.Created, &t.Modified, prev.Created, prev.Modified, exists, now)
		o := outcome(exists, t == prev)
		res.Tags.add(o)
		if o != ImportUnchanged {
			put(BucketTag, key, &t, old, exists)
		}
	}
	if len(set.History) > 0 {
		s.importHistory(gk, set.History, idMap, now, res, b, st)
	}
}

// importHistory adds the history rows the group key does not have yet.
func (s *Service) importHistory(gk string, rows []History, idMap map[int64]int64, now int64, res *ImportResult, b *raftstore.Batch, st *importState) {
	type ident struct {
		op, md5 string
		at      int64
	}
	have := map[ident]bool{}
	s.store.Scan(BucketHistory, gk+"\x00", func(k string, r raftstore.Record) bool {
		var h History
		if g, _, ok := splitNulKey(k); ok && g == gk && decode(r.Value, &h) == nil {
			have[ident{h.Op, h.MD5, h.Modified}] = true
		}
		return true
	})
	for _, h := range rows {
		h.MD5 = MD5Hex(h.Content)
		if h.Modified <= 0 {
			h.Modified = now
		}
		id := ident{h.Op, h.MD5, h.Modified}
		if have[id] {
			res.History.add(ImportUnchanged)
			continue
		}
		have[id] = true
		if mapped, ok := idMap[h.ID]; ok {
			h.ID = mapped
		}
		if h.Nid <= st.next {
			st.next++
			h.Nid = st.next
		} else {
			st.next = h.Nid
		}
		st.maxNid = max(st.maxNid, h.Nid)
		b.Ops = append(b.Ops, historyOps(gk, &h)...)
		res.History.add(ImportCreated)
	}
}

// idTaken reports a config id used by another group key.
func (s *Service) idTaken(id int64, gk string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	g, ok := s.byID[id]
	return ok && g != gk
}

// fillTimes gives unknown (zero) times the stored ones, or now.
func fillTimes(created, modified *int64, oldCreated, oldModified int64, exists bool, now int64) {
	if *created <= 0 {
		*created = now
		if exists {
			*created = oldCreated
		}
	}
	if *modified <= 0 {
		*modified = now
		if exists {
			*modified = oldModified
		}
	}
}

func outcome(exists, equal bool) string {
	switch {
	case !exists:
		return ImportCreated
	case equal:
		return ImportUnchanged
	}
	return ImportUpdated
}

func nonEmpty(tags []string) []string {
	if len(tags) == 0 {
		return nil
	}
	return tags
}
