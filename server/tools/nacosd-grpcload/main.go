// Command nacosd-grpcload is a load generator that speaks the Nacos 2.x
// gRPC protocol (internal/remoteclient) to any 2.x server: nacosd, Java
// Nacos 2.x, r-nacos. It measures one operation at a time:
//
//	query    ConfigQueryRequest on pre-published configs (unary)
//	publish  ConfigPublishRequest (a new content each time)
//	connect  whole connection setups: ServerCheckRequest, the bi-stream,
//	         ConnectionSetupRequest, SetupAckRequest, then close
//	register InstanceRequest registerInstance (a new port each time)
//	hold     -conns connections, each listening to a config (and with
//	         -subscribe subscribed to a service), held for -d; prints the
//	         server's RSS (-pid) with them
//	push     -conns subscribers of one service; a publisher changes it
//	         every -interval for -d; prints the push delivery latency
//
//	nacosd-grpcload -addr 127.0.0.1:9848 -op query -conns 8 -c 64 -d 20s
//
// It prints one line: operations, errors, throughput and latency
// percentiles. Run it on loopback only.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nacosd-grpcload:", err)
		os.Exit(1)
	}
}

type config struct {
	addr     string
	op       string
	conns    int
	workers  int
	duration time.Duration
	warmup   time.Duration
	keys     int
	size     int
	token    string
	tenant   string
	pid      int
	// subscribe: hold also subscribes each connection to a service
	subscribe bool
	// interval between the publisher's changes (push)
	interval time.Duration
}

func run(args []string) error {
	var c config
	fs := flag.NewFlagSet("nacosd-grpcload", flag.ContinueOnError)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:9848", "the server's gRPC address (HTTP port + 1000)")
	fs.StringVar(&c.op, "op", "query", "query, publish, register, connect, hold or push")
	fs.IntVar(&c.conns, "conns", 8, "client connections (query, publish)")
	fs.IntVar(&c.workers, "c", 64, "concurrent requests")
	fs.DurationVar(&c.duration, "d", 20*time.Second, "measured duration")
	fs.DurationVar(&c.warmup, "warmup", 3*time.Second, "unmeasured warm-up")
	fs.IntVar(&c.keys, "keys", 100, "configs (query, publish)")
	fs.IntVar(&c.size, "size", 512, "content bytes (query, publish)")
	fs.StringVar(&c.token, "token", "", "accessToken header (auth on)")
	fs.StringVar(&c.tenant, "tenant", "", "config namespace (r-nacos refuses a config request without one)")
	fs.IntVar(&c.pid, "pid", 0, "the server's process id: report its CPU time per operation (from /proc)")
	fs.BoolVar(&c.subscribe, "subscribe", false, "hold: each connection also subscribes to a service")
	fs.DurationVar(&c.interval, "interval", time.Second, "push: time between the publisher's changes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var r result
	var err error
	switch c.op {
	case "query", "publish":
		r, err = unary(c)
	case "connect":
		r, err = connect(c)
	case "register":
		r, err = register(c)
	case "hold":
		return hold(c)
	case "push":
		return push(c)
	default:
		return fmt.Errorf("unknown -op %q", c.op)
	}
	if err != nil {
		return err
	}
	fmt.Println(r.String(c))
	return nil
}

// result is what a run measured.
type result struct {
	ops, errs int64
	elapsed   time.Duration
	cpu       time.Duration // the server's CPU time in the window (-pid)
	lat       []time.Duration
	firstErr  string
}

func (r result) String(c config) string {
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	p := func(q float64) string {
		if len(r.lat) == 0 {
			return "-"
		}
		return r.lat[min(len(r.lat)-1, int(q*float64(len(r.lat))))].Round(10 * time.Microsecond).String()
	}
	s := fmt.Sprintf("op=%s addr=%s conns=%d c=%d ops=%d errors=%d ops/s=%.0f p50=%s p90=%s p99=%s max=%s",
		c.op, c.addr, c.conns, c.workers, r.ops, r.errs, float64(r.ops)/r.elapsed.Seconds(), p(0.5), p(0.9), p(0.99), p(1))
	if r.cpu > 0 && r.ops > 0 {
		s += fmt.Sprintf(" server-cpu=%.1fs server-cpu/op=%.0fµs", r.cpu.Seconds(), float64(r.cpu.Microseconds())/float64(r.ops))
	}
	if r.firstErr != "" {
		s += " first-error=" + strconv.Quote(r.firstErr)
	}
	return s
}

// recorder collects latencies of the measured window.
type recorder struct {
	mu       sync.Mutex
	lat      []time.Duration
	ops      atomic.Int64
	errs     atomic.Int64
	measure  atomic.Bool
	firstErr atomic.Value
}

func (r *recorder) done(d time.Duration, err error) {
	if !r.measure.Load() {
		return
	}
	if err != nil {
		r.errs.Add(1)
		r.firstErr.CompareAndSwap(nil, err.Error())
		return
	}
	r.ops.Add(1)
	r.mu.Lock()
	r.lat = append(r.lat, d)
	r.mu.Unlock()
}

// drive runs fn on c.workers goroutines: a warm-up, then the measured window.
func drive(c config, fn func(worker int, rec *recorder)) result {
	rec := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := 0; w < c.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				fn(w, rec)
			}
		}()
	}
	time.Sleep(c.warmup)
	cpu0 := procCPU(c.pid)
	rec.measure.Store(true)
	start := time.Now()
	time.Sleep(c.duration)
	rec.measure.Store(false)
	elapsed := time.Since(start)
	cpu := procCPU(c.pid) - cpu0
	cancel()
	wg.Wait()
	r := result{ops: rec.ops.Load(), errs: rec.errs.Load(), elapsed: elapsed, lat: rec.lat, cpu: cpu}
	if e, ok := rec.firstErr.Load().(string); ok {
		r.firstErr = e
	}
	return r
}

func headers(c config) map[string]string {
	if c.token == "" {
		return nil
	}
	return map[string]string{"accessToken": c.token}
}

func unary(c config) (result, error) {
	ctx := context.Background()
	clients := make([]*remoteclient.Client, c.conns)
	for i := range clients {
		cl, err := remoteclient.Dial(ctx, c.addr, remoteclient.Options{Headers: headers(c)})
		if err != nil {
			return result{}, err
		}
		defer cl.Close()
		clients[i] = cl
	}
	content := strings.Repeat("x", c.size)
	key := func(i int) remote.ConfigKey {
		return remote.ConfigKey{DataID: "load-" + strconv.Itoa(i%c.keys), Group: "LOAD", Tenant: c.tenant, HasDataID: true, HasGroup: true}
	}
	if err := prepareConfigs(ctx, clients[0], c.keys, key, content); err != nil {
		return result{}, err
	}
	var seq atomic.Int64
	return drive(c, func(w int, rec *recorder) {
		n := int(seq.Add(1))
		cl := clients[w%len(clients)]
		var req remote.Requester
		if c.op == "query" {
			req = &remote.ConfigQueryRequest{ConfigKey: key(n)}
		} else {
			req = &remote.ConfigPublishRequest{ConfigKey: key(n), Content: content[:len(content)-8] + fmt.Sprintf("%08d", n%1e8)}
		}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		start := time.Now()
		err := check(cl.Do(cctx, req))
		rec.done(time.Since(start), err)
		cancel()
	}), nil
}

// prepareConfigs publishes the n configs the query and publish steps use
// and waits until each reads back (Java serves reads from a dump written
// after the commit; a freshly started r-nacos acknowledged publishes it
// then answered "config data not exist" for), publishing again the ones
// that do not, for up to 30 s.
func prepareConfigs(ctx context.Context, cl *remoteclient.Client, n int, key func(int) remote.ConfigKey, content string) error {
	missing := make([]int, n)
	for i := range missing {
		missing[i] = i
	}
	deadline := time.Now().Add(30 * time.Second)
	var lastErr error
	for attempt := 0; len(missing) > 0; attempt++ {
		if attempt > 0 {
			if time.Now().After(deadline) {
				return fmt.Errorf("prepare: %d of %d configs not readable after 30 s: %v", len(missing), n, lastErr)
			}
			time.Sleep(time.Second)
		}
		if attempt%3 == 0 {
			for _, i := range missing {
				if err := check(cl.Do(ctx, &remote.ConfigPublishRequest{ConfigKey: key(i), Content: content})); err != nil {
					return fmt.Errorf("prepare: %w", err)
				}
			}
			time.Sleep(time.Second)
		}
		var left []int
		for _, i := range missing {
			_, d, err := cl.Do(ctx, &remote.ConfigQueryRequest{ConfigKey: key(i)})
			if err == nil && d.Success() && d.Str("content") == content {
				continue
			}
			if err == nil {
				err = fmt.Errorf("%s %d %s", d.Type, d.ErrorCode, d.Message)
			}
			left, lastErr = append(left, i), err
		}
		missing = left
	}
	return nil
}

func check(_ *remote.Payload, d *remote.DecodedResponse, err error) error {
	if err != nil {
		return err
	}
	if !d.Success() {
		return fmt.Errorf("%s %d %s", d.Type, d.ErrorCode, d.Message)
	}
	return nil
}

func connect(c config) (result, error) {
	return drive(c, func(_ int, rec *recorder) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		// Dial fails when a server that announced ability negotiation
		// sends no SetupAckRequest; one that did not announce it
		// (r-nacos) is waited for 100 ms, as Java's client does
		cl, err := remoteclient.Dial(ctx, c.addr, remoteclient.Options{Headers: headers(c)})
		rec.done(time.Since(start), err)
		if cl != nil {
			cl.Close()
		}
	}), nil
}

// procCPU is a process's user+system CPU time (/proc/<pid>/stat, clock
// ticks of 10 ms); 0 without a pid.
func procCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		s = s[i+2:]
	}
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// hold opens c.conns connections that each listen to one config (of
// c.keys) and, with -subscribe, subscribe to one service (of c.keys); it
// reports the server's RSS before and with them.
func hold(c config) error {
	before := procRSS(c.pid)
	start := time.Now()
	clients, failed := dialMany(c, c.conns, func(cl *remoteclient.Client) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		i := len(cl.ConnID) // any spread over the keys
		for _, b := range []byte(cl.ConnID) {
			i = i*31 + int(b)
		}
		i = (i%c.keys + c.keys) % c.keys
		k := remote.ConfigListenContext{DataID: "hold-" + strconv.Itoa(i), Group: "LOAD", Tenant: c.tenant}
		if err := check(cl.Do(ctx, &remote.ConfigBatchListenRequest{Listen: true, Contexts: []remote.ConfigListenContext{k}})); err != nil {
			return err
		}
		if !c.subscribe {
			return nil
		}
		return check(cl.Do(ctx, &remote.SubscribeServiceRequest{NamingKey: serviceKey("hold-svc-" + strconv.Itoa(i)), Subscribe: true}))
	}, nil)
	defer closeAll(clients)
	setup := time.Since(start)
	time.Sleep(c.duration)
	with := procRSS(c.pid)
	fmt.Printf("op=hold addr=%s conns=%d subscribe=%t failed=%d setup=%s rss-before=%dKiB rss-with=%dKiB per-conn=%.1fKiB\n", c.addr, len(clients), c.subscribe,
		failed, setup.Round(time.Millisecond), before, with, float64(with-before)/float64(max(1, len(clients))))
	return nil
}

// procRSS is a process's resident set (KiB, /proc/<pid>/status).
func procRSS(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
