package config

import (
	"sort"
	"strings"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/raftstore"
)

// GetResult is what GET /v1/cs/configs serves (config-v1.md §3.1).
type GetResult struct {
	// Found is false when no variant of the config exists (404 without
	// Config-Type).
	Found bool
	// Type is the main config's type ("text" when unknown); set when Found.
	Type string
	// Served is false when the item exists but the wanted variant does not
	// (404 after the Config-Type header).
	Served   bool
	Content  string
	MD5      string
	Modified int64 // epoch ms
	Beta     bool
	// AutoTag is the Vipserver-Tag variant served, if any.
	AutoTag string
}

// Get selects the variant a client gets: beta for a listed IP, else the tag
// param's variant, else the Vipserver-Tag variant when it exists, else main.
func (s *Service) Get(dataID, group, tenant, tag, autoTag, ip string) GetResult {
	return s.GetFor(dataID, group, tenant, tag, autoTag, func() string { return ip })
}

// GetFor is Get with the client IP asked for only when a beta variant
// needs it. It keeps none of its arguments.
func (s *Service) GetFor(dataID, group, tenant, tag, autoTag string, ip func() string) GetResult {
	var kb [256]byte
	gk := compat.AppendGroupKey(kb[:0], dataID, group, tenant)
	s.mu.RLock()
	defer s.mu.RUnlock()
	it := s.items[string(gk)]
	if it == nil {
		return GetResult{}
	}
	r := GetResult{Found: true, Type: "text"}
	if it.info != nil && it.info.Type != "" {
		r.Type = it.info.Type
	}
	switch {
	case it.beta != nil && containsStr(it.betaIPs, ip()):
		r.Served, r.Content, r.MD5, r.Modified, r.Beta = true, it.beta.Content, it.beta.MD5, it.beta.Modified, true
	case compat.JavaIsBlank(tag):
		if !compat.JavaIsBlank(autoTag) && it.tags[autoTag] != nil {
			t := it.tags[autoTag]
			r.Served, r.Content, r.MD5, r.Modified, r.AutoTag = true, t.Content, t.MD5, t.Modified, autoTag
		} else if it.info != nil {
			r.Served, r.Content, r.MD5, r.Modified = true, it.info.Content, it.info.MD5, it.infoMod
		}
	default:
		if t := it.tags[tag]; t != nil {
			r.Served, r.Content, r.MD5, r.Modified = true, t.Content, t.MD5, t.Modified
		}
	}
	return r
}

// Info returns the main config (nil when absent). The record is immutable.
func (s *Service) Info(dataID, group, tenant string) *Info {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if it := s.items[groupKeyOf(dataID, group, tenant)]; it != nil {
		return it.info
	}
	return nil
}

// InfoByID returns the main config with this id (nil when absent).
func (s *Service) InfoByID(id int64) *Info {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if gk, ok := s.byID[id]; ok {
		return s.items[gk].info
	}
	return nil
}

// BetaInfo returns the beta variant (nil when absent).
func (s *Service) BetaInfo(dataID, group, tenant string) *Beta {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if it := s.items[groupKeyOf(dataID, group, tenant)]; it != nil {
		return it.beta
	}
	return nil
}

// TagsJoined returns the config_tags of a config joined with "," (nil: none).
func (in *Info) TagsJoined() *string {
	if len(in.Tags) == 0 {
		return nil
	}
	s := strings.Join(in.Tags, ",")
	return &s
}

// SearchRequest is GET ?search=accurate|blur (config-v1.md §3.7).
type SearchRequest struct {
	Blur                           bool
	DataID, Group, AppName, Tenant string
	ConfigTags                     string
	// Content, when not empty, keeps only configs whose content contains it
	// (case-sensitive). No 1.x endpoint sets it: the console's
	// GET /v1/console/configs search does.
	Content          string
	PageNo, PageSize int
}

// SearchRow is one listing row: the config and whether type is selected.
type SearchRow struct {
	Info     *Info
	WithType bool
}

// Search lists configs in id order (blur with a dataId: in index order).
// Blur uses SQL LIKE for dataId and group when they contain '*' ('*' →
// '%', '_' matches one char) and equality otherwise; appName is always
// exact. The tenant is always exact: Java's blur search matches it with
// LIKE too, so "team_a" (or "team*") also listed namespace "team-a", past
// the permission checked on "team_a" (issue 26 items 3, 5); the wildcards
// stay within the namespace. With config tags a config is listed once per
// matching tag and type is not selected.
func (s *Service) Search(r SearchRequest) (total int, rows []SearchRow) {
	match := func(pattern, v string) bool {
		if r.Blur {
			return likeMatch(likeArg(pattern), v)
		}
		return pattern == v
	}
	var tags map[string]bool
	if !compat.JavaIsBlank(r.ConfigTags) {
		tags = map[string]bool{}
		for _, t := range compat.JavaSplit(r.ConfigTags, ",") {
			tags[t] = true
		}
	}
	s.mu.RLock()
	var all []SearchRow
	for _, it := range s.items {
		in := it.info
		if in == nil {
			continue
		}
		if in.Tenant != r.Tenant {
			continue
		}
		if !compat.JavaIsBlank(r.DataID) && !match(r.DataID, in.DataID) {
			continue
		}
		if !compat.JavaIsBlank(r.Group) && !match(r.Group, in.Group) {
			continue
		}
		if !compat.JavaIsBlank(r.AppName) && in.AppName != r.AppName {
			continue
		}
		if r.Content != "" && !strings.Contains(in.Content, r.Content) {
			continue
		}
		if tags != nil {
			for _, t := range in.Tags {
				if tags[t] {
					all = append(all, SearchRow{Info: in})
				}
			}
			continue
		}
		all = append(all, SearchRow{Info: in, WithType: !r.Blur})
	}
	s.mu.RUnlock()
	if r.Blur && !compat.JavaIsBlank(r.DataID) && tags == nil {
		// data_id LIKE ? makes embedded Derby read the unique index
		// (data_id, group_id, tenant_id): rows come in its order (seen on
		// the 1.4.8 reference); without it, in id order
		sort.SliceStable(all, func(i, j int) bool {
			a, b := all[i].Info, all[j].Info
			if a.DataID != b.DataID {
				return a.DataID < b.DataID
			}
			if a.Group != b.Group {
				return a.Group < b.Group
			}
			return a.Tenant < b.Tenant
		})
	} else {
		sort.SliceStable(all, func(i, j int) bool { return all[i].Info.ID < all[j].Info.ID })
	}
	return len(all), pageSlice(all, r.PageNo, r.PageSize)
}

// PagesAvailable is ceil(total / pageSize).
func PagesAvailable(total, pageSize int) int {
	if pageSize <= 0 {
		return 0
	}
	return (total + pageSize - 1) / pageSize
}

func pageSlice[T any](all []T, pageNo, pageSize int) []T {
	if pageNo > PagesAvailable(len(all), pageSize) || pageNo <= 0 {
		return nil
	}
	start := (pageNo - 1) * pageSize
	end := min(start+pageSize, len(all))
	return all[start:end]
}

// pageSkip is how many rows come before page pageNo (pageSlice's bounds), or
// -1 when the page is empty.
func pageSkip(total, pageNo, pageSize int) int {
	if pageSize <= 0 || pageNo <= 0 || pageNo > PagesAvailable(total, pageSize) {
		return -1
	}
	return (pageNo - 1) * pageSize
}

// likeArg is generateLikeArgument: only when s contains '*' every '*'
// becomes '%'; otherwise s is used as is (so '_' and '%' stay wildcards).
func likeArg(s string) string {
	if strings.Contains(s, "*") {
		return strings.ReplaceAll(s, "*", "%")
	}
	return s
}

// likeMatch is SQL LIKE (case-sensitive, as Derby): '%' any run, '_' one char.
func likeMatch(pattern, s string) bool {
	p := []rune(pattern)
	v := []rune(s)
	// Iterative wildcard matching with backtracking on the last '%'.
	pi, vi, star, mark := 0, 0, -1, 0
	for vi < len(v) {
		switch {
		case pi < len(p) && (p[pi] == '_' || p[pi] == v[vi]) && p[pi] != '%':
			pi++
			vi++
		case pi < len(p) && p[pi] == '%':
			star, mark = pi, vi
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			vi = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}

// ExportFilter selects configs to export (findAllConfigInfo4Export).
type ExportFilter struct {
	IDs                            []int64
	DataID, Group, AppName, Tenant string
}

// ExportList returns the configs to export in id order: by ids when any are
// given (other filters ignored), else tenant equality plus optional dataId
// LIKE, group and appName equality.
func (s *Service) ExportList(f ExportFilter) []*Info {
	var out []*Info
	s.mu.RLock()
	if len(f.IDs) > 0 {
		seen := map[int64]bool{}
		for _, id := range f.IDs {
			if gk, ok := s.byID[id]; ok && !seen[id] {
				seen[id] = true
				out = append(out, s.items[gk].info)
			}
		}
	} else {
		for _, it := range s.items {
			in := it.info
			if in == nil || in.Tenant != f.Tenant {
				continue
			}
			if !compat.JavaIsBlank(f.DataID) && !likeMatch(likeArg(f.DataID), in.DataID) {
				continue
			}
			if !compat.JavaIsBlank(f.Group) && in.Group != f.Group {
				continue
			}
			if !compat.JavaIsBlank(f.AppName) && in.AppName != f.AppName {
				continue
			}
			out = append(out, in)
		}
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// CountTenant is configCount of a namespace: configs whose tenant matches id
// as a LIKE pattern (so '_' and '%' act as wildcards, as in Java).
func (s *Service) CountTenant(id string) int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	plain := !strings.ContainsAny(id, "_%")
	for _, it := range s.items {
		if it.info == nil {
			continue
		}
		if plain && it.info.Tenant == id || !plain && likeMatch(id, it.info.Tenant) {
			n++
		}
	}
	return n
}

// HistoryPage lists the history of one config, newest first
// (listConfigHistory; pageSize capped at 500 by the caller).
func (s *Service) HistoryPage(dataID, group, tenant string, pageNo, pageSize int) (total int, rows []*History) {
	gk := groupKeyOf(dataID, group, tenant)
	prefix := gk + "\x00" // keys end in a zero-padded nid: key order is nid order
	total = s.store.Count(BucketHistory, prefix)
	skip := pageSkip(total, pageNo, pageSize)
	if skip < 0 {
		return total, nil
	}
	s.store.ScanReverse(BucketHistory, prefix, skip, func(k string, r raftstore.Record) bool {
		if g, _, ok := splitNulKey(k); !ok || g != gk {
			return true
		}
		var h History
		if err := decode(r.Value, &h); err != nil {
			s.log.Error("undecodable history row", "key", k, "err", err)
		} else {
			rows = append(rows, &h)
		}
		return len(rows) < pageSize
	})
	return total, rows
}

// HistoryByNid returns a history row by nid (nil when absent).
func (s *Service) HistoryByNid(nid int64) *History {
	if ix, ok := s.store.Get(BucketHistoryNid, padNid(nid)); ok {
		if _, k, ok := nidIndexEntry(ix.Value); ok {
			if r, ok := s.store.Get(BucketHistory, k); ok {
				var h History
				if decode(r.Value, &h) == nil {
					return &h
				}
			}
		}
		return nil
	}
	if s.store.Count(BucketHistoryNid, "") >= s.store.Count(BucketHistory, "") {
		return nil // every row is indexed
	}
	// rows written before the index existed
	var out *History
	suffix := "\x00" + padNid(nid)
	s.store.Scan(BucketHistory, "", func(k string, r raftstore.Record) bool {
		if !strings.HasSuffix(k, suffix) {
			return true
		}
		var h History
		if decode(r.Value, &h) == nil {
			out = &h
		}
		return false
	})
	return out
}

// HistoryPrevious returns the newest history row whose config id is id
// (getPreviousConfigHistoryInfo), nil when none.
func (s *Service) HistoryPrevious(id int64) *History {
	var best *History
	// Rows of a live config share its group key: scan only those.
	prefix := ""
	s.mu.RLock()
	if gk, ok := s.byID[id]; ok {
		prefix = gk + "\x00"
	}
	s.mu.RUnlock()
	s.store.Scan(BucketHistory, prefix, func(k string, r raftstore.Record) bool {
		var h History
		if decode(r.Value, &h) != nil || h.ID != id {
			return true
		}
		if best == nil || h.Nid > best.Nid {
			best = &h
		}
		return true
	})
	return best
}

func padNid(n int64) string {
	s := historyKey("", n)
	return s[1:]
}

// Location is the server time zone used for history timestamps.
func (s *Service) Location() *time.Location { return s.loc }

// Now is the service clock's time.
func (s *Service) Now() time.Time { return s.clk.Now() }
