package conformance

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
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
)

// TestConformance2 is the 2.x axis of the suite (Nacos 2.x clients over
// gRPC), refereed by Java Nacos 2.5.1. It runs only with
// NACOSD_CONFORMANCE2=1 and NACOS_REFERENCE2_HOME (conformance/reference2.sh
// prints it; NACOSD_CONFORMANCE_SELF_REFERENCE=1 puts a second nacosd in its
// place): the gRPC corpus (conformance/grpccorpus) on nacosd and the
// reference, the javatest/client2 scenarios (nacos-client 2.x) on nacosd, a
// 3-node nacosd cluster and the reference, and with auth on the auth
// corpus and the client's auth scenarios. NACOSD_CONFORMANCE_OUT2 receives
// the table. Processes only (no containers).
func TestConformance2(t *testing.T) {
	if os.Getenv("NACOSD_CONFORMANCE2") != "1" {
		t.Skip("set NACOSD_CONFORMANCE2=1 to run the 2.x conformance axis (see docs/conformance.md)")
	}
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
	ctx := context.Background()
	bin := filepath.Join(work, "nacosd")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./server/cmd/nacosd")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build nacosd: %v\n%s", err, out)
	}
	var javas []*JavaClient2
	for _, v := range JavaClient2Versions {
		j := &JavaClient2{Dir: filepath.Join(root, "javatest", "client2"), WorkDir: work, Logger: logger, Version: v}
		if err := j.Build(ctx); err != nil {
			t.Fatal(err)
		}
		javas = append(javas, j)
	}
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
		s.argv = func(port int) []string { return append(base(port), props...) }
		return s
	}
	servers := []*Server{nacosd("nacosd", nil), reference("reference", nil)}
	cluster := NewNacosdCluster(bin, filepath.Join(work, "cluster"), ClusterSize, logger)
	all := append(append([]*Server{}, servers...), cluster)
	for _, s := range all {
		t.Cleanup(func() { s.Stop() })
	}
	startAll(t, ctx, all)

	rs := NewResults()
	run := strconv.FormatInt(time.Now().UnixMilli()%1e9, 36)
	cases, err := remoteclient.LoadCorpus(filepath.Join(root, "conformance", "grpccorpus"))
	if err != nil {
		t.Fatal(err)
	}
	RunGRPCCorpus(ctx, cases, servers, nil, run, rs, lists)
	// the Open API v2 (HTTP), refereed by 2.5.1 as the 1.x corpus by 1.4.8
	reqs2, err := LoadCorpus(filepath.Join(root, "conformance", "corpus2"))
	if err != nil {
		t.Fatal(err)
	}
	RunCorpus(reqs2, servers, run, rs, lists)
	var wg sync.WaitGroup
	for _, s := range all {
		for _, j := range javas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := j.Run(ctx, s, rs, nil, "all"); err != nil {
					t.Errorf("%v", err)
				}
			}()
		}
	}
	wg.Wait()
	for _, s := range all {
		s.Stop()
	}

	// auth on: a random token secret (under both property names: Java
	// 2.5.1 reads nacos.core.auth.plugin.nacos.token.secret.key) and a
	// server identity
	secret, idv := make([]byte, 32), make([]byte, 24)
	rand.Read(secret)
	rand.Read(idv)
	key := base64.StdEncoding.EncodeToString(secret)
	props := []string{"-Dnacos.core.auth.enabled=true", "-Dnacos.core.auth.system.type=nacos",
		"-Dnacos.core.auth.plugin.nacos.token.secret.key=" + key, "-Dnacos.core.auth.default.token.secret.key=" + key,
		"-Dnacos.core.auth.server.identity.key=X-Conformance-Node", "-Dnacos.core.auth.server.identity.value=" + hex.EncodeToString(idv),
		"-Dnacos.core.auth.caching.enabled=false", "-Dnacos.core.auth.enable.userAgentAuthWhite=false"}
	authServers := []*Server{nacosd("auth-nacosd", props), reference("auth-reference", props)}
	for _, s := range authServers {
		t.Cleanup(func() { s.Stop() })
	}
	startAll(t, ctx, authServers)
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
	for _, s := range authServers {
		for _, j := range javas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := []string{"-Dconformance.user=nacos", "-Dconformance.password=nacos",
					"-Dconformance.user2=reader", "-Dconformance.password2=" + readerPassword}
				if err := j.Run(ctx, s, rs, p, "auth"); err != nil {
					t.Errorf("%v", err)
				}
			}()
		}
	}
	wg.Wait()

	var buf bytes.Buffer
	fmt.Fprintf(&buf, "- 2.x axis (gRPC), referee: %s\n\n", map[bool]string{true: "a second nacosd (self-reference)", false: "Java Nacos 2.5.1"}[selfRef])
	rep := rs.WriteTable(&buf, []string{TargetReference, TargetNacosd, TargetCluster}, lists)
	fmt.Println(buf.String())
	if out := os.Getenv("NACOSD_CONFORMANCE_OUT2"); out != "" {
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			t.Error(err)
		}
	}
	fmt.Printf("conformance 2.x: %d scenarios; %d pass, %d java-defect, %d REGRESSION, %d wrong-scenario, %d known, %d fixed, %d stale-java-defect\n",
		rep.Scenarios, rep.Totals[VerdictPass], rep.Totals[VerdictJavaDefect], rep.Totals[VerdictRegression], rep.Totals[VerdictWrongScenario],
		rep.Totals[VerdictKnown], rep.Totals[VerdictFixed], rep.Totals[VerdictStaleDefect])
	for _, s := range rep.Wrong {
		res, _ := rs.Get(s, TargetReference)
		t.Logf("wrong scenario (fails on java-nacos 2.5.1): %s: %s", s, res.Detail)
	}
	for _, r := range rep.Regressions {
		res, _ := rs.Get(r, TargetNacosd)
		if c, ok := rs.Get(r, TargetCluster); ok && !c.OK {
			res.Detail = "on the cluster: " + c.Detail
		}
		t.Errorf("regression: %s on nacosd: %s", r, res.Detail)
	}
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
