package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Real clients with username/password against the auth-enabled targets:
// each logs in (or, npm, sends the credentials on every request), works,
// and keeps working AuthTokenTTL + 20 s later, past the first token's
// expiry; the harness checks that a token of the start did expire.

// expiryWait is how long the client scenarios keep going before they check
// that everything still works: past the token lifetime, and long enough
// (15 s) that an instance whose beats were refused since the expiry would
// have turned unhealthy.
const expiryWait = (AuthTokenTTL + 20) * time.Second

// runClients drives every client stack against every server at once.
func (a *authRun) runClients(ctx context.Context) {
	var wg sync.WaitGroup
	for _, s := range a.servers {
		run := func(fn func(*Server)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn(s)
			}()
		}
		run(a.tokenExpiry)
		if a.env.Java != nil && AuthClientEnabled(a.env.Enabled, "java") {
			run(func(s *Server) { a.runJava(ctx, s) })
		}
		if AuthClientEnabled(a.env.Enabled, "sdkgo") {
			run(a.runSDKGo)
		}
		if a.env.NPM != nil && AuthClientEnabled(a.env.Enabled, "npm") {
			run(func(s *Server) { a.runNPM(ctx, s) })
		}
		// the Spring and Dubbo JVMs start a little later: a start storm of
		// a dozen JVMs timed out the first logins on a loaded 2-core box
		if a.env.SCA != nil && AuthClientEnabled(a.env.Enabled, "sca") {
			run(func(s *Server) { time.Sleep(10 * time.Second); a.runSCA(ctx, s) })
		}
		if a.env.Dubbo != nil && AuthClientEnabled(a.env.Enabled, "dubbo") {
			run(func(s *Server) { time.Sleep(20 * time.Second); a.runDubbo(ctx, s) })
		}
	}
	wg.Wait()
}

// adminToken logs the admin in (a fresh token: it lives AuthTokenTTL).
func (a *authRun) adminToken(s *Server) (string, error) {
	tok, _, err := a.login(s, "nacos")
	return tok, err
}

// tokenExpiry: a token answers "token expired!" once its lifetime passed,
// and a new login gives a working one.
func (a *authRun) tokenExpiry(s *Server) {
	tok, _, err := a.login(s, "app-rw")
	if err != nil {
		a.add(s, "token.expired", 0, "", err)
		return
	}
	born := time.Now()
	q := url.Values{"dataId": {"cfg1"}, "group": {"G1"}, "tenant": {a.ns().Apps}, "accessToken": {tok}}
	if r := a.do(s, "GET", "/v1/cs/configs", q, nil, nil); r.Status == 403 {
		a.add(s, "token.expired", 0, "", fmt.Errorf("fresh token refused: %s", short(r.Body)))
		return
	}
	time.Sleep(AuthTokenTTL*time.Second + 2*time.Second - time.Since(born))
	r := a.do(s, "GET", "/v1/cs/configs", q, nil, nil)
	if r.Status != 403 || springMessage(r.Body) != "token expired!" {
		a.add(s, "token.expired", 0, "", fmt.Errorf("token %s old: %d %s, want 403 %q", time.Since(born).Round(time.Second), r.Status, short(r.Body), "token expired!"))
	} else {
		a.add(s, "token.expired", time.Since(born), "403 token expired! after the lifetime", nil)
	}
	tok, _, err = a.login(s, "app-rw")
	if err == nil {
		q.Set("accessToken", tok)
		if r := a.do(s, "GET", "/v1/cs/configs", q, nil, nil); r.Status == 403 {
			err = fmt.Errorf("new token refused: %s", short(r.Body))
		}
	}
	a.add(s, "token.relogin", -1, "a new login after the expiry works", err)
}

// authArgs are the program arguments of the Java and npm scenarios.
func (a *authRun) authArgs() []string {
	return []string{a.ns().Apps, "app-rw", a.users["app-rw"], "app-r", a.users["app-r"], "app-bad", strconv.Itoa(AuthTokenTTL)}
}

// collect reads RESULT lines of a scenario program into "auth/<prefix>…".
func (a *authRun) collect(s *Server, cmd *exec.Cmd, prefix, logName string, want []string) {
	logf, err := os.Create(filepath.Join(a.env.Work, logName))
	if err != nil {
		a.add(s, prefix+"start", 0, "", err)
		return
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		a.add(s, prefix+"start", 0, "", err)
		return
	}
	got := map[string]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if r, ok := parseResult(sc.Text(), "auth/"+prefix, s.Name); ok {
			got[r.Scenario] = true
			a.rs.Add(r)
		}
	}
	err = cmd.Wait()
	for _, w := range want {
		if !got["auth/"+prefix+w] {
			a.add(s, prefix+w, 0, "", fmt.Errorf("no result (%v), see %s", err, logName))
		}
	}
}

func (a *authRun) runJava(ctx context.Context, s *Server) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := a.javaCommand(ctx, s, append(a.authArgs(), "all")...)
	a.collect(s, cmd, "java/", "auth-java-"+s.Name+".stderr", []string{"login", "badpassword", "readonly", "expiry"})
}

// runNPM runs each npm scenario in a process of its own (auth.js says why).
func (a *authRun) runNPM(ctx context.Context, s *Server) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	roID := "npm.auth.ro." + a.env.RunID
	if err := a.adminPublish(s, a.ns().Apps, roID, "visible"); err != nil {
		a.add(s, "npm/readonly", 0, "", err)
	}
	var wg sync.WaitGroup
	for _, sc := range []string{"login", "badpassword", "readonly", "expiry"} {
		port, err := FreePort()
		if err != nil {
			a.add(s, "npm/"+sc, 0, "", err)
			continue
		}
		cmd := exec.CommandContext(ctx, "node", append([]string{"auth.js", s.Addr()}, append(a.authArgs(), sc)...)...)
		cmd.Dir = a.env.NPM.Dir
		cmd.Env = append(os.Environ(), "NODE_CLUSTER_CLIENT_PORT="+strconv.Itoa(port), "NPM_AUTH_RO_DATAID="+roID)
		cmd.WaitDelay = 5 * time.Second
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.collect(s, cmd, "npm/", "auth-npm-"+s.Name+"-"+sc+".stderr", []string{sc})
		}()
	}
	wg.Wait()
}

// adminGet sends a GET with a fresh admin token.
func (a *authRun) adminGet(s *Server, path string, q url.Values) (authResp, error) {
	tok, err := a.adminToken(s)
	if err != nil {
		return authResp{}, err
	}
	qq := url.Values{"accessToken": {tok}}
	for k, v := range q {
		qq[k] = v
	}
	return a.do(s, "GET", path, qq, nil, nil), nil
}

// adminPublish publishes a config with a fresh admin token.
func (a *authRun) adminPublish(s *Server, ns, dataID, content string) error {
	tok, err := a.adminToken(s)
	if err != nil {
		return err
	}
	r := a.do(s, "POST", "/v1/cs/configs", url.Values{"accessToken": {tok}},
		url.Values{"dataId": {dataID}, "group": {"DEFAULT_GROUP"}, "content": {content}, "tenant": {ns}}, nil)
	if r.Status != 200 || r.Body != "true" {
		return fmt.Errorf("publish %s: %d %s", dataID, r.Status, short(r.Body))
	}
	return nil
}

// authHost is an instance as instance/list shows it.
type authHost struct {
	IP      string `json:"ip"`
	Port    int    `json:"port"`
	Healthy bool   `json:"healthy"`
	Cluster string `json:"clusterName"`
}

// hosts lists the instances of a service (admin view).
func (a *authRun) hosts(s *Server, ns, service string) ([]authHost, error) {
	r, err := a.adminGet(s, "/v1/ns/instance/list", url.Values{"serviceName": {service}, "namespaceId": {ns}})
	if err != nil {
		return nil, err
	}
	if r.Status != 200 {
		return nil, fmt.Errorf("instance/list %s: %d %s", service, r.Status, short(r.Body))
	}
	var body struct {
		Hosts []authHost `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
		return nil, fmt.Errorf("instance/list %s: %w", service, err)
	}
	return body.Hosts, nil
}

// instanceHealthy reads one instance's own health (instance/list shows a
// lone unhealthy instance as healthy once the protect threshold is hit).
func (a *authRun) instanceHealthy(s *Server, ns, service string, port int) (bool, error) {
	hs, err := a.hosts(s, ns, service)
	if err != nil {
		return false, err
	}
	for _, h := range hs {
		if h.Port != port {
			continue
		}
		r, err := a.adminGet(s, "/v1/ns/instance", url.Values{"serviceName": {service}, "namespaceId": {ns}, "ip": {h.IP},
			"port": {strconv.Itoa(port)}, "cluster": {h.Cluster}})
		if err != nil {
			return false, err
		}
		var body struct {
			Healthy bool `json:"healthy"`
		}
		if r.Status != 200 || json.Unmarshal([]byte(r.Body), &body) != nil {
			return false, fmt.Errorf("instance %s %s:%d: %d %s", service, h.IP, port, r.Status, short(r.Body))
		}
		return body.Healthy, nil
	}
	return false, fmt.Errorf("no instance with port %d in %s: %v", port, service, hs)
}

// runSCA: the Spring Cloud Alibaba provider and consumer with
// spring.cloud.nacos.username/password in the apps namespace; after
// expiryWait config refresh, the LoadBalancer call, the registration and
// the deregistration at shutdown still work.
func (a *authRun) runSCA(ctx context.Context, s *Server) {
	sca := a.env.SCA
	ns := a.ns().Apps
	provider, consumer := "sca-auth-prov-"+a.env.RunID, "sca-auth-cons-"+a.env.RunID
	shared := "sca-auth-shared-" + a.env.RunID + ".yaml"
	fail := func(name string, err error) { a.add(s, "sca/"+name, 0, "", err) }
	for _, c := range [][2]string{{provider + ".yaml", "greeting: v1"}, {shared, "shared:\n  value: s1"}} {
		if err := a.adminPublish(s, ns, c[0], c[1]); err != nil {
			fail("provider.start", err)
			return
		}
	}
	creds := []string{"--spring.cloud.nacos.username=app-rw", "--spring.cloud.nacos.password=" + a.users["app-rw"],
		"--spring.cloud.nacos.discovery.username=app-rw", "--spring.cloud.nacos.discovery.password=" + a.users["app-rw"],
		"--spring.cloud.nacos.config.username=app-rw", "--spring.cloud.nacos.config.password=" + a.users["app-rw"],
		"--spring.cloud.nacos.discovery.namespace=" + ns, "--spring.cloud.nacos.config.namespace=" + ns, "--shared.dataid=" + shared}
	pPort, err1 := FreePort()
	cPort, err2 := FreePort()
	if err := errors.Join(err1, err2); err != nil {
		fail("provider.start", err)
		return
	}
	prov, err := sca.start(s, "auth-provider", pPort, append([]string{"--spring.application.name=" + provider}, creds...)...)
	if err != nil {
		fail("provider.start", err)
		return
	}
	defer prov.stop()
	cons, err := sca.start(s, "auth-consumer", cPort, append([]string{"--spring.application.name=" + consumer, "--provider.name=" + provider}, creds...)...)
	if err != nil {
		fail("provider.start", err)
		return
	}
	defer cons.stop()
	base := func(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) }
	d, err := eventually(120*time.Second, func() error {
		select {
		case <-prov.done:
			return fmt.Errorf("provider exited, see sca-%s-auth-provider.log", s.Name)
		default:
		}
		_, _, err := httpGetString(base(pPort) + "/hello")
		return err
	})
	a.add(s, "sca/provider.start", d, "Spring Boot start with username/password (config load, login, register)", err)
	if err != nil {
		return
	}
	_, g, err := httpGetString(base(pPort) + "/greeting")
	if err == nil && g != "v1" {
		err = fmt.Errorf("greeting %q, want v1", g)
	}
	a.add(s, "sca/config.load", -1, "app config from the apps namespace", err)
	service := "DEFAULT_GROUP@@" + provider
	d, err = eventually(15*time.Second, func() error {
		h, err := a.hosts(s, ns, service)
		if err == nil && len(h) != 1 {
			err = fmt.Errorf("instances %v", h)
		}
		return err
	})
	a.add(s, "sca/register", d, "provider listed in the apps namespace", err)
	call := func() error {
		code, body, err := httpGetString(base(cPort) + "/call")
		if err == nil && (code != 200 || body != "hello from "+strconv.Itoa(pPort)) {
			err = fmt.Errorf("/call: %d %s", code, short(body))
		}
		return err
	}
	d, err = eventually(90*time.Second, call)
	a.add(s, "sca/discover.call", d, "consumer start until its LoadBalancer call reaches the provider", err)
	if err != nil {
		return
	}

	time.Sleep(expiryWait)
	t0 := time.Now()
	if err := a.adminPublish(s, ns, provider+".yaml", "greeting: v2"); err != nil {
		fail("expiry.refresh", err)
	} else {
		_, err := eventually(20*time.Second, func() error {
			_, got, err := httpGetString(base(pPort) + "/greeting")
			if err == nil && got != "v2" {
				err = fmt.Errorf("/greeting = %q", got)
			}
			return err
		})
		a.add(s, "sca/expiry.refresh", time.Since(t0), fmt.Sprintf("publish until @RefreshScope changes, %s after the start", expiryWait), err)
	}
	healthy, err := a.instanceHealthy(s, ns, service, pPort)
	if err == nil && !healthy {
		err = errors.New("the provider's instance turned unhealthy (beats refused?)")
	}
	if err == nil {
		err = call()
	}
	a.add(s, "sca/expiry.call", -1, "provider healthy (beats) and the consumer's call works past the token lifetime", err)
	t0 = time.Now()
	go prov.stop()
	_, err = eventually(20*time.Second, func() error {
		h, err := a.hosts(s, ns, service)
		if err == nil && len(h) != 0 {
			err = fmt.Errorf("instances %v", h)
		}
		return err
	})
	a.add(s, "sca/deregister", time.Since(t0), "SIGTERM until the provider is gone (its deregister needs a valid token)", err)
}

// runDubbo: the Dubbo provider and consumer with credentials in the
// registry URL; the harness waits expiryWait at the consumer's phase, checks
// the provider stayed healthy, then stops it and the consumer sees it go.
func (a *authRun) runDubbo(ctx context.Context, s *Server) {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	d := *a.env.Dubbo
	d.RunID = "auth-" + a.env.RunID // namespace dubbo-ns-auth-<run>
	d.WorkDir = filepath.Join(a.env.Work, "auth")
	if err := os.MkdirAll(d.WorkDir, 0o755); err != nil {
		a.add(s, "dubbo/provider.start", 0, "", err)
		return
	}
	d.JVMArgs = []string{"-Dnacosd.username=app-rw", "-Dnacosd.password=" + a.users["app-rw"]}
	ns := a.ns().Dubbo
	fail := func(name string, err error) { a.add(s, "dubbo/"+name, 0, "", err) }
	port, err := FreePort()
	if err != nil {
		fail("provider.start", err)
		return
	}
	prov := d.command(ctx, s, "provider", strconv.Itoa(port))
	provIn, err1 := prov.StdinPipe()
	provOut, err2 := prov.StdoutPipe()
	plog, err3 := os.Create(filepath.Join(a.env.Work, "auth-dubbo-"+s.Name+"-provider.log"))
	if err := errors.Join(err1, err2, err3); err != nil {
		fail("provider.start", err)
		return
	}
	defer plog.Close()
	prov.Stderr = plog
	t0 := time.Now()
	if err := prov.Start(); err != nil {
		fail("provider.start", err)
		return
	}
	provDone := make(chan struct{})
	defer func() { provIn.Close(); <-provDone }()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(provOut)
		seen := false
		for sc.Scan() {
			if sc.Text() == "READY" && !seen {
				seen = true
				ready <- true
			}
		}
		if !seen {
			ready <- false
		}
		prov.Wait()
		close(provDone)
	}()
	select {
	case ok := <-ready:
		if !ok {
			fail("provider.start", fmt.Errorf("provider exited before READY, see auth-dubbo-%s-provider.log", s.Name))
			return
		}
	case <-time.After(120 * time.Second):
		fail("provider.start", errors.New("provider not READY after 120 s"))
		return
	}
	a.add(s, "dubbo/provider.start", time.Since(t0), "export + login + register", nil)
	service := "DEFAULT_GROUP@@providers:nacosd.dubbo.DemoService::"
	dur, err := eventually(15*time.Second, func() error {
		h, err := a.hosts(s, ns, service)
		if err == nil && len(h) != 1 {
			err = fmt.Errorf("instances %v", h)
		}
		return err
	})
	a.add(s, "dubbo/register", dur, "provider listed in "+ns, err)

	cons := d.command(ctx, s, "consumer")
	consIn, err1 := cons.StdinPipe()
	consOut, err2 := cons.StdoutPipe()
	clog, err3 := os.Create(filepath.Join(a.env.Work, "auth-dubbo-"+s.Name+"-consumer.log"))
	if err := errors.Join(err1, err2, err3); err != nil {
		fail("discover.call", err)
		return
	}
	defer clog.Close()
	cons.Stderr = clog
	if err := cons.Start(); err != nil {
		fail("discover.call", err)
		return
	}
	got := map[string]bool{}
	sc := bufio.NewScanner(consOut)
	for sc.Scan() {
		line := sc.Text()
		if line == "PHASE stop-provider" {
			time.Sleep(expiryWait)
			healthy, err := a.instanceHealthy(s, ns, service, port)
			if err == nil && !healthy {
				err = errors.New("the provider's instance turned unhealthy (beats refused?)")
			}
			a.add(s, "dubbo/expiry.registered", -1, fmt.Sprintf("provider healthy %s after its start (token ttl %d s)", expiryWait, AuthTokenTTL), err)
			provIn.Close() // unexport and deregister (needs a valid token), then exit
			<-provDone
			io.WriteString(consIn, "go\n")
			continue
		}
		if r, ok := parseResult(line, "auth/dubbo/", s.Name); ok {
			got[r.Scenario] = true
			a.rs.Add(r)
		}
	}
	consIn.Close()
	cons.Wait()
	for _, n := range []string{"discover.call", "provider.gone"} {
		if !got["auth/dubbo/"+n] {
			fail(n, fmt.Errorf("no result, see auth-dubbo-%s-consumer.log", s.Name))
		}
	}
	if !got["auth/dubbo/provider.gone"] {
		return
	}
	h, err := a.hosts(s, ns, service)
	if err == nil && len(h) != 0 {
		err = fmt.Errorf("instances %v after the provider left", h)
	}
	a.add(s, "dubbo/deregister", -1, "the provider's deregistration after the expiry", err)
}
