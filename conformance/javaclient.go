package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// JavaClientVersions are the nacos-client versions whose scenarios run (all
// on Maven Central); the first is the one Java Nacos 1.4.8 ships.
var JavaClientVersions = []string{"1.4.8", "1.1.4", "1.2.1", "1.3.3", "1.4.2"}

// JavaClient runs the scenario program of javatest/client built against one
// nacos-client version.
type JavaClient struct {
	// Dir is javatest/client.
	Dir string
	// WorkDir receives the client's logs and snapshot cache.
	WorkDir string
	Logger  *slog.Logger
	// Version is the nacos-client version ("" is 1.4.8).
	Version string
	// Image, when set, runs the program in that container image (host
	// network, WorkDir bind-mounted at the same path) instead of a local JVM.
	Image string
	cp    string
}

func (j *JavaClient) version() string {
	if j.Version == "" {
		return JavaClientVersions[0]
	}
	return j.Version
}

// Prefix is the runner name of the table: "java" for 1.4.8, else
// "java-<version>".
func (j *JavaClient) Prefix() string {
	if j.version() == JavaClientVersions[0] {
		return "java"
	}
	return "java-" + j.version()
}

func (j *JavaClient) buildDir() string { return filepath.Join(j.Dir, "target", "v"+j.version()) }

func (j *JavaClient) classes() string { return filepath.Join(j.buildDir(), "classes") }

// Build packages the Maven project against the version's nacos-client
// (downloads land in ~/.m2) and reads the classpath it wrote.
func (j *JavaClient) Build(ctx context.Context) error {
	args := []string{"-q", "-B", "-Dnacos.version=" + j.version(), "-Dbuild.dir=" + j.buildDir(), "package", "-DskipTests"}
	if j.version() != JavaClientVersions[0] { // the auth scenarios need 1.4's API; the auth runner uses the first version
		args = append(args, "-Dscenarios.exclude=**/AuthScenarios.java")
	}
	if !mavenFresh(j.Dir, j.buildDir()) {
		cmd := exec.CommandContext(ctx, "mvn", args...)
		cmd.Dir = j.Dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("conformance: mvn package in %s (nacos-client %s): %w\n%s", j.Dir, j.version(), err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(j.buildDir(), "classpath.txt"))
	if err != nil {
		return fmt.Errorf("conformance: java classpath: %w", err)
	}
	j.cp = j.classes() + string(os.PathListSeparator) + strings.TrimSpace(string(b))
	return nil
}

// javaProc is one running scenario program.
type javaProc struct {
	cmd  *exec.Cmd
	name string // container name in container mode
}

func (j *JavaClient) command(ctx context.Context, s *Server, scenarios ...string) *javaProc {
	dir := filepath.Join(j.WorkDir, s.Name+"-"+j.version())
	args := []string{"-Xmx256m", "-XX:TieredStopAtLevel=1",
		"-DJM.LOG.PATH=" + filepath.Join(dir, "logs"), "-DJM.SNAPSHOT.PATH=" + dir,
		"-Dcom.alibaba.nacos.client.naming.local.ip=127.0.0.1", "-Dproject.name=conformance",
		"-Dconformance.tag=v" + strings.ReplaceAll(j.version(), ".", ""),
		"-cp", j.cp, "nacosd.conformance.Scenarios", s.Addr()}
	args = append(args, scenarios...)
	if j.Image == "" {
		cmd := exec.CommandContext(ctx, "java", args...)
		cmd.WaitDelay = 5 * time.Second
		return &javaProc{cmd: cmd}
	}
	args[len(args)-len(scenarios)-3] = "/app/classes:/app/lib/*" // the -cp value
	name := fmt.Sprintf("nacosd-javatest-%s-%s-%d", s.Name, j.version(), time.Now().UnixNano())
	docker := append([]string{"run", "--rm", "-i", "--name", name, "--network", "host",
		"-v", j.WorkDir + ":" + j.WorkDir, j.Image, "java"}, args...)
	cmd := exec.CommandContext(ctx, "docker", docker...)
	cmd.Cancel = func() error {
		exec.Command("docker", "rm", "-f", name).Run()
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = 10 * time.Second
	return &javaProc{cmd: cmd, name: name}
}

// pause stops the program's JVM (docker pause, or SIGSTOP) or lets it go on.
func (p *javaProc) pause(on bool) error {
	if p.name != "" {
		verb := "unpause"
		if on {
			verb = "pause"
		}
		if out, err := exec.Command("docker", verb, p.name).CombinedOutput(); err != nil {
			return fmt.Errorf("docker %s: %w %s", verb, err, out)
		}
		return nil
	}
	sig := syscall.SIGCONT
	if on {
		sig = syscall.SIGSTOP
	}
	return p.cmd.Process.Signal(sig)
}

// parseResult decodes a "RESULT {json}" line.
func parseResult(line, prefix, target string) (Result, bool) {
	js, ok := strings.CutPrefix(line, "RESULT ")
	if !ok {
		return Result{}, false
	}
	var r Result
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		return Result{}, false
	}
	r.Scenario, r.Target = prefix+r.Scenario, target
	return r, true
}

// phaseFunc acts on "PHASE <scenario> <name> [args]" and returns the line
// the program reads before it goes on.
type phaseFunc func(p *javaProc, fields []string) string

// run runs the program with the scenario arguments against s, adds every
// result and answers its phases with onPhase.
func (j *JavaClient) run(ctx context.Context, s *Server, rs *Results, log string, onPhase phaseFunc, scenarios ...string) error {
	p := j.command(ctx, s, scenarios...)
	logf, err := os.Create(filepath.Join(j.WorkDir, log))
	if err != nil {
		return fmt.Errorf("conformance: java log: %w", err)
	}
	defer logf.Close()
	p.cmd.Stderr = logf
	in, err := p.cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("conformance: java stdin: %w", err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("conformance: java stdout: %w", err)
	}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("conformance: start java scenarios: %w", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "PHASE "); ok {
			answer := "fail no harness for " + rest
			if onPhase != nil {
				answer = onPhase(p, strings.Fields(rest))
			}
			io.WriteString(in, answer+"\n")
			continue
		}
		if r, ok := parseResult(line, j.Prefix()+"/", s.Name); ok {
			j.Logger.Info("result", "target", s.Name, "scenario", r.Scenario, "ok", r.OK, "ms", r.Ms, "detail", r.Detail)
			rs.Add(r)
		}
	}
	in.Close()
	if err := p.cmd.Wait(); err != nil {
		return fmt.Errorf("conformance: java %s scenarios on %s: %w", j.version(), s.Name, err)
	}
	return nil
}

// Run runs the quick scenarios ("all") against s.
func (j *JavaClient) Run(ctx context.Context, s *Server, rs *Results) error {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	return j.run(ctx, s, rs, "java-"+j.version()+"-"+s.Name+".stderr", nil, "all")
}

// RunSlow runs the scenarios that wait for beat timeouts: beat expiry, and
// naming.beat.resume, whose process the harness pauses until the server
// has dropped its instance and then resumes.
func (j *JavaClient) RunSlow(ctx context.Context, s *Server, rs *Results) error {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	return j.run(ctx, s, rs, "java-slow-"+j.version()+"-"+s.Name+".stderr", func(p *javaProc, f []string) string {
		if len(f) != 4 || f[1] != "pause" {
			return "fail unknown phase " + strings.Join(f, " ")
		}
		return pauseUntilExpired(s, p, f[2], "127.0.0.1:"+f[3])
	}, "slow")
}

// pauseUntilExpired pauses p until s no longer lists addr in service, then
// resumes it and waits until s lists addr again. It answers "back <ms>"
// (from the resume) or "fail <why>".
func pauseUntilExpired(s *Server, p *javaProc, service, addr string) string {
	listed := func() (bool, error) {
		_, body, err := httpGetString(s.URL("/nacos/v1/ns/instance/list?serviceName=" + url.QueryEscape(service)))
		if err != nil {
			return false, err
		}
		ip, port, _ := strings.Cut(addr, ":")
		return strings.Contains(body, `"ip":"`+ip+`","port":`+port+`,`), nil
	}
	if err := p.pause(true); err != nil {
		return "fail pause: " + err.Error()
	}
	if _, err := eventually(50*time.Second, func() error {
		if ok, err := listed(); err != nil || ok {
			return fmt.Errorf("still listed (%v)", err)
		}
		return nil
	}); err != nil {
		p.pause(false)
		return "fail while paused: " + err.Error()
	}
	if err := p.pause(false); err != nil {
		return "fail resume: " + err.Error()
	}
	d, err := eventually(30*time.Second, func() error {
		if ok, err := listed(); err != nil || !ok {
			return fmt.Errorf("not listed again (%v)", err)
		}
		return nil
	})
	if err != nil {
		return "fail after the resume: " + err.Error()
	}
	return fmt.Sprintf("back %d", d.Milliseconds())
}

// RunRestart runs naming.restart.reregister of every client against s at
// once: each program registers an instance and waits; when all have, the
// harness restarts s once and lets them go on; each then waits for its
// client to register again (beat answered with 20404).
func RunRestart(ctx context.Context, s *Server, rs *Results, clients []*JavaClient) {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	const name = "naming.restart.reregister"
	var mu sync.Mutex
	waiting := 0
	restarted := make(chan error)
	var restartErr error
	var once sync.Once
	doRestart := func() {
		once.Do(func() {
			restartErr = s.Restart(ctx, 3*time.Minute)
			close(restarted)
		})
	}
	var wg sync.WaitGroup
	for _, j := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := false
			sub := NewResults()
			err := j.run(ctx, s, sub, "java-restart-"+j.version()+"-"+s.Name+".stderr", func(*javaProc, []string) string {
				mu.Lock()
				waiting++
				all := waiting == len(clients)
				mu.Unlock()
				if all {
					doRestart()
				}
				select {
				case <-restarted:
				case <-time.After(90 * time.Second): // a client never reached its phase
					doRestart()
					<-restarted
				}
				if restartErr != nil {
					return "fail restart: " + restartErr.Error()
				}
				return "go"
			}, name)
			if r, ok := sub.Get(j.Prefix()+"/"+name, s.Name); ok {
				got = true
				rs.Add(r)
			}
			if !got {
				rs.Add(Result{Scenario: j.Prefix() + "/" + name, Target: s.Name, Ms: -1, Detail: fmt.Sprintf("no result (%v)", err)})
			}
		}()
	}
	wg.Wait()
}
