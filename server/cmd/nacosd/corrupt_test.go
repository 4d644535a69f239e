package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// boltUsedBytes is the size of the pages a bolt file uses (its high-water
// mark), read with bolt itself from the intact file.
func boltUsedBytes(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.View(func(tx *bbolt.Tx) error { n = tx.Size(); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCorruptStoreExitsWithAdvice writes configs (small and larger than a
// bolt page) and persistent instances through the binary, then starts it on
// copies of the data directory with 4 KiB of raft/raft.db zeroed at many
// offsets. Each start must either exit non-zero with a message naming the
// file and what to do, or serve every acknowledged write unchanged (the
// zeroed page was free). Never a panic, a fatal runtime error or changed
// data. Before the check, 6 of 9 offsets panicked (invalid page type,
// msgpack decode error, index out of range) and others ran out of memory.
func TestCorruptStoreExitsWithAdvice(t *testing.T) {
	nacosdBinary(t)
	src := t.TempDir()
	port := freePort(t)
	// a fixed raft address: with a new one each start the standalone node
	// rewrites its configuration with a snapshot, and the log is compacted
	raftAddr := []string{"-raft-addr", "127.0.0.1:" + strconv.Itoa(freePort(t))}
	n := startNode(t, src, port, raftAddr...)
	configs := map[string]string{}
	for i := range 60 {
		size := 200
		if i%5 == 0 {
			size = 9000
		}
		id, content := "c-"+strconv.Itoa(i), randomText(size)
		if code, body := n.do(http.MethodPost, "/v1/cs/configs", url.Values{"dataId": {id}, "group": {"G"}, "content": {content}}); code != 200 || body != "true" {
			t.Fatalf("publish %s: %d %s", id, code, body)
		}
		configs[id] = content
		if code, body := n.do(http.MethodPost, "/v1/ns/instance", url.Values{"serviceName": {"persist"}, "ip": {"10.1.0.1"},
			"port": {strconv.Itoa(1000 + i)}, "ephemeral": {"false"}}); code != 200 || body != "ok" {
			t.Fatalf("register: %d %s", code, body)
		}
	}
	n.stop()
	// One more start and stop: bolt falls back to the older meta page when
	// the newer is damaged, which loses the last transaction; let that be
	// the restart's raft no-op entry, not an acknowledged write.
	startNode(t, src, port, raftAddr...).stop()
	db := filepath.Join(src, "raft", "raft.db")
	// bolt's pages in use end at its high-water mark; the file is longer
	used := boltUsedBytes(t, db)
	// every page bolt uses, and some unaligned offsets
	var offsets []int64
	for off := int64(0); off < used; off += 4096 {
		offsets = append(offsets, off)
	}
	for off := int64(8 * 4096); off < used; off += used / 8 {
		offsets = append(offsets, off|1234)
	}
	var reported, intact int
	for _, off := range offsets {
		dir := filepath.Join(t.TempDir(), "data")
		copyTree(t, src, dir)
		damaged := filepath.Join(dir, "raft", "raft.db")
		f, err := os.OpenFile(damaged, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(make([]byte, 4096), off); err != nil {
			t.Fatal(err)
		}
		f.Close()

		p := launchWith(t, "4000000", dir, port, raftAddr...)
		ready := false
		deadline := time.Now().Add(30 * time.Second)
		for !ready && time.Now().Before(deadline) {
			if p.wait(100 * time.Millisecond) {
				break
			}
			code, _, err := p.try(http.MethodGet, "/v1/console/health/readiness", nil)
			ready = err == nil && code == 200
		}
		out := p.log.String()
		if strings.Contains(out, "panic:") || strings.Contains(out, "fatal error") {
			t.Fatalf("offset %d: nacosd crashed:\n%.3000s", off, out)
		}
		if !ready {
			if !p.wait(0) {
				t.Fatalf("offset %d: neither ready nor exited after 30 s:\n%s", off, out)
			}
			if p.err == nil {
				t.Fatalf("offset %d: exited with status 0 on a damaged store:\n%s", off, out)
			}
			for _, want := range []string{damaged + " is damaged", "docs/operations.md", "restore"} {
				if !strings.Contains(out, want) {
					t.Fatalf("offset %d: exit message lacks %q:\n%s", off, want, out)
				}
			}
			reported++
			continue
		}
		for id, content := range configs {
			if code, body := p.do(http.MethodGet, "/v1/cs/configs", url.Values{"dataId": {id}, "group": {"G"}}); code != 200 || body != content {
				t.Fatalf("offset %d: started, but config %s reads %d %.40q", off, id, code, body)
			}
		}
		_, body := p.do(http.MethodGet, "/v1/ns/instance/list", url.Values{"serviceName": {"persist"}})
		if c := strings.Count(body, `"ip":"10.1.0.1"`); c != len(configs) {
			t.Fatalf("offset %d: started, but %d of %d persistent instances listed", off, c, len(configs))
		}
		p.stop()
		intact++
	}
	t.Logf("%d offsets in the %d bytes bolt uses of raft.db: %d refused with advice, %d started with every write intact", len(offsets), used, reported, intact)
	if reported == 0 {
		t.Fatal("no damage reported at any offset")
	}
}
