package metrics

import (
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Java 1.4.8's lazily created Micrometer meters that the community Grafana
// dashboard queries: the config notify timer nacos_timer_seconds{module,
// name="notifyRt"} (a Timer: summary plus windowed _max) and the
// nacos_exception_total{module,name} counters. nacosd creates every series
// at start, so the dashboard's alert panels read 0 instead of "No data".
var exceptionNames = []struct{ module, name string }{
	{"config", "illegalArgument"}, {"config", "nacos"}, {"config", "db"}, {"config", "configNotify"}, {"config", "unhealth"},
	{"naming", "disk"}, {"naming", "leaderSendBeatFailed"},
}

type javaMeters struct {
	notify    *prometheus.SummaryVec
	notifyMax *windowMaxVec
	exc       *prometheus.CounterVec
}

func (m *Metrics) newJavaMeters() javaMeters {
	j := javaMeters{
		notify:    prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: "nacos_timer_seconds", Help: ""}, []string{"module", "name"}),
		notifyMax: newWindowMaxVec(m.cfg.Clock, "nacos_timer_seconds_max", "", []string{"module", "name"}),
		exc:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "nacos_exception_total", Help: ""}, []string{"module", "name"}),
	}
	for _, e := range exceptionNames {
		j.exc.WithLabelValues(e.module, e.name)
	}
	j.notify.WithLabelValues("config", "notifyRt")
	return j
}

// ConfigNotified records how long a config change took to reach this
// node's cache and listeners (Java's notifyRt: change time to notify done).
func (m *Metrics) ConfigNotified(delay time.Duration) {
	if delay < 0 {
		delay = 0
	}
	sec := delay.Seconds()
	m.java.notify.WithLabelValues("config", "notifyRt").Observe(sec)
	m.java.notifyMax.observe([]string{"config", "notifyRt"}, sec)
}

// Exception counts one nacos_exception_total{module,name} event; names
// outside Java's set are ignored.
func (m *Metrics) Exception(module, name string) {
	for _, e := range exceptionNames {
		if e.module == module && e.name == name {
			m.java.exc.WithLabelValues(module, name).Inc()
			return
		}
	}
}

// gcCollector is jvm_gc_pause_seconds (a Micrometer Timer) from the Go
// collector's stop-the-world pauses, all under action="end of minor GC".
// Go has no full collection: the "end of major GC" series is there with
// count 0, so the dashboard's major-GC alert reads 0 rather than no data.
type gcCollector struct{ m *Metrics }

var (
	dGCPause    = prometheus.NewDesc("jvm_gc_pause_seconds", "Time spent in GC pause", []string{"action", "cause"}, nil)
	dGCPauseMax = prometheus.NewDesc("jvm_gc_pause_seconds_max", "Time spent in GC pause", []string{"action", "cause"}, nil)
)

func (c *gcCollector) Describe(ch chan<- *prometheus.Desc) { ch <- dGCPause; ch <- dGCPauseMax }

func (c *gcCollector) Collect(ch chan<- prometheus.Metric) {
	var st debug.GCStats
	st.Pause = make([]time.Duration, 0, 256)
	st.PauseEnd = make([]time.Time, 0, 256)
	debug.ReadGCStats(&st)
	lv := []string{"end of minor GC", "Go GC"}
	ch <- prometheus.MustNewConstSummary(dGCPause, uint64(st.NumGC), st.PauseTotal.Seconds(), nil, lv...)
	// the window Micrometer's _max keeps: 2 minutes (time.Now: the Go
	// runtime stamps PauseEnd with the wall clock)
	since := time.Now().Add(-2 * time.Minute)
	var mx time.Duration
	for i, p := range st.Pause {
		if i < len(st.PauseEnd) && st.PauseEnd[i].After(since) && p > mx {
			mx = p
		}
	}
	ch <- prometheus.MustNewConstMetric(dGCPauseMax, prometheus.GaugeValue, mx.Seconds(), lv...)
	major := []string{"end of major GC", "Go GC"}
	ch <- prometheus.MustNewConstSummary(dGCPause, 0, 0, nil, major...)
	ch <- prometheus.MustNewConstMetric(dGCPauseMax, prometheus.GaugeValue, 0, major...)
}
