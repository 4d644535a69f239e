package server_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// dirBytes is the apparent size of every file under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkPersistentRegister100k registers 100 000 persistent instances
// in 10 services (NACOSD_BENCH_INSTANCES, NACOSD_BENCH_SERVICES and
// NACOSD_BENCH_WORKERS change the shape), 16 at a time, through the HTTP handler of a real node (raft on a
// real disk, every write fsynced). It reports the register latency of the
// first and the last tenth of the registers (flat when a register costs
// the same whatever the service holds) and the largest size the data
// directory reached, sampled every tenth.
//
//	go test -run '^$' -bench PersistentRegister100k -benchtime 1x -timeout 30m ./server/
func BenchmarkPersistentRegister100k(b *testing.B) {
	total := envInt("NACOSD_BENCH_INSTANCES", 100000)
	services := envInt("NACOSD_BENCH_SERVICES", 10)
	workers := envInt("NACOSD_BENCH_WORKERS", 16)
	for range b.N {
		n := benchNode(b)
		h := n.Handler()
		lat := make([]time.Duration, total)
		var next atomic.Int64
		var maxDir atomic.Int64
		var sampleMu sync.Mutex
		tenth := max(total/10, 1)
		var wg sync.WaitGroup
		b.ResetTimer()
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := &fasthttp.RequestCtx{}
				for {
					i := int(next.Add(1)) - 1
					if i >= total {
						return
					}
					uri := fmt.Sprintf("/nacos/v1/ns/instance?serviceName=DEFAULT_GROUP@@persist-%d&ip=10.%d.%d.%d&port=8080&ephemeral=false&metadata=%%7B%%22zone%%22%%3A%%22a%%22%%7D",
						i%services, i>>16&255, i>>8&255, i&255)
					start := time.Now()
					if st := do(h, ctx, "POST", uri, "Nacos-Java-Client:v1.4.8", ""); st != 200 {
						b.Errorf("register %d: status %d: %s", i, st, ctx.Response.Body())
						return
					}
					lat[i] = time.Since(start)
					if (i+1)%tenth == 0 {
						sampleMu.Lock()
						maxDir.Store(max(maxDir.Load(), dirBytes(n.Cfg.DataDir)))
						sampleMu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		maxDir.Store(max(maxDir.Load(), dirBytes(n.Cfg.DataDir)))
		pct := func(d []time.Duration, p float64) float64 {
			s := slices.Clone(d)
			slices.Sort(s)
			return float64(s[int(float64(len(s)-1)*p)].Microseconds()) / 1000
		}
		first, last := lat[:tenth], lat[total-tenth:]
		b.ReportMetric(pct(first, .5), "ms-p50-first-tenth")
		b.ReportMetric(pct(last, .5), "ms-p50-last-tenth")
		b.ReportMetric(pct(first, .99), "ms-p99-first-tenth")
		b.ReportMetric(pct(last, .99), "ms-p99-last-tenth")
		b.ReportMetric(float64(maxDir.Load())/(1<<20), "MB-datadir-max")
		b.ReportMetric(float64(dirBytes(n.Cfg.DataDir))/(1<<20), "MB-datadir-end")
		b.ReportMetric(float64(total), "instances")
		_ = filepath.WalkDir(n.Cfg.DataDir, func(p string, d fs.DirEntry, err error) error {
			if fi, ierr := d.Info(); err == nil && ierr == nil && !d.IsDir() {
				b.Logf("%6.1f MB %s", float64(fi.Size())/(1<<20), strings.TrimPrefix(p, n.Cfg.DataDir))
			}
			return nil
		})
		_ = n.Close()
	}
}
