package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
	"github.com/nacosd/nacosd/internal/remoteclient"
)

// namingLabels are a naming client's connection labels.
var namingLabels = map[string]string{"source": "sdk", "module": "naming", "taskId": "0", "AppName": "grpcload"}

func serviceKey(name string) remote.NamingKey {
	return remote.NamingKey{Namespace: "public", ServiceName: name, GroupName: "LOAD", HasNamespace: true, HasService: true, HasGroup: true}
}

func instance(ip string, port int) *remote.Instance {
	in := remote.NewInstance()
	in.IP, in.HasIP, in.Port, in.ClusterName, in.HasCluster = ip, true, port, "DEFAULT", true
	return &in
}

// register: InstanceRequest registerInstance on c.keys services; each
// request a new port, so every one changes the service (one ephemeral
// instance per connection and service, as Java keeps it).
func register(c config) (result, error) {
	ctx := context.Background()
	clients := make([]*remoteclient.Client, c.conns)
	for i := range clients {
		cl, err := remoteclient.Dial(ctx, c.addr, remoteclient.Options{Headers: headers(c), Labels: namingLabels})
		if err != nil {
			return result{}, err
		}
		defer cl.Close()
		clients[i] = cl
	}
	var seq atomic.Int64
	return drive(c, func(w int, rec *recorder) {
		n := int(seq.Add(1))
		cl := clients[w%len(clients)]
		req := &remote.InstanceRequest{NamingKey: serviceKey("load-svc-" + strconv.Itoa(n%c.keys)), Op: remote.RegisterInstance, HasOp: true,
			Instance: instance("10.1."+strconv.Itoa(w%250)+"."+strconv.Itoa(1+w/250%250), 1+n%60000)}
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		start := time.Now()
		err := check(cl.Do(cctx, req))
		rec.done(time.Since(start), err)
		cancel()
	}), nil
}

// push: c.conns subscribers of one service; a publisher connection
// re-registers its instance with a new port every -interval, and every
// subscriber notes when the NotifySubscriberRequest with that port
// arrives. Prints the delivery latency percentiles over every
// (round, subscriber) and the pushes delivered per second.
func push(c config) error {
	ctx := context.Background()
	svc := "push-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	key := serviceKey(svc)
	var (
		mu      sync.Mutex
		sent    = map[int]time.Time{} // port → when its registration was sent
		lat     []time.Duration
		arrived atomic.Int64
	)
	onPush := func(p *remote.Payload, req remote.Requester) remote.Responder {
		now := time.Now()
		if p.Metadata.Type == remote.TypeNotifySubscriberRequest {
			if port, ok := pushedPort(p.Body); ok {
				mu.Lock()
				if t0, ok := sent[port]; ok {
					lat = append(lat, now.Sub(t0))
					arrived.Add(1)
				}
				mu.Unlock()
			}
		}
		id := ""
		if req != nil {
			id = req.Base().RequestID
		}
		return remote.NewPlain(p.Metadata.Type[:len(p.Metadata.Type)-len("Request")]+"Response", remote.Response{ResultCode: remote.CodeSuccess, RequestID: id})
	}
	subs, failed := dialMany(c, c.conns, func(cl *remoteclient.Client) error {
		return check(cl.Do(ctx, &remote.SubscribeServiceRequest{NamingKey: key, Subscribe: true}))
	}, onPush)
	defer closeAll(subs)
	pub, err := remoteclient.Dial(ctx, c.addr, remoteclient.Options{Headers: headers(c), Labels: namingLabels})
	if err != nil {
		return err
	}
	defer pub.Close()
	time.Sleep(time.Second)
	rounds := max(1, int(c.duration/c.interval))
	cpu0 := procCPU(c.pid)
	start := time.Now()
	for r := 0; r < rounds; r++ {
		port := 20000 + r
		mu.Lock()
		sent[port] = time.Now()
		mu.Unlock()
		if err := check(pub.Do(ctx, &remote.InstanceRequest{NamingKey: key, Op: remote.RegisterInstance, HasOp: true, Instance: instance("10.9.9.9", port)})); err != nil {
			return fmt.Errorf("publisher register: %w", err)
		}
		time.Sleep(c.interval)
	}
	// late pushes still count: wait up to 10 s for them
	want := int64(len(subs)) * int64(rounds)
	for deadline := time.Now().Add(10 * time.Second); arrived.Load() < want && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	cpu := procCPU(c.pid) - cpu0
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) string {
		if len(lat) == 0 {
			return "-"
		}
		return lat[min(len(lat)-1, int(q*float64(len(lat))))].Round(100 * time.Microsecond).String()
	}
	expected := len(subs) * rounds
	cpuPer := "-"
	if cpu > 0 && len(lat) > 0 {
		cpuPer = fmt.Sprintf("%.0fµs", float64(cpu.Microseconds())/float64(len(lat)))
	}
	fmt.Printf("op=push addr=%s subscribers=%d failed=%d rounds=%d delivered=%d/%d pushes/s=%.0f p50=%s p90=%s p99=%s max=%s rss=%dKiB server-cpu=%.1fs server-cpu/push=%s\n",
		c.addr, len(subs), failed, rounds, len(lat), expected, float64(len(lat))/elapsed.Seconds(), p(0.5), p(0.9), p(0.99), p(1), procRSS(c.pid), cpu.Seconds(), cpuPer)
	return nil
}

// pushedPort reads the publisher's instance port from a
// NotifySubscriberRequest body: the one host of ip 10.9.9.9.
func pushedPort(body []byte) (int, bool) {
	i := bytes.Index(body, []byte(`"10.9.9.9"`))
	if i < 0 {
		return 0, false
	}
	// the port is next to the ip in every server's JSON: look around it
	lo, hi := max(0, i-200), min(len(body), i+200)
	w := body[lo:hi]
	j := bytes.Index(w, []byte(`"port":`))
	if j < 0 {
		return 0, false
	}
	n := 0
	for _, b := range w[j+len(`"port":`):] {
		if b < '0' || b > '9' {
			break
		}
		n = n*10 + int(b-'0')
	}
	return n, n > 0
}

// dialMany opens n connections, c.workers at a time, runs after on each;
// returns the connections and how many failed.
func dialMany(c config, n int, after func(*remoteclient.Client) error, onRequest func(*remote.Payload, remote.Requester) remote.Responder) ([]*remoteclient.Client, int64) {
	ctx := context.Background()
	clients := make([]*remoteclient.Client, 0, n)
	lane := make(chan struct{}, c.workers)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr sync.Once
	fail := func(err error) {
		failed.Add(1)
		firstErr.Do(func() { fmt.Fprintln(os.Stderr, "nacosd-grpcload: first failure:", err) })
	}
	for i := 0; i < n; i++ {
		wg.Add(1)
		lane <- struct{}{}
		go func() {
			defer func() { <-lane; wg.Done() }()
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			cl, err := remoteclient.Dial(dctx, c.addr, remoteclient.Options{Headers: headers(c), OnRequest: onRequest, Labels: namingLabels})
			if err != nil {
				fail(err)
				return
			}
			if err := after(cl); err != nil {
				fail(err)
			}
			mu.Lock()
			clients = append(clients, cl)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return clients, failed.Load()
}

func closeAll(clients []*remoteclient.Client) {
	for _, cl := range clients {
		cl.Close()
	}
}
