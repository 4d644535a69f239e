package config

import (
	"fmt"
	"maps"
	"slices"

	"github.com/nacosd/nacosd/raftstore"
)

// CheckStore compares the config cache (what reads and long polls see)
// with the store: every config, beta and tag with its MD5 and revision,
// and returns every difference. Call it while the store applies nothing
// (raftstore.Store.Quiesced): a missed update is otherwise masked by the
// next write of the same key, which is why it is checked directly.
func (s *Service) CheckStore() []string {
	want := map[string]string{}
	s.store.Scan(BucketInfo, "", func(k string, r raftstore.Record) bool {
		var in Info
		if err := decode(r.Value, &in); err == nil {
			want["info "+k] = fmt.Sprintf("%s@%d", in.MD5, r.Rev)
		}
		return true
	})
	s.store.Scan(BucketBeta, "", func(k string, r raftstore.Record) bool {
		var b Beta
		if err := decode(r.Value, &b); err == nil {
			want["beta "+k] = b.MD5 + " " + b.BetaIps
		}
		return true
	})
	s.store.Scan(BucketTag, "", func(k string, r raftstore.Record) bool {
		var t Tag
		if err := decode(r.Value, &t); err == nil {
			gk, _, _ := splitNulKey(k)
			want["tag "+gk+" "+t.Tag] = t.MD5
		}
		return true
	})
	have := map[string]string{}
	s.mu.RLock()
	for gk, it := range s.items {
		if it.info != nil {
			have["info "+gk] = fmt.Sprintf("%s@%d", it.info.MD5, it.infoRev)
		}
		if it.beta != nil {
			have["beta "+gk] = it.beta.MD5 + " " + it.beta.BetaIps
		}
		for tag, t := range it.tags {
			have["tag "+gk+" "+tag] = t.MD5
		}
	}
	s.mu.RUnlock()
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if have[k] != want[k] {
			diffs = append(diffs, fmt.Sprintf("%s: cache %q, store %q", k, have[k], want[k]))
		}
		delete(have, k)
	}
	for _, k := range slices.Sorted(maps.Keys(have)) {
		diffs = append(diffs, fmt.Sprintf("%s: cache %q, not stored", k, have[k]))
	}
	return diffs
}
