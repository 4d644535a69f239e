package cluster_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mariadb is a MariaDB server of the test's own (Debian's mariadb-server):
// the database Java Nacos nodes of a cluster share.
type mariadb struct {
	port int
	cmd  *exec.Cmd
}

func startMariaDB(t *testing.T, schema string) *mariadb {
	t.Helper()
	for _, bin := range []string{"mariadb-install-db", "mariadbd", "mariadb"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s not found (apt-get install mariadb-server; conformance/cluster/run.sh installs it)", bin)
		}
	}
	dir := t.TempDir()
	data, sock := filepath.Join(dir, "data"), filepath.Join(dir, "sock")
	if out, err := exec.Command("mariadb-install-db", "--no-defaults", "--datadir="+data, "--auth-root-authentication-method=normal",
		"--skip-test-db").CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	m := &mariadb{port: freeClusterPort(t, []string{"127.0.0.1"})}
	m.cmd = exec.Command("mariadbd", "--no-defaults", "--datadir="+data, "--port="+strconv.Itoa(m.port), "--bind-address=127.0.0.1",
		"--socket="+sock, "--user=root", "--skip-name-resolve")
	logf, _ := os.Create(filepath.Join(dir, "mariadb.log"))
	m.cmd.Stdout, m.cmd.Stderr = logf, logf
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.cmd.Process.Kill(); _, _ = m.cmd.Process.Wait() })
	sql := func(db, stmt string) ([]byte, error) {
		args := []string{"--no-defaults", "-S", sock, "-uroot"}
		if db != "" {
			args = append(args, db)
		}
		c := exec.Command("mariadb", args...)
		c.Stdin = strings.NewReader(stmt)
		return c.CombinedOutput()
	}
	eventually(t, 30*time.Second, "mariadb up", func() error {
		_, err := sql("", "SELECT 1;")
		return err
	})
	if out, err := sql("", "CREATE DATABASE nacos; CREATE USER 'nacos'@'127.0.0.1' IDENTIFIED BY 'nacos'; GRANT ALL ON nacos.* TO 'nacos'@'127.0.0.1'; FLUSH PRIVILEGES;"); err != nil {
		t.Fatalf("create database: %v %s", err, out)
	}
	b, err := os.ReadFile(schema)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := sql("nacos", string(b)); err != nil {
		t.Fatalf("load %s: %v %s", schema, err, out)
	}
	return m
}

// javaNode is a Java Nacos 1.4.8 member on MySQL (javatest/reference/cluster-node.sh).
func startJavaNode(t *testing.T, home, ip string, port int, members []string, db *mariadb) *exec.Cmd {
	t.Helper()
	ref := os.Getenv("NACOS_REFERENCE_HOME")
	script, _ := filepath.Abs(filepath.Join("..", "..", "javatest", "reference", "cluster-node.sh"))
	url := "jdbc:mysql://127.0.0.1:" + strconv.Itoa(db.port) + "/nacos?characterEncoding=utf8&connectTimeout=1000&socketTimeout=3000&autoReconnect=true&useUnicode=true&useSSL=false&serverTimezone=UTC"
	cmd := exec.Command("bash", script, ip, strconv.Itoa(port), strings.Join(members, ","),
		"-Dspring.datasource.platform=mysql", "-Ddb.num=1", "-Ddb.url.0="+url, "-Ddb.user.0=nacos", "-Ddb.password.0=nacos")
	cmd.Env = append(os.Environ(), "NACOS_REFERENCE_HOME="+ref, "NACOS_REFERENCE_WORK="+home)
	logf, _ := os.Create(filepath.Join(t.TempDir(), "java.log"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(home, "logs", "nacos.log"))
			t.Logf("---- Java node log tail:\n%s", tail(string(b), 4000))
		}
	})
	return cmd
}

// TestMixedJavaCluster runs one Java Nacos 1.4.8 node (on MySQL) and two
// nacosd nodes in one cluster.conf: they see each other UP, nacosd keeps
// the Java node out of its raft group, ephemeral instances registered on
// any node are listed on all three, a beat sent to a node that does not own
// the service is proxied to its owner, the Distro data converges, and a
// deregistration on the Java node reaches the nacosd nodes.
func TestMixedJavaCluster(t *testing.T) {
	ref := os.Getenv("NACOS_REFERENCE_HOME")
	if ref == "" {
		t.Fatal("NACOS_REFERENCE_HOME is not set (conformance/cluster/run.sh sets it from conformance/reference.sh)")
	}
	db := startMariaDB(t, filepath.Join(ref, "conf", "nacos-mysql.sql"))
	ports := make([]int, 3)
	for i := range ports {
		ports[i] = freeClusterPort(t, []string{"127.0.0.1"})
	}
	var members []string
	for _, p := range ports {
		members = append(members, "127.0.0.1:"+strconv.Itoa(p))
	}
	base := t.TempDir()
	startJavaNode(t, filepath.Join(base, "java"), "127.0.0.1", ports[0], members, db)
	c := &cluster{t: t}
	for i := 1; i < 3; i++ {
		home := filepath.Join(base, "n"+strconv.Itoa(i))
		if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(home, "conf", "cluster.conf"), []byte(strings.Join(members, "\n")+"\n"), 0o644)
		c.nodes = append(c.nodes, &node{t: t, ip: "127.0.0.1", port: ports[i], home: home})
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			n.kill()
		}
	})
	c.startAll()
	java := &node{t: t, ip: "127.0.0.1", port: ports[0]}
	all := []*node{java, c.nodes[0], c.nodes[1]}
	took := eventually(t, 150*time.Second, "the Java node serves", func() error {
		r, err := get(java, "/nacos/v1/console/health/liveness")
		if err != nil || r.status != 200 {
			return fmt.Errorf("%v %+v", err, r)
		}
		return nil
	})
	t.Logf("Java node up after %v", took)
	took = eventually(t, 60*time.Second, "every node sees every node UP", func() error {
		for _, n := range all {
			r, err := get(n, "/nacos/v1/core/cluster/nodes")
			if err != nil {
				return err
			}
			if strings.Count(r.body, `"state":"UP"`) != 3 {
				return fmt.Errorf("%s: %s", n.addr(), r.body)
			}
		}
		return nil
	})
	t.Logf("members UP everywhere after %v more", took)
	eventually(t, 30*time.Second, "nacosd's raft group leaves the Java node out", func() error {
		r, err := get(c.nodes[0], "/nacos/v1/core/cluster/self")
		if err != nil {
			return err
		}
		javaRaft := "127.0.0.1:" + strconv.Itoa(ports[0]-1000)
		if !strings.Contains(r.body, `"leader":"127.0.0.1:`) || strings.Contains(r.body, javaRaft) {
			return fmt.Errorf("self: %s", r.body)
		}
		return nil
	})

	ua := map[string]string{}
	reg := func(n *node, svc, ip string) error {
		r, err := do(n, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {svc}, "ip": {ip}, "port": {"8080"}, "ephemeral": {"true"}}, nil)
		if err != nil || r.status != 200 || r.body != "ok" {
			return fmt.Errorf("register %s %s on %s: %v %+v", svc, ip, n.addr(), err, r)
		}
		return nil
	}
	_ = ua
	var services []string
	want := map[string][]string{}
	for s := range 6 {
		svc := "mixed.svc" + strconv.Itoa(s)
		services = append(services, svc)
		// the first instance through a nacosd node creates the service there;
		// Java creates it when the owner's datum arrives (a Java node whose
		// JRaft has no leader cannot create services on its own)
		if err := reg(c.nodes[s%2], svc, "127.0.6."+strconv.Itoa(s*3+1)); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, svc+" reaches the Java node", func() error {
			h, err := hosts(java, svc)
			if err != nil || len(h) != 1 {
				return fmt.Errorf("%v %v", h, err)
			}
			return nil
		})
		for i, n := range []*node{java, c.nodes[(s+1)%2]} {
			if err := reg(n, svc, "127.0.6."+strconv.Itoa(s*3+2+i)); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 3 {
			want[svc] = append(want[svc], "127.0.6."+strconv.Itoa(s*3+1+i)+":8080")
		}
		slices.Sort(want[svc])
	}
	took = eventually(t, 30*time.Second, "every instance listed on every node", func() error {
		for _, n := range all {
			for _, svc := range services {
				h, err := hosts(n, svc)
				if err != nil {
					return err
				}
				if strings.Join(h, ",") != strings.Join(want[svc], ",") {
					return fmt.Errorf("%s lists %v for %s, want %v", n.addr(), h, svc, want[svc])
				}
			}
		}
		return nil
	})
	t.Logf("ephemeral instances shared by the Java and nacosd nodes after %v", took)

	// a beat to a node that does not own the service is proxied to its owner
	for _, svc := range services {
		owner := distroServer(t, c.nodes[0], svc)
		for _, n := range all {
			if n.addr() == owner {
				continue
			}
			ip := strings.TrimSuffix(want[svc][0], ":8080")
			beat := `{"ip":"` + ip + `","port":8080,"cluster":"DEFAULT","serviceName":"DEFAULT_GROUP@@` + svc + `"}`
			r, err := do(n, "PUT", "/nacos/v1/ns/instance/beat", url.Values{"serviceName": {svc}, "beat": {beat}}, nil)
			if err != nil || r.status != 200 || !strings.Contains(r.body, `"code":10200`) {
				t.Errorf("beat for %s (owner %s) sent to %s: %v %+v", svc, owner, n.addr(), err, r)
			}
		}
	}

	// Distro data identical: the same lists under the same keys everywhere
	took = eventually(t, 30*time.Second, "distro data converges", func() error {
		var first string
		for _, n := range all {
			d, err := datums(n)
			if err != nil {
				return err
			}
			if first == "" {
				first = d
			} else if d != first {
				return fmt.Errorf("%s holds\n%s\nvs\n%s", n.addr(), d, first)
			}
		}
		return nil
	})
	t.Logf("distro data identical after %v", took)

	// a deregistration on the Java node reaches the nacosd nodes
	gone := want[services[0]][1]
	ip := strings.TrimSuffix(gone, ":8080")
	if r, err := do(java, "DELETE", "/nacos/v1/ns/instance", url.Values{"serviceName": {services[0]}, "ip": {ip}, "port": {"8080"}, "ephemeral": {"true"}}, nil); err != nil || r.status != 200 {
		t.Fatalf("deregister on the Java node: %v %+v", err, r)
	}
	eventually(t, 30*time.Second, "the deregistration reaches every node", func() error {
		for _, n := range all {
			h, _ := hosts(n, services[0])
			if slices.Contains(h, gone) {
				return fmt.Errorf("%s still lists %s", n.addr(), gone)
			}
		}
		return nil
	})
}

// distroServer asks a nacosd node who owns a service.
func distroServer(t *testing.T, n *node, svc string) string {
	r, err := do(n, "GET", "/nacos/v1/ns/operator/distro/server", url.Values{"serviceName": {svc}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		ResponsibleServer string `json:"responsibleServer"`
	}
	if err := json.Unmarshal([]byte(r.body), &b); err != nil {
		t.Fatalf("distro/server: %s", r.body)
	}
	return b.ResponsibleServer
}

// datums is a node's Distro data as text: key → sorted ip:port list.
func datums(n *node) (string, error) {
	r, err := do(n, "GET", "/nacos/v1/ns/distro/datums", nil, nil)
	if err != nil {
		return "", err
	}
	var m map[string]struct {
		Value struct {
			InstanceList []struct {
				IP   string `json:"ip"`
				Port int    `json:"port"`
			} `json:"instanceList"`
		} `json:"value"`
	}
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		return "", fmt.Errorf("%s datums: %v", n.addr(), err)
	}
	var lines []string
	for k, d := range m {
		if !strings.Contains(k, "mixed.svc") {
			continue
		}
		var ips []string
		for _, in := range d.Value.InstanceList {
			ips = append(ips, net.JoinHostPort(in.IP, strconv.Itoa(in.Port)))
		}
		slices.Sort(ips)
		lines = append(lines, k+"="+strings.Join(ips, ","))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n"), nil
}
