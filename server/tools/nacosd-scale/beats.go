package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// beats registers o.instances ephemeral instances over o.services
// services, then beats each of them every o.period (light beats, as the
// Java client sends them once the server allowed it) from o.conns
// connections for o.duration, and checks every 10 s through instance/list
// that none was marked unhealthy or removed.
func beats(o options, out, log io.Writer) error {
	loadBefore := loadAvg()
	s, _, done, err := fresh(o, log)
	if err != nil {
		return err
	}
	defer done()
	n, svcs := o.instances, o.services
	ip := func(i int) string { return fmt.Sprintf("11.%d.%d.%d", (i>>16)&255, (i>>8)&255, i&255) }
	regs := make([][]byte, n)
	beat := make([][]byte, n)
	for i := range n {
		regs[i] = request("POST", fmt.Sprintf("/nacos/v1/ns/instance?serviceName=scale.svc.%d&ip=%s&port=8080&ephemeral=true", i%svcs, ip(i)), "", nil, nil)
		beat[i] = request("PUT", fmt.Sprintf("/nacos/v1/ns/instance/beat?namespaceId=public&serviceName=DEFAULT_GROUP%%40%%40scale.svc.%d&clusterName=DEFAULT&ip=%s&port=8080", i%svcs, ip(i)), "", nil, nil)
	}
	t0 := time.Now()
	bad, first, err := doAll(s.addr, regs, 32)
	if err != nil || bad > 0 {
		return fmt.Errorf("beats: register: %d refused (first %s): %w", bad, first, err)
	}
	regTook := time.Since(t0)
	rssRegistered := rssMiB(s.pid())
	fmt.Fprintf(log, "beats: %d instances registered in %s; beating for %s\n", n, regTook.Round(time.Millisecond), o.duration)

	stop := make(chan struct{})
	var mon monitor
	monDone := make(chan error, 1)
	go func() { monDone <- mon.run(s.addr, svcs, n, stop) }()

	type connStats struct {
		lat      []time.Duration
		late     int
		maxLate  time.Duration
		unknown  int
		failures int
		err      error
	}
	res := make([]connStats, o.conns)
	var wg sync.WaitGroup
	start := time.Now().Add(100 * time.Millisecond)
	end := start.Add(o.duration)
	for k := range o.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &res[k]
			h, err := dial(s.addr)
			if err != nil {
				st.err = err
				return
			}
			defer h.close()
			var mine []int
			for i := k; i < n; i += o.conns {
				mine = append(mine, i)
			}
			step := o.period / time.Duration(len(mine))
			for round := 0; ; round++ {
				for j, i := range mine {
					due := start.Add(time.Duration(round)*o.period + time.Duration(j)*step + time.Duration(k)*step/time.Duration(o.conns))
					if due.After(end) {
						return
					}
					if d := time.Until(due); d > 0 {
						time.Sleep(d)
					}
					sent := time.Now()
					if late := sent.Sub(due); late > time.Second {
						st.late++
						st.maxLate = max(st.maxLate, late)
					}
					resp, err := h.do(beat[i])
					if err != nil {
						st.err = err
						return
					}
					st.lat = append(st.lat, time.Since(sent))
					if resp.StatusCode() != 200 {
						st.failures++
					} else if bytes.Contains(resp.Body(), []byte(`"code":20404`)) {
						st.unknown++
					}
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(stop)
	if err := <-monDone; err != nil {
		return err
	}
	rssEnd := rssMiB(s.pid())
	var all []time.Duration
	var late, unknown, failures int
	var maxLate time.Duration
	for _, st := range res {
		if st.err != nil {
			return fmt.Errorf("beats: %w", st.err)
		}
		all = append(all, st.lat...)
		late += st.late
		unknown += st.unknown
		failures += st.failures
		maxLate = max(maxLate, st.maxLate)
	}
	sortDur(all)
	fmt.Fprintf(out, "| (a) instances kept alive | %d ephemeral instances in %d services, a light beat each every %s for %s from %d connections (register: %s) | "+
		"%.0f beats/s; beat p50 %s, p99 %s, p99.9 %s, max %s; beats sent > 1 s late by the client: %d (max %s); "+
		"non-200: %d, \"instance not found\": %d; wrongly expired: **%d** unhealthy, **%d** missing (%d checks of every service, every 10 s; %s); RSS %.0f MiB after registering, %.0f MiB at the end | %s → %s |\n",
		n, svcs, o.period, o.duration, o.conns, regTook.Round(time.Millisecond),
		float64(len(all))/took.Seconds(), ms(pct(all, 50)), ms(pct(all, 99)), ms(pct(all, 99.9)), ms(pct(all, 100)), late, maxLate.Round(time.Millisecond),
		failures, unknown, len(mon.bad), mon.missing, mon.checks, mon.note, rssRegistered, rssEnd, loadBefore, loadAvg())
	return nil
}

// monitor lists every service every 10 s and remembers each instance it
// found unhealthy or missing.
type monitor struct {
	bad     map[string]bool
	missing int // most instances missing in one check
	checks  int
	note    string
}

func (m *monitor) run(addr string, svcs, n int, stop <-chan struct{}) error {
	m.bad = map[string]bool{}
	h, err := dial(addr)
	if err != nil {
		return err
	}
	defer h.close()
	reqs := make([][]byte, svcs)
	for i := range svcs {
		reqs[i] = request("GET", fmt.Sprintf("/nacos/v1/ns/instance/list?serviceName=scale.svc.%d&healthyOnly=false", i), "", nil, nil)
	}
	var last time.Duration
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			m.note = fmt.Sprintf("last check took %s", last.Round(time.Millisecond))
			return nil
		case <-tick.C:
		}
		t0 := time.Now()
		seen := 0
		for i, r := range reqs {
			resp, err := h.do(r)
			if err != nil {
				return fmt.Errorf("monitor: %w", err)
			}
			var body struct {
				Hosts []struct {
					IP      string `json:"ip"`
					Healthy bool   `json:"healthy"`
				} `json:"hosts"`
			}
			if err := json.Unmarshal(resp.Body(), &body); err != nil {
				return fmt.Errorf("monitor: list scale.svc.%d: %w", i, err)
			}
			for _, x := range body.Hosts {
				seen++
				if !x.Healthy {
					m.bad[x.IP] = true
				}
			}
		}
		m.missing = max(m.missing, n-seen)
		m.checks++
		last = time.Since(t0)
	}
}
