package naming

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nacosd/nacosd/server/switches"
)

// probeResult is the outcome of one health probe (HealthCheckCommon).
type probeResult int

const (
	probeOK      probeResult = iota
	probeFail                // counts towards checkTimes
	probeFailNow             // unhealthy at once
)

// healthChecker probes persistent instances of clusters whose checker is TCP
// or HTTP (§4.3) and flips their in-memory health after checkTimes agreeing
// results. Like Java's HealthCheckTask, every cluster has its own schedule:
// the first round 2000 + rand(0, rand(0, 5000)) ms after the cluster is
// seen, each next one checkRtNormalized later, where checkRtNormalized
// follows the probes' response times (factor, min and max from the switch
// domain's tcp/httpHealthParams). A fixed Config.HealthCheckInterval
// replaces that schedule (tests).
type healthChecker struct {
	r       *Registry
	fixed   time.Duration // 0: Java's adaptive schedule
	tick    time.Duration // scheduler resolution
	timeout time.Duration
	client  *http.Client
	sem     chan struct{}
	rand    func(n int64) int64

	mu    sync.Mutex
	tasks map[string]*clusterTask // "<ns>##<svc>/<cluster>"
	wg    sync.WaitGroup
}

// clusterTask is one cluster's HealthCheckTask state.
type clusterTask struct {
	best, worst, normalized int64 // ms
	next                    time.Time
	running                 bool
	seen                    bool // still configured at the last scan
}

func newHealthChecker(r *Registry) *healthChecker {
	h := &healthChecker{r: r, fixed: r.cfg.HealthCheckInterval, tick: 100 * time.Millisecond, timeout: 500 * time.Millisecond,
		sem: make(chan struct{}, 64), rand: rand.Int64N, tasks: map[string]*clusterTask{}}
	if h.fixed > 0 && h.fixed < h.tick {
		h.tick = h.fixed
	}
	h.client = &http.Client{
		Timeout:       h.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{DisableKeepAlives: true, Proxy: nil, DialContext: (&net.Dialer{Timeout: h.timeout}).DialContext},
	}
	r.tasks.Every(h.tick, h.tick, h.round)
	return h
}

func (h *healthChecker) close() { h.wg.Wait() }

func (h *healthChecker) rt(svcKey, cluster string) (best, worst, norm int64, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.tasks[svcKey+"/"+cluster]; ok {
		return c.best, c.worst, c.normalized, true
	}
	return 0, 0, 0, false
}

// idleRT is the checkRT triple of a cluster that has no probe task (its
// checker is neither TCP nor HTTP, or it was not scanned yet): Java's
// HealthCheckTask.initCheckRT, which every cluster runs, with the random
// first delay drawn from a source seeded by the cluster's key so that it
// stays the same from one request to the next.
func idleRT(svcKey, cluster string) (best, worst, norm int64) {
	h := fnv.New64a()
	h.Write([]byte(svcKey + "/" + cluster))
	r := rand.New(rand.NewPCG(h.Sum64(), 0))
	return math.MaxInt64, 0, 2000 + r.Int64N(r.Int64N(5000)+1)
}

type probeTarget struct {
	ns, svc string
	in      *Instance
	cluster *ClusterMeta // one copy per cluster and round, shared by its targets
	task    string
}

// round starts the probes of every cluster whose task is due; it does not
// wait for them (a slow cluster never delays another).
func (h *healthChecker) round() {
	if !h.r.Switches().HealthCheckEnabled {
		return
	}
	now := h.r.cfg.Clock.Now()
	due := map[string][]probeTarget{}
	h.mu.Lock()
	for _, t := range h.tasks {
		t.seen = false
	}
	h.mu.Unlock()
	for _, ref := range h.r.servicesUnordered() {
		s := ref.svc
		s.mu.RLock()
		none := len(s.persistent) == 0
		s.mu.RUnlock()
		// Nothing to probe: no task (its checkRT is idleRT's). 10 000
		// ephemeral services cost a round 5.5 ms and 10 000 allocations
		// every 100 ms before (the sort of their names and a key each).
		if none || !h.r.responsible(ref.name) { // probes run on the service's owner only
			continue
		}
		s.mu.RLock()
		for cname, c := range s.meta.Clusters {
			if c.HealthChecker.Type != "TCP" && c.HealthChecker.Type != "HTTP" {
				continue
			}
			key := ServiceKey(ref.ns, ref.name) + "/" + cname
			h.mu.Lock()
			t := h.tasks[key]
			if t == nil {
				t = &clusterTask{best: math.MaxInt64, worst: 0, normalized: 2000 + h.rand(h.rand(5000)+1)}
				t.next = now.Add(time.Duration(t.normalized) * time.Millisecond)
				if h.fixed > 0 {
					t.next = now.Add(h.fixed)
				}
				h.tasks[key] = t
			}
			t.seen = true
			isDue := !t.running && !now.Before(t.next)
			if isDue {
				t.running = true
				due[key] = []probeTarget{}
			}
			h.mu.Unlock()
			if !isDue {
				continue
			}
			cm := c
			for _, in := range s.persistent {
				if in.ClusterName == cname && !in.Marked {
					due[key] = append(due[key], probeTarget{ref.ns, ref.name, in, &cm, key})
				}
			}
		}
		s.mu.RUnlock()
	}
	h.mu.Lock()
	for k, t := range h.tasks { // clusters that are gone, or no longer probed
		if !t.seen && !t.running {
			delete(h.tasks, k)
		}
	}
	h.mu.Unlock()
	for key, targets := range due {
		h.wg.Add(1)
		go h.runCluster(key, targets)
	}
}

// runCluster probes one cluster's instances concurrently, then schedules
// its next round checkRtNormalized (or the fixed interval) later.
func (h *healthChecker) runCluster(key string, targets []probeTarget) {
	defer h.wg.Done()
	var wg sync.WaitGroup
	for _, t := range targets {
		if h.r.tasks.Stopped() {
			break
		}
		h.sem <- struct{}{}
		wg.Add(1)
		go func(t probeTarget) {
			defer func() { <-h.sem; wg.Done() }()
			start := time.Now()
			res := h.probe(t)
			h.record(t, res, time.Since(start).Milliseconds())
		}(t)
	}
	wg.Wait()
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.tasks[key]; ok {
		t.running = false
		delay := time.Duration(t.normalized) * time.Millisecond
		if h.fixed > 0 {
			delay = h.fixed
		}
		t.next = h.r.cfg.Clock.Now().Add(delay)
	}
}

// reEvaluate is HealthCheckCommon.reEvaluateCheckRT for one probe's rt.
func (t *clusterTask) reEvaluate(rt int64, p switches.HealthParams) {
	if rt > t.worst {
		t.worst = rt
	}
	if rt < t.best {
		t.best = rt
	}
	n := int64(float64(p.Factor)*float64(t.normalized) + (1-float64(p.Factor))*float64(rt))
	if n > int64(p.Max) {
		n = int64(p.Max)
	}
	if n < int64(p.Min) {
		n = int64(p.Min)
	}
	t.normalized = n
}

func (h *healthChecker) probe(t probeTarget) probeResult {
	port := t.in.Port
	if !t.cluster.UseIPPort4Check {
		port = t.cluster.DefCkport
	}
	addr := net.JoinHostPort(t.in.IP, strconv.Itoa(port))
	if t.cluster.HealthChecker.Type == "TCP" {
		h.r.stats.tcpProbes.Add(1)
		conn, err := net.DialTimeout("tcp", addr, h.timeout)
		if err != nil {
			return classifyErr(err)
		}
		_ = conn.Close()
		return probeOK
	}
	h.r.stats.httpProbes.Add(1)
	path := t.cluster.HealthChecker.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return probeFailNow
	}
	req.Header.Set("User-Agent", "VIPServer")
	for _, hv := range strings.Split(t.cluster.HealthChecker.Headers, "|") {
		if k, v, ok := strings.Cut(hv, ":"); ok && k != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return classifyErr(err)
	}
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return probeOK
	case http.StatusServiceUnavailable, http.StatusFound:
		return probeFail
	default:
		return probeFailNow
	}
}

func classifyErr(err error) probeResult {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return probeFailNow
	}
	return probeFail
}

// record applies one result with the checkTimes state machine.
func (h *healthChecker) record(t probeTarget, res probeResult, rtMillis int64) {
	sw := h.r.Switches()
	params := sw.TCPHealthParams
	if t.cluster.HealthChecker.Type == "HTTP" {
		params = sw.HTTPHealthParams
	}
	h.mu.Lock()
	if task, ok := h.tasks[t.task]; ok {
		task.reEvaluate(rtMillis, params)
	}
	h.mu.Unlock()

	s := h.r.service(t.ns, t.svc)
	if s == nil {
		return
	}
	checkTimes := sw.CheckTimes
	changed := false
	s.mu.Lock()
	in, ok := s.persistent[t.in.DatumKey()]
	if ok {
		switch res {
		case probeOK:
			in.checkFail = 0
			if !in.Healthy || !in.mockValid {
				in.checkOK++
				if in.checkOK >= checkTimes {
					in.checkOK = 0
					in.mockValid = true
					if !in.Healthy {
						in.Healthy, changed = true, true
					}
				}
			}
		case probeFail:
			in.checkOK = 0
			if in.Healthy || !in.mockValid {
				in.checkFail++
				if in.checkFail >= checkTimes {
					in.checkFail = 0
					in.mockValid = true
					if in.Healthy {
						in.Healthy, changed = false, true
					}
				}
			}
		case probeFailNow:
			in.checkOK, in.checkFail, in.mockValid = 0, 0, true
			if in.Healthy {
				in.Healthy, changed = false, true
			}
		}
	}
	if changed {
		s.touch(h.r.nowMillis())
	}
	s.mu.Unlock()
	if changed {
		h.r.log.Info("health check changed instance health", "service", t.svc, "ip", t.in.IP, "port", t.in.Port, "healthy", res == probeOK)
		h.r.emit(t.ns, t.svc, ChangedHealth)
	}
}
