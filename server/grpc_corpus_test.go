package server_test

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

// grpcJavaDefects are corpus cases where nacosd answers differently from
// Java 2.5.1 on purpose (conformance/java-defects.txt says why).
var grpcJavaDefects = map[string]bool{
	// ConfigRemoveRequest with a plain tag: Java looks for a gray version
	// named like the tag, finds none and answers a NullPointerException;
	// nacosd removes the tag variant the client named.
	"config.remove.tag": true,
	// PersistentInstanceRequest with a cluster name Java 2.x allows and
	// 1.x does not (a_b): persistent instances are shared with 1.x
	// clients and Java 1.4.8 members, so nacosd keeps the 1.x rule and
	// refuses it; Java 2.5.1 registers it.
	"naming.persistent.badcluster": true,
}

// TestGRPCCorpusGolden sends the gRPC corpus (conformance/grpccorpus) to a
// real nacosd over a real gRPC connection and compares each answer with
// Java Nacos 2.5.1's, captured from the reference server
// (compat/testdata/remote/java-2.5.1-corpus.txt).
func TestGRPCCorpusGolden(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	runGolden(t, n, "grpccorpus", "java-2.5.1-corpus.txt", nil)
}

// TestGRPCAuthCorpusGolden is the auth corpus (conformance/grpccorpus/auth)
// against a node with auth on and the users the corpus expects.
func TestGRPCAuthCorpusGolden(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.Auth = server.AuthConfig{Enabled: true, SecretKey: clusterSecret, TokenExpire: time.Hour, Caching: true,
		ServerIdentityKey: clusterIdentKey, ServerIdentityValue: clusterIdentVal}
	n := servertest.Start(t, cfg)
	var admin string
	servertest.Eventually(t, 10*time.Second, func() error {
		var err error
		admin, err = clusterLogin(t, n, "nacos", "nacos")
		return err
	})
	for _, step := range []struct{ path, form string }{
		{"/nacos/v1/auth/users", "username=reader&password=reader1"},
		{"/nacos/v1/auth/roles", "role=readers&username=reader"},
		{"/nacos/v1/auth/permissions", "role=readers&resource=:G:*&action=r"},
	} {
		form, _ := url.ParseQuery(step.form)
		if r := n.Do("POST", step.path, url.Values{"accessToken": {admin}}, form, nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", step.path, r.Status, r.Body)
		}
	}
	reader, err := clusterLogin(t, n, "reader", "reader1")
	if err != nil {
		t.Fatal(err)
	}
	runGolden(t, n, filepath.Join("grpccorpus", "auth"), "java-2.5.1-auth-corpus.txt", map[string]string{"admin": admin, "reader": reader})
}

func runGolden(t *testing.T, n *servertest.Node, corpus, goldenFile string, vars map[string]string) {
	t.Helper()
	golden := map[string]string{}
	f, err := os.Open(filepath.Join("..", "compat", "testdata", "remote", goldenFile))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		name, ans, _ := strings.Cut(sc.Text(), "\t")
		golden[name] = ans
	}
	f.Close()
	cases, err := remoteclient.LoadCorpus(filepath.Join("..", "conformance", corpus))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tg := &remoteclient.Target{Addr: n.GRPCAddr(), Vars: vars}
	if err := tg.Open(ctx); err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	run := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	seen := 0
	for _, c := range cases {
		want, ok := golden[c.Name]
		if !ok {
			t.Errorf("%s: no answer of the reference in the golden file", c.Name)
			continue
		}
		seen++
		got := strings.ReplaceAll(tg.Send(ctx, c, run).Normalized(c.Compare), run, "{run}")
		// the golden line is the whole answer, normalised as when it was
		// captured: normalised again as today (Normalized is idempotent)
		typ, body, _ := strings.Cut(want, " ")
		want = remoteclient.Answer{Type: typ, Body: body}.Normalized(c.Compare)
		if grpcJavaDefects[c.Name] {
			if got == want {
				t.Errorf("%s: listed as a Java defect but answered as Java does: %s", c.Name, got)
			}
			continue
		}
		if got != want {
			t.Errorf("%s:\n  nacosd: %s\n  java:   %s", c.Name, got, want)
		}
	}
	if seen < len(golden)*9/10 || seen < 10 {
		t.Fatalf("only %d cases compared", seen)
	}
}
