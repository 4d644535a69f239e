package migrate

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	osuser "os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"golang.org/x/crypto/bcrypt"

	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server/servertest"
)

// The Java test needs Debian's mariadb-server and the Java Nacos 1.4.8
// reference (NACOS_REFERENCE_HOME); server/migrate/ci.sh provides both and
// runs it in the conformance tier (-tags conformance), where missing
// pieces are a failure.
func requireJava(t *testing.T) string {
	t.Helper()
	testtier.Require(t, testtier.Conformance) // bash server/migrate/ci.sh
	home := os.Getenv("NACOS_REFERENCE_HOME")
	if home == "" {
		t.Fatal("NACOS_REFERENCE_HOME is not set (conformance/reference.sh prints it)")
	}
	return home
}

// freePort is a free port p (p-1000 free too, for raft) below the
// ephemeral range.
func freePort(t *testing.T) int { return servertest.FreePortPair(t, "127.0.0.1") }

func lookBin(t *testing.T, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/usr/bin", "/usr/local/bin"} {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	t.Fatalf("%s not found (apt-get install mariadb-server)", name)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// mariaDB is a throw-away MariaDB server on 127.0.0.1 with a nacos
// database (conf/nacos-mysql.sql of the reference distribution), a nacos
// user for Java Nacos and a read-only reader user for the migration.
type mariaDB struct {
	port int
	dir  string
}

func startMariaDB(t *testing.T, schema string) *mariaDB {
	t.Helper()
	dir, err := os.MkdirTemp("", "mdb") // short: the socket path is limited to 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	me := "mysql"
	if u, err := osuser.Current(); err == nil {
		me = u.Username
	}
	data := filepath.Join(dir, "data")
	install := exec.Command(lookBin(t, "mariadb-install-db"), "--no-defaults", "--datadir="+data, "--user="+me,
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	m := &mariaDB{port: freePort(t), dir: dir}
	var log bytes.Buffer
	cmd := exec.Command(lookBin(t, "mariadbd"), "--no-defaults", "--datadir="+data, "--socket="+filepath.Join(dir, "s"),
		"--port="+strconv.Itoa(m.port), "--bind-address=127.0.0.1", "--user="+me, "--skip-name-resolve",
		"--innodb-buffer-pool-size=32M", "--pid-file="+filepath.Join(dir, "pid"), "--log-error="+filepath.Join(dir, "err.log"),
		"--character-set-server=utf8mb4", "--default-time-zone=+00:00")
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	root, err := sql.Open("mysql", "root@unix("+filepath.Join(dir, "s")+")/?multiStatements=true")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	deadline := time.Now().Add(60 * time.Second)
	for root.Ping() != nil {
		if time.Now().After(deadline) {
			errLog, _ := os.ReadFile(filepath.Join(dir, "err.log"))
			t.Fatalf("mariadb did not start: %s\n%s", log.String(), errLog)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, q := range []string{
		"CREATE DATABASE nacos CHARACTER SET utf8mb4",
		"CREATE USER 'nacos'@'%' IDENTIFIED BY 'nacos'", "GRANT ALL ON nacos.* TO 'nacos'@'%'",
		"CREATE USER 'reader'@'%' IDENTIFIED BY 'reader'", "GRANT SELECT ON nacos.* TO 'reader'@'%'",
		"USE nacos", schema,
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("mariadb: %s: %v", truncate(q, 80), err)
		}
	}
	return m
}

func (m *mariaDB) setPassword(t *testing.T, user, password string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), 10)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", fmt.Sprintf("nacos:nacos@tcp(127.0.0.1:%d)/nacos", m.port))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("UPDATE users SET password = ? WHERE username = ?", string(hash), user); err != nil {
		t.Fatal(err)
	}
}

// startJava runs the Java Nacos 1.4.8 reference standalone on MariaDB with
// auth on; its logs go to t.Log on failure.
func startJava(t *testing.T, home string, db *mariaDB) *api {
	t.Helper()
	port := freePort(t)
	work := t.TempDir()
	url := fmt.Sprintf("jdbc:mysql://127.0.0.1:%d/nacos?characterEncoding=utf8&connectTimeout=1000&socketTimeout=3000&autoReconnect=true&useSSL=false&serverTimezone=UTC", db.port)
	cmd := exec.Command("bash", filepath.Join("..", "..", "javatest", "reference", "run.sh"), strconv.Itoa(port),
		"-Duser.timezone=UTC", "-Dspring.datasource.platform=mysql", "-Ddb.num=1", "-Ddb.url.0="+url,
		"-Ddb.user=nacos", "-Ddb.password=nacos", "-Dnacos.core.auth.enabled=true",
		// the user and role caches reload every 15 s, and a reload briefly
		// empties them ("unknown user!"): read the database on every call
		"-Dnacos.core.auth.caching.enabled=false",
		"-Dnacos.core.auth.server.identity.key=migrate-test", "-Dnacos.core.auth.server.identity.value=migrate-test-identity")
	cmd.Env = append(os.Environ(), "NACOS_REFERENCE_HOME="+home, "NACOS_REFERENCE_WORK="+work)
	logf, err := os.Create(filepath.Join(work, "java.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		logf.Close()
		if t.Failed() {
			out, _ := os.ReadFile(filepath.Join(work, "java.out"))
			nacosLog, _ := os.ReadFile(filepath.Join(work, "logs", "nacos.log"))
			t.Logf("java output (tail):\n%s\nnacos.log (tail):\n%s", tail(out, 4000), tail(nacosLog, 4000))
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d/nacos", port)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		resp, err := http.Get(base + "/v1/console/health/readiness")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case <-exited:
			t.Fatalf("Java Nacos exited before it was ready on %s", base)
		case <-time.After(500 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("Java Nacos not ready on %s after 3 min", base)
		}
	}
	return &api{t: t, name: "java", base: base}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// TestMigrateFromJavaOnMariaDB fills a Java Nacos 1.4.8 on MariaDB through
// its API, migrates it into nacosd (MySQL for configs and users, the API
// for naming) and compares both servers entry by entry through their
// APIs; then the API-only and MySQL-only paths.
func TestMigrateFromJavaOnMariaDB(t *testing.T) {
	home := requireJava(t)
	schema, err := os.ReadFile(filepath.Join(home, "conf", "nacos-mysql.sql"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	db := startMariaDB(t, string(schema))
	java := startJava(t, home, db)
	t.Logf("MariaDB and Java Nacos up in %s", time.Since(start).Round(time.Millisecond))
	java.login("nacos", "nacos")
	// Java loads roles into its cache 5 s after start, then every 15 s:
	// until then even nacos is refused admin calls
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, body := java.do("GET", "/v1/auth/permissions", v("pageNo", "1", "pageSize", "1"), nil)
		if st == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nacos is no admin on Java after 60 s: %d %s", st, body)
		}
		time.Sleep(500 * time.Millisecond)
	}
	fill(java, true, true)
	// an admin password changed on Java must log in on nacosd afterwards
	// (set in the database: Java 1.4.8's PUT /v1/auth/users looks for an
	// HTTP session and refuses a token)
	db.setPassword(t, "nacos", "java-admin-pw")
	java.token = ""
	java.login("nacos", "java-admin-pw")

	ctx := context.Background()
	dsn := fmt.Sprintf("reader:reader@tcp(127.0.0.1:%d)/nacos", db.port)
	_, dst := authNode(t)
	opts := Options{From: java.base, FromUser: "nacos", FromPassword: "java-admin-pw", FromMySQL: dsn, MySQLLocation: time.UTC,
		To: dst.base, ToUser: "nacos", ToPassword: "nacos"}

	dry := opts
	dry.DryRun = true
	sum, err := Run(ctx, dry)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Changed() || sum.Counts(KindConfigs).Created != 5 {
		t.Fatalf("dry run: configs %+v", sum.Counts(KindConfigs))
	}
	if body := dst.must("GET", "/v1/cs/configs", v("search", "blur", "dataId", "", "group", "", "tenant", "", "pageNo", "1", "pageSize", "10"), nil); !strings.Contains(body, `"totalCount":0`) {
		t.Fatalf("dry run wrote configs: %s", body)
	}

	sum, err = Run(ctx, opts)
	logSummary(t, sum)
	if err != nil {
		t.Fatal(err)
	}
	if sk := sum.Skips(); len(sk) > 0 {
		t.Fatalf("skipped: %+v", sk)
	}
	for kind, want := range map[string]Counts{
		KindNamespaces: {Created: 2}, KindConfigs: {Created: 5}, KindBeta: {Created: 1}, KindTag: {Created: 1},
		KindUsers: {Created: 2, Updated: 1}, KindRoles: {Created: 3, Unchanged: 1}, KindPermissions: {Created: 2},
		KindServices: {Created: 2}, KindClusters: {Created: 2}, KindInstances: {Created: 3},
	} {
		if got := sum.Counts(kind); got != want {
			t.Errorf("%s: %+v, want %+v", kind, got, want)
		}
	}
	if c := sum.Counts(KindHistory); c.Created < 7 {
		t.Errorf("history: %+v", c)
	}
	dst.login("nacos", "java-admin-pw")
	for u, pw := range map[string]string{"alice": "alice-pw-1", "bob": "bob pw"} {
		dst.must("POST", "/v1/auth/users/login", v("username", u, "password", pw), nil, "accessToken")
	}
	compare(t, java, dst, compareOptions{users: true, tags: true, nids: true, deleted: true})

	opts.ToPassword = "java-admin-pw"
	again, err := Run(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed() || len(again.Skips()) > 0 {
		logSummary(t, again)
		t.Fatal("second run changed something")
	}

	// the HTTP API alone: no tag variants, no history of deleted configs
	_, dst2 := authNode(t)
	sum, err = Run(ctx, Options{From: java.base, FromUser: "nacos", FromPassword: "java-admin-pw", To: dst2.base, ToUser: "nacos", ToPassword: "nacos"})
	logSummary(t, sum)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Skips()) > 0 || sum.Counts(KindConfigs).Created != 5 || !strings.Contains(strings.Join(sum.Notes(), "\n"), "tag variants") {
		t.Fatalf("API-only run: skips %+v, notes %v", sum.Skips(), sum.Notes())
	}
	dst2.login("nacos", "java-admin-pw")
	compare(t, java, dst2, compareOptions{users: true})

	// MySQL alone: configs and users, naming reported as not there
	_, dst3 := authNode(t)
	sum, err = Run(ctx, Options{FromMySQL: dsn, MySQLLocation: time.UTC, To: dst3.base, ToUser: "nacos", ToPassword: "nacos"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Counts(KindConfigs).Created != 5 || sum.Counts(KindServices).Total() != 0 || !strings.Contains(strings.Join(sum.Notes(), "\n"), "naming") {
		logSummary(t, sum)
		t.Fatal("MySQL-only run")
	}
	// the cut-over bridge against Java: its beat check runs every 5 s, so
	// timings are coarser than in TestBridgeCutover
	cutover(t, java, dst, cutoverTiming{beat: 500 * time.Millisecond, timeout: 3 * time.Second, interval: 500 * time.Millisecond,
		live: 2 * time.Second, hold: 15 * time.Second}, Options{FromUser: "nacos", FromPassword: "java-admin-pw", ToUser: "nacos", ToPassword: "java-admin-pw"})
	t.Logf("whole test %s", time.Since(start).Round(time.Millisecond))
}

func logSummary(t *testing.T, s *Summary) {
	t.Helper()
	if s == nil {
		return
	}
	var b strings.Builder
	s.Print(&b)
	t.Log("\n" + b.String())
}
