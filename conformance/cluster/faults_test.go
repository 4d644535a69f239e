package cluster_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/clients"
	"github.com/nacos-group/nacos-sdk-go/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/common/constant"
	"github.com/nacos-group/nacos-sdk-go/util"
	"github.com/nacos-group/nacos-sdk-go/vo"
)

var sdkFilterOnce sync.Once

// sdkClient is a nacos-sdk-go v1.1.6 naming client given every node's
// address, as an app configured with the whole server list is.
func (c *cluster) sdkClient(t *testing.T) naming_client.INamingClient {
	t.Helper()
	sdkFilterOnce.Do(func() { _ = util.SetFilterNetNumberAndMask("0.0.0.0/0") })
	var sc []constant.ServerConfig
	for _, n := range c.nodes {
		sc = append(sc, constant.ServerConfig{IpAddr: n.ip, Port: uint64(n.port), ContextPath: "/nacos"})
	}
	dir := t.TempDir()
	cc := constant.ClientConfig{TimeoutMs: 3000, NotLoadCacheAtStart: true, LogDir: dir + "/log", CacheDir: dir + "/cache",
		LogLevel: "error", BeatInterval: 2000}
	nc, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc})
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

// hosts lists a service's instances on node n as "ip:port" strings.
func hosts(n *node, svc string) ([]string, error) {
	r, err := do(n, "GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {svc}}, nil)
	if err != nil {
		return nil, err
	}
	if r.status != 200 {
		return nil, fmt.Errorf("%s: %d %s", n.addr(), r.status, r.body)
	}
	var b struct {
		Hosts []struct {
			IP   string `json:"ip"`
			Port int    `json:"port"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(r.body), &b); err != nil {
		return nil, err
	}
	var out []string
	for _, h := range b.Hosts {
		out = append(out, h.IP+":"+strconv.Itoa(h.Port))
	}
	sort.Strings(out)
	return out, nil
}

// config reads one config on node n ("" with 404).
func config(n *node, dataID string) (string, int, error) {
	r, err := do(n, "GET", "/nacos/v1/cs/configs", url.Values{"dataId": {dataID}, "group": {"FAULT"}}, nil)
	return r.body, r.status, err
}

// state is what a node holds, in a comparable text.
func state(n *node, services []string) (string, error) {
	var b strings.Builder
	for _, svc := range services {
		h, err := hosts(n, svc)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s=%s\n", svc, strings.Join(h, ","))
	}
	r, err := do(n, "GET", "/nacos/v1/cs/configs", url.Values{"dataId": {""}, "group": {"FAULT"}, "search": {"blur"},
		"pageNo": {"1"}, "pageSize": {"10000"}}, nil)
	if err != nil {
		return "", err
	}
	var page struct {
		PageItems []struct {
			DataID  string `json:"dataId"`
			Content string `json:"content"`
		} `json:"pageItems"`
	}
	if err := json.Unmarshal([]byte(r.body), &page); err != nil {
		return "", fmt.Errorf("config search on %s: %v: %s", n.addr(), err, r.body)
	}
	var cfgs []string
	for _, it := range page.PageItems {
		cfgs = append(cfgs, it.DataID+"="+it.Content)
	}
	b.WriteString(sortedLines(cfgs))
	return b.String(), nil
}

// converged waits until every running node holds the same state and
// returns how long that took.
func (c *cluster) converged(d time.Duration, services []string) (time.Duration, string) {
	c.t.Helper()
	var last string
	took := eventually(c.t, d, "nodes converge", func() error {
		var first string
		for i, n := range c.nodes {
			if n.cmd == nil {
				continue
			}
			s, err := state(n, services)
			if err != nil {
				return err
			}
			if first == "" {
				first = s
				continue
			}
			if s != first {
				return fmt.Errorf("node %d differs:\n%s\n--- vs ---\n%s", i, s, first)
			}
		}
		last = first
		return nil
	})
	return took, last
}

// load publishes configs and registers persistent instances round-robin on
// the running nodes, remembering what was acknowledged.
type load struct {
	c       *cluster
	mu      sync.Mutex
	acked   map[string]string // dataId → content acknowledged last
	persist map[string]bool   // ip:port acknowledged
	stop    chan struct{}
	wg      sync.WaitGroup
	errs    atomic.Int64
	ok      atomic.Int64
	samples map[string]int // failed answers, by text
}

func (c *cluster) startLoad() *load {
	l := &load{c: c, acked: map[string]string{}, persist: map[string]bool{}, stop: make(chan struct{}), samples: map[string]int{}}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			default:
			}
			n := c.nodes[i%len(c.nodes)]
			if n.cmd == nil {
				continue
			}
			id, content := "fault.cfg."+strconv.Itoa(i%40), "v"+strconv.Itoa(i)
			r, err := do(n, "POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": {id}, "group": {"FAULT"}, "content": {content}})
			if err == nil && r.status == 200 && r.body == "true" {
				l.mu.Lock()
				l.acked[id] = content
				l.mu.Unlock()
				l.ok.Add(1)
			} else {
				l.errs.Add(1)
				msg := r.body
				if err != nil {
					msg = err.Error()
				}
				if len(msg) > 120 {
					msg = msg[:120]
				}
				l.mu.Lock()
				l.samples[strconv.Itoa(r.status)+" "+msg]++
				l.mu.Unlock()
			}
			if i%5 == 0 {
				ip := "127.9." + strconv.Itoa(i/250%250) + "." + strconv.Itoa(i%250)
				q := url.Values{"serviceName": {"fault.persistent"}, "ip": {ip}, "port": {"7000"}, "ephemeral": {"false"}}
				if r, err := do(n, "POST", "/nacos/v1/ns/instance", q, nil); err == nil && r.status == 200 {
					l.mu.Lock()
					l.persist[ip+":7000"] = true
					l.mu.Unlock()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return l
}

func (l *load) end() {
	close(l.stop)
	l.wg.Wait()
}

// check verifies every acknowledged write on every running node: the last
// acknowledged content of each config (a later unacknowledged write may
// have landed too, so any content at least as new is accepted) and every
// acknowledged persistent instance.
func (l *load) check(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, n := range l.c.nodes {
		if n.cmd == nil {
			continue
		}
		eventually(t, 15*time.Second, fmt.Sprintf("node %d holds every acknowledged write", i), func() error {
			for id, want := range l.acked {
				got, st, err := config(n, id)
				if err != nil || st != 200 {
					return fmt.Errorf("%s on %s: %d %v", id, n.addr(), st, err)
				}
				if version(got) < version(want) {
					return fmt.Errorf("%s on %s: %q older than acknowledged %q", id, n.addr(), got, want)
				}
			}
			h, err := hosts(n, "fault.persistent")
			if err != nil {
				return err
			}
			have := map[string]bool{}
			for _, x := range h {
				have[x] = true
			}
			for ip := range l.persist {
				if !have[ip] {
					return fmt.Errorf("persistent %s missing on %s", ip, n.addr())
				}
			}
			return nil
		})
	}
}

func version(content string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(content, "v"))
	return n
}

// registerApps registers ephemeral instances through real clients that
// know every node, one client per instance, each beating every 2 s.
func (c *cluster) registerApps(t *testing.T, svc string, n int) []string {
	var want []string
	for i := range n {
		cl := c.sdkClient(t)
		ip := "127.8.0." + strconv.Itoa(i+1)
		ok, err := cl.RegisterInstance(vo.RegisterInstanceParam{Ip: ip, Port: 8080, ServiceName: svc, Weight: 1, Enable: true,
			Healthy: true, Ephemeral: true})
		if err != nil || !ok {
			t.Fatalf("register %s: %v %v", ip, ok, err)
		}
		want = append(want, ip+":8080")
	}
	sort.Strings(want)
	return want
}

// allListed waits until every running node lists exactly want for svc.
func (c *cluster) allListed(d time.Duration, svc string, want []string) time.Duration {
	c.t.Helper()
	return eventually(c.t, d, svc+" listed on every node", func() error {
		for i, n := range c.nodes {
			if n.cmd == nil {
				continue
			}
			h, err := hosts(n, svc)
			if err != nil {
				return err
			}
			if strings.Join(h, ",") != strings.Join(want, ",") {
				return fmt.Errorf("node %d lists %v, want %v", i, h, want)
			}
		}
		return nil
	})
}

// watchListed fails the test if, while it runs, any running node lists
// fewer than the wanted instances of svc (an owner move must not drop
// instances whose clients keep beating).
func (c *cluster) watchListed(t *testing.T, svc string, want []string) (stop func() []string) {
	done := make(chan struct{})
	var mu sync.Mutex
	var gaps []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			for i, n := range c.nodes {
				if n.cmd == nil {
					continue
				}
				h, err := hosts(n, svc)
				if err != nil {
					continue // a node being killed
				}
				if len(h) < len(want) {
					mu.Lock()
					gaps = append(gaps, fmt.Sprintf("%s node %d listed %d/%d", time.Now().Format("15:04:05.000"), i, len(h), len(want)))
					mu.Unlock()
				}
			}
		}
	}()
	return func() []string {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return gaps
	}
}

func errFmt(format string, args ...any) error { return fmt.Errorf(format, args...) }

func voParam(svc string) vo.RegisterInstanceParam {
	return vo.RegisterInstanceParam{Ip: "127.8.2.1", Port: 8080, ServiceName: svc, Weight: 1, Enable: true, Healthy: true, Ephemeral: true}
}

func selectParam(svc string) vo.SelectAllInstancesParam {
	return vo.SelectAllInstancesParam{ServiceName: svc}
}
