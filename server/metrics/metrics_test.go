package metrics

import (
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/server/config"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/push"
)

// fakeSources are mutable domain figures.
type fakeSources struct {
	mu           sync.Mutex
	push         push.Counters
	naming       naming.Stats
	config       config.Stats
	svc, in      int
	raft         map[string]string
	defaultAdmin bool
}

func (f *fakeSources) sources() Sources {
	return Sources{
		Counts:               func() (int, int) { f.mu.Lock(); defer f.mu.Unlock(); return f.svc, f.in },
		Naming:               func() naming.Stats { f.mu.Lock(); defer f.mu.Unlock(); return f.naming },
		Push:                 func() push.Counters { f.mu.Lock(); defer f.mu.Unlock(); return f.push },
		Config:               func() config.Stats { f.mu.Lock(); defer f.mu.Unlock(); return f.config },
		Raft:                 func() map[string]string { f.mu.Lock(); defer f.mu.Unlock(); return f.raft },
		DefaultAdminPassword: func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.defaultAdmin },
	}
}

// values gathers the registry into "name{l=v,...}" → value.
func values(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, mt := range mf.Metric {
			var ls []string
			for _, lp := range mt.Label {
				ls = append(ls, lp.GetName()+"="+lp.GetValue())
			}
			key := mf.GetName() + "{" + strings.Join(ls, ",") + "}"
			switch mf.GetType() {
			case dto.MetricType_GAUGE:
				out[key] = mt.Gauge.GetValue()
			case dto.MetricType_COUNTER:
				out[key] = mt.Counter.GetValue()
			case dto.MetricType_SUMMARY:
				out[key+"_count"] = float64(mt.Summary.GetSampleCount())
				out[key+"_sum"] = mt.Summary.GetSampleSum()
			case dto.MetricType_HISTOGRAM:
				out[key+"_count"] = float64(mt.Histogram.GetSampleCount())
			}
		}
	}
	return out
}

func mon(module, name string) string { return "nacos_monitor{module=" + module + ",name=" + name + "}" }

func TestNacosMonitor(t *testing.T) {
	loc := time.FixedZone("CST", 8*3600)
	clk := clocktest.New(time.Date(2026, 3, 1, 23, 59, 0, 0, loc))
	f := &fakeSources{svc: 3, in: 7, config: config.Stats{Items: 5, Holders: 2, Wakeups: 9},
		push: push.Counters{Total: 10, Failed: 1, Pending: 2, Acked: 7, Sends: 12, Capped: 1}, defaultAdmin: true, naming: naming.Stats{Beats: 4, BeatsUnknown: 1, TCPProbes: 6, HTTPProbes: 1},
		raft: map[string]string{"state": "Leader", "term": "3", "last_log_index": "20", "commit_index": "20", "fsm_applied_index": "18", "num_peers": "0", "last_contact": "0"}}
	m := New(Config{Sources: f.sources(), Clock: clk, Location: loc})
	defer m.Close()
	m.ConfigGet()
	m.ConfigGet()
	m.ConfigPublish()
	f.mu.Lock()
	f.push.Total, f.push.Failed, f.naming.TCPProbes = 14, 2, 9 // activity since start of the day
	f.mu.Unlock()
	v := values(t, m)
	want := map[string]float64{
		mon("config", "getConfig"): 2, mon("config", "publish"): 1, mon("config", "longPolling"): 2, mon("config", "configCount"): 5,
		mon("config", "notifyTask"): 0, mon("config", "dumpTask"): 0,
		mon("naming", "serviceCount"): 3, mon("naming", "domCount"): 3, mon("naming", "ipCount"): 7,
		mon("naming", "totalPush"): 4, mon("naming", "failedPush"): 2 + 2 - 1, mon("naming", "tcpHealthCheck"): 3,
		mon("naming", "maxPushCost"): -1, mon("naming", "avgPushCost"): -1, mon("naming", "leaderStatus"): 0,
		"nacosd_push_total{}": 14, "nacosd_push_acked_total{}": 7, "nacosd_push_pending{}": 2,
		"nacosd_config_long_poll_wakeups_total{}": 9, "nacosd_naming_beats_total{}": 4, "nacosd_naming_health_checks_total{type=tcp}": 9,
		"nacosd_push_capped_total{}": 1, "nacosd_auth_default_admin_password{}": 1,
		"nacosd_raft_state{state=Leader}": 1, "nacosd_raft_state{state=Follower}": 0, "nacosd_raft_term{}": 3, "nacosd_raft_commit_lag{}": 2,
	}
	for k, w := range want {
		if got, ok := v[k]; !ok || got != w {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, w)
		}
	}
	for _, k := range []string{"go_goroutines{}", "process_start_time_seconds{}", "system_cpu_count{}", "jvm_memory_used_bytes{area=heap,id=Go heap}"} {
		if _, ok := v[k]; !ok {
			t.Errorf("%s missing", k)
		}
	}

	// local midnight resets the daily figures, as Java's cron "0 0 0 * * ?"
	clk.Advance(time.Minute)
	v = values(t, m)
	for _, k := range []string{mon("config", "getConfig"), mon("config", "publish"), mon("naming", "totalPush"), mon("naming", "tcpHealthCheck")} {
		if v[k] != 0 {
			t.Errorf("after midnight %s = %v, want 0", k, v[k])
		}
	}
	if got := v[mon("naming", "failedPush")]; got != 2 { // still-pending pushes stay counted
		t.Errorf("after midnight failedPush = %v, want 2", got)
	}
	if v["nacosd_push_total{}"] != 14 {
		t.Error("nacosd's counters must not reset")
	}
}

func TestPushCostWindow(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)) // on a 15 s boundary
	m := New(Config{Clock: clk})
	defer m.Close()
	m.PushAcked(10 * time.Millisecond)
	m.PushAcked(31 * time.Millisecond)
	if v := values(t, m); v[mon("naming", "maxPushCost")] != -1 {
		t.Fatalf("slot not complete yet: max %v", v[mon("naming", "maxPushCost")])
	}
	clk.Advance(15 * time.Second)
	v := values(t, m)
	if v[mon("naming", "maxPushCost")] != 31 || v[mon("naming", "avgPushCost")] != 20 || v["nacosd_push_ack_seconds{}_count"] != 2 {
		t.Fatalf("max %v avg %v hist %v", v[mon("naming", "maxPushCost")], v[mon("naming", "avgPushCost")], v["nacosd_push_ack_seconds{}_count"])
	}
	clk.Advance(15 * time.Second) // a slot without acks
	if v := values(t, m); v[mon("naming", "maxPushCost")] != -1 || v[mon("naming", "avgPushCost")] != -1 {
		t.Fatalf("idle slot: %v %v", v[mon("naming", "maxPushCost")], v[mon("naming", "avgPushCost")])
	}
}

func TestHTTPRequests(t *testing.T) {
	clk := clocktest.New(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
	m := New(Config{Clock: clk})
	defer m.Close()
	m.ObserveRequest(Request{Method: "GET", URI: "/v1/cs/configs", Status: 404, Exception: "None", Duration: 300 * time.Millisecond})
	m.ObserveRequest(Request{Method: "GET", URI: "/v1/cs/configs", Status: 404, Exception: "None", Duration: 100 * time.Millisecond})
	key := "http_server_requests_seconds{exception=None,method=GET,outcome=CLIENT_ERROR,status=404,uri=/v1/cs/configs}"
	maxKey := "http_server_requests_seconds_max{exception=None,method=GET,outcome=CLIENT_ERROR,status=404,uri=/v1/cs/configs}"
	v := values(t, m)
	if v[key+"_count"] != 2 || v[key+"_sum"] < 0.399 || v[maxKey] != 0.3 {
		t.Fatalf("count %v sum %v max %v", v[key+"_count"], v[key+"_sum"], v[maxKey])
	}
	clk.Advance(80 * time.Second) // two rotations: still within the window
	if v := values(t, m); v[maxKey] != 0.3 {
		t.Fatalf("max after 80 s = %v", v[maxKey])
	}
	clk.Advance(40 * time.Second) // 120 s: expired
	if v := values(t, m); v[maxKey] != 0 || v[key+"_count"] != 2 {
		t.Fatalf("after 120 s: max %v count %v", v[maxKey], v[key+"_count"])
	}
}

// TestBuildInfo: nacosd_build_info says which build runs.
func TestBuildInfo(t *testing.T) {
	f := &fakeSources{raft: map[string]string{}}
	m := New(Config{Sources: f.sources(), Clock: clocktest.New(time.Now()),
		Build: buildinfo.Info{Version: "v0.0.0-20261206031000-0123456789ab", Revision: "0123456789abcdef",
			Time: time.Date(2026, 12, 6, 3, 10, 0, 0, time.UTC), GoVersion: "go1.26.8"}})
	defer m.Close()
	key := "nacosd_build_info{goversion=go1.26.8,revision=0123456789abcdef,revision_time=2026-12-06T03:10:00Z,version=v0.0.0-20261206031000-0123456789ab}"
	if v, ok := values(t, m)[key]; !ok || v != 1 {
		t.Errorf("%s = %v, %v", key, v, ok)
	}
}
