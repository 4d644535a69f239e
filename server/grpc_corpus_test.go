package server_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/server/servertest"
)

// grpcJavaDefects are corpus cases where nacosd answers differently from
// Java 2.5.1 on purpose (conformance/java-defects.txt says why).
var grpcJavaDefects = map[string]bool{
	// ConfigRemoveRequest with a plain tag: Java looks for a gray version
	// named like the tag, finds none and answers a NullPointerException;
	// nacosd removes the tag variant the client named.
	"config.remove.tag": true,
}

// TestGRPCCorpusGolden sends the gRPC corpus (conformance/grpccorpus) to a
// real nacosd over a real gRPC connection and compares each answer with
// Java Nacos 2.5.1's, captured from the reference server
// (compat/testdata/remote/java-2.5.1-corpus.txt).
func TestGRPCCorpusGolden(t *testing.T) {
	golden := map[string]string{}
	f, err := os.Open(filepath.Join("..", "compat", "testdata", "remote", "java-2.5.1-corpus.txt"))
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
	cases, err := remoteclient.LoadCorpus(filepath.Join("..", "conformance", "grpccorpus"))
	if err != nil {
		t.Fatal(err)
	}
	n := servertest.Start(t, servertest.Config(t))
	ctx := context.Background()
	tg := &remoteclient.Target{Addr: n.GRPCAddr()}
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
		got := strings.ReplaceAll(tg.Send(ctx, c, run).Normalized(nil), run, "{run}")
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
	if seen < 50 {
		t.Fatalf("only %d cases compared", seen)
	}
}
