package raftstore

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkApply measures durable (fsynced) single-op batches through a
// one-node store: sequentially, and from GOMAXPROCS*4 and GOMAXPROCS*16
// goroutines (32 on two CPUs: wrk -c32's concurrency), where raft batches
// concurrent entries into one fsync.
func BenchmarkApply(b *testing.B) {
	value := make([]byte, 256)
	for _, mode := range []string{"sequential", "parallel", "parallel16"} {
		b.Run(mode, func(b *testing.B) {
			cfg := testConfig(b, slog.New(slog.DiscardHandler), b.TempDir())
			cfg.CommitTimeout = time.Millisecond
			s := mustOpen(b, cfg)
			ctx := context.Background()
			var n atomic.Int64
			apply := func() {
				k := strconv.FormatInt(n.Add(1), 10)
				if _, err := s.Apply(ctx, Batch{Ops: []Op{{Kind: OpPut, Bucket: "bench", Key: k, Value: value}}}); err != nil {
					b.Error(err)
				}
			}
			b.ResetTimer()
			start := time.Now()
			if mode == "sequential" {
				for b.Loop() {
					apply()
				}
			} else {
				b.SetParallelism(4)
				if mode == "parallel16" {
					b.SetParallelism(16)
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						apply()
					}
				})
			}
			b.ReportMetric(float64(n.Load())/time.Since(start).Seconds(), "applies/s")
		})
	}
}
