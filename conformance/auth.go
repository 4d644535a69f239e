package conformance

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The auth runner ("auth" in NACOSD_CONFORMANCE_ONLY): a nacosd and a Java
// Nacos 1.4.8 started with the same -Dnacos.core.auth.* options (auth on,
// a random secret, a server identity, a token lifetime of AuthTokenTTL),
// the users, roles and permissions of the permission matrix, the matrix
// itself (auth_matrix.go: every user against naming and config endpoints of
// three namespaces, each answer judged by Java's permission rule and compared
// with the reference's), and real clients with username/password across a
// token expiry (auth_clients.go). Scenario names start with "auth/".

// AuthTokenTTL is nacos.core.auth.default.token.expire.seconds in the auth
// runner. Clients refresh at ttl - ttl/10: the Java client checks every 5 s,
// so 33 s makes it log in again at 30 s, before the token expires; the
// client scenarios wait ttl + 20 s.
const AuthTokenTTL = 33

// AuthClients lists the client stacks the auth runner drives, for
// NACOSD_CONFORMANCE_AUTH_CLIENTS (default all).
var AuthClients = []string{"java", "sdkgo", "npm", "sca", "dubbo"}

// AuthClientEnabled reports whether the auth runner is enabled and drives
// client (a member of AuthClients): the suite builds that client for it.
func AuthClientEnabled(enabled func(string) bool, client string) bool {
	if !enabled("auth") {
		return false
	}
	list := os.Getenv("NACOSD_CONFORMANCE_AUTH_CLIENTS")
	return list == "" || strings.Contains(","+list+",", ","+client+",")
}

// MainRunnersEnabled reports whether a runner other than auth is enabled
// (they share the suite's servers, which need not start otherwise).
func MainRunnersEnabled(enabled func(string) bool) bool {
	for _, r := range []string{"java", "restart", "sdkgo", "npm", "sca", "dubbo", "corpus"} {
		if enabled(r) {
			return true
		}
	}
	return false
}

// AuthEnv is what the auth runner gets from the suite.
type AuthEnv struct {
	Root, Bin, Work, RunID string
	// RefHome is the unpacked reference distribution ("" without one).
	RefHome string
	// SelfReference: a second nacosd plays the reference (harness check).
	SelfReference bool
	// Containers: run the servers as containers (JREBase for the reference).
	Containers bool
	JREBase    string
	Logger     *slog.Logger
	Enabled    func(string) bool
	// Clients built by the suite (nil: not driven).
	Java  *JavaClient
	SCA   *SpringCloud
	Dubbo *Dubbo
	NPM   *NPMClient
}

// authRun is one run of the auth runner.
type authRun struct {
	env      AuthEnv
	rs       *Results
	servers  []*Server
	identity [2]string // key, value
	users    map[string]string
	client   *http.Client
}

// RunAuth runs the auth runner and adds its results to rs.
func RunAuth(ctx context.Context, env AuthEnv, rs *Results) error {
	if env.JREBase == "" {
		env.JREBase = DefaultJREBase
	}
	secret := make([]byte, 32)
	idv := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("conformance: auth secret: %w", err)
	}
	if _, err := rand.Read(idv); err != nil {
		return fmt.Errorf("conformance: auth identity: %w", err)
	}
	a := &authRun{env: env, rs: rs, identity: [2]string{"X-Conformance-Node", hex.EncodeToString(idv)},
		users: map[string]string{"nacos": "nacos"}, client: &http.Client{Timeout: 40 * time.Second}}
	for _, u := range a.authUsers() {
		a.users[u.name] = u.name + "-pw-" + env.RunID
	}
	props := []string{
		"-Dnacos.core.auth.enabled=true",
		"-Dnacos.core.auth.system.type=nacos",
		"-Dnacos.core.auth.default.token.secret.key=" + base64.StdEncoding.EncodeToString(secret),
		"-Dnacos.core.auth.default.token.expire.seconds=" + strconv.Itoa(AuthTokenTTL),
		"-Dnacos.core.auth.server.identity.key=" + a.identity[0],
		"-Dnacos.core.auth.server.identity.value=" + a.identity[1],
		// users, roles and permissions apply at once (Java: a 15 s cache)
		"-Dnacos.core.auth.caching.enabled=false",
		"-Dnacos.core.auth.enable.userAgentAuthWhite=false",
	}
	a.servers = append(a.servers, a.nacosd(props, TargetNacosd, "auth-nacosd"))
	switch {
	case env.RefHome != "":
		a.servers = append(a.servers, a.reference(props))
	case env.SelfReference:
		a.servers = append(a.servers, a.nacosd(props, TargetReference, "auth-selfref"))
	}
	defer func() {
		for _, s := range a.servers {
			s.Stop()
		}
	}()
	if err := a.each(func(s *Server) error { return s.Start(ctx, 4*time.Minute) }); err != nil {
		return err
	}
	if err := a.each(a.setup); err != nil {
		return err
	}
	a.runMatrix()
	a.runClients(ctx)
	return nil
}

// nacosd describes the auth-enabled nacosd (process or container).
func (a *authRun) nacosd(props []string, name, dir string) *Server {
	data := filepath.Join(a.env.Work, dir+"-data")
	s := NewNacosd(a.env.Bin, data, filepath.Join(a.env.Work, dir+".log"), a.env.Logger)
	s.Name = name
	base := s.argv
	s.argv = func(port int) []string { return append(base(port), props...) }
	if a.env.Containers {
		os.MkdirAll(data, 0o755)
		s.Containerise(ImageNacosd, func(port int) []string { return append(NacosdContainerCmd(port), props...) },
			[]string{data + ":/data"}, nil)
	}
	return s
}

// reference describes Java Nacos with the same options (run.sh appends
// NACOS_REFERENCE_JAVA_OPTS after its own, so auth is on).
func (a *authRun) reference(props []string) *Server {
	script := filepath.Join(a.env.Root, "javatest", "reference", "run.sh")
	work := filepath.Join(a.env.Work, "auth-reference")
	os.MkdirAll(work, 0o755)
	s := NewReference(script, a.env.RefHome, work, filepath.Join(a.env.Work, "auth-reference.log"), a.env.Logger)
	opts := strings.Join(props, " ")
	s.env = append(s.env, "NACOS_REFERENCE_JAVA_OPTS="+opts)
	if a.env.Containers {
		ref := filepath.Join(a.env.Root, "javatest", "reference")
		s.Containerise(a.env.JREBase, func(port int) []string {
			return []string{"bash", filepath.Join(ref, "run.sh"), strconv.Itoa(port)}
		}, []string{a.env.RefHome + ":" + a.env.RefHome + ":ro", ref + ":" + ref + ":ro", work + ":" + work},
			map[string]string{"NACOS_REFERENCE_HOME": a.env.RefHome, "NACOS_REFERENCE_WORK": work, "NACOS_REFERENCE_JAVA_OPTS": opts})
	}
	return s
}

// each runs fn for every server at once and returns the first error.
func (a *authRun) each(fn func(s *Server) error) error {
	errs := make([]error, len(a.servers))
	var wg sync.WaitGroup
	for i, s := range a.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(s)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// add records a result of scenario "auth/<name>".
func (a *authRun) add(s *Server, name string, d time.Duration, detail string, err error) {
	r := Result{Scenario: "auth/" + name, Target: s.Name, OK: err == nil, Ms: d.Milliseconds(), Detail: detail}
	if d < 0 {
		r.Ms = -1
	}
	if err != nil {
		r.Ms, r.Detail = -1, err.Error()
	}
	a.env.Logger.Info("auth result", "target", s.Name, "scenario", r.Scenario, "ok", r.OK, "ms", r.Ms, "detail", r.Detail)
	a.rs.Add(r)
}

// authResp is an answer of a raw request.
type authResp struct {
	Status int
	Body   string
	CType  string
}

// do sends a request below /nacos with the query and form given.
func (a *authRun) do(s *Server, method, path string, q, form url.Values, hdr map[string]string) authResp {
	u := s.URL("/nacos" + path)
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return authResp{Status: -1, Body: err.Error()}
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded;charset=UTF-8")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return authResp{Status: -1, Body: err.Error()}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return authResp{Status: resp.StatusCode, Body: string(b), CType: strings.ReplaceAll(strings.ToLower(resp.Header.Get("Content-Type")), " ", "")}
}

// login returns a token of user.
func (a *authRun) login(s *Server, user string) (string, bool, error) {
	r := a.do(s, "POST", "/v1/auth/users/login", url.Values{"username": {user}}, url.Values{"password": {a.users[user]}}, nil)
	var body struct {
		AccessToken string `json:"accessToken"`
		GlobalAdmin bool   `json:"globalAdmin"`
		TokenTTL    int    `json:"tokenTtl"`
	}
	if r.Status != 200 || json.Unmarshal([]byte(r.Body), &body) != nil || body.AccessToken == "" {
		return "", false, fmt.Errorf("login %s on %s: %d %s", user, s.Name, r.Status, short(r.Body))
	}
	if body.TokenTTL != AuthTokenTTL {
		return "", false, fmt.Errorf("login %s on %s: tokenTtl %d, want %d", user, s.Name, body.TokenTTL, AuthTokenTTL)
	}
	return body.AccessToken, body.GlobalAdmin, nil
}

// authNS are the namespaces of the matrix and the clients (public is "").
// Dubbo is the namespace of the Dubbo programs (Dubbo.command names it
// "dubbo-ns-" + RunID; the auth run uses RunID "auth-" + the run's).
type authNS struct{ A, B, Apps, Dubbo string }

func (a *authRun) ns() authNS {
	return authNS{A: "nsA-" + a.env.RunID, B: "nsB-" + a.env.RunID, Apps: "apps-" + a.env.RunID, Dubbo: "dubbo-ns-auth-" + a.env.RunID}
}

// authGrant is a permission row of a role.
type authGrant struct{ resource, action string }

// authUser is a user of the run with its roles' permissions.
type authUser struct {
	name  string
	roles map[string][]authGrant
}

// authUsers are the users of the matrix and the clients.
func (a *authRun) authUsers() []authUser {
	n := a.ns()
	return []authUser{
		{name: "mx-none"},
		{name: "mx-empty", roles: map[string][]authGrant{"mx-empty": nil}},
		{name: "mx-r", roles: map[string][]authGrant{"mx-r": {{n.A + ":*:*", "r"}}}},
		{name: "mx-w", roles: map[string][]authGrant{"mx-w": {{n.A + ":*:*", "w"}}}},
		{name: "mx-rw", roles: map[string][]authGrant{"mx-rw": {{n.A + ":*:*", "rw"}}}},
		{name: "mx-pub", roles: map[string][]authGrant{"mx-pub": {{":*:*", "rw"}}}},
		{name: "mx-grp", roles: map[string][]authGrant{"mx-grp": {{n.A + ":G1:*", "rw"}}}},
		{name: "mx-cfg", roles: map[string][]authGrant{"mx-cfg": {{n.A + ":G1:config/cfg.1", "r"}, {n.B + ":*:naming/*", "w"}}}},
		{name: "mx-all", roles: map[string][]authGrant{"mx-all": {{"*:*:*", "rw"}}}},
		{name: "mx-two", roles: map[string][]authGrant{"mx-r2": {{n.A + ":*:*", "r"}}, "mx-w2": {{n.B + ":*:*", "w"}}}},
		{name: "app-rw", roles: map[string][]authGrant{"app-rw": {{n.Apps + ":*:*", "rw"}, {n.Dubbo + ":*:*", "rw"}}}},
		{name: "app-r", roles: map[string][]authGrant{"app-r": {{n.Apps + ":*:*", "r"}}}},
		// the clients' wrong-password scenarios log in as app-bad
		{name: "app-bad", roles: map[string][]authGrant{"app-bad": {{n.Apps + ":*:*", "rw"}}}},
	}
}

// setup creates namespaces, users, roles, permissions and the configs and
// services the matrix reads, through the admin API, and checks each answer.
func (a *authRun) setup(s *Server) error {
	var tok string
	// Java loads roles 5 s after its start: until then nacos is no admin
	if _, err := eventually(90*time.Second, func() error {
		t, admin, err := a.login(s, "nacos")
		if err == nil && !admin {
			err = fmt.Errorf("nacos is not globalAdmin yet on %s", s.Name)
		}
		tok = t
		return err
	}); err != nil {
		a.add(s, "setup", 0, "", err)
		return nil // recorded; the other phases report what fails
	}
	n := a.ns()
	aq := url.Values{"accessToken": {tok}}
	var errs []string
	write := func(method, path string, q url.Values, form url.Values, want ...string) {
		qq := url.Values{}
		for k, v := range aq {
			qq[k] = v
		}
		for k, v := range q {
			qq[k] = v
		}
		r := a.do(s, method, path, qq, form, nil)
		ok := r.Status == 200
		if ok && len(want) > 0 {
			ok = false
			for _, w := range want {
				ok = ok || strings.Contains(r.Body, w)
			}
		}
		if !ok {
			errs = append(errs, fmt.Sprintf("%s %s %v: %d %s", method, path, form, r.Status, short(r.Body)))
		}
	}
	for _, ns := range []string{n.A, n.B, n.Apps, n.Dubbo} {
		write("POST", "/v1/console/namespaces", nil, url.Values{"customNamespaceId": {ns}, "namespaceName": {ns}, "namespaceDesc": {"auth runner"}}, "true")
	}
	for _, u := range a.authUsers() {
		write("POST", "/v1/auth/users", nil, url.Values{"username": {u.name}, "password": {a.users[u.name]}}, "create user ok!")
		for _, role := range sortedKeys(u.roles) {
			write("POST", "/v1/auth/roles", nil, url.Values{"username": {u.name}, "role": {role}}, "add role ok!")
		}
	}
	// Java checks a permission's role against a role set it reloads every
	// 5 s (caching off or not): retry until the new roles are in it
	for _, u := range a.authUsers() {
		for _, role := range sortedKeys(u.roles) {
			for _, g := range u.roles[role] {
				form := url.Values{"role": {role}, "resource": {g.resource}, "action": {g.action}}
				if _, err := eventually(15*time.Second, func() error {
					r := a.do(s, "POST", "/v1/auth/permissions", aq, form, nil)
					if r.Status != 200 || !strings.Contains(r.Body, "add permission ok!") {
						return fmt.Errorf("POST /v1/auth/permissions %v: %d %s", form, r.Status, short(r.Body))
					}
					return nil
				}); err != nil {
					errs = append(errs, err.Error())
				}
			}
		}
	}
	for _, ns := range []string{"", n.A, n.B} {
		for _, c := range [][2]string{{"cfg1", "G1"}, {"cfg1", "G2"}, {"cfg.1", "G1"}, {"cfgx1", "G1"}} {
			write("POST", "/v1/cs/configs", nil, url.Values{"dataId": {c[0]}, "group": {c[1]}, "content": {c[0] + "@" + c[1] + "@" + ns}, "tenant": {ns}}, "true")
		}
		write("POST", "/v1/ns/instance", url.Values{"serviceName": {"svc1"}, "groupName": {"G1"}, "ip": {"10.9.9.9"}, "port": {"9"},
			"namespaceId": {ns}, "ephemeral": {"false"}}, nil, "ok")
	}
	if len(errs) > 0 {
		a.add(s, "setup", 0, "", fmt.Errorf("%d setup calls failed: %s", len(errs), strings.Join(errs, "; ")))
		return nil
	}
	// every user logs in once from here: the throttle then knows the
	// address as theirs (nacosd), and the reads the matrix does later see
	// the seeded configs (Java serves reads from an asynchronous dump)
	for _, u := range a.authUsers() {
		if _, _, err := a.login(s, u.name); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, ns := range []string{"", n.A, n.B} {
		if _, err := eventually(10*time.Second, func() error {
			r := a.do(s, "GET", "/v1/cs/configs", url.Values{"dataId": {"cfgx1"}, "group": {"G1"}, "tenant": {ns}, "accessToken": {tok}}, nil, nil)
			if r.Status != 200 {
				return fmt.Errorf("seeded config in %q: %d %s", ns, r.Status, short(r.Body))
			}
			return nil
		}); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		a.add(s, "setup", 0, "", fmt.Errorf("%s", strings.Join(errs, "; ")))
		return nil
	}
	a.add(s, "setup", -1, fmt.Sprintf("%d users, 4 namespaces, seeded configs and services", len(a.authUsers())), nil)
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// javaCommand runs the AuthScenarios program of javatest/client.
func (a *authRun) javaCommand(ctx context.Context, s *Server, args ...string) *exec.Cmd {
	j := a.env.Java
	dir := filepath.Join(a.env.Work, "auth-java-"+s.Name)
	jvm := []string{"-Xmx256m", "-XX:TieredStopAtLevel=1", "-DJM.LOG.PATH=" + filepath.Join(dir, "logs"), "-DJM.SNAPSHOT.PATH=" + dir,
		"-Dcom.alibaba.nacos.client.naming.local.ip=127.0.0.1", "-Dproject.name=conformance-auth", "-cp"}
	tail := append([]string{"nacosd.conformance.AuthScenarios", s.Addr()}, args...)
	if j.Image == "" {
		cmd := exec.CommandContext(ctx, "java", append(append(jvm, j.cp), tail...)...)
		cmd.WaitDelay = 5 * time.Second
		return cmd
	}
	name := fmt.Sprintf("nacosd-javatest-auth-%s-%d", s.Name, time.Now().UnixNano())
	docker := []string{"run", "--rm", "-i", "--name", name, "--network", "host", "-v", a.env.Work + ":" + a.env.Work, j.Image, "java"}
	cmd := exec.CommandContext(ctx, "docker", append(append(append(docker, jvm...), "/app/classes:/app/lib/*"), tail...)...)
	cmd.Cancel = func() error {
		exec.Command("docker", "rm", "-f", name).Run()
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}
