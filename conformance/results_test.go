package conformance

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestJudge(t *testing.T) {
	t.Parallel()
	l := Lists{Known: KnownFailures{"java/known": "cause", "corpus/cs.*": "config later"},
		JavaDefects: KnownFailures{"sdkgo/naming.*": "form body", "java/defect-known": "x"}}
	l.Known["java/defect-known"] = "y"
	tests := []struct {
		name     string
		nacosd   *bool
		ref      *bool
		scenario string
		want     Verdict
	}{
		{"pass both", ptr(true), ptr(true), "java/a", VerdictPass},
		{"pass without reference", ptr(true), nil, "java/a", VerdictPass},
		{"regression vs reference", ptr(false), ptr(true), "java/a", VerdictRegression},
		{"regression without reference", ptr(false), nil, "java/a", VerdictRegression},
		{"missing on nacosd", nil, ptr(true), "java/a", VerdictRegression},
		{"wrong scenario", ptr(false), ptr(false), "java/a", VerdictWrongScenario},
		{"known", ptr(false), ptr(true), "java/known", VerdictKnown},
		{"known by prefix", ptr(false), nil, "corpus/cs.get", VerdictKnown},
		{"fixed", ptr(true), nil, "java/known", VerdictFixed},
		{"java defect", ptr(true), ptr(false), "sdkgo/naming.register", VerdictJavaDefect},
		{"java defect without reference", ptr(true), nil, "sdkgo/naming.register", VerdictJavaDefect},
		{"stale java defect", ptr(true), ptr(true), "sdkgo/naming.register", VerdictStaleDefect},
		{"java defect failing on nacosd", ptr(false), ptr(false), "sdkgo/naming.register", VerdictRegression},
		{"java defect missing on nacosd", nil, ptr(false), "sdkgo/naming.register", VerdictRegression},
		{"java defect known on nacosd", ptr(false), ptr(false), "java/defect-known", VerdictKnown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := NewResults()
			if tt.nacosd != nil {
				rs.Add(Result{Scenario: tt.scenario, Target: TargetNacosd, OK: *tt.nacosd})
			}
			if tt.ref != nil {
				rs.Add(Result{Scenario: tt.scenario, Target: TargetReference, OK: *tt.ref})
			}
			if got := rs.Judge(tt.scenario, l); got != tt.want {
				t.Errorf("Judge = %s, want %s", got, tt.want)
			}
		})
	}
}

// TestJudgeCluster: the cluster column can only make a verdict worse.
func TestJudgeCluster(t *testing.T) {
	t.Parallel()
	l := Lists{Known: KnownFailures{"nacosd-cluster:java/slow": "cluster only"},
		JavaDefects: KnownFailures{"sdkgo/naming.*": "form body"}}
	tests := []struct {
		name                string
		nacosd, ref, clustr bool
		scenario            string
		want                Verdict
	}{
		{"all pass", true, true, true, "java/a", VerdictPass},
		{"fails on the cluster only", true, true, false, "java/a", VerdictRegression},
		{"cluster-only known failure", true, true, false, "java/slow", VerdictKnown},
		{"java defect passing on both", true, false, true, "sdkgo/naming.register", VerdictJavaDefect},
		{"java defect failing on the cluster", true, false, false, "sdkgo/naming.register", VerdictRegression},
		{"wrong scenario stays wrong", false, false, false, "java/a", VerdictWrongScenario},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := NewResults()
			rs.Add(Result{Scenario: tt.scenario, Target: TargetNacosd, OK: tt.nacosd})
			rs.Add(Result{Scenario: tt.scenario, Target: TargetReference, OK: tt.ref})
			rs.Add(Result{Scenario: tt.scenario, Target: TargetCluster, OK: tt.clustr})
			if got := rs.Judge(tt.scenario, l); got != tt.want {
				t.Errorf("Judge = %s, want %s", got, tt.want)
			}
		})
	}
}

func ptr(b bool) *bool { return &b }

func TestWriteTableReportsRegressions(t *testing.T) {
	t.Parallel()
	rs := NewResults()
	rs.Add(Result{Scenario: "java/ok", Target: TargetNacosd, OK: true, Ms: 12})
	rs.Add(Result{Scenario: "java/bad", Target: TargetNacosd, OK: false, Ms: -1, Detail: "a|b"})
	var buf bytes.Buffer
	rs.Add(Result{Scenario: "corpus/cs.get", Target: TargetNacosd, OK: true, Ms: 1})
	rs.Add(Result{Scenario: "corpus/cs.get", Target: TargetReference, OK: false, Ms: -1, Detail: "stale"})
	rs.Add(Result{Scenario: "sdkgo/naming.x", Target: TargetNacosd, OK: true, Ms: 1})
	rs.Add(Result{Scenario: "sdkgo/naming.x", Target: TargetReference, OK: true, Ms: 1})
	rep := rs.WriteTable(&buf, []string{TargetReference, TargetNacosd}, Lists{JavaDefects: KnownFailures{"sdkgo/*": "why"}})
	if len(rep.Regressions) != 1 || rep.Regressions[0] != "java/bad" {
		t.Fatalf("regressions %v", rep.Regressions)
	}
	if len(rep.Wrong) != 1 || rep.Wrong[0] != "corpus/cs.get" || len(rep.Stale) != 1 || rep.Stale[0] != "sdkgo/naming.x" {
		t.Fatalf("wrong %v stale %v", rep.Wrong, rep.Stale)
	}
	if rep.Scenarios != 4 || rep.Totals[VerdictPass] != 1 {
		t.Fatalf("totals %v of %d", rep.Totals, rep.Scenarios)
	}
	out := buf.String()
	for _, want := range []string{"| java/ok | n/a | pass 12 ms | pass |", `a\|b`, "REGRESSION", "### corpus cs", "### java",
		"| corpus cs | 1 | | | | 1 |", "| **all** | 4 | 1 |", "stale-java-defect | Java defect: why |", "on java-nacos: stale"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestLoadKnownFailures(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "kf.txt")
	os.WriteFile(p, []byte("# comment\n\njava/x   some reason here\ncorpus/*  all\n"), 0o644)
	kf, err := LoadKnownFailures(p)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := kf.Reason("java/x"); !ok || r != "some reason here" {
		t.Errorf("java/x: %q %v", r, ok)
	}
	if _, ok := kf.Reason("corpus/anything"); !ok {
		t.Error("prefix entry not matched")
	}
	if _, ok := kf.Reason("java/y"); ok {
		t.Error("java/y matched")
	}
	if _, err := LoadKnownFailures(filepath.Join(t.TempDir(), "none")); err != nil {
		t.Errorf("missing file: %v", err)
	}
}

func TestParseCorpusFile(t *testing.T) {
	t.Parallel()
	reqs, err := LoadCorpus("corpus")
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) < 250 { // issue 7: the corpus covers the whole surface
		t.Fatalf("only %d requests", len(reqs))
	}
	seen := map[string]bool{}
	for _, r := range reqs {
		if seen[r.Name] {
			t.Errorf("duplicate name %s", r.Name)
		}
		seen[r.Name] = true
		if r.Method == "" || !strings.HasPrefix(r.Target, "/nacos/") && !strings.HasPrefix(r.Name, "legacy.") {
			t.Errorf("%s: method %q target %q", r.Name, r.Method, r.Target)
		}
	}
	var nh CorpusRequest
	for _, r := range reqs {
		if r.Name == "cs.listener.nohangup" {
			nh = r
		}
	}
	if nh.Header.Get("Long-Pulling-Timeout-No-Hangup") != "true" || nh.ExpectBody == nil || *nh.ExpectBody != "" ||
		!strings.HasPrefix(nh.Body, "Listening-Configs=") {
		t.Errorf("cs.listener.nohangup parsed as %+v", nh)
	}
}

func TestNormalise(t *testing.T) {
	t.Parallel()
	in := `{"name":"DEFAULT_GROUP@@corpus.abc","lastRefTime":1796078608302,"checksum":"977d0ba637329f36192192f1cfb0ddc6","cpu":0.7,"t":"2026-11-30 22:39:42","timestamp":"2026-11-30T23:09:43.761+00:00","id":"12"}`
	want := `{"name":"DEFAULT_GROUP@@corpus.{run}","lastRefTime":<ms>,"checksum":"<hash>","cpu":<f>,"t":"<date>","timestamp":"<date>","id":<id>}`
	if got := Normalise(in, "abc"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// fakeServer serves body for every request on 127.0.0.1 and returns it as a
// Server the corpus runner can target.
func fakeServer(t *testing.T, name string, status int, body string) *Server {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return &Server{Name: name, Port: p}
}

func TestRunCorpusDifferential(t *testing.T) {
	t.Parallel()
	reqs, err := ParseCorpus(strings.NewReader("### a\n# expect 200\nGET /nacos/v1/ns/operator/metrics\n\n### b\nGET /nacos/x?run={run}\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		refBody   string
		nacosBody string
		nacosCode int
		wantOK    map[string]bool
	}{
		{"same after normalising", `{"lastRefTime":1796078608302,"n":"r1"}`, `{"lastRefTime":1796078699999,"n":"r1"}`, 200,
			map[string]bool{"corpus/a": true, "corpus/b": true}},
		{"body differs", `{"n":1}`, `{"n":2}`, 200, map[string]bool{"corpus/a": false, "corpus/b": false}},
		{"status differs from spec and reference", `{}`, `{}`, 404, map[string]bool{"corpus/a": false, "corpus/b": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := fakeServer(t, TargetReference, 200, tt.refBody)
			n := fakeServer(t, TargetNacosd, tt.nacosCode, tt.nacosBody)
			rs := NewResults()
			RunCorpus(reqs, []*Server{n, ref}, "r1", rs, Lists{})
			for sc, want := range tt.wantOK {
				r, ok := rs.Get(sc, TargetNacosd)
				if !ok || r.OK != want {
					t.Errorf("%s: ok=%v (present %v), want %v; detail %s", sc, r.OK, ok, want, r.Detail)
				}
				if rr, _ := rs.Get(sc, TargetReference); !rr.OK {
					t.Errorf("%s: reference failed: %s", sc, rr.Detail)
				}
			}
		})
	}
}

func TestSameJSONKeys(t *testing.T) {
	if !sameJSON(`{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, false) || sameJSON(`{"b":[1,2]}`, `{"b":[2,1]}`, false) {
		t.Fatal("keys mode: key order ignored, array order kept")
	}
}

func TestSameUnordered(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"a":1,"b":[1,2]}`, `{"b":[2,1],"a":1}`, true},
		{`{"w":1.0}`, `{"w":1}`, false},
		{`[{"x":1},{"y":2}]`, `[{"y":2},{"x":1}]`, true},
		{`[1,1,2]`, `[1,2,2]`, false},
		{`{"a":1}`, `{"a":1,"b":null}`, false},
		{`not json`, `not json`, false},
		{`{"t":<ms>,"a":[<n>,2]}`, `{"a":[2,<n>],"t":<ms>}`, true},
	} {
		if got := sameJSON(c.a, c.b, true); got != c.want {
			t.Errorf("sameJSON(%s, %s, true) = %v", c.a, c.b, got)
		}
	}
}

func TestReasonPatterns(t *testing.T) {
	kf := KnownFailures{"java*/config.x": "a", "sdkgo/naming.*": "b"}
	for s, want := range map[string]bool{"java/config.x": true, "java-1.1.4/config.x": true, "java/config.y": false,
		"sdkgo/naming.push.add": true, "npm/config.x": false} {
		if _, ok := kf.Reason(s); ok != want {
			t.Errorf("%s: %v", s, ok)
		}
	}
}
