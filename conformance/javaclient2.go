package conformance

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// JavaClient2Versions are the Nacos 2.x Java client versions whose
// scenarios run on the 2.x axis (gRPC); the first is Java Nacos 2.5.1's.
var JavaClient2Versions = []string{"2.5.1", "2.4.3", "2.2.4", "2.0.4"}

// JavaClient2 runs the scenario program of javatest/client2 (the Nacos 2.x
// Java client, which talks gRPC to the HTTP port + 1000) built against one
// nacos-client version. Its RESULT lines are javatest/client's.
type JavaClient2 struct {
	Dir     string // javatest/client2
	WorkDir string
	Logger  *slog.Logger
	Version string
	// V1Classpath is javatest/client's classpath (nacos-client 1.4.8): the
	// mixed scenarios start its Peer beside the 2.x client.
	V1Classpath string
	cp          string
}

func (j *JavaClient2) version() string {
	if j.Version == "" {
		return JavaClient2Versions[0]
	}
	return j.Version
}

// Prefix is the runner name in the table: "java2-<version>".
func (j *JavaClient2) Prefix() string { return "java2-" + j.version() }

func (j *JavaClient2) buildDir() string { return filepath.Join(j.Dir, "target", "v"+j.version()) }

// Build packages the Maven project against the version's nacos-client.
func (j *JavaClient2) Build(ctx context.Context) error {
	if !mavenFresh(j.Dir, j.buildDir()) {
		cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "-Dnacos.version="+j.version(), "-Dbuild.dir="+j.buildDir(), "package", "-DskipTests")
		cmd.Dir = j.Dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("conformance: mvn package in %s (nacos-client %s): %w\n%s", j.Dir, j.version(), err, out)
		}
	}
	b, err := os.ReadFile(filepath.Join(j.buildDir(), "classpath.txt"))
	if err != nil {
		return fmt.Errorf("conformance: java classpath: %w", err)
	}
	j.cp = filepath.Join(j.buildDir(), "classes") + string(os.PathListSeparator) + strings.TrimSpace(string(b))
	return nil
}

// Run runs scenarios ("all", "auth" or names) against s; props are extra
// -D system properties (the auth scenarios' users).
func (j *JavaClient2) Run(ctx context.Context, s *Server, rs *Results, props []string, scenarios ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 6*time.Minute)
	defer cancel()
	dir := filepath.Join(j.WorkDir, s.Name+"-"+j.Prefix())
	args := []string{"-Xmx256m", "-XX:TieredStopAtLevel=1",
		"-DJM.LOG.PATH=" + filepath.Join(dir, "logs"), "-DJM.SNAPSHOT.PATH=" + dir,
		"-Dcom.alibaba.nacos.client.local.ip=127.0.0.1", "-Dproject.name=conformance2",
		"-Dconformance.tag=v" + strings.ReplaceAll(j.version(), ".", ""), "-Dconformance.v1cp=" + j.V1Classpath}
	args = append(args, props...)
	args = append(args, "-cp", j.cp, "nacosd.conformance2.Scenarios", s.Addr())
	args = append(args, scenarios...)
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.WaitDelay = 5 * time.Second
	logf, err := os.Create(filepath.Join(j.WorkDir, j.Prefix()+"-"+s.Name+"-"+strings.Join(scenarios, "_")+".stderr"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("conformance: start java2 scenarios: %w", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if r, ok := parseResult(sc.Text(), j.Prefix()+"/", s.Name); ok {
			j.Logger.Info("result", "target", s.Name, "scenario", r.Scenario, "ok", r.OK, "ms", r.Ms, "detail", r.Detail)
			rs.Add(r)
		}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("conformance: java2 %s scenarios on %s: %w", j.version(), s.Name, err)
	}
	return nil
}
