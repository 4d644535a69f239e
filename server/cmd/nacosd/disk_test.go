package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a tmpfs of size (e.g. "16m") on a fresh directory, or
// skips the test when this process may not mount (not root, no tmpfs).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

// fill writes a file until the file system is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, chunk := range []int{1 << 20, 4 << 10, 512} {
		buf := make([]byte, chunk)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill %s: %v", path, err)
				}
				break
			}
		}
	}
	return path
}

func randomText(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestFullDiskKeepsNamingUp runs nacosd with its data directory on a 16 MB
// tmpfs, fills the disk and checks that naming keeps serving: ephemeral
// registration, beats and reads answer as usual and a beating instance
// outlives its delete timeout; CP writes answer a 500 that says the disk
// is full, and succeed again once space returns; every write acknowledged
// before, during and after is there after a restart.
func TestFullDiskKeepsNamingUp(t *testing.T) {
	nacosdBinary(t)
	mnt := mountTmpfs(t, "16m")
	dir := filepath.Join(mnt, "data")
	port := freePort(t)
	n := startNode(t, dir, port)

	const svc = "DEFAULT_GROUP@@disk"
	// short beat timeouts, so waiting past the delete timeout takes seconds
	meta := `{"preserved.heart.beat.timeout":"2000","preserved.ip.delete.timeout":"4000","preserved.heart.beat.interval":"500"}`
	register := func(ip string, port int, ephemeral bool) (int, string) {
		return n.do(http.MethodPost, "/v1/ns/instance", url.Values{"serviceName": {svc}, "ip": {ip},
			"port": {strconv.Itoa(port)}, "ephemeral": {strconv.FormatBool(ephemeral)}, "metadata": {meta}})
	}
	if code, body := register("10.0.0.1", 8080, true); code != 200 || body != "ok" {
		t.Fatalf("register ephemeral: %d %s", code, body)
	}
	persistent := map[int]bool{}
	for p := 9000; p < 9005; p++ {
		if code, body := register("10.0.1.1", p, false); code != 200 || body != "ok" {
			t.Fatalf("register persistent: %d %s", code, body)
		}
		persistent[p] = true
	}

	// the client's beat loop, every 500 ms as the metadata asks
	beatForm := func() url.Values {
		b := `{"ip":"10.0.0.1","port":8080,"cluster":"DEFAULT","serviceName":"` + svc + `","weight":1,"metadata":` + meta + `}`
		return url.Values{"serviceName": {svc}, "beat": {b}}
	}
	beat := func() (int, string) { return n.do(http.MethodPut, "/v1/ns/instance/beat", beatForm()) }
	var beatMu sync.Mutex
	var beatFailures []string
	stopBeats := make(chan struct{})
	beatsDone := make(chan struct{})
	go func() {
		defer close(beatsDone)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopBeats:
				return
			case <-tick.C:
			}
			code, body, err := n.try(http.MethodPut, "/v1/ns/instance/beat", beatForm())
			if err != nil || code != 200 || !strings.Contains(body, `"code":10200`) {
				beatMu.Lock()
				beatFailures = append(beatFailures, fmt.Sprintf("%d %s %v", code, body, err))
				beatMu.Unlock()
			}
		}
	}()
	var stopOnce sync.Once
	stopBeating := func() { stopOnce.Do(func() { close(stopBeats); <-beatsDone }) }
	defer stopBeating()

	published := map[string]string{}
	publish := func(i int) (int, string) {
		id, content := "disk-"+strconv.Itoa(i), randomText(4096)
		code, body := n.do(http.MethodPost, "/v1/cs/configs", url.Values{"dataId": {id}, "group": {"DEFAULT_GROUP"}, "content": {content}})
		if code == 200 && body == "true" {
			published[id] = content
		}
		return code, body
	}
	for i := 0; i < 20; i++ {
		if code, body := publish(i); code != 200 {
			t.Fatalf("publish before the disk is full: %d %s", code, body)
		}
	}

	filler := fill(t, mnt)
	var failBody string
	i := 20
	for ; i < 5000; i++ {
		code, body := publish(i)
		if code == 500 {
			failBody = body
			break
		}
		if code != 200 {
			t.Fatalf("publish %d on a full disk: %d %s", i, code, body)
		}
	}
	if failBody == "" {
		t.Fatalf("5000 publishes on a full disk all succeeded")
	}
	t.Logf("publish %d on the full disk: 500 %s", i, failBody)
	if !strings.Contains(failBody, "no space left on device") {
		t.Errorf("CP write error does not say the disk is full: %s", failBody)
	}
	// Later CP writes fail the same way (also once the leader stepped down
	// after the failed write), or land in a page bolt freed inside its
	// file: then they are acknowledged and must survive like any other.
	failed := 0
	for range 20 {
		i++
		code, body := publish(i)
		switch {
		case code == 500 && strings.Contains(body, "no space left on device"):
			failed++
		case code != 200:
			t.Errorf("publish %d on the full disk: %d %s", i, code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if failed == 0 {
		t.Errorf("20 more publishes on the full disk all succeeded")
	}
	i++
	if code, body := register("10.0.1.1", 9100, false); code == 200 && body == "ok" {
		persistent[9100] = true // a small entry may still fit a free page
	} else if code != 500 || !strings.Contains(body, "no space left on device") {
		t.Errorf("persistent register on the full disk: %d %s", code, body)
	}

	// naming without raft: a new ephemeral instance, reads, beats
	if code, body := register("10.0.0.2", 8080, true); code != 200 || body != "ok" {
		t.Errorf("ephemeral register on the full disk: %d %s", code, body)
	}
	if code, body := beat(); code != 200 || !strings.Contains(body, `"code":10200`) {
		t.Errorf("beat on the full disk: %d %s", code, body)
	}
	list := func() (int, string) {
		return n.do(http.MethodGet, "/v1/ns/instance/list", url.Values{"serviceName": {svc}})
	}
	if code, body := list(); code != 200 || !strings.Contains(body, `"ip":"10.0.0.2"`) || !strings.Contains(body, `"ip":"10.0.1.1"`) {
		t.Errorf("list on the full disk: %d %s", code, body)
	}
	// past the beating instance's delete timeout (4 s); 10.0.0.2 does not beat
	time.Sleep(6 * time.Second)
	code, body := list()
	if code != 200 || !strings.Contains(body, `"ip":"10.0.0.1"`) {
		t.Errorf("beating instance gone after 6 s on a full disk: %d %s", code, body)
	}
	if strings.Contains(body, `"ip":"10.0.0.2"`) {
		t.Errorf("instance without beats not expired: %s", body)
	}
	for _, q := range []string{"/v1/ns/service/list?pageNo=1&pageSize=10", "/v1/ns/catalog/services?pageNo=1&pageSize=10", "/v1/ns/operator/metrics"} {
		if code, body := n.do(http.MethodGet, q, nil); code != 200 {
			t.Errorf("GET %s on the full disk: %d %s", q, code, body)
		}
	}
	if code, body := n.do(http.MethodGet, "/v1/cs/configs", url.Values{"dataId": {"disk-0"}, "group": {"DEFAULT_GROUP"}}); code != 200 || body != published["disk-0"] {
		t.Errorf("config read on the full disk: %d %.80s", code, body)
	}

	// space returns: CP writes succeed again by themselves
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, func() error {
		code, body := publish(i)
		i++
		if code != 200 {
			return fmt.Errorf("publish after space returned: %d %s", code, body)
		}
		return nil
	})
	if code, body := register("10.0.1.1", 9200, false); code != 200 || body != "ok" {
		t.Errorf("persistent register after space returned: %d %s", code, body)
	}
	persistent[9200] = true
	beatMu.Lock()
	if len(beatFailures) > 0 {
		t.Errorf("%d beats failed, first: %s", len(beatFailures), beatFailures[0])
	}
	beatMu.Unlock()

	// nothing acknowledged is lost
	stopBeating()
	n.stop()
	n2 := startNode(t, dir, port)
	for id, content := range published {
		if code, body := n2.do(http.MethodGet, "/v1/cs/configs", url.Values{"dataId": {id}, "group": {"DEFAULT_GROUP"}}); code != 200 || body != content {
			t.Errorf("acknowledged config %s after restart: %d %.60s", id, code, body)
		}
	}
	_, body = n2.do(http.MethodGet, "/v1/ns/instance/list", url.Values{"serviceName": {svc}})
	for p := range persistent {
		if !strings.Contains(body, `"port":`+strconv.Itoa(p)+`,`) {
			t.Errorf("acknowledged persistent instance :%d missing after restart: %s", p, body)
		}
	}
	t.Logf("%d configs and %d persistent instances acknowledged, all present after restart", len(published), len(persistent))
	n2.stop()
}
