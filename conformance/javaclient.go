package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// JavaClient runs the scenario program of javatest/client.
type JavaClient struct {
	// Dir is javatest/client.
	Dir string
	// WorkDir receives the client's logs and snapshot cache.
	WorkDir string
	Logger  *slog.Logger
	// Image, when set, runs the program in that container image (host
	// network, WorkDir bind-mounted at the same path) instead of a local JVM.
	Image string
	cp    string
}

// Build packages the Maven project (downloads land in ~/.m2) and reads the
// classpath it wrote.
func (j *JavaClient) Build(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "package", "-DskipTests")
	cmd.Dir = j.Dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("conformance: mvn package in %s: %w\n%s", j.Dir, err, out)
	}
	b, err := os.ReadFile(filepath.Join(j.Dir, "target", "classpath.txt"))
	if err != nil {
		return fmt.Errorf("conformance: java classpath: %w", err)
	}
	j.cp = filepath.Join(j.Dir, "target", "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(b))
	return nil
}

func (j *JavaClient) command(ctx context.Context, s *Server, scenarios ...string) *exec.Cmd {
	dir := filepath.Join(j.WorkDir, s.Name)
	args := []string{"-Xmx256m", "-XX:TieredStopAtLevel=1",
		"-DJM.LOG.PATH=" + filepath.Join(dir, "logs"), "-DJM.SNAPSHOT.PATH=" + dir,
		"-Dcom.alibaba.nacos.client.naming.local.ip=127.0.0.1", "-Dproject.name=conformance",
		"-cp", j.cp, "nacosd.conformance.Scenarios", s.Addr()}
	args = append(args, scenarios...)
	if j.Image == "" {
		cmd := exec.CommandContext(ctx, "java", args...)
		cmd.WaitDelay = 5 * time.Second
		return cmd
	}
	args[len(args)-len(scenarios)-3] = "/app/classes:/app/lib/*" // the -cp value
	name := fmt.Sprintf("nacosd-javatest-%s-%d", s.Name, time.Now().UnixNano())
	docker := append([]string{"run", "--rm", "-i", "--name", name, "--network", "host",
		"-v", j.WorkDir + ":" + j.WorkDir, j.Image, "java"}, args...)
	cmd := exec.CommandContext(ctx, "docker", docker...)
	cmd.Cancel = func() error {
		exec.Command("docker", "rm", "-f", name).Run()
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = 10 * time.Second
	return cmd
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

// Run runs every scenario of the program except the restart scenario
// against s and adds the results.
func (j *JavaClient) Run(ctx context.Context, s *Server, rs *Results) error {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	cmd := j.command(ctx, s, "all")
	logf, err := os.Create(filepath.Join(j.WorkDir, "java-"+s.Name+".stderr"))
	if err != nil {
		return fmt.Errorf("conformance: java log: %w", err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("conformance: java stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("conformance: start java scenarios: %w", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if r, ok := parseResult(sc.Text(), "java/", s.Name); ok {
			j.Logger.Info("result", "target", s.Name, "scenario", r.Scenario, "ok", r.OK, "ms", r.Ms, "detail", r.Detail)
			rs.Add(r)
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("conformance: java scenarios on %s: %w", s.Name, err)
	}
	return nil
}

// RunRestart runs naming.restart.reregister: the program registers an
// instance, the harness restarts s when asked, and the program waits for the
// client to re-register (beat answered with 20404).
func (j *JavaClient) RunRestart(ctx context.Context, s *Server, rs *Results) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	const name = "naming.restart.reregister"
	cmd := j.command(ctx, s, name)
	logf, err := os.Create(filepath.Join(j.WorkDir, "java-restart-"+s.Name+".stderr"))
	if err != nil {
		return fmt.Errorf("conformance: java log: %w", err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("conformance: java stdin: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("conformance: java stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("conformance: start java restart scenario: %w", err)
	}
	got := false
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "PHASE ") {
			if err := s.Restart(ctx, 3*time.Minute); err != nil {
				rs.Add(Result{Scenario: "java/" + name, Target: s.Name, Ms: -1, Detail: "restart: " + err.Error()})
				in.Close()
				cmd.Process.Kill()
				cmd.Wait()
				return err
			}
			io.WriteString(in, "go\n")
			continue
		}
		if r, ok := parseResult(line, "java/", s.Name); ok {
			got = true
			rs.Add(r)
		}
	}
	in.Close()
	err = cmd.Wait()
	if !got {
		rs.Add(Result{Scenario: "java/" + name, Target: s.Name, Ms: -1, Detail: fmt.Sprintf("no result (%v)", err)})
	}
	return nil
}
