package conformance

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
)

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// workDir keeps logs for inspection: $NACOSD_CONFORMANCE_WORK or a temp dir.
func workDir(t *testing.T) string {
	if d := os.Getenv("NACOSD_CONFORMANCE_WORK"); d != "" {
		d, _ = filepath.Abs(d)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestConformance is the whole suite. It runs only in the conformance tier
// (-tags conformance; it builds nacosd and the Java programs and takes minutes); see
// docs/conformance.md. Optional: NACOS_REFERENCE_HOME (an unpacked Java
// Nacos 1.4.8 distribution, adds the java-nacos target), NACOSD_CONFORMANCE_ONLY
// (comma list of runners: java, restart, sdkgo, npm, sca, dubbo, corpus, auth), NACOSD_CONFORMANCE_OUT
// (file that receives the Markdown table), NACOSD_CONFORMANCE_SELF_REFERENCE=1
// (a second nacosd plays the reference: checks the harness itself), NACOSD_CONFORMANCE_MODE (auto,
// containers or processes; auto uses containers when a Docker engine answers
// and the JRE base image exists).
func TestConformance(t *testing.T) {
	testtier.Require(t, testtier.Conformance) // docs/conformance.md
	logger := testLogger(t)
	work := workDir(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	lists, err := LoadLists(filepath.Join(root, "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	enabled := func(runner string) bool {
		only := os.Getenv("NACOSD_CONFORMANCE_ONLY")
		return only == "" || strings.Contains(","+only+",", ","+runner+",")
	}

	bin := filepath.Join(work, "nacosd")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./server/cmd/nacosd")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build nacosd: %v\n%s", err, out)
	}
	var javas []*JavaClient
	versions := JavaClientVersions
	if !enabled("java") && !enabled("restart") {
		versions = versions[:1] // the auth runner's clients only
	}
	if enabled("java") || enabled("restart") || AuthClientEnabled(enabled, "java") {
		for _, v := range versions {
			j := &JavaClient{Dir: filepath.Join(root, "javatest", "client"), WorkDir: work, Logger: logger, Version: v}
			if err := j.Build(ctx); err != nil {
				t.Fatal(err)
			}
			javas = append(javas, j)
		}
	}

	run := strconv.FormatInt(time.Now().UnixMilli()%1e9, 36)
	var scas []*SpringCloud
	if enabled("sca") || AuthClientEnabled(enabled, "sca") {
		scas = []*SpringCloud{
			{Dir: filepath.Join(root, "javatest", "spring-cloud"), Prefix: "sca", ConfigVia: "spring.config.import", WorkDir: work, RunID: run},
			{Dir: filepath.Join(root, "javatest", "spring-cloud-2.2"), Prefix: "sca-2.2.5", ConfigVia: "bootstrap.properties", WorkDir: work, RunID: run},
		}
		if !enabled("sca") {
			scas = scas[:1]
		}
		for _, a := range scas {
			if err := a.Build(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	var dubbo *Dubbo
	if enabled("dubbo") || AuthClientEnabled(enabled, "dubbo") {
		dubbo = &Dubbo{Dir: filepath.Join(root, "javatest", "dubbo"), WorkDir: work, RunID: run}
		if err := dubbo.Build(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var npm *NPMClient
	if enabled("npm") || AuthClientEnabled(enabled, "npm") {
		npm = &NPMClient{Dir: filepath.Join(root, "conformance", "npm"), WorkDir: work}
		if err := npm.Install(ctx); err != nil {
			t.Fatal(err)
		}
	}

	servers := []*Server{NewNacosd(bin, filepath.Join(work, "nacosd-data"), filepath.Join(work, "nacosd.log"), logger)}
	if home := os.Getenv("NACOS_REFERENCE_HOME"); home != "" {
		servers = append(servers, NewReference(filepath.Join(root, "javatest", "reference", "run.sh"), home,
			filepath.Join(work, "reference"), filepath.Join(work, "reference.log"), logger))
	} else if os.Getenv("NACOSD_CONFORMANCE_SELF_REFERENCE") == "1" {
		// Harness check: a second nacosd stands in for the reference, so the
		// two-target path and the corpus normalisation get exercised.
		ref := NewNacosd(bin, filepath.Join(work, "selfref-data"), filepath.Join(work, "selfref.log"), logger)
		ref.Name = TargetReference
		servers = append(servers, ref)
		t.Log("NACOSD_CONFORMANCE_SELF_REFERENCE=1: the java-nacos column is a second nacosd")
	} else if os.Getenv("NACOSD_CONFORMANCE_REQUIRE_REFERENCE") == "1" {
		t.Fatal("NACOSD_CONFORMANCE_REQUIRE_REFERENCE=1 but NACOS_REFERENCE_HOME is not set (conformance/reference.sh prints it)")
	} else {
		t.Log("NACOS_REFERENCE_HOME not set: no Java Nacos reference; scenario assertions are the referee")
	}
	mode := containerMode(t, ctx, root, bin, work, javas, scas, dubbo, servers)
	for _, s := range servers {
		if !MainRunnersEnabled(enabled) {
			break // the auth runner starts servers of its own
		}
		if err := s.Start(ctx, 4*time.Minute); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Stop() })
	}

	rs := NewResults()
	// The corpus first, on fresh servers: counts and lists in its answers
	// (metrics, namespaces, service names) then depend on the corpus alone.
	if enabled("corpus") {
		reqs, err := LoadCorpus(filepath.Join(root, "conformance", "corpus"))
		if err != nil {
			t.Fatal(err)
		}
		RunCorpus(reqs, servers, run, rs, lists)
	}
	// Every client runner against one target: the single servers get every
	// client version, the cluster the first Java client and Spring Cloud app.
	runClients := func(s *Server, javas []*JavaClient, scas []*SpringCloud) {
		// the slow Java scenarios (beat timeouts) of every client version
		// run beside everything else: they mostly wait
		var slow sync.WaitGroup
		if enabled("java") {
			for _, j := range javas {
				slow.Add(1)
				go func() {
					defer slow.Done()
					if err := j.RunSlow(ctx, s, rs); err != nil {
						t.Errorf("slow java %s scenarios on %s: %v", j.Version, s.Name, err)
					}
				}()
			}
		}
		defer slow.Wait()
		if enabled("sdkgo") {
			(&SDKGo{WorkDir: work, RunID: run}).Run(s, rs)
		}
		if npm != nil && enabled("npm") {
			if err := npm.Run(ctx, s, rs); err != nil {
				t.Errorf("npm scenarios on %s: %v", s.Name, err)
			}
		}
		if enabled("java") {
			// two client versions at a time: they mostly wait on the
			// server and on the JDK's HTTP client
			lane := make(chan struct{}, 2)
			var versions sync.WaitGroup
			for _, j := range javas {
				versions.Add(1)
				lane <- struct{}{}
				go func() {
					defer func() { <-lane; versions.Done() }()
					if err := j.Run(ctx, s, rs); err != nil {
						t.Errorf("java %s scenarios on %s: %v", j.Version, s.Name, err)
					}
				}()
			}
			versions.Wait()
		}
		for _, a := range scas {
			if !enabled("sca") {
				break
			}
			a.Run(ctx, s, rs)
		}
		if dubbo != nil && enabled("dubbo") {
			dubbo.Run(ctx, s, rs)
		}
	}
	var cluster *Server
	if MainRunnersEnabled(enabled) && os.Getenv("NACOSD_CONFORMANCE_CLUSTER") != "0" {
		cluster = NewNacosdCluster(bin, filepath.Join(work, "cluster"), ClusterSize, logger)
		t.Cleanup(func() { cluster.Stop() }) // also the members that started when another did not
		if err := cluster.Start(ctx, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() { defer wg.Done(); runClients(s, javas, scas) }()
	}
	if cluster != nil {
		wg.Add(1)
		go func() { defer wg.Done(); runClients(cluster, javas[:min(1, len(javas))], scas[:min(1, len(scas))]) }()
	}
	wg.Wait()
	// The auth runner (auth*.go) on servers of its own, while the restarts run.
	authDone := make(chan struct{})
	go func() {
		defer close(authDone)
		if !enabled("auth") {
			return
		}
		env := AuthEnv{Root: root, Bin: bin, Work: work, RunID: run, RefHome: os.Getenv("NACOS_REFERENCE_HOME"),
			SelfReference: os.Getenv("NACOSD_CONFORMANCE_SELF_REFERENCE") == "1", Containers: servers[0].ctr != nil,
			JREBase: os.Getenv("NACOSD_JRE_BASE_IMAGE"), Logger: logger, Enabled: enabled, Java: first(javas), SCA: first(scas), Dubbo: dubbo, NPM: npm}
		if err := RunAuth(ctx, env, rs); err != nil {
			t.Errorf("auth runner: %v", err)
		}
	}()
	// Restarts last: they lose every ephemeral instance.
	if len(javas) > 0 && enabled("restart") {
		for _, s := range servers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				RunRestart(ctx, s, rs, javas)
			}()
		}
		wg.Wait()
	}
	<-authDone

	targets := []string{TargetReference, TargetNacosd}
	if cluster != nil {
		targets = append(targets, TargetCluster)
		servers = append(servers, cluster)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "- mode: %s\n", mode)
	for _, s := range servers {
		fmt.Fprintf(&buf, "- %s: started in %s, RSS %d KiB after the suite\n", s.Name, s.StartTime.Round(time.Millisecond), s.RSSKiB())
	}
	buf.WriteString("\n")
	rep := rs.WriteTable(&buf, targets, lists)
	fmt.Println(buf.String()) // the table is the product: print it even when the test passes
	if out := os.Getenv("NACOSD_CONFORMANCE_OUT"); out != "" {
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Logf("logs and data in %s", work)
	fmt.Printf("conformance: %d scenarios; %d pass, %d java-defect, %d REGRESSION, %d wrong-scenario, %d known, %d fixed, %d stale-java-defect\n",
		rep.Scenarios, rep.Totals[VerdictPass], rep.Totals[VerdictJavaDefect], rep.Totals[VerdictRegression], rep.Totals[VerdictWrongScenario],
		rep.Totals[VerdictKnown], rep.Totals[VerdictFixed], rep.Totals[VerdictStaleDefect])
	for _, s := range rep.Wrong {
		res, _ := rs.Get(s, TargetReference)
		t.Logf("wrong scenario (fails on java-nacos; fix the scenario or list it in java-defects.txt with its cause): %s: %s", s, res.Detail)
	}
	for _, s := range rep.Stale {
		t.Logf("STALE java-defects.txt entry (passes on java-nacos this run; remove it): %s", s)
	}
	for _, r := range rep.Regressions {
		res, _ := rs.Get(r, TargetNacosd)
		if c, ok := rs.Get(r, TargetCluster); ok && !c.OK {
			res.Detail = "on the cluster: " + c.Detail
		}
		t.Errorf("regression: %s on nacosd: %s", r, res.Detail)
	}
}

// containerMode switches servers and the Java client to containers when the
// mode allows it and Docker is usable, and returns the mode used.
func containerMode(t *testing.T, ctx context.Context, root, bin, work string, javas []*JavaClient, scas []*SpringCloud, dubbo *Dubbo, servers []*Server) string {
	mode := os.Getenv("NACOSD_CONFORMANCE_MODE")
	if mode == "" {
		mode = "auto"
	}
	jreBase := os.Getenv("NACOSD_JRE_BASE_IMAGE")
	if jreBase == "" {
		jreBase = DefaultJREBase
	}
	if mode == "processes" {
		return "processes"
	}
	if !DockerAvailable(ctx, jreBase) {
		if mode == "containers" {
			t.Fatalf("NACOSD_CONFORMANCE_MODE=containers but no Docker engine answers or image %s is missing (docker/build-jre-base.sh)", jreBase)
		}
		t.Log("no Docker engine or JRE base image: running targets and clients as plain processes")
		return "processes (no Docker engine)"
	}
	t.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true") // the reaper image cannot be pulled here
	if err := BuildNacosdImage(ctx, root, bin, work); err != nil {
		t.Fatal(err)
	}
	for _, j := range javas {
		if err := BuildJavaClientImage(ctx, root, jreBase, work, j); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range scas {
		tag := ImageSpringCloud + "-" + a.prefix()
		if err := BuildJavaImage(ctx, root, jreBase, work, tag, a.Dir, a.Classpath()); err != nil {
			t.Fatal(err)
		}
		a.Image = tag
	}
	if dubbo != nil {
		if err := BuildJavaImage(ctx, root, jreBase, work, ImageDubbo, dubbo.Dir, dubbo.Classpath()); err != nil {
			t.Fatal(err)
		}
		dubbo.Image = ImageDubbo
	}
	for _, s := range servers {
		switch s.Name {
		case TargetNacosd:
			data := filepath.Join(work, "nacosd-data")
			if err := os.MkdirAll(data, 0o755); err != nil {
				t.Fatal(err)
			}
			s.Containerise(ImageNacosd, NacosdContainerCmd, []string{data + ":" + NacosdContainerData}, NacosdContainerEnv())
		case TargetReference:
			home := os.Getenv("NACOS_REFERENCE_HOME")
			if home == "" { // self-reference: a second nacosd
				data := filepath.Join(work, "selfref-data")
				if err := os.MkdirAll(data, 0o755); err != nil {
					t.Fatal(err)
				}
				s.Containerise(ImageNacosd, NacosdContainerCmd, []string{data + ":" + NacosdContainerData}, NacosdContainerEnv())
				continue
			}
			ref := filepath.Join(root, "javatest", "reference")
			rw := filepath.Join(work, "reference")
			if err := os.MkdirAll(rw, 0o755); err != nil {
				t.Fatal(err)
			}
			s.Containerise(jreBase, func(port int) []string {
				return []string{"bash", filepath.Join(ref, "run.sh"), strconv.Itoa(port)}
			}, []string{home + ":" + home + ":ro", ref + ":" + ref + ":ro", rw + ":" + rw},
				map[string]string{"NACOS_REFERENCE_HOME": home, "NACOS_REFERENCE_WORK": rw})
		}
	}
	return "containers (testcontainers-go, host network)"
}

// first is the list's first element (nil when empty): the Java client and
// Spring Cloud application the auth runner uses.
func first[T any](l []*T) *T {
	if len(l) == 0 {
		return nil
	}
	return l[0]
}
