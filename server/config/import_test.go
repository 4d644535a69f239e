package config

import (
	"context"
	"strings"
	"testing"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
)

func strPtr(s string) *string { return &s }

// TestImport: records are written as given (ids, times, nids), a second
// import changes nothing, a changed source record replaces the stored one,
// a dry run writes nothing, and one bad set refuses the whole call.
func TestImport(t *testing.T) {
	st := newFakeStore()
	s := newTestService(t, st, clocktest.New(t0))
	ctx := context.Background()
	sets := []ImportSet{
		{
			Info: &Info{ID: 7, DataID: "app", Group: "G", Tenant: "dev", AppName: "shop", Content: "v2", Created: 1000, Modified: 2000,
				SrcUser: strPtr("alice"), SrcIP: "10.0.0.1", Desc: strPtr("d"), Type: "yaml", Tags: []string{"b", "a"}},
			Beta: &Beta{ID: 3, DataID: "app", Group: "G", Tenant: "dev", Content: "beta", BetaIps: "10.1.1.1"},
			Tags: []Tag{{ID: 4, DataID: "app", Group: "G", Tenant: "dev", Tag: "canary", Content: "c", Created: 1500, Modified: 1600}},
		},
		{History: []History{
			{Nid: 5, ID: 7, DataID: "app", Group: "G", Tenant: "dev", Content: "v1", Op: "I", Modified: 1000},
			{Nid: 6, ID: 7, DataID: "app", Group: "G", Tenant: "dev", Content: "v1", Op: "U", Modified: 2000},
		}},
		{History: []History{{Nid: 9, ID: 8, DataID: "gone", Group: "G", Content: "old", Op: "D", Modified: 3000}}},
	}
	dry, err := s.Import(ctx, sets, true)
	if err != nil {
		t.Fatal(err)
	}
	if dry[0].Info != ImportCreated || dry[1].History.Created != 2 || s.Info("app", "G", "dev") != nil {
		t.Fatalf("dry run: %+v, stored %+v", dry, s.Info("app", "G", "dev"))
	}
	res, err := s.Import(ctx, sets, false)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Info != ImportCreated || res[0].Beta != ImportCreated || res[0].Tags.Created != 1 || res[1].History.Created != 2 || res[2].History.Created != 1 {
		t.Fatalf("import: %+v", res)
	}
	in := s.Info("app", "G", "dev")
	if in == nil || in.ID != 7 || in.Created != 1000 || in.Modified != 2000 || in.MD5 != MD5Hex("v2") || strings.Join(in.Tags, ",") != "b,a" || *in.SrcUser != "alice" {
		t.Fatalf("stored %+v", in)
	}
	if b := s.BetaInfo("app", "G", "dev"); b == nil || b.ID != 3 || b.Created != t0.UnixMilli() || b.BetaIps != "10.1.1.1" {
		t.Fatalf("beta %+v (unknown times take now)", b)
	}
	if got := s.Get("app", "G", "dev", "canary", "", ""); got.Content != "c" {
		t.Fatalf("tag %+v", got)
	}
	if h := s.HistoryByNid(6); h == nil || h.Op != "U" || h.Content != "v1" || h.Modified != 2000 {
		t.Fatalf("history 6: %+v", h)
	}
	if h := s.HistoryByNid(9); h == nil || h.DataID != "gone" {
		t.Fatalf("history of a deleted config: %+v", h)
	}

	again, err := s.Import(ctx, sets, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range again {
		if r.Info == ImportCreated || r.Info == ImportUpdated || r.Beta == ImportUpdated || r.Tags.Created+r.Tags.Updated+r.History.Created != 0 {
			t.Fatalf("second import of set %d changed something: %+v", i, r)
		}
	}

	// the source moved on: its newer record replaces ours, id kept
	changed := *sets[0].Info
	changed.ID, changed.Content, changed.Modified = 99, "v3", 4000
	res, err = s.Import(ctx, []ImportSet{{Info: &changed}}, false)
	if err != nil || res[0].Info != ImportUpdated {
		t.Fatalf("update: %+v %v", res, err)
	}
	if in := s.Info("app", "G", "dev"); in.Content != "v3" || in.ID != 7 {
		t.Fatalf("after update %+v", in)
	}

	// a publish after the import takes the next nid
	pub(t, s, PublishRequest{DataID: "app", Group: "G", Tenant: "dev", Content: "v4"})
	if _, rows := s.HistoryPage("app", "G", "dev", 1, 10); len(rows) != 3 || rows[0].Nid != 10 {
		t.Fatalf("history after a publish: %d rows, newest nid %d", len(rows), rows[0].Nid)
	}

	// older history into a non-fresh node gets fresh nids
	res, err = s.Import(ctx, []ImportSet{{History: []History{{Nid: 2, DataID: "other", Group: "G", Content: "x", Op: "I", Modified: 500}}}}, false)
	if err != nil || res[0].History.Created != 1 {
		t.Fatal(res, err)
	}
	if _, rows := s.HistoryPage("other", "G", "", 1, 10); len(rows) != 1 || rows[0].Nid != 11 {
		t.Fatalf("renumbered history: %+v", rows)
	}

	for _, bad := range [][]ImportSet{
		{{Info: &Info{DataID: "ok", Group: "G", Content: "x"}}, {Info: &Info{DataID: "bad id", Group: "G", Content: "x"}}},
		{{Info: &Info{DataID: "a", Group: "G", Content: "x"}, Beta: &Beta{DataID: "b", Group: "G", Content: "x", BetaIps: "1.1.1.1"}}},
		{{History: []History{{DataID: "a", Group: "G", Op: "X"}}}},
		{{}},
	} {
		if _, err := s.Import(ctx, bad, false); err == nil {
			t.Errorf("import %+v: no error", bad)
		}
	}
	if s.Info("ok", "G", "") != nil {
		t.Error("a refused call wrote its good sets")
	}
}
