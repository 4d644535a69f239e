package conformance

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/internal/testtier"
)

// TestGRPCCorpusLive sends the gRPC corpus to servers already running:
// NACOSD_GRPC_NACOSD and NACOSD_GRPC_JAVA are their gRPC addresses (HTTP
// port + 1000); either may be missing (then the other's answers are only
// printed; with NACOSD_GRPC_GOLDEN set, the reference's answers are
// written there: compat/testdata/remote/java-2.5.1-corpus.txt). Prints
// every case whose answers differ.
func TestGRPCCorpusLive(t *testing.T) {
	testtier.Require(t, testtier.Conformance)
	na, ja := os.Getenv("NACOSD_GRPC_NACOSD"), os.Getenv("NACOSD_GRPC_JAVA")
	if na == "" && ja == "" {
		t.Skip("set NACOSD_GRPC_NACOSD and/or NACOSD_GRPC_JAVA to gRPC addresses of running servers")
	}
	dir := "grpccorpus"
	if d := os.Getenv("NACOSD_GRPC_CORPUS"); d != "" {
		dir = d // grpccorpus/auth against servers with auth on
	}
	cases, err := remoteclient.LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	run := strconv.FormatInt(time.Now().UnixMilli()%1e9, 36)
	var targets []*remoteclient.Target
	for i, a := range []string{na, ja} {
		if a == "" {
			targets = append(targets, nil)
			continue
		}
		tg := &remoteclient.Target{Addr: a, Vars: map[string]string{}, Reference: i == 1}
		// NACOSD_GRPC_VARS_NACOSD / _JAVA: "name=value,..." (tokens)
		for _, kv := range strings.Split(os.Getenv([]string{"NACOSD_GRPC_VARS_NACOSD", "NACOSD_GRPC_VARS_JAVA"}[i]), ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				tg.Vars[k] = v
			}
		}
		if err := tg.Open(ctx); err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		targets = append(targets, tg)
	}
	var golden []string
	for _, c := range cases {
		var ans [2]remoteclient.Answer
		for i, tg := range targets {
			if tg != nil {
				ans[i] = tg.Send(ctx, c, run)
			}
		}
		if targets[0] != nil && targets[1] != nil && c.Poll > 0 {
			deadline := time.Now().Add(c.Poll)
			for ans[0].Normalized(c.Compare) != ans[1].Normalized(c.Compare) && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				ans[1] = targets[1].Send(ctx, c, run)
			}
		}
		if (targets[0] == nil) != (targets[1] == nil) && c.Poll > 0 {
			i := 0
			if targets[0] == nil {
				i = 1
			}
			deadline := time.Now().Add(c.Poll)
			for !c.Settled(ans[i]) && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				ans[i] = targets[i].Send(ctx, c, run)
			}
		}
		switch {
		case targets[0] == nil:
			t.Logf("%s\n  java:   %s", c.Name, ans[1].Normalized(nil))
			golden = append(golden, c.Name+"\t"+strings.ReplaceAll(ans[1].Normalized(nil), run, "{run}"))
		case targets[1] == nil:
			t.Logf("%s\n  nacosd: %s", c.Name, ans[0].Normalized(nil))
		case ans[0].Normalized(c.Compare) != ans[1].Normalized(c.Compare):
			t.Errorf("%s differs\n  nacosd: %s\n  java:   %s", c.Name, ans[0].Normalized(c.Compare), ans[1].Normalized(c.Compare))
		}
	}
	if out := os.Getenv("NACOSD_GRPC_GOLDEN"); out != "" && len(golden) > 0 {
		// the reference's answers, for the in-process differential test
		// (server/grpc_corpus_test.go)
		if err := os.WriteFile(out, []byte(strings.Join(golden, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
