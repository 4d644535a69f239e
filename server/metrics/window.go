package metrics

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nacosd/nacosd/internal/clock"
)

// Micrometer's TimeWindowMax as Spring Boot 2.7 configures it: the max over
// a ring of 3 buckets rotated every expiry/3 (expiry 2 min), so a sample
// stays visible between 80 and 120 s.
const (
	maxBuckets  = 3
	maxRotation = 40 * time.Second
)

type windowMax struct {
	vals    [maxBuckets]float64
	cur     int
	rotated time.Time
}

func (w *windowMax) rotate(now time.Time) {
	for w.rotated.Add(maxRotation).Before(now) || w.rotated.Add(maxRotation).Equal(now) {
		w.rotated = w.rotated.Add(maxRotation)
		w.vals[w.cur] = 0
		w.cur = (w.cur + 1) % maxBuckets
		if now.Sub(w.rotated) > maxBuckets*maxRotation { // long idle: all stale
			w.vals = [maxBuckets]float64{}
			w.rotated = now
		}
	}
}

// max is the current bucket: it saw every sample since it was last cleared,
// 2 to 3 rotations ago.
func (w *windowMax) max() float64 { return w.vals[w.cur] }

// windowMaxVec is a gauge family of windowMax values by label set.
type windowMaxVec struct {
	clk    clock.Clock
	desc   *prometheus.Desc
	mu     sync.Mutex
	series map[string]*series
}

type series struct {
	labels []string
	w      windowMax
}

func newWindowMaxVec(clk clock.Clock, name, help string, labels []string) *windowMaxVec {
	return &windowMaxVec{clk: clk, desc: prometheus.NewDesc(name, help, labels, nil), series: map[string]*series{}}
}

func (v *windowMaxVec) observe(labels []string, val float64) {
	v.observeSeries(v.get(labels), val)
}

// get returns the series of a label set, created on first use.
func (v *windowMaxVec) get(labels []string) *series {
	key := strings.Join(labels, "\x00")
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.series[key]
	if s == nil {
		s = &series{labels: append([]string(nil), labels...)}
		s.w.rotated = v.clk.Now()
		v.series[key] = s
	}
	return s
}

func (v *windowMaxVec) observeSeries(s *series, val float64) {
	now := v.clk.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	s.w.rotate(now)
	for i := range s.w.vals {
		s.w.vals[i] = max(s.w.vals[i], val)
	}
}

// Describe implements prometheus.Collector.
func (v *windowMaxVec) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

// Collect implements prometheus.Collector.
func (v *windowMaxVec) Collect(ch chan<- prometheus.Metric) {
	now := v.clk.Now()
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, s := range v.series {
		s.w.rotate(now)
		ch <- prometheus.MustNewConstMetric(v.desc, prometheus.GaugeValue, s.w.max(), s.labels...)
	}
}

// costWindow is Java's pushCostMap as PerformanceLoggerThread.collectMetrics
// reads it every 15 s (cron 0/15): the max and the average ack cost, in
// whole milliseconds, of the pushes acked during the last complete 15 s
// slot; -1 when none was.
type costWindow struct {
	mu         sync.Mutex
	slot       int64 // slot of the accumulating figures
	n          int64
	sum, max   int64
	lastSlot   int64 // slot whose figures are reported
	lastN      int64
	lastSum    int64
	lastMax    int64
	everRolled bool
}

const costSlot = 15 // seconds

func (c *costWindow) roll(now time.Time) {
	s := now.Unix() / costSlot
	if s == c.slot {
		return
	}
	c.lastSlot, c.lastN, c.lastSum, c.lastMax, c.everRolled = c.slot, c.n, c.sum, c.max, true
	c.slot, c.n, c.sum, c.max = s, 0, 0, 0
}

func (c *costWindow) add(now time.Time, cost time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll(now)
	ms := cost.Milliseconds()
	c.n++
	c.sum += ms
	c.max = max(c.max, ms)
}

// read returns Java's maxPushCost and avgPushCost.
func (c *costWindow) read(now time.Time) (maxCost, avgCost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll(now)
	if !c.everRolled || c.lastSlot != now.Unix()/costSlot-1 || c.lastN == 0 {
		return -1, -1
	}
	avgCost = -1
	if c.lastSum > 0 {
		avgCost = c.lastSum / c.lastN
	}
	return c.lastMax, avgCost
}
