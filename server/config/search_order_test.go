package config

import (
	"strings"
	"testing"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
)

// TestSearchOrder: accurate search and blur search without a dataId list in
// id (write) order; blur search with a dataId in (dataId, group, tenant)
// order, as embedded Derby's unique index gives them on the 1.4.8 reference.
func TestSearchOrder(t *testing.T) {
	s := newTestService(t, newFakeStore(), clocktest.New(t0))
	for _, k := range []struct{ d, g string }{{"b", "G2"}, {"a", "G1"}, {"b", "G1"}, {"c", "G1"}} {
		pub(t, s, PublishRequest{DataID: k.d, Group: k.g, Content: "x"})
	}
	order := func(r SearchRequest) string {
		r.PageNo, r.PageSize = 1, 10
		_, rows := s.Search(r)
		var out []string
		for _, row := range rows {
			out = append(out, row.Info.DataID+"@"+row.Info.Group)
		}
		return strings.Join(out, " ")
	}
	if got := order(SearchRequest{Blur: true, DataID: "*"}); got != "a@G1 b@G1 b@G2 c@G1" {
		t.Errorf("blur by dataId: %s", got)
	}
	if got := order(SearchRequest{Blur: true, Group: "G*"}); got != "b@G2 a@G1 b@G1 c@G1" {
		t.Errorf("blur by group only: %s", got)
	}
	if got := order(SearchRequest{}); got != "b@G2 a@G1 b@G1 c@G1" {
		t.Errorf("accurate: %s", got)
	}
}

// TestSearchTenantExact: the blur search (the console's and
// /v1/cs/configs?search=blur) matches the tenant exactly, never with LIKE
// wildcards: "team_a" must not list namespace "team-a" (issue 26 items 3,
// 5); '*' in dataId and group still works within the namespace.
func TestSearchTenantExact(t *testing.T) {
	s := newTestService(t, newFakeStore(), clocktest.New(t0))
	for _, tenant := range []string{"team_a", "team-a", "teamXa", ""} {
		pub(t, s, PublishRequest{DataID: "app.yaml", Group: "G", Content: "x", Tenant: tenant})
	}
	tenants := func(r SearchRequest) string {
		r.PageNo, r.PageSize = 1, 10
		_, rows := s.Search(r)
		var out []string
		for _, row := range rows {
			out = append(out, "["+row.Info.Tenant+"]")
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		r    SearchRequest
		want string
	}{
		{SearchRequest{Blur: true, Tenant: "team_a"}, "[team_a]"},
		{SearchRequest{Blur: true, Tenant: "team_a", DataID: "app*"}, "[team_a]"},
		{SearchRequest{Blur: true, Tenant: "team%", DataID: "*"}, ""},
		{SearchRequest{Blur: true, Tenant: "team*", Group: "G*"}, ""},
		{SearchRequest{Blur: true, Tenant: "", DataID: "*.yaml"}, "[]"},
		{SearchRequest{Tenant: "team_a", DataID: "app.yaml", Group: "G"}, "[team_a]"},
	} {
		if got := tenants(c.r); got != c.want {
			t.Errorf("%+v: %s, want %s", c.r, got, c.want)
		}
	}
}
