// Command nacosd-load drives a Nacos 1.x server (nacosd or Java Nacos) over
// HTTP with the requests clients make most: instance register, beat and
// instance/list; it prints requests/s and latency percentiles per kind. It
// only talks to the address given, which must be on this machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "nacosd-load:", err)
		os.Exit(1)
	}
}

type result struct {
	kind string
	lat  []time.Duration
	errs int
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("nacosd-load", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8848", "server host:port (loopback only)")
	ctxPath := fs.String("context-path", "/nacos", "context path")
	workers := fs.Int("c", 16, "concurrent workers per phase")
	dur := fs.Duration("d", 5*time.Second, "duration of each phase")
	services := fs.Int("services", 100, "services to spread instances over")
	instances := fs.Int("instances", 10000, "instances to register in the register phase (bounded by -d)")
	label := fs.String("label", "nacosd", "label for the output lines")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return errors.New("refusing a non-loopback target: " + *addr)
	}
	base := "http://" + *addr + *ctxPath
	tr := &http.Transport{MaxIdleConnsPerHost: *workers * 2, MaxConnsPerHost: *workers * 2}
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	ua := map[string]string{"User-Agent": "Nacos-Java-Client:v1.4.8"}
	do := func(method, path string, q url.Values) error {
		req, err := http.NewRequest(method, base+path+"?"+q.Encode(), nil)
		if err != nil {
			return err
		}
		for k, v := range ua {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	inst := func(i int) url.Values {
		return url.Values{"serviceName": {"DEFAULT_GROUP@@load-" + strconv.Itoa(i%*services)},
			"ip": {"127.0." + strconv.Itoa(i>>8&255) + "." + strconv.Itoa(i&255)}, "port": {strconv.Itoa(20000 + i>>16)},
			"clusterName": {"DEFAULT"}}
	}
	var registered int
	phase := func(kind string, limit int, fn func(i int) error) result {
		ctx, cancel := context.WithTimeout(context.Background(), *dur)
		defer cancel()
		var mu sync.Mutex
		res := result{kind: kind}
		var next int
		var wg sync.WaitGroup
		for w := 0; w < *workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var lat []time.Duration
				errs := 0
				for ctx.Err() == nil {
					mu.Lock()
					i := next
					next++
					mu.Unlock()
					if limit > 0 && i >= limit {
						break
					}
					t0 := time.Now()
					if err := fn(i); err != nil {
						errs++
						continue
					}
					lat = append(lat, time.Since(t0))
				}
				mu.Lock()
				res.lat = append(res.lat, lat...)
				res.errs += errs
				mu.Unlock()
			}()
		}
		start := time.Now()
		wg.Wait()
		report(out, *label, res, time.Since(start))
		if kind == "register" {
			registered = len(res.lat)
		}
		return res
	}
	phase("register", *instances, func(i int) error { return do("POST", "/v1/ns/instance", inst(i)) })
	if registered == 0 {
		return errors.New("no instance registered")
	}
	phase("beat", 0, func(i int) error { return do("PUT", "/v1/ns/instance/beat", inst(i%registered)) })
	phase("list", 0, func(i int) error {
		return do("GET", "/v1/ns/instance/list", url.Values{"serviceName": {"DEFAULT_GROUP@@load-" + strconv.Itoa(i%*services)}, "clusters": {""}, "healthyOnly": {"false"}})
	})
	return nil
}

func report(out io.Writer, label string, r result, elapsed time.Duration) {
	sort.Slice(r.lat, func(i, j int) bool { return r.lat[i] < r.lat[j] })
	pct := func(p float64) time.Duration {
		if len(r.lat) == 0 {
			return 0
		}
		return r.lat[int(p*float64(len(r.lat)-1))]
	}
	fmt.Fprintf(out, "%-8s %-9s %8.0f req/s  n=%-7d errors=%-4d p50=%-9s p99=%-9s max=%s\n", label, r.kind,
		float64(len(r.lat))/elapsed.Seconds(), len(r.lat), r.errs, round(pct(0.5)), round(pct(0.99)), round(pct(1)))
}

func round(d time.Duration) string { return strings.TrimSpace(d.Round(10 * time.Microsecond).String()) }
