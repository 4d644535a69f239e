package metrics

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/nacosd/nacosd/internal/clock"
)

// The process, system and JVM meters Spring Boot exposes and the community
// Nacos Grafana dashboard queries (cpu, load, memory, threads panels). The
// jvm_* series carry nacosd's Go figures under the JVM names: heap in use
// and its limit, and OS threads; they exist only so those panels work.
var (
	dSysCPU      = prometheus.NewDesc("system_cpu_usage", "The \"recent cpu usage\" of the system the application is running in", nil, nil)
	dSysCPUCount = prometheus.NewDesc("system_cpu_count", "The number of processors available to the process", nil, nil)
	dSysLoad     = prometheus.NewDesc("system_load_average_1m", "The sum of the number of runnable entities queued to available processors and the number of runnable entities running on the available processors averaged over a period of time", nil, nil)
	dProcCPU     = prometheus.NewDesc("process_cpu_usage", "The \"recent cpu usage\" for the nacosd process", nil, nil)
	dProcUptime  = prometheus.NewDesc("process_uptime_seconds", "The uptime of the nacosd process", nil, nil)
	dProcFiles   = prometheus.NewDesc("process_files_open_files", "The open file descriptor count", nil, nil)
	dProcMaxFile = prometheus.NewDesc("process_files_max_files", "The maximum file descriptor count", nil, nil)
	dJVMUsed     = prometheus.NewDesc("jvm_memory_used_bytes", "The amount of used memory (nacosd: Go heap in use)", []string{"area", "id"}, nil)
	dJVMMax      = prometheus.NewDesc("jvm_memory_max_bytes", "The maximum amount of memory in bytes that can be used for memory management (nacosd: GOMEMLIMIT, else the cgroup limit, else physical memory)", []string{"area", "id"}, nil)
	dJVMThreads  = prometheus.NewDesc("jvm_threads_live_threads", "The current number of live threads (nacosd: OS threads)", nil, nil)
	dJVMDaemon   = prometheus.NewDesc("jvm_threads_daemon_threads", "The current number of live daemon threads (nacosd: OS threads)", nil, nil)
)

type compatCollector struct{ m *Metrics }

func (c *compatCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dSysCPU, dSysCPUCount, dSysLoad, dProcCPU, dProcUptime, dProcFiles, dProcMaxFile, dJVMUsed, dJVMMax, dJVMThreads, dJVMDaemon} {
		ch <- d
	}
}

func (c *compatCollector) Collect(ch chan<- prometheus.Metric) {
	g := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	s := c.m.sys
	sysCPU, procCPU, ok := s.cpu()
	if ok {
		g(dSysCPU, sysCPU)
		g(dProcCPU, procCPU)
	}
	g(dSysCPUCount, float64(runtime.NumCPU()))
	if l, ok := loadAvg(); ok {
		g(dSysLoad, l)
	}
	g(dProcUptime, s.clk.Now().Sub(s.start).Seconds())
	if ents, err := os.ReadDir("/proc/self/fd"); err == nil {
		g(dProcFiles, float64(len(ents)))
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
		g(dProcMaxFile, float64(rl.Cur))
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	g(dJVMUsed, float64(ms.HeapInuse), "heap", "Go heap")
	g(dJVMMax, float64(memoryLimit()), "heap", "Go heap")
	threads := float64(pprof.Lookup("threadcreate").Count())
	g(dJVMThreads, threads)
	g(dJVMDaemon, threads)
}

// systemSampler computes "recent" CPU usage as Micrometer does: the share
// of CPU time used since the previous scrape (since boot/start for the
// first).
type systemSampler struct {
	clk   clock.Clock
	start time.Time

	mu                  sync.Mutex
	lastBusy, lastTotal float64 // system jiffies
	lastProc            float64 // process CPU seconds
	lastWall            time.Time
}

func newSystemSampler(clk clock.Clock) *systemSampler {
	now := clk.Now()
	return &systemSampler{clk: clk, start: now, lastWall: now}
}

func (s *systemSampler) cpu() (system, process float64, ok bool) {
	busy, total, ok1 := procStat()
	proc, ok2 := processCPUSeconds()
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clk.Now()
	if dt := total - s.lastTotal; dt > 0 {
		system = (busy - s.lastBusy) / dt
	}
	if wall := now.Sub(s.lastWall).Seconds(); wall > 0 {
		process = (proc - s.lastProc) / wall / float64(runtime.NumCPU())
	}
	s.lastBusy, s.lastTotal, s.lastProc, s.lastWall = busy, total, proc, now
	return clamp01(system), clamp01(process), true
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

// procStat reads the aggregate cpu line of /proc/stat: busy and total jiffies.
func procStat() (busy, total float64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0, false
	}
	for i, v := range f[1:] {
		n, _ := strconv.ParseFloat(v, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total, true
}

// processCPUSeconds is user+system CPU time of this process.
func processCPUSeconds() (float64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	sec := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return sec(ru.Utime) + sec(ru.Stime), true
}

func loadAvg() (float64, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	v, err := strconv.ParseFloat(f[0], 64)
	return v, err == nil
}

// memoryLimit is the heap ceiling: GOMEMLIMIT, else the cgroup v2 memory
// limit, else physical memory.
func memoryLimit() int64 {
	if l := debug.SetMemoryLimit(-1); l > 0 && l < math.MaxInt64 {
		return l
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// parseRaftDuration reads raft's last_contact ("12.5ms", "0").
func parseRaftDuration(s string) (float64, error) {
	if s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	return d.Seconds(), err
}
