package naming

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
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
// results. One round every interval; probes of a round run concurrently.
type healthChecker struct {
	r        *Registry
	interval time.Duration
	timeout  time.Duration
	client   *http.Client
	sem      chan struct{}

	mu  sync.Mutex
	rts map[string]*clusterRT
	wg  sync.WaitGroup
}

type clusterRT struct{ best, worst, normalized int64 }

func newHealthChecker(r *Registry) *healthChecker {
	h := &healthChecker{r: r, interval: r.cfg.HealthCheckInterval, timeout: 500 * time.Millisecond, sem: make(chan struct{}, 64),
		rts: map[string]*clusterRT{}}
	h.client = &http.Client{
		Timeout:       h.timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{DisableKeepAlives: true, Proxy: nil, DialContext: (&net.Dialer{Timeout: h.timeout}).DialContext},
	}
	r.schedule(h.interval, h.interval, h.round)
	return h
}

func (h *healthChecker) close() { h.wg.Wait() }

func (h *healthChecker) rt(svcKey, cluster string) (best, worst, norm int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.rts[svcKey+"/"+cluster]; ok {
		return c.best, c.worst, c.normalized
	}
	return -1, -1, -1
}

type probeTarget struct {
	ns, svc string
	in      *Instance
	cluster ClusterMeta
}

// round runs one probe of every persistent instance and waits for them.
func (h *healthChecker) round() {
	if !h.r.Switches().HealthCheckEnabled {
		return
	}
	var targets []probeTarget
	for _, ref := range h.r.allServices() {
		s := ref.svc
		s.mu.RLock()
		for _, in := range s.persistent {
			c, ok := s.meta.Clusters[in.ClusterName]
			if !ok || in.Marked || (c.HealthChecker.Type != "TCP" && c.HealthChecker.Type != "HTTP") {
				continue
			}
			targets = append(targets, probeTarget{ref.ns, ref.name, in, c})
		}
		s.mu.RUnlock()
	}
	var wg sync.WaitGroup
	for _, t := range targets {
		if h.r.closed.Load() {
			break
		}
		h.sem <- struct{}{}
		wg.Add(1)
		h.wg.Add(1)
		go func(t probeTarget) {
			defer func() { <-h.sem; wg.Done(); h.wg.Done() }()
			start := time.Now()
			res := h.probe(t)
			h.record(t, res, time.Since(start).Milliseconds())
		}(t)
	}
	wg.Wait()
}

func (h *healthChecker) probe(t probeTarget) probeResult {
	port := t.in.Port
	if !t.cluster.UseIPPort4Check {
		port = t.cluster.DefCkport
	}
	addr := net.JoinHostPort(t.in.IP, strconv.Itoa(port))
	if t.cluster.HealthChecker.Type == "TCP" {
		conn, err := net.DialTimeout("tcp", addr, h.timeout)
		if err != nil {
			return classifyErr(err)
		}
		_ = conn.Close()
		return probeOK
	}
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
	h.mu.Lock()
	key := ServiceKey(t.ns, t.svc) + "/" + t.in.ClusterName
	c := h.rts[key]
	if c == nil {
		c = &clusterRT{best: rtMillis, worst: rtMillis, normalized: rtMillis}
		h.rts[key] = c
	}
	if rtMillis < c.best {
		c.best = rtMillis
	}
	if rtMillis > c.worst {
		c.worst = rtMillis
	}
	c.normalized = (c.normalized*3 + rtMillis) / 4
	h.mu.Unlock()

	s := h.r.service(t.ns, t.svc)
	if s == nil {
		return
	}
	checkTimes := h.r.Switches().CheckTimes
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
		h.r.changed(t.ns, t.svc)
	}
}
