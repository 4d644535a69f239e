package migrate

import (
	"context"
	"fmt"
	"net/url"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/server/config"
)

// maxSets bounds the sets of one request (one raft entry on nacosd).
const maxSets = 200

// batcher groups config sets into POST /v1/nacosd/migrate/config calls of
// at most max content bytes, keeping their order (history rows arrive in
// nid order, so nacosd keeps their nids); consecutive history-only sets of
// one group key are merged.
type batcher struct {
	r     *run
	max   int
	sets  []config.ImportSet
	bytes int
}

func setKey(s config.ImportSet) string {
	switch {
	case s.Info != nil:
		return compat.GroupKey(s.Info.DataID, s.Info.Group, s.Info.Tenant)
	case s.Beta != nil:
		return compat.GroupKey(s.Beta.DataID, s.Beta.Group, s.Beta.Tenant)
	case len(s.Tags) > 0:
		return compat.GroupKey(s.Tags[0].DataID, s.Tags[0].Group, s.Tags[0].Tenant)
	case len(s.History) > 0:
		return compat.GroupKey(s.History[0].DataID, s.History[0].Group, s.History[0].Tenant)
	}
	return ""
}

func setBytes(s config.ImportSet) int {
	n := 256
	if s.Info != nil {
		n += len(s.Info.Content)
	}
	if s.Beta != nil {
		n += len(s.Beta.Content)
	}
	for _, t := range s.Tags {
		n += len(t.Content) + 128
	}
	for _, h := range s.History {
		n += len(h.Content) + 128
	}
	return n
}

func setRows(s config.ImportSet) int {
	n := len(s.Tags) + len(s.History)
	if s.Info != nil {
		n++
	}
	if s.Beta != nil {
		n++
	}
	return n
}

func (b *batcher) add(ctx context.Context, s config.ImportSet) error {
	sz := setBytes(s)
	if len(b.sets) > 0 && (b.bytes+sz > b.max || len(b.sets) >= maxSets) {
		if err := b.flush(ctx); err != nil {
			return err
		}
	}
	if n := len(b.sets); n > 0 && s.Info == nil && s.Beta == nil && len(s.Tags) == 0 {
		last := &b.sets[n-1]
		if last.Info == nil && last.Beta == nil && len(last.Tags) == 0 && setKey(*last) == setKey(s) {
			last.History = append(last.History, s.History...)
			b.bytes += sz
			return nil
		}
	}
	b.sets = append(b.sets, s)
	b.bytes += sz
	return nil
}

func (b *batcher) flush(ctx context.Context) error {
	if len(b.sets) == 0 {
		return nil
	}
	sets := b.sets
	b.sets, b.bytes = nil, 0
	res, err := b.post(ctx, sets)
	if err != nil && isStatus(err, 400) {
		// one set was refused: send them one by one to skip only that one
		for _, s := range sets {
			one, err := b.post(ctx, []config.ImportSet{s})
			if err != nil {
				if !isStatus(err, 400) {
					return err
				}
				b.skipSet(s, err)
				continue
			}
			b.tally(one[0])
			b.r.prog.step(setRows(s))
		}
		return nil
	}
	if err != nil {
		return err
	}
	if len(res) != len(sets) {
		return fmt.Errorf("migrate: nacosd answered %d results for %d configs", len(res), len(sets))
	}
	for i, x := range res {
		b.tally(x)
		b.r.prog.step(setRows(sets[i]))
	}
	return nil
}

func (b *batcher) post(ctx context.Context, sets []config.ImportSet) ([]config.ImportResult, error) {
	q := url.Values{}
	if b.r.o.DryRun {
		q.Set("dryRun", "true")
	}
	var out struct {
		Results []config.ImportResult `json:"results"`
	}
	if err := b.r.to.postJSON(ctx, "/v1/nacosd/migrate/config", q, map[string]any{"sets": sets}, &out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

func (b *batcher) tally(x config.ImportResult) {
	s := b.r.sum
	if x.Info != "" {
		s.add(KindConfigs, x.Info)
	}
	if x.Beta != "" {
		s.add(KindBeta, x.Beta)
	}
	for kind, c := range map[string]config.ImportCounts{KindTag: x.Tags, KindHistory: x.History} {
		s.addN(kind, outcomeCreated, c.Created)
		s.addN(kind, outcomeUpdated, c.Updated)
		s.addN(kind, outcomeUnchanged, c.Unchanged)
	}
}

func (b *batcher) skipSet(s config.ImportSet, err error) {
	key := setKey(s)
	reason := err.Error()
	if he, ok := err.(*HTTPError); ok {
		reason = "nacosd refused it: " + truncate(he.Body, 200)
	}
	sum := b.r.sum
	if s.Info != nil {
		sum.skip(KindConfigs, key, reason)
	}
	if s.Beta != nil {
		sum.skip(KindBeta, key, reason)
	}
	for _, t := range s.Tags {
		sum.skip(KindTag, key+" tag "+t.Tag, reason)
	}
	for _, h := range s.History {
		sum.skip(KindHistory, fmt.Sprintf("%s nid %d", key, h.Nid), reason)
	}
	b.r.prog.step(setRows(s))
}
