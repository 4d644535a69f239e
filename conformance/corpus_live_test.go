package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
)

// TestCorpusLive sends the corpus to servers that are already running, for
// working on the corpus without the whole suite: NACOSD_CORPUS_NACOSD and
// NACOSD_CORPUS_JAVA are their HTTP ports on 127.0.0.1 (context path
// /nacos); NACOSD_CORPUS_ONLY, a comma list of request-name prefixes,
// limits the run (requests that set up state for later ones are then
// missing: start both servers fresh for a full run). Prints every request
// that fails or differs.
func TestCorpusLive(t *testing.T) {
	testtier.Require(t, testtier.Conformance)
	np, jp := os.Getenv("NACOSD_CORPUS_NACOSD"), os.Getenv("NACOSD_CORPUS_JAVA")
	if np == "" || jp == "" {
		t.Skip("set NACOSD_CORPUS_NACOSD and NACOSD_CORPUS_JAVA to the HTTP ports of running servers")
	}
	n, err1 := strconv.Atoi(np)
	j, err2 := strconv.Atoi(jp)
	if err1 != nil || err2 != nil {
		t.Fatal("ports must be numbers")
	}
	dir := "corpus"
	if d := os.Getenv("NACOSD_CORPUS_DIR"); d != "" {
		dir = d // corpus2 (the Open API v2) against Java 2.5.1
	}
	reqs, err := LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if only := os.Getenv("NACOSD_CORPUS_ONLY"); only != "" {
		var keep []CorpusRequest
		for _, r := range reqs {
			for _, p := range strings.Split(only, ",") {
				if strings.HasPrefix(r.Name, p) {
					keep = append(keep, r)
					break
				}
			}
		}
		reqs = keep
	}
	lists, err := LoadLists(filepath.Join("."))
	if err != nil {
		t.Fatal(err)
	}
	servers := []*Server{{Name: TargetNacosd, Port: n}, {Name: TargetReference, Port: j}}
	rs := NewResults()
	run := strconv.FormatInt(time.Now().UnixMilli()%1e9, 36)
	RunCorpus(reqs, servers, run, rs, lists)
	bad := 0
	for _, s := range rs.Scenarios() {
		v := rs.Judge(s, lists)
		if v == VerdictPass || v == VerdictJavaDefect {
			continue
		}
		bad++
		r, _ := rs.Get(s, TargetNacosd)
		ref, _ := rs.Get(s, TargetReference)
		fmt.Printf("%-16s %s\n    nacosd: %s\n    java:   %s\n", v, s, r.Detail, ref.Detail)
	}
	fmt.Printf("%d requests, %d not passing\n", len(reqs), bad)
}
