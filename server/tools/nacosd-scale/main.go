// Command nacosd-scale measures the scale figures of docs/benchmarks.md
// ("Scale figures (issue 13)"): ephemeral instances kept alive by beats,
// long-poll holders, UDP push fan-out and config listeners. It starts
// nacosd itself (fresh data directory), drives it from this process (the
// long-poll holders from a child process, for the descriptor limit) with
// pipelined requests on raw connections, and prints one markdown table row
// per figure. `preload` fills any server for the wrk workloads of
// server/tools/nacosd-load/wrk.sh. Only loopback addresses are used.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "nacosd-scale:", err)
		os.Exit(1)
	}
}

// options are the flags of every measurement.
type options struct {
	bin       string
	port      int
	addr      string
	duration  time.Duration
	instances int
	services  int
	period    time.Duration
	conns     int
	holders   int
	subs      int
	loss      float64
	keys      int
	clients   int
	publishes int
	set       string
	url       string
	since     int64
	md5       string
	timeout   time.Duration
	pprof     string
}

func run(args []string, out, log io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: nacosd-scale beats|holders|push|listeners|preload [flags]")
	}
	what := args[0]
	fs := flag.NewFlagSet("nacosd-scale "+what, flag.ContinueOnError)
	var o options
	fs.StringVar(&o.bin, "nacosd", "bin/nacosd", "nacosd binary to start")
	fs.IntVar(&o.port, "port", 0, "HTTP port for the nacosd started (raft: port-1000); 0: a free one")
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8848", "server address (preload, holders child)")
	fs.DurationVar(&o.duration, "d", 5*time.Minute, "beats: how long to keep the instances beating")
	fs.IntVar(&o.instances, "instances", 100000, "beats: ephemeral instances")
	fs.IntVar(&o.services, "services", 1000, "beats: services they are spread over")
	fs.DurationVar(&o.period, "period", 5*time.Second, "beats: beat interval of each instance")
	fs.IntVar(&o.conns, "c", 32, "beats: connections")
	fs.IntVar(&o.holders, "holders", 19000, "holders: long polls held")
	fs.IntVar(&o.subs, "subs", 5000, "push: UDP subscribers")
	fs.Float64Var(&o.loss, "loss", 0.05, "push: fraction of datagrams the subscribers drop in the lossy round")
	fs.IntVar(&o.keys, "keys", 10000, "listeners: keys listened")
	fs.IntVar(&o.clients, "clients", 1000, "listeners: clients (one long poll each)")
	fs.IntVar(&o.publishes, "publishes", 300, "listeners: publishes measured")
	fs.StringVar(&o.set, "set", "instances", "preload: instances, configs, configs100k or persistent100k")
	fs.StringVar(&o.url, "url", "", "wait: URL to poll")
	fs.Int64Var(&o.since, "since", 0, "wait: start time of the server, Unix ns")
	fs.StringVar(&o.pprof, "pprof", "", "serve the started nacosd's pprof profiles on this loopback address (-pprof-addr)")
	fs.StringVar(&o.md5, "md5", "", "holders child: md5 the holders send")
	fs.DurationVar(&o.timeout, "timeout", 120*time.Second, "holders child: Long-Pulling-Timeout")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if err := checkLoopback(o.addr); err != nil && what != "wait" {
		return err
	}
	if o.port == 0 {
		p, err := freePort()
		if err != nil {
			return err
		}
		o.port = p
	}
	switch what {
	case "freeport":
		_, err := fmt.Fprintln(out, o.port)
		return err
	case "wait":
		return waitFirst(o.url, o.since, out)
	case "preload":
		return preload(o.addr, o.set)
	case "beats":
		return beats(o, out, log)
	case "holders":
		return holders(o, out, log)
	case "holders-child":
		return holdersChild(o, out)
	case "push":
		return pushFanout(o, out, log)
	case "listeners":
		return listeners(o, out, log)
	}
	return fmt.Errorf("unknown measurement %q", what)
}

// waitFirst polls url until it answers 200 and prints the milliseconds
// since sinceNS (a Unix time in ns: when the caller started the server).
func waitFirst(url string, sinceNS int64, out io.Writer) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if ok := probe(url); ok {
			fmt.Fprintf(out, "%.0f\n", float64(time.Now().UnixNano()-sinceNS)/1e6)
			return nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	return fmt.Errorf("%s: no 200 within 60s", url)
}
