package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
)

// Image tags the suite builds locally.
const (
	ImageNacosd     = "nacosd:conformance"
	ImageJavaClient = "nacosd-javatest-client:conformance"
	// DefaultJREBase is the tag docker/build-jre-base.sh creates.
	DefaultJREBase = "nacosd-jre17:bookworm"
)

// DockerAvailable reports whether a Docker engine answers and has the JRE
// base image; the suite then runs everything in containers.
func DockerAvailable(ctx context.Context, jreBase string) bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if exec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").Run() != nil {
		return false
	}
	return exec.CommandContext(ctx, "docker", "image", "inspect", jreBase).Run() == nil
}

func dockerBuild(ctx context.Context, tag, dockerfile, contextDir string, args ...string) error {
	argv := []string{"build", "-q", "-t", tag, "-f", dockerfile}
	for _, a := range args {
		argv = append(argv, "--build-arg", a)
	}
	out, err := exec.CommandContext(ctx, "docker", append(argv, contextDir)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("conformance: docker build %s: %w\n%s", tag, err, out)
	}
	return nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

// BuildNacosdImage builds ImageNacosd from the repository's Dockerfile (FROM
// scratch) and the static binary bin, in a context holding only the binary
// and the image's conf.
func BuildNacosdImage(ctx context.Context, root, bin, work string) error {
	dir := filepath.Join(work, "image-nacosd")
	if err := copyFile(bin, filepath.Join(dir, "bin", "nacosd")); err != nil {
		return fmt.Errorf("conformance: nacosd image context: %w", err)
	}
	conf := filepath.Join("docker", "nacosd", "conf", "application.properties")
	if err := copyFile(filepath.Join(root, conf), filepath.Join(dir, conf)); err != nil {
		return fmt.Errorf("conformance: nacosd image context: %w", err)
	}
	return dockerBuild(ctx, ImageNacosd, filepath.Join(root, "Dockerfile"), dir)
}

// ImageSpringCloud is the image of the javatest/spring-cloud app.
const ImageSpringCloud = "nacosd-javatest-spring-cloud:conformance"

// BuildJavaImage builds tag on jreBase from a Maven project's classes
// (projectDir/target/classes) and the jars of its classpath cp; they land in
// /app/classes and /app/lib.
func BuildJavaImage(ctx context.Context, root, jreBase, work, tag, projectDir, cp string) error {
	return buildJavaImage(ctx, root, jreBase, work, tag, filepath.Base(projectDir), filepath.Join(projectDir, "target", "classes"), cp)
}

func buildJavaImage(ctx context.Context, root, jreBase, work, tag, name, classes, cp string) error {
	dir := filepath.Join(work, "image-"+name)
	os.RemoveAll(dir)
	app := filepath.Join(dir, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		return fmt.Errorf("conformance: java image context: %w", err)
	}
	if out, err := exec.Command("cp", "-r", classes, filepath.Join(app, "classes")).CombinedOutput(); err != nil {
		return fmt.Errorf("conformance: copy classes: %w %s", err, out)
	}
	for _, jar := range strings.Split(cp, string(os.PathListSeparator)) {
		if !strings.HasSuffix(jar, ".jar") {
			continue
		}
		if err := copyFile(jar, filepath.Join(app, "lib", filepath.Base(jar))); err != nil {
			return fmt.Errorf("conformance: copy %s: %w", jar, err)
		}
	}
	return dockerBuild(ctx, tag, filepath.Join(root, "docker", "jre", "Dockerfile"), dir, "BASE_IMAGE="+jreBase)
}

// BuildJavaClientImage builds the image of j's client version
// (ImageJavaClient-<version>) and makes j use it.
func BuildJavaClientImage(ctx context.Context, root, jreBase, work string, j *JavaClient) error {
	tag := ImageJavaClient + "-" + j.version()
	if err := buildJavaImage(ctx, root, jreBase, work, tag, "javatest-client-"+j.version(), j.classes(), j.cp); err != nil {
		return err
	}
	j.Image = tag
	return nil
}

// containerSpec turns a Server into a container run with host networking.
type containerSpec struct {
	image string
	cmd   func(port int) []string
	binds []string
	env   map[string]string
	c     testcontainers.Container
}

// Containerise makes s run as a container of image (host network, so it
// still listens on 127.0.0.1:port only) instead of a process.
func (s *Server) Containerise(image string, cmd func(port int) []string, binds []string, env map[string]string) {
	s.ctr = &containerSpec{image: image, cmd: cmd, binds: binds, env: env}
}

// NacosdContainerCmd is the nacosd command line inside ImageNacosd; its
// data lives in /home/nacos/data (NacosdContainerData) as in the
// nacos/nacos-server image.
// NacosdContainerData is where ImageNacosd keeps its data.
const NacosdContainerData = "/home/nacos/data"

// NacosdContainerEnv runs ImageNacosd in UTC like the reference's JRE
// image (the nacosd image defaults to Asia/Shanghai, as the Java image).
func NacosdContainerEnv() map[string]string { return map[string]string{"TZ": "UTC"} }

func NacosdContainerCmd(port int) []string {
	return []string{"-port", fmt.Sprint(port), "-host", "127.0.0.1", "-ip", "127.0.0.1",
		"-push-addr", "127.0.0.1:0", "-context-path", "/nacos", "-standalone"}
}

func (c *containerSpec) start(ctx context.Context, port int) (pid int, err error) {
	// WithDefaultBridgeNetwork("host"): without it testcontainers creates a
	// bridge network of its own, which must not happen here.
	p, err := testcontainers.NewDockerProvider(testcontainers.WithDefaultBridgeNetwork("host"))
	if err != nil {
		return 0, fmt.Errorf("conformance: docker provider: %w", err)
	}
	req := testcontainers.ContainerRequest{
		Image: c.image, Cmd: c.cmd(port), Env: c.env,
		HostConfigModifier: func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = c.binds
		},
	}
	ctr, err := p.CreateContainer(ctx, req)
	if err != nil {
		return 0, fmt.Errorf("conformance: create container %s: %w", c.image, err)
	}
	c.c = ctr
	if err := ctr.Start(ctx); err != nil {
		return 0, fmt.Errorf("conformance: start container %s: %w", c.image, err)
	}
	st, err := ctr.State(ctx)
	if err != nil {
		return 0, nil
	}
	return st.Pid, nil
}

func (c *containerSpec) running(ctx context.Context) bool {
	if c.c == nil {
		return false
	}
	st, err := c.c.State(ctx)
	return err == nil && st.Running
}

func (c *containerSpec) logs(ctx context.Context, path string) {
	if c.c == nil {
		return
	}
	r, err := c.c.Logs(ctx)
	if err != nil {
		return
	}
	defer r.Close()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		f.Write(buf[:n])
		if err != nil {
			return
		}
	}
}

func (c *containerSpec) stop(ctx context.Context, logPath string) {
	if c.c == nil {
		return
	}
	timeout := 15 * time.Second
	c.c.Stop(ctx, &timeout)
	c.logs(ctx, logPath)
	c.c.Terminate(ctx)
	c.c = nil
}
