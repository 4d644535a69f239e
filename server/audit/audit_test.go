package audit

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/internal/testlog"
)

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not a JSON line: %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// TestLineFormat: the documented fields, the target as an object, one
// file per local day.
func TestLineFormat(t *testing.T) {
	dir := t.TempDir()
	loc := time.FixedZone("CST", 8*3600)
	clk := clocktest.New(time.Date(2026, 12, 6, 23, 59, 59, 500e6, loc))
	l, err := Open(Config{Dir: dir, Clock: clk, Location: loc, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	l.Record(Entry{Action: "config.publish", User: "nacos", IP: "10.0.0.7", Remote: "127.0.0.1", Method: "POST",
		Path: "/nacos/v1/cs/configs", Status: 200, Result: "ok",
		Target: []Param{{"tenant", ""}, {"group", "DEFAULT_GROUP"}, {"dataId", "app.yaml"}}})
	clk.Advance(time.Second) // the next local day
	l.Record(Entry{Action: "instance.deregister", IP: "10.0.0.8", Remote: "10.0.0.8", Method: "DELETE", Path: "/nacos/v1/ns/instance",
		Status: 403, Result: "denied", Relayed: true, Target: []Param{{"serviceName", "svc"}, {"ip", "1.2.3.4"}, {"port", "80"}}})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	day1 := readLines(t, filepath.Join(dir, "audit.2026-12-06.log"))
	day2 := readLines(t, filepath.Join(dir, "audit.2026-12-07.log"))
	if len(day1) != 1 || len(day2) != 1 {
		t.Fatalf("lines: %v / %v", day1, day2)
	}
	b, _ := json.Marshal(day1[0])
	if want := `{"action":"config.publish","ip":"10.0.0.7","method":"POST","path":"/nacos/v1/cs/configs","remote":"127.0.0.1","result":"ok","status":200,"target":{"dataId":"app.yaml","group":"DEFAULT_GROUP","tenant":""},"time":"2026-12-06T23:59:59.500+08:00","user":"nacos"}`; string(b) != want {
		t.Errorf("line\n got %s\nwant %s", b, want)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "audit.2026-12-06.log"))
	if !strings.HasPrefix(string(raw), `{"time":"2026-12-06T23:59:59.500+08:00","action":"config.publish","user":"nacos","ip":"10.0.0.7","remote":"127.0.0.1",`) {
		t.Errorf("field order: %s", raw)
	}
	if day2[0]["relayed"] != true || day2[0]["user"] != "" || day2[0]["remote"] != nil || day2[0]["result"] != "denied" {
		t.Errorf("second line: %v", day2[0])
	}
}

// TestRecordNeverBlocks: with a queue of one, a burst from many goroutines
// returns at once; what did not fit is counted, and the file says so.
func TestRecordNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{Dir: dir, QueueSize: 1, Logger: testlog.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				l.Record(Entry{Action: "instance.register", Method: "POST", Path: "/nacos/v1/ns/instance", Status: 200, Result: "ok"})
			}
		}()
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := l.Written() + l.Dropped(); got != workers*each {
		t.Fatalf("written %d + dropped %d != %d", l.Written(), l.Dropped(), workers*each)
	}
	if l.Dropped() == 0 {
		t.Skip("the writer kept up with the burst: nothing to check about drops")
	}
	var written, dropped int64
	for _, m := range readLines(t, l.FileName(time.Now())) {
		switch m["action"] {
		case "instance.register":
			written++
		case "audit.dropped":
			dropped += int64(m["count"].(float64))
		}
	}
	if written != l.Written() || dropped != l.Dropped() {
		t.Errorf("file: %d written, %d dropped; counters %d, %d", written, dropped, l.Written(), l.Dropped())
	}
}
