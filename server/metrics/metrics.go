// Package metrics is nacosd's Prometheus registry: the meters of Java Nacos
// 1.4.8 under their names and labels (nacos_monitor{module,name} gauges,
// Spring Boot's http_server_requests_seconds summary and _max gauge, the
// process/system/jvm meters the community Grafana dashboard queries) and
// nacosd's own (push, long polling, beats, raft, Go runtime). Domain
// figures are read at scrape time through Sources; only the HTTP layer and
// the push ack hook feed it per event. The series and where they differ
// from Java are listed in docs/deployment.md.
package metrics

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/server/config"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/push"
)

// Sources are read at every scrape; a nil function leaves its meters at
// zero (or absent, for raft).
type Sources struct {
	// Counts are the naming service and instance counts, all namespaces.
	Counts func() (services, instances int)
	Naming func() naming.Stats
	Push   func() push.Counters
	Config func() config.Stats
	// Raft is raftstore.Store.Stats.
	Raft func() map[string]string
	// Distro is the AP protocol's counters and the member states (cluster
	// mode; nil in standalone mode).
	Distro func() DistroStats
	// Ready is the readiness probe (nil error: ready).
	Ready func() error
	// DefaultAdminPassword reports that auth is on and the built-in user
	// nacos still has the password nacos (nil: not emitted).
	DefaultAdminPassword func() bool
}

// DistroStats are the Distro and membership figures of a cluster node.
type DistroStats struct {
	SyncSent, SyncFailed, SyncKeys     int64 // datum syncs (PUT /distro/datum) and the lists they carried
	VerifySent, VerifyReceived         int64 // checksum rounds sent and received
	ChecksumMismatches                 int64 // lists found different or missing by a checksum round
	KeysFetched, KeysRemoved           int64 // lists fetched from, and dropped after, their owner
	DatumsReceived                     int64 // lists received by sync
	StatusSent, StatusReceived, Health int64 // service status sync rounds, and services whose health was fetched
	Pending                            int   // lists waiting to be synced
	// Members counts the members by state (UP, SUSPICIOUS, DOWN).
	Members map[string]int
}

// Config configures the registry.
type Config struct {
	Sources Sources
	Clock   clock.Clock
	// Location is the time zone whose midnight resets the daily
	// nacos_monitor counters (time.Local when nil).
	Location *time.Location
	Logger   *slog.Logger
	// Build labels nacosd_build_info (version, VCS revision, Go version).
	Build buildinfo.Info
}

// Metrics is the registry and its event meters. Safe for concurrent use.
type Metrics struct {
	cfg Config
	reg *prometheus.Registry

	http    *prometheus.SummaryVec
	httpMax *windowMaxVec
	reqs    sync.Map // reqKey → *reqSeries: one lookup, no allocation per request
	ackHist prometheus.Histogram

	getConfig, publish atomic.Int64 // since local midnight (Java MetricsMonitor)
	pushCost           costWindow

	mu       sync.Mutex
	base     dailyBase // domain counters at the last midnight
	midnight clock.Timer
	closed   bool

	sys  *systemSampler
	java javaMeters
}

// dailyBase holds the since-start counters at the last reset, so that the
// daily Java gauges are current minus base.
type dailyBase struct {
	pushTotal, pushFailed int64
	tcpProbes, httpProbes int64
}

// New builds the registry and arms the daily reset.
func New(cfg Config) *Metrics {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Metrics{cfg: cfg, reg: prometheus.NewRegistry(), sys: newSystemSampler(cfg.Clock)}
	m.http = prometheus.NewSummaryVec(prometheus.SummaryOpts{
		Name: "http_server_requests_seconds",
		Help: "Duration of HTTP server request handling",
	}, httpLabels)
	m.httpMax = newWindowMaxVec(cfg.Clock, "http_server_requests_seconds_max", "Duration of HTTP server request handling", httpLabels)
	m.ackHist = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "nacosd_push_ack_seconds",
		Help:    "Time from sending a UDP push to receiving its ack.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})
	m.java = m.newJavaMeters()
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "nacosd_build_info",
		Help: "Always 1; the labels say which build runs: module version, VCS revision and its time, Go version.",
		ConstLabels: prometheus.Labels{"version": cfg.Build.Version, "revision": cfg.Build.Revision,
			"revision_time": cfg.Build.TimeText(), "goversion": cfg.Build.GoVersion}})
	build.Set(1)
	m.reg.MustRegister(build)
	m.reg.MustRegister(m.http, m.httpMax, m.ackHist, m.java.notify, m.java.notifyMax, m.java.exc,
		&nacosCollector{m: m}, &nacosdCollector{m: m}, &compatCollector{m: m}, &gcCollector{m: m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.base = m.currentBase()
	m.armMidnight()
	return m
}

// Registry is what the /actuator/prometheus handler gathers.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Register adds a collector; cluster mode registers its Distro meters here
// (nacosd_distro_sync_total, nacosd_distro_checksum_mismatches_total, …).
func (m *Metrics) Register(c prometheus.Collector) error { return m.reg.Register(c) }

// Request is one finished HTTP request, labelled as Spring Boot 2.7's
// WebMvcMetricsFilter labels it.
type Request struct {
	Method string
	// URI is the matched mapping without the context path
	// ("/v1/cs/configs"), or NOT_FOUND, REDIRECTION, root.
	URI    string
	Status int
	// Exception is the simple class name of the exception Java would have
	// thrown, "None" without one.
	Exception string
	Duration  time.Duration
}

var httpLabels = []string{"exception", "method", "outcome", "status", "uri"}

type reqKey struct {
	exception, method, uri string
	status                 int
}

type reqSeries struct {
	obs prometheus.Observer
	max *series
}

// ObserveRequest records one request. The label values must not alias
// memory that is reused (fiber's request buffers).
func (m *Metrics) ObserveRequest(r Request) {
	k := reqKey{r.Exception, r.Method, r.URI, r.Status}
	v, ok := m.reqs.Load(k)
	if !ok {
		lv := []string{r.Exception, r.Method, outcome(r.Status), strconv.Itoa(r.Status), r.URI}
		v, _ = m.reqs.LoadOrStore(k, &reqSeries{obs: m.http.WithLabelValues(lv...), max: m.httpMax.get(lv)})
	}
	rs := v.(*reqSeries)
	sec := r.Duration.Seconds()
	rs.obs.Observe(sec)
	m.httpMax.observeSeries(rs.max, sec)
}

// ConfigGet counts a GET /v1/cs/configs read (Java's getConfig monitor).
func (m *Metrics) ConfigGet() { m.getConfig.Add(1) }

// ConfigPublish counts a POST /v1/cs/configs publish (Java's publish monitor).
func (m *Metrics) ConfigPublish() { m.publish.Add(1) }

// PushAcked records the ack latency of one push (push.Config.OnAck).
func (m *Metrics) PushAcked(cost time.Duration) {
	m.ackHist.Observe(cost.Seconds())
	m.pushCost.add(m.cfg.Clock.Now(), cost)
}

// Close stops the daily reset timer.
func (m *Metrics) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.midnight != nil {
		m.midnight.Stop()
	}
}

func (m *Metrics) currentBase() dailyBase {
	var b dailyBase
	if f := m.cfg.Sources.Push; f != nil {
		c := f()
		b.pushTotal, b.pushFailed = c.Total, c.Failed
	}
	if f := m.cfg.Sources.Naming; f != nil {
		s := f()
		b.tcpProbes, b.httpProbes = s.TCPProbes, s.HTTPProbes
	}
	return b
}

// armMidnight schedules the reset Java's @Scheduled(cron = "0 0 0 * * ?")
// tasks do (MemoryMonitor.clear, PerformanceLoggerThread.refreshMetrics).
func (m *Metrics) armMidnight() {
	now := m.cfg.Clock.Now().In(m.cfg.Location)
	y, mo, d := now.Date()
	next := time.Date(y, mo, d+1, 0, 0, 0, 0, m.cfg.Location)
	m.midnight = m.cfg.Clock.AfterFunc(next.Sub(now), m.resetDaily)
}

func (m *Metrics) resetDaily() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.getConfig.Store(0)
	m.publish.Store(0)
	m.base = m.currentBase()
	m.armMidnight()
}

func (m *Metrics) daily() dailyBase {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.base
}

// outcome is Spring's Outcome.forStatus.
func outcome(status int) string {
	switch {
	case status >= 100 && status < 200:
		return "INFORMATIONAL"
	case status >= 200 && status < 300:
		return "SUCCESS"
	case status >= 300 && status < 400:
		return "REDIRECTION"
	case status >= 400 && status < 500:
		return "CLIENT_ERROR"
	case status >= 500 && status < 600:
		return "SERVER_ERROR"
	}
	return "UNKNOWN"
}
