package conformance

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Dubbo drives the Dubbo 2.7.23 provider and consumer of javatest/dubbo
// (registry nacos://host:port?namespace=…) against one target, or those of
// javatest/dubbo3 (Dubbo 3.2, nacos-client 2.x over gRPC) with Prefix
// "dubbo3" and Package "nacosd.dubbo3".
type Dubbo struct {
	// Dir is javatest/dubbo (or javatest/dubbo3).
	Dir string
	// Prefix is the runner name of the table (default "dubbo").
	Prefix string
	// Package holds Main and DemoService (default "nacosd.dubbo").
	Package string
	// Mapping: the provider publishes its interface-to-application mapping
	// as a Nacos config (Dubbo 3's metadata report), checked as
	// <prefix>/config.mapping.
	Mapping bool
	// WorkDir receives logs and the Nacos client caches.
	WorkDir string
	// RunID makes the namespace unique per suite run.
	RunID string
	// Image, when set, runs the programs in that container image.
	Image string
	// JVMArgs are further JVM options (the auth runner's credentials).
	JVMArgs []string
	cp      string
}

func (d *Dubbo) prefix() string {
	if d.Prefix == "" {
		return "dubbo"
	}
	return d.Prefix
}

func (d *Dubbo) pkg() string {
	if d.Package == "" {
		return "nacosd.dubbo"
	}
	return d.Package
}

// ImageDubbo is the image of the javatest/dubbo programs.
const ImageDubbo = "nacosd-javatest-dubbo:conformance"

// Build packages the Maven project and reads its classpath.
func (d *Dubbo) Build(ctx context.Context) error {
	if !mavenFresh(d.Dir, filepath.Join(d.Dir, "target")) {
		cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "package", "-DskipTests")
		cmd.Dir = d.Dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("conformance: mvn package in %s: %w\n%s", d.Dir, err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(d.Dir, "target", "classpath.txt"))
	if err != nil {
		return fmt.Errorf("conformance: dubbo classpath: %w", err)
	}
	d.cp = filepath.Join(d.Dir, "target", "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(b))
	return nil
}

// Classpath returns the classpath Build read.
func (d *Dubbo) Classpath() string { return d.cp }

// Dubbo 2.7's javassist proxies need these on Java 17.
var dubboOpens = []string{"--add-opens", "java.base/java.lang=ALL-UNNAMED", "--add-opens", "java.base/java.util=ALL-UNNAMED",
	"--add-opens", "java.base/java.math=ALL-UNNAMED", "--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED",
	"--add-opens", "java.base/java.net=ALL-UNNAMED", "--add-opens", "java.base/java.lang.reflect=ALL-UNNAMED"}

func (d *Dubbo) command(ctx context.Context, s *Server, role string, args ...string) *exec.Cmd {
	dir := filepath.Join(d.WorkDir, d.prefix()+"-"+s.Name+"-"+role)
	jvm := append([]string{"-Xmx256m", "-XX:TieredStopAtLevel=1"}, dubboOpens...)
	// QoS off: every Dubbo process would try to bind 22222.
	jvm = append(jvm, "-Ddubbo.application.qos.enable=false", "-DJM.LOG.PATH="+dir+"/logs", "-DJM.SNAPSHOT.PATH="+dir, "-Duser.home="+dir,
		"-Dcom.alibaba.nacos.client.naming.local.ip=127.0.0.1")
	jvm = append(append(jvm, d.JVMArgs...), "-cp")
	tail := append([]string{d.pkg() + ".Main", role, s.Addr(), d.prefix() + "-ns-" + d.RunID}, args...)
	if d.Image == "" {
		cmd := exec.CommandContext(ctx, "java", append(append(jvm, d.cp), tail...)...)
		cmd.WaitDelay = 5 * time.Second
		return cmd
	}
	name := fmt.Sprintf("nacosd-%s-%s-%s-%d", d.prefix(), s.Name, role, time.Now().UnixNano())
	docker := []string{"run", "--rm", "-i", "--name", name, "--network", "host", "-v", d.WorkDir + ":" + d.WorkDir, d.Image, "java"}
	cmd := exec.CommandContext(ctx, "docker", append(append(append(docker, jvm...), "/app/classes:/app/lib/*"), tail...)...)
	cmd.Cancel = func() error {
		exec.Command("docker", "rm", "-f", name).Run()
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// Run starts the provider, checks its registration in the namespace, runs
// the consumer's call, stops the provider and lets the consumer see it go.
func (d *Dubbo) Run(ctx context.Context, s *Server, rs *Results) {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	fail := func(name string, err error) {
		rs.Add(Result{Scenario: d.prefix() + "/" + name, Target: s.Name, Ms: -1, Detail: err.Error()})
	}
	port, err := FreePort()
	if err != nil {
		fail("provider.start", err)
		return
	}
	prov := d.command(ctx, s, "provider", strconv.Itoa(port))
	provIn, err := prov.StdinPipe()
	if err != nil {
		fail("provider.start", err)
		return
	}
	provOut, err := prov.StdoutPipe()
	if err != nil {
		fail("provider.start", err)
		return
	}
	plog, err := os.Create(filepath.Join(d.WorkDir, d.prefix()+"-"+s.Name+"-provider.log"))
	if err != nil {
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
			fail("provider.start", fmt.Errorf("provider exited before READY, see %s-%s-provider.log", d.prefix(), s.Name))
			return
		}
	case <-time.After(90 * time.Second):
		fail("provider.start", fmt.Errorf("provider not READY after 90 s"))
		return
	}
	rs.Add(Result{Scenario: d.prefix() + "/provider.start", Target: s.Name, OK: true, Ms: time.Since(t0).Milliseconds(), Detail: "export + register"})

	ns := d.prefix() + "-ns-" + d.RunID
	iface := d.pkg() + ".DemoService"
	name := "providers:" + iface + "::"
	dur, err := eventually(10*time.Second, func() error {
		_, body, err := httpGetString(s.URL("/nacos/v1/ns/instance/list?namespaceId=" + ns + "&serviceName=" + url.QueryEscape("DEFAULT_GROUP@@"+name)))
		if err != nil {
			return err
		}
		if !strings.Contains(body, fmt.Sprintf(`"port":%d`, port)) || !strings.Contains(body, `"interface":"`+iface+`"`) {
			return fmt.Errorf("instance/list: %s", short(body))
		}
		return nil
	})
	res := Result{Scenario: d.prefix() + "/register", Target: s.Name, OK: err == nil, Ms: dur.Milliseconds(), Detail: name + " in namespace " + ns}
	if err != nil {
		res.Ms, res.Detail = -1, err.Error()
	}
	rs.Add(res)
	if d.Mapping {
		d.checkMapping(s, ns, iface, rs)
	}

	cons := d.command(ctx, s, "consumer")
	consIn, err := cons.StdinPipe()
	if err != nil {
		fail("discover.call", err)
		return
	}
	consOut, err := cons.StdoutPipe()
	if err != nil {
		fail("discover.call", err)
		return
	}
	clog, err := os.Create(filepath.Join(d.WorkDir, d.prefix()+"-"+s.Name+"-consumer.log"))
	if err != nil {
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
			provIn.Close() // the provider unexports and unregisters, then exits
			<-provDone
			io.WriteString(consIn, "go\n")
			continue
		}
		if r, ok := parseResult(line, d.prefix()+"/", s.Name); ok {
			got[r.Scenario] = true
			rs.Add(r)
		}
	}
	consIn.Close()
	cons.Wait()
	for _, n := range []string{d.prefix() + "/discover.call", d.prefix() + "/provider.gone"} {
		if !got[n] {
			rs.Add(Result{Scenario: n, Target: s.Name, Ms: -1, Detail: "no result, see " + d.prefix() + "-" + s.Name + "-consumer.log"})
		}
	}
}

// checkMapping reads the config Dubbo 3's metadata report publishes for the
// provider's interface (data id the interface, group "mapping", in the
// registry's namespace) over the 1.x HTTP API: its content names the
// provider application.
func (d *Dubbo) checkMapping(s *Server, ns, iface string, rs *Results) {
	dur, err := eventually(10*time.Second, func() error {
		code, body, err := httpGetString(s.URL("/nacos/v1/cs/configs?dataId=" + url.QueryEscape(iface) + "&group=mapping&tenant=" + url.QueryEscape(ns)))
		if err != nil {
			return err
		}
		if code != 200 || !strings.Contains(body, "nacosd-dubbo3-provider") {
			return fmt.Errorf("mapping config: %d %s", code, short(body))
		}
		return nil
	})
	res := Result{Scenario: d.prefix() + "/config.mapping", Target: s.Name, OK: err == nil, Ms: dur.Milliseconds(),
		Detail: "the provider's interface→application mapping, published through the config center"}
	if err != nil {
		res.Ms, res.Detail = -1, err.Error()
	}
	rs.Add(res)
}
