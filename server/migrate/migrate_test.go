package migrate

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

// authNode starts a nacosd with auth on.
func authNode(t *testing.T) (*servertest.Node, *api) {
	cfg := servertest.Config(t)
	cfg.Auth = server.AuthConfig{Enabled: true, SystemType: "nacos", SecretKey: base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32))),
		TokenExpire: 18000e9, ServerIdentityKey: "migrate-test", ServerIdentityValue: "0123456789abcdef0123"}
	n := servertest.Start(t, cfg)
	a := &api{t: t, name: "nacosd", base: n.URL("/nacos")}
	a.login("nacos", "nacos")
	return n, a
}

// TestMigrateBetweenNacosd: a nacosd speaks the Java API, so it can stand in
// for the Java server on the HTTP path (no Derby there: configs through
// the REST endpoints). Everything arrives, a second run changes nothing, a
// dry run writes nothing.
func TestMigrateBetweenNacosd(t *testing.T) {
	_, src := authNode(t)
	fill(src, true, false) // a nacosd never hands out password hashes: no users to copy
	_, dst := authNode(t)
	ctx := context.Background()
	opts := Options{From: src.base, FromUser: "nacos", FromPassword: "nacos", To: dst.base, ToUser: "nacos", ToPassword: "nacos"}

	dry := opts
	dry.DryRun = true
	sum, err := Run(ctx, dry)
	if err != nil {
		t.Fatal(err)
	}
	if c := sum.Counts(KindConfigs); c.Created != 5 || !sum.Changed() {
		t.Fatalf("dry run: configs %+v", c)
	}
	if body := dst.must("GET", "/v1/cs/configs", v("search", "blur", "dataId", "", "group", "", "tenant", "", "pageNo", "1", "pageSize", "10"), nil); !strings.Contains(body, `"totalCount":0`) {
		t.Fatalf("dry run wrote configs: %s", body)
	}

	sum, err = Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	sum.Print(&out)
	t.Log("\n" + out.String())
	for kind, want := range map[string]int{KindNamespaces: 2, KindConfigs: 5, KindBeta: 1, KindServices: 2, KindClusters: 2, KindInstances: 3} {
		if c := sum.Counts(kind); c.Created != want || c.Skipped != 0 {
			t.Errorf("%s: %+v, want %d created", kind, c, want)
		}
	}
	if sk := sum.Skips(); len(sk) != 1 || sk[0].Kind != KindUsers || !strings.Contains(sk[0].Reason, "hash") {
		t.Errorf("skips %+v, want user nacos (no hash from a nacosd source)", sk)
	}
	compare(t, src, dst, compareOptions{})

	again, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed() || len(again.Skips()) != 1 {
		var b strings.Builder
		again.Print(&b)
		t.Fatalf("second run changed something:\n%s", b.String())
	}
}
