package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/remoteclient"
	"github.com/nacosd/nacosd/internal/testtier"
)

// TestConformance2 is the 2.x axis of the suite (Nacos 2.x clients over
// gRPC), refereed by Java Nacos 2.5.1. It runs only in the conformance
// tier (-tags conformance) with NACOS_REFERENCE2_HOME (conformance/reference2.sh
// prints it; NACOSD_CONFORMANCE_SELF_REFERENCE=1 puts a second nacosd in its
// place) on nacosd, a 3-node nacosd cluster and the reference: the gRPC
// corpus (conformance/grpccorpus; not on the cluster), the javatest/client2
// scenarios of every nacos-client 2.x version (naming, config, a 1.4.8
// client beside it), Spring Cloud Alibaba 2021.0.6.1 and 2023.0.1.2 apps,
// Dubbo 3.2, nacos-sdk-go v2 and nacos-sdk-python 2.x and 3.x, then the server loss
// (a restart, or on the cluster the SIGKILL of the member a client is
// connected to), then with auth on the auth corpus and the clients' auth
// scenarios. NACOSD_CONFORMANCE_ONLY (a comma list of the runners
// grpc-corpus, corpus2, java2, loss2, sca2, dubbo3, sdkgo2, python2, python3, auth2) picks
// runners; NACOSD_CONFORMANCE_CLUSTER=0 leaves out the cluster;
// NACOSD_CONFORMANCE_OUT2 receives the table. Processes only (no
// containers).
func TestConformance2(t *testing.T) {
	testtier.Require(t, testtier.Conformance) // the 2.x axis (docs/conformance.md)
	began := time.Now()
	logger := testLogger(t)
	work := filepath.Join(workDir(t), "v2")
	os.RemoveAll(work) // fresh data: the cluster's raft configuration names its ports
	os.MkdirAll(work, 0o755)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	lists, err := LoadLists(filepath.Join(root, "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	enabled := func(runner string) bool {
		only := os.Getenv("NACOSD_CONFORMANCE_ONLY")
		return only == "" || strings.Contains(","+only+",", ","+runner+",")
	}
	ctx := context.Background()
	bin := filepath.Join(work, "nacosd")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./server/cmd/nacosd")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build nacosd: %v\n%s", err, out)
	}
	run := strconv.FormatInt(time.Now().UnixMilli()%1e9, 36)
	kits := buildKits2(t, ctx, root, work, run, logger, enabled)

	refHome := os.Getenv("NACOS_REFERENCE2_HOME")
	selfRef := os.Getenv("NACOSD_CONFORMANCE_SELF_REFERENCE") == "1"
	if refHome == "" && !selfRef {
		t.Fatal("NACOS_REFERENCE2_HOME is not set (conformance/reference2.sh prints it)")
	}
	script := filepath.Join(root, "javatest", "reference", "run.sh")
	reference := func(name string, props []string) *Server {
		if selfRef {
			s := NewNacosd(bin, filepath.Join(work, name+"-data"), filepath.Join(work, name+".log"), logger)
			s.Name = TargetReference
			base := s.argv
			s.argv = func(port int) []string { return append(base(port), props...) }
			return s
		}
		w := filepath.Join(work, name)
		os.MkdirAll(w, 0o755)
		s := NewReference(script, refHome, w, filepath.Join(work, name+".log"), logger)
		s.env = append(s.env, "NACOS_REFERENCE_JAVA_OPTS="+strings.Join(props, " "))
		return s
	}
	nacosd := func(name string, props []string) *Server {
		s := NewNacosd(bin, filepath.Join(work, name+"-data"), filepath.Join(work, name+".log"), logger)
		base := s.argv
		// a home of its own: logs/ (audit, access) would land in the working directory
		home := filepath.Join(work, name+"-home")
		s.argv = func(port int) []string { return append(append(base(port), "-home", home), props...) }
		return s
	}
	servers := []*Server{nacosd("nacosd", nil), reference("reference", nil)}
	all := append([]*Server{}, servers...)
	if os.Getenv("NACOSD_CONFORMANCE_CLUSTER") != "0" {
		all = append(all, NewNacosdCluster(bin, filepath.Join(work, "cluster"), ClusterSize, logger))
	}
	for _, s := range all {
		t.Cleanup(func() { s.Stop() })
	}
	// the servers with auth on start now, beside the others (a Java Nacos
	// start takes most of a minute); their phase runs with the server loss
	var authServers []*Server
	authUp := make(chan error, 1)
	if enabled("auth2") {
		props := authProps2()
		authServers = []*Server{nacosd("auth-nacosd", props), reference("auth-reference", props)}
		for _, s := range authServers {
			t.Cleanup(func() { s.Stop() })
		}
		go func() { authUp <- startEach(ctx, authServers) }()
	}
	startAll(t, ctx, all)

	rs := NewResults()
	if enabled("grpc-corpus") {
		cases, err := remoteclient.LoadCorpus(filepath.Join(root, "conformance", "grpccorpus"))
		if err != nil {
			t.Fatal(err)
		}
		RunGRPCCorpus(ctx, cases, servers, nil, run, rs, lists)
	}
	if enabled("corpus2") {
		// the Open API v2 (HTTP), refereed by 2.5.1 as the 1.x corpus by 1.4.8
		reqs2, err := LoadCorpus(filepath.Join(root, "conformance", "corpus2"))
		if err != nil {
			t.Fatal(err)
		}
		RunCorpus(reqs2, servers, run, rs, lists)
	}
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); kits.run(t, ctx, s, rs) }()
	}
	wg.Wait()
	// the server loss last (it restarts the single servers), beside the
	// auth phase on servers of its own
	if kits.javas != nil && enabled("loss2") {
		for _, s := range all {
			wg.Add(1)
			go func() { defer wg.Done(); RunServerLoss(ctx, s, rs, kits.javas) }()
		}
	}
	if enabled("auth2") {
		if err := <-authUp; err != nil {
			t.Fatal(err)
		}
		runAuth2(t, ctx, root, run, kits, rs, lists, authServers)
	}
	wg.Wait()
	for _, s := range append(all, authServers...) {
		s.Stop()
	}

	var buf bytes.Buffer
	fmt.Fprintf(&buf, "- 2.x axis (gRPC), referee: %s; %s in all\n", map[bool]string{true: "a second nacosd (self-reference)", false: "Java Nacos 2.5.1"}[selfRef],
		time.Since(began).Round(time.Second))
	for _, s := range all {
		fmt.Fprintf(&buf, "- %s: started in %s\n", s.Name, s.StartTime.Round(time.Millisecond))
	}
	buf.WriteString("\n")
	rep := rs.WriteTable(&buf, []string{TargetReference, TargetNacosd, TargetCluster}, lists)
	fmt.Println(buf.String())
	if out := os.Getenv("NACOSD_CONFORMANCE_OUT2"); out != "" {
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
	fmt.Printf("conformance 2.x: %d scenarios; %d pass, %d java-defect, %d REGRESSION, %d wrong-scenario, %d known, %d fixed, %d stale-java-defect (%s)\n",
		rep.Scenarios, rep.Totals[VerdictPass], rep.Totals[VerdictJavaDefect], rep.Totals[VerdictRegression], rep.Totals[VerdictWrongScenario],
		rep.Totals[VerdictKnown], rep.Totals[VerdictFixed], rep.Totals[VerdictStaleDefect], time.Since(began).Round(time.Second))
	for _, s := range rep.Wrong {
		res, _ := rs.Get(s, TargetReference)
		t.Logf("wrong scenario (fails on java-nacos 2.5.1): %s: %s", s, res.Detail)
	}
	for _, s := range rep.Stale {
		t.Logf("STALE java-defects.txt entry (passes on java-nacos 2.5.1 this run; remove it): %s", s)
	}
	for _, r := range rep.Regressions {
		res, _ := rs.Get(r, TargetNacosd)
		if c, ok := rs.Get(r, TargetCluster); ok && !c.OK {
			res.Detail = "on the cluster: " + c.Detail
		}
		t.Errorf("regression: %s on nacosd: %s", r, res.Detail)
	}
}

// kits2 are the built client kits of the 2.x axis (nil: not enabled).
type kits2 struct {
	javas   []*JavaClient2
	scas    []*SpringCloud
	dubbo   *Dubbo
	pythons []*PythonClient
	sdkgo   bool
	work    string
	runID   string
	enabled func(string) bool
}

// buildKits2 builds the enabled kits: javatest/client2 per nacos-client
// version (and javatest/client at 1.4.8 for the mixed scenarios), the two
// Spring Cloud Alibaba apps, Dubbo 3; the Python virtualenv must exist
// (conformance/ci.sh makes it).
func buildKits2(t *testing.T, ctx context.Context, root, work, run string, logger *slog.Logger, enabled func(string) bool) *kits2 {
	k := &kits2{work: work, runID: run, enabled: enabled, sdkgo: enabled("sdkgo2") || enabled("auth2")}
	if enabled("java2") || enabled("loss2") || enabled("auth2") {
		v1 := &JavaClient{Dir: filepath.Join(root, "javatest", "client"), WorkDir: work, Logger: logger, Version: "1.4.8"}
		if err := v1.Build(ctx); err != nil {
			t.Fatal(err)
		}
		for _, v := range JavaClient2Versions {
			j := &JavaClient2{Dir: filepath.Join(root, "javatest", "client2"), WorkDir: work, Logger: logger, Version: v, V1Classpath: v1.cp}
			if err := j.Build(ctx); err != nil {
				t.Fatal(err)
			}
			k.javas = append(k.javas, j)
		}
	}
	if enabled("sca2") {
		k.scas = []*SpringCloud{
			{Dir: filepath.Join(root, "javatest", "spring-cloud-2021"), Prefix: "sca-2021.0.6.1", ConfigVia: "spring.config.import", WorkDir: work, RunID: run},
			{Dir: filepath.Join(root, "javatest", "spring-cloud-2023"), Prefix: "sca-2023.0.1.2", ConfigVia: "spring.config.import", WorkDir: work, RunID: run},
		}
		for _, a := range k.scas {
			if err := a.Build(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if enabled("dubbo3") {
		k.dubbo = &Dubbo{Dir: filepath.Join(root, "javatest", "dubbo3"), Prefix: "dubbo3", Package: "nacosd.dubbo3", Mapping: true, WorkDir: work, RunID: run}
		if err := k.dubbo.Build(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []*PythonClient{
		{Dir: filepath.Join(root, "conformance", "python"), Venv: ".venv", Prefix: "python2", WorkDir: work},
		{Dir: filepath.Join(root, "conformance", "python"), Venv: ".venv3", Prefix: "python3", WorkDir: work},
	} {
		if !enabled(p.Prefix) && !enabled("auth2") {
			continue
		}
		if err := p.Available(); err != nil {
			if enabled(p.Prefix) && os.Getenv("NACOSD_CONFORMANCE_ONLY") != "" {
				t.Fatal(err) // asked for by name
			}
			t.Logf("WARNING: %s skipped: %v", p.Prefix, err)
			continue
		}
		k.pythons = append(k.pythons, p)
	}
	return k
}

// run runs every enabled client kit against s: the Java client versions
// two at a time beside the other kits, which run one after another.
func (k *kits2) run(t *testing.T, ctx context.Context, s *Server, rs *Results) {
	var wg sync.WaitGroup
	if k.enabled("java2") {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lane := make(chan struct{}, 2)
			var versions sync.WaitGroup
			for _, j := range k.javas {
				versions.Add(1)
				lane <- struct{}{}
				go func() {
					defer func() { <-lane; versions.Done() }()
					if err := j.Run(ctx, s, rs, nil, "all"); err != nil {
						t.Errorf("%v", err)
					}
				}()
			}
			versions.Wait()
		}()
	}
	if k.enabled("sdkgo2") {
		(&SDKGo2{WorkDir: k.work, RunID: k.runID}).Run(s, rs, false)
	}
	for _, p := range k.pythons {
		if k.enabled(p.Prefix) {
			if err := p.Run(ctx, s, rs, "all", "", ""); err != nil {
				t.Errorf("%v", err)
			}
		}
	}
	for _, a := range k.scas {
		a.Run(ctx, s, rs)
	}
	if k.dubbo != nil {
		k.dubbo.Run(ctx, s, rs)
	}
	wg.Wait()
}

// authProps2 are the system properties of the servers with auth on: a
// random token secret (under both property names: Java 2.5.1 reads
// nacos.core.auth.plugin.nacos.token.secret.key) and a server identity.
func authProps2() []string {
	secret, idv := make([]byte, 32), make([]byte, 24)
	rand.Read(secret)
	rand.Read(idv)
	key := base64.StdEncoding.EncodeToString(secret)
	return []string{"-Dnacos.core.auth.enabled=true", "-Dnacos.core.auth.system.type=nacos",
		"-Dnacos.core.auth.plugin.nacos.token.secret.key=" + key, "-Dnacos.core.auth.default.token.secret.key=" + key,
		"-Dnacos.core.auth.server.identity.key=X-Conformance-Node", "-Dnacos.core.auth.server.identity.value=" + hex.EncodeToString(idv),
		"-Dnacos.core.auth.caching.enabled=false", "-Dnacos.core.auth.enable.userAgentAuthWhite=false"}
}

// runAuth2 runs the auth corpus and the clients' auth scenarios on the
// started servers with auth on.
func runAuth2(t *testing.T, ctx context.Context, root, run string, kits *kits2, rs *Results, lists Lists, authServers []*Server) {
	vars := map[string]map[string]string{}
	for _, s := range authServers {
		admin, reader, err := setupAuth2(s)
		if err != nil {
			t.Fatalf("%s: auth setup: %v", s.Name, err)
		}
		vars[s.Name] = map[string]string{"admin": admin, "reader": reader}
	}
	acases, err := remoteclient.LoadCorpus(filepath.Join(root, "conformance", "grpccorpus", "auth"))
	if err != nil {
		t.Fatal(err)
	}
	RunGRPCCorpus(ctx, acases, authServers, vars, run, rs, lists)
	var wg sync.WaitGroup
	for _, s := range authServers {
		lane := make(chan struct{}, 2)
		for _, j := range kits.javas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lane <- struct{}{}
				defer func() { <-lane }()
				p := []string{"-Dconformance.user=nacos", "-Dconformance.password=nacos",
					"-Dconformance.user2=reader", "-Dconformance.password2=" + readerPassword}
				if err := j.Run(ctx, s, rs, p, "auth"); err != nil {
					t.Errorf("%v", err)
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if kits.sdkgo {
				(&SDKGo2{WorkDir: kits.work, RunID: kits.runID, Username: "nacos", Password: "nacos"}).Run(s, rs, true)
			}
			for _, p := range kits.pythons {
				if err := p.Run(ctx, s, rs, "auth", "nacos", "nacos"); err != nil {
					t.Errorf("%v", err)
				}
			}
		}()
	}
	wg.Wait()
}

// startEach starts the servers at once and returns the first error.
func startEach(ctx context.Context, servers []*Server) error {
	errs := make(chan error, len(servers))
	for _, s := range servers {
		go func() { errs <- s.Start(ctx, 4*time.Minute) }()
	}
	var first error
	for range servers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

func startAll(t *testing.T, ctx context.Context, servers []*Server) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(servers))
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Start(ctx, 4*time.Minute); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// readerPassword is the password of the auth axis's user without write rights.
const readerPassword = "reader-pw-1"

// setupAuth2 prepares a server with auth on for the 2.x auth cases: the
// admin (Java 2.5.1 has none until POST /v1/auth/users/admin sets its
// password; nacosd has the built-in nacos/nacos and refuses the call), and
// user reader whose role may only read group G. It returns their tokens.
func setupAuth2(s *Server) (admin, reader string, err error) {
	c := &http.Client{Timeout: 20 * time.Second}
	post := func(path string, form url.Values) (int, string) {
		r, err := c.PostForm(s.URL(path), form)
		if err != nil {
			return 0, err.Error()
		}
		defer r.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(r.Body)
		return r.StatusCode, b.String()
	}
	post("/nacos/v1/auth/users/admin", url.Values{"password": {"nacos"}})
	login := func(user, pw string) (string, error) {
		var last string
		for i := 0; i < 100; i++ { // Java's user cache may take a moment
			st, body := post("/nacos/v1/auth/users/login", url.Values{"username": {user}, "password": {pw}})
			var v struct{ AccessToken string }
			if st == 200 && json.Unmarshal([]byte(body), &v) == nil && v.AccessToken != "" {
				return v.AccessToken, nil
			}
			last = fmt.Sprintf("%d %s", st, body)
			time.Sleep(300 * time.Millisecond)
		}
		return "", fmt.Errorf("login %s: %s", user, last)
	}
	if admin, err = login("nacos", "nacos"); err != nil {
		return "", "", err
	}
	tok := "?accessToken=" + url.QueryEscape(admin)
	for _, step := range []struct {
		path string
		form url.Values
	}{
		{"/nacos/v1/auth/users" + tok, url.Values{"username": {"reader"}, "password": {readerPassword}}},
		{"/nacos/v1/auth/roles" + tok, url.Values{"role": {"readers"}, "username": {"reader"}}},
		{"/nacos/v1/auth/permissions" + tok, url.Values{"role": {"readers"}, "resource": {":G:*"}, "action": {"r"}}},
	} {
		if st, body := post(step.path, step.form); st != 200 {
			return "", "", fmt.Errorf("%s: %d %s", step.path, st, body)
		}
	}
	reader, err = login("reader", readerPassword)
	return admin, reader, err
}
