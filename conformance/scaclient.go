package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SpringCloud drives a Spring Cloud Alibaba app (a provider and a
// consumer) against one target: javatest/spring-cloud (2021.0.1.0, Boot
// 2.6, config by spring.config.import, Spring Cloud LoadBalancer) or
// javatest/spring-cloud-2.2 (2.2.5.RELEASE, Boot 2.3, bootstrap config,
// Ribbon).
type SpringCloud struct {
	// Dir is javatest/spring-cloud or javatest/spring-cloud-2.2.
	Dir string
	// Prefix is the runner name of the table ("sca", "sca-2.2.5").
	Prefix string
	// ConfigVia says how the app loads its Nacos config (table detail).
	ConfigVia string
	// WorkDir receives the apps' logs and Nacos snapshots.
	WorkDir string
	// RunID makes application names and data ids unique per suite run.
	RunID string
	// Image, when set, runs the apps in that container image (host network).
	Image string
	cp    string
}

// Build packages the Maven project and reads its classpath.
func (a *SpringCloud) Build(ctx context.Context) error {
	if !mavenFresh(a.Dir, filepath.Join(a.Dir, "target")) {
		cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "package", "-DskipTests")
		cmd.Dir = a.Dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("conformance: mvn package in %s: %w\n%s", a.Dir, err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(a.Dir, "target", "classpath.txt"))
	if err != nil {
		return fmt.Errorf("conformance: spring-cloud classpath: %w", err)
	}
	a.cp = filepath.Join(a.Dir, "target", "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(b))
	return nil
}

func (a *SpringCloud) prefix() string {
	if a.Prefix == "" {
		return "sca"
	}
	return a.Prefix
}

// Classpath returns the classpath Build read.
func (a *SpringCloud) Classpath() string { return a.cp }

type app struct {
	cmd  *exec.Cmd
	name string // container name, if in a container
	done chan struct{}
}

// stop sends SIGTERM (a graceful Spring shutdown deregisters) and waits.
func (p *app) stop() {
	if p.name != "" {
		exec.Command("docker", "stop", "-t", "20", p.name).Run()
	} else {
		p.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-p.done:
	case <-time.After(25 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func (a *SpringCloud) start(s *Server, role string, port int, args ...string) (*app, error) {
	dir := filepath.Join(a.WorkDir, a.prefix()+"-"+s.Name+"-"+role)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("conformance: sca dir: %w", err)
	}
	jvm := []string{"-Xmx256m", "-XX:TieredStopAtLevel=1", "-DJM.LOG.PATH=" + dir + "/logs", "-DJM.SNAPSHOT.PATH=" + dir,
		"-Dcom.alibaba.nacos.client.naming.local.ip=127.0.0.1", "-cp"}
	tail := append([]string{"nacosd.sca.App", "--nacos.addr=" + s.Addr(), "--server.port=" + strconv.Itoa(port)}, args...)
	p := &app{done: make(chan struct{})}
	if a.Image == "" {
		p.cmd = exec.Command("java", append(append(jvm, a.cp), tail...)...)
	} else {
		p.name = fmt.Sprintf("nacosd-%s-%s-%s-%d", a.prefix(), s.Name, role, time.Now().UnixNano())
		docker := []string{"run", "--rm", "--name", p.name, "--network", "host", "-v", a.WorkDir + ":" + a.WorkDir, a.Image, "java"}
		p.cmd = exec.Command("docker", append(append(append(docker, jvm...), "/app/classes:/app/lib/*"), tail...)...)
	}
	logf, err := os.Create(filepath.Join(a.WorkDir, a.prefix()+"-"+s.Name+"-"+role+".log"))
	if err != nil {
		return nil, fmt.Errorf("conformance: sca log: %w", err)
	}
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("conformance: start sca %s: %w", role, err)
	}
	go func() { p.cmd.Wait(); logf.Close(); close(p.done) }()
	return p, nil
}

func httpGetString(u string) (int, string, error) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func publish(s *Server, dataID, content string) error {
	form := url.Values{"dataId": {dataID}, "group": {"DEFAULT_GROUP"}, "content": {content}}
	resp, err := http.PostForm(s.URL("/nacos/v1/cs/configs"), form)
	if err != nil {
		return fmt.Errorf("publish %s: %w", dataID, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "true" {
		return fmt.Errorf("publish %s: %d %s", dataID, resp.StatusCode, b)
	}
	return nil
}

func instancePorts(s *Server, service string) ([]int, error) {
	_, body, err := httpGetString(s.URL("/nacos/v1/ns/instance/list?serviceName=" + url.QueryEscape("DEFAULT_GROUP@@"+service)))
	if err != nil {
		return nil, err
	}
	var ports []int
	for _, part := range strings.Split(body, `"port":`)[1:] {
		end := strings.IndexAny(part, ",}")
		if n, err := strconv.Atoi(part[:end]); err == nil {
			ports = append(ports, n)
		}
	}
	return ports, nil
}

// Run starts the provider and the consumer against s, checks registration,
// config load and live refresh, discovery and a call through Spring Cloud
// LoadBalancer, and deregistration at shutdown.
func (a *SpringCloud) Run(ctx context.Context, s *Server, rs *Results) {
	add := func(name string, d time.Duration, detail string, err error) {
		r := Result{Scenario: a.prefix() + "/" + name, Target: s.Name, OK: err == nil, Ms: d.Milliseconds(), Detail: detail}
		if d < 0 {
			r.Ms = -1
		}
		if err != nil {
			r.Ms, r.Detail = -1, err.Error()
		}
		rs.Add(r)
	}
	tag := strings.ReplaceAll(a.prefix(), ".", "")
	provider, consumer := tag+"-prov-"+a.RunID, tag+"-cons-"+a.RunID
	shared := tag + "-shared-" + a.RunID + ".yaml"
	if err := publish(s, provider+".yaml", "greeting: v1"); err != nil {
		add("provider.start", 0, "", err)
		return
	}
	if err := publish(s, shared, "shared:\n  value: s1"); err != nil {
		add("provider.start", 0, "", err)
		return
	}
	pPort, err := FreePort()
	if err != nil {
		add("provider.start", 0, "", err)
		return
	}
	cPort, err := FreePort()
	if err != nil {
		add("provider.start", 0, "", err)
		return
	}
	base := func(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) }
	prov, err := a.start(s, "provider", pPort, "--spring.application.name="+provider, "--shared.dataid="+shared)
	if err != nil {
		add("provider.start", 0, "", err)
		return
	}
	defer prov.stop()
	cons, err := a.start(s, "consumer", cPort, "--spring.application.name="+consumer, "--shared.dataid="+shared, "--provider.name="+provider)
	if err != nil {
		add("provider.start", 0, "", err)
		return
	}
	defer cons.stop()
	d, err := eventually(90*time.Second, func() error {
		select {
		case <-prov.done:
			return fmt.Errorf("provider exited, see sca-%s-provider.log", s.Name)
		default:
		}
		_, _, err := httpGetString(base(pPort) + "/hello")
		return err
	})
	add("provider.start", d, "Spring Boot start (incl. Nacos config load and registration)", err)
	if err != nil {
		return
	}
	d, err = eventually(10*time.Second, func() error {
		ports, err := instancePorts(s, provider)
		if err != nil {
			return err
		}
		if len(ports) != 1 || ports[0] != pPort {
			return fmt.Errorf("instances %v", ports)
		}
		return nil
	})
	add("register", d, "provider visible in instance/list", err)

	_, g, err1 := httpGetString(base(pPort) + "/greeting")
	_, sh, err2 := httpGetString(base(pPort) + "/shared")
	switch {
	case err1 != nil || err2 != nil:
		add("config.load", 0, "", fmt.Errorf("%v %v", err1, err2))
	case g != "v1" || sh != "s1":
		add("config.load", 0, "", fmt.Errorf("greeting %q shared %q, want v1 s1", g, sh))
	default:
		add("config.load", -1, "app config and shared config via "+a.ConfigVia, nil)
	}

	d, err = eventually(60*time.Second, func() error {
		select {
		case <-cons.done:
			return fmt.Errorf("consumer exited, see sca-%s-consumer.log", s.Name)
		default:
		}
		code, body, err := httpGetString(base(cPort) + "/call")
		if err != nil {
			return err
		}
		if code != 200 || body != "hello from "+strconv.Itoa(pPort) {
			return fmt.Errorf("/call: %d %s", code, short(body))
		}
		return nil
	})
	add("discover.call", d, "consumer start until its LoadBalancer call reaches the provider", err)

	for _, c := range []struct{ name, dataID, content, path, want string }{
		{"config.refresh", provider + ".yaml", "greeting: v2", "/greeting", "v2"},
		{"config.refresh.shared", shared, "shared:\n  value: s2", "/shared", "s2"},
	} {
		time.Sleep(time.Second) // setup: let the previous refresh settle
		t0 := time.Now()
		if err := publish(s, c.dataID, c.content); err != nil {
			add(c.name, 0, "", err)
			continue
		}
		_, err := eventually(15*time.Second, func() error {
			_, got, err := httpGetString(base(pPort) + c.path)
			if err != nil {
				return err
			}
			if got != c.want {
				return fmt.Errorf("%s = %q", c.path, got)
			}
			return nil
		})
		add(c.name, time.Since(t0), "publish until @RefreshScope @Value changes", err)
	}

	t0 := time.Now()
	go prov.stop() // the deferred stop then finds it gone
	_, err = eventually(15*time.Second, func() error {
		ports, err := instancePorts(s, provider)
		if err != nil {
			return err
		}
		if len(ports) != 0 {
			return fmt.Errorf("instances %v", ports)
		}
		return nil
	})
	add("deregister", time.Since(t0), "SIGTERM until the provider is gone", err)
}
