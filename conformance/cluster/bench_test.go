package cluster_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/distro"
	"github.com/nacosd/nacosd/internal/testtier"
)

// TestClusterBench measures a three-node cluster on this machine (make
// bench-cluster; figures in docs/benchmarks.md): register and config
// publish throughput with wrk (one node, and all three at once), the time
// from a change on one node to its visibility and UDP push on another, and
// the CPU the checksum and status rounds cost with 10 000 instances. It
// asserts nothing about speed; it logs what it measured.
func TestClusterBench(t *testing.T) {
	testtier.Require(t, testtier.Cluster) // make bench-cluster; make cluster-test skips it
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Fatal("wrk not found (apt-get install wrk)")
	}
	c := newCluster(t)
	c.startAll()
	c.membersUp(60 * time.Second)
	t.Logf("load average before: %s", loadAvg())

	scripts := benchScripts(t)
	for _, s := range []string{"register", "cfgpub"} {
		one := wrk(t, c.nodes[:1], scripts[s])
		all := wrk(t, c.nodes, scripts[s])
		t.Logf("%-8s one node: %8.0f req/s   three nodes at once: %8.0f req/s (load %s)", s, one, all, loadAvg())
	}

	vis, push := visibility(t, c, 200)
	t.Logf("visibility on another node after a register: p50 %v p99 %v max %v", pct(vis, 50), pct(vis, 99), pct(vis, 100))
	t.Logf("UDP push on another node after a register:  p50 %v p99 %v max %v", pct(push, 50), pct(push, 99), pct(push, 100))

	registerMany(t, c, 1000, 10)
	time.Sleep(2 * time.Second) // the sync of the registrations settles
	before := cpuTimes(t, c)
	start := time.Now()
	time.Sleep(10 * time.Second) // two checksum and status rounds, before the instances turn unhealthy
	after := cpuTimes(t, c)
	wall := time.Since(start)
	for i := range c.nodes {
		t.Logf("node %d: %.2f%% of one core with 10 000 instances at rest (checksum and status rounds, reports)", i,
			100*float64(after[i]-before[i])/float64(wall))
	}
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// benchScripts writes the wrk Lua scripts (the request mixes of
// /work/shared/bench/wrk, inlined so the suite needs no outside file).
func benchScripts(t *testing.T) map[string]string {
	dir := t.TempDir()
	scripts := map[string]string{
		"register": `local reqs = {}
init = function()
  for i = 0, 9999 do
    reqs[i] = wrk.format("POST", string.format("/nacos/v1/ns/instance?serviceName=wrk.svc.%d&ip=127.%d.%d.%d&port=8080&ephemeral=true",
      i % 100, 100 + math.floor(i / 65536) % 100, math.floor(i / 256) % 256, i % 256))
  end
end
request = function() return reqs[math.random(0, 9999)] end
`,
		"cfgpub": `local n = 0
request = function()
  n = n + 1
  local body = string.format("dataId=wrkp-%d.yaml&group=WRK&content=v%%3A+%d%%0Apad%%3A+%s", n % 100, n, string.rep("x", 200))
  return wrk.format("POST", "/nacos/v1/cs/configs", {["Content-Type"] = "application/x-www-form-urlencoded"}, body)
end
`,
	}
	out := map[string]string{}
	for k, v := range scripts {
		p := filepath.Join(dir, k+".lua")
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
		out[k] = p
	}
	return out
}

var rpsRE = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)

// wrk runs one wrk per node at once (-t1 -c16 -d6s) and sums requests/s.
func wrk(t *testing.T, nodes []*node, script string) float64 {
	var mu sync.Mutex
	var total float64
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command("wrk", "-t1", "-c16", "-d6s", "-s", script, "http://"+n.addr()).CombinedOutput()
			if err != nil {
				t.Errorf("wrk: %v %s", err, out)
				return
			}
			m := rpsRE.FindSubmatch(out)
			if m == nil {
				t.Errorf("wrk output: %s", out)
				return
			}
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			mu.Lock()
			total += v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total
}

// visibility registers n instances, each of a service of its own, on the
// first node, and measures when the third node lists it (polling every
// 2 ms) and when a UDP subscriber of the third node gets the push. The
// services are chosen so that the third node does not own them: it learns
// of each instance through a Distro sync, after a proxy hop when the
// second node owns the service. (Java delays every push by 1 s to
// coalesce changes; so does nacosd.)
func visibility(t *testing.T, c *cluster, n int) (vis, push []time.Duration) {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	port := udp.LocalAddr().(*net.UDPAddr).Port
	at, seen := c.nodes[0], c.nodes[2]
	subscribe := func(svc string) {
		_, _ = do(seen, "GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {svc}, "udpPort": {strconv.Itoa(port)}, "clientIP": {"127.0.0.1"}}, nil)
	}
	pushed := make(chan string, 1024)
	go func() {
		buf := make([]byte, 65536)
		for {
			k, from, err := udp.ReadFromUDP(buf)
			if err != nil {
				return
			}
			b := buf[:k]
			if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
				if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
					if u, err := io.ReadAll(zr); err == nil {
						b = u
					}
				}
			}
			body := string(b)
			pushed <- body
			// ack, as clients do: {"type":"push-ack","lastRefTime":…,"data":""}
			if i := strings.Index(body, `"lastRefTime":`); i >= 0 {
				j := i + len(`"lastRefTime":`)
				e := j
				for e < len(body) && body[e] >= '0' && body[e] <= '9' {
					e++
				}
				_, _ = udp.WriteToUDP([]byte(`{"type":"push-ack","lastRefTime":"`+body[j:e]+`","data":""}`), from)
			}
		}
	}()
	lost, proxied := 0, 0
	for i, k := 0, 0; i < n; k++ {
		svc := "bench.vis." + strconv.Itoa(k)
		owner := responsible(c, svc)
		if owner == seen.addr() {
			continue
		}
		if owner != at.addr() {
			proxied++
		}
		subscribe(svc)
		ip := "127.200." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250)
		start := time.Now()
		if r, err := do(at, "POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {svc}, "ip": {ip}, "port": {"80"}, "ephemeral": {"true"}}, nil); err != nil || r.status != 200 {
			t.Fatalf("register: %v %+v", err, r)
		}
		gotPush, gotList := false, false
		deadline := time.Now().Add(5 * time.Second)
		for (!gotPush || !gotList) && time.Now().Before(deadline) {
			select {
			case body := <-pushed:
				if !gotPush && (strings.Contains(body, ip+`\"`) || strings.Contains(body, ip+`"`)) {
					gotPush = true
					push = append(push, time.Since(start))
				}
			default:
			}
			if !gotList {
				if h, err := hosts(seen, svc); err == nil && slices.Contains(h, ip+":80") {
					gotList = true
					vis = append(vis, time.Since(start))
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		if !gotList {
			t.Errorf("instance %d not visible on the other node within 5 s", i)
		}
		if !gotPush {
			lost++
		}
		i++
	}
	t.Logf("visibility: %d of %d registrations proxied to the owner first; %d pushes not seen within 5 s", proxied, n, lost)
	return vis, push
}

// responsible is the member owning svc by Java's Distro hash over the
// sorted member list (all members are healthy here): the service does not
// exist yet, so /operator/distro/server cannot be asked.
func responsible(c *cluster, svc string) string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.addr()
	}
	slices.Sort(addrs)
	return addrs[distro.Hash("DEFAULT_GROUP@@"+svc)%len(addrs)]
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i >= len(s) {
		i = len(s) - 1
	}
	if i > 0 && p < 100 {
		i--
	}
	return s[i].Round(100 * time.Microsecond)
}

// registerMany registers services × per instances round robin on the nodes.
func registerMany(t *testing.T, c *cluster, services, per int) {
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				n := c.nodes[i%3]
				q := url.Values{"serviceName": {"bench.many." + strconv.Itoa(i%services)}, "ip": {"127.201." + strconv.Itoa(i/250%250) + "." + strconv.Itoa(i%250)},
					"port": {"80"}, "ephemeral": {"true"}}
				if r, err := do(n, "POST", "/nacos/v1/ns/instance", q, nil); err != nil || r.status != 200 {
					t.Errorf("register %d: %v %+v", i, err, r)
				}
			}
		}()
	}
	for i := range services * per {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

// cpuTimes returns each node's user+system CPU time so far.
func cpuTimes(t *testing.T, c *cluster) []time.Duration {
	var out []time.Duration
	for _, n := range c.nodes {
		f, err := os.Open(fmt.Sprintf("/proc/%d/stat", n.cmd.Process.Pid))
		if err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		fields := strings.Fields(line[strings.LastIndex(line, ")")+2:])
		ut, _ := strconv.ParseInt(fields[11], 10, 64)
		st, _ := strconv.ParseInt(fields[12], 10, 64)
		out = append(out, time.Duration(ut+st)*10*time.Millisecond) // USER_HZ 100
	}
	return out
}
