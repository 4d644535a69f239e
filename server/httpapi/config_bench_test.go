package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/raftstore/raftstoretest"
	"github.com/nacosd/nacosd/server/config"
	"github.com/nacosd/nacosd/server/httpapi"
)

// BenchmarkConfigGet measures GET /v1/cs/configs through the fiber handler
// with a reused RequestCtx (no sockets).
func BenchmarkConfigGet(b *testing.B) {
	e := newBenchEnv(b, fiber.Config{})
	if err := e.svc.Publish(context.Background(), config.PublishRequest{DataID: "bench.yaml", Group: "DEFAULT_GROUP",
		Content: strings.Repeat("k: v\n", 200), Type: "yaml"}); err != nil {
		b.Fatal(err)
	}
	h := e.app.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var ctx fasthttp.RequestCtx
		for pb.Next() {
			ctx.Request.Reset()
			ctx.Response.Reset()
			ctx.Request.Header.SetMethod("GET")
			ctx.Request.SetRequestURI("/nacos/v1/cs/configs?dataId=bench.yaml&group=DEFAULT_GROUP")
			h(&ctx)
			if ctx.Response.StatusCode() != 200 {
				b.Fatalf("status %d", ctx.Response.StatusCode())
			}
		}
	})
}

// BenchmarkConfigPublish measures durable publishes (raft commit + bolt
// fsync) of distinct keys from parallel clients.
func BenchmarkConfigPublish(b *testing.B) {
	e := newBenchEnv(b, fiber.Config{})
	h := e.app.Handler()
	var n atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var ctx fasthttp.RequestCtx
		for pb.Next() {
			i := n.Add(1)
			ctx.Request.Reset()
			ctx.Response.Reset()
			ctx.Request.Header.SetMethod("POST")
			ctx.Request.SetRequestURI("/nacos/v1/cs/configs")
			ctx.Request.Header.SetContentType("application/x-www-form-urlencoded")
			ctx.Request.SetBodyString(url.Values{"dataId": {"p" + strconv.FormatInt(i, 10)}, "group": {"G"}, "content": {"value " + strconv.FormatInt(i, 10)}}.Encode())
			h(&ctx)
			if ctx.Response.StatusCode() != 200 {
				b.Fatalf("status %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
			}
		}
	})
}

type benchEnv struct {
	app *fiber.App
	svc *config.Service
}

func newBenchEnv(b *testing.B, fc fiber.Config) *benchEnv {
	b.Helper()
	st := raftstoretest.New(b)
	cfg := config.DefaultConfig()
	log := raftstoretest.Logger(b)
	cfg.Store, cfg.Clock, cfg.Logger = st, clock.Real{}, log
	svc, err := config.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	fc.ErrorHandler, fc.DisableStartupMessage, fc.CaseSensitive = httpapi.ErrorHandler(log), true, true
	app := fiber.New(fc)
	httpapi.MountConfig(app.Group("/nacos"), svc, log)
	b.Cleanup(func() {
		_ = svc.Close()
		_ = app.ShutdownWithTimeout(5 * time.Second)
	})
	return &benchEnv{app: app, svc: svc}
}

// BenchmarkLongPollHolders holds NACOSD_HOLDERS (default 10000) real TCP
// long polls against one fiber server, measures the server's memory per held
// request, then publishes once and measures the time until every client got
// its answer. The clients run in a child process (this test binary) so
// their memory and file descriptors do not count.
func BenchmarkLongPollHolders(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("NACOSD_HOLDERS")); err == nil && v > 0 {
		n = v
	}
	for _, v := range []struct {
		name string
		fc   fiber.Config
	}{
		{"readbuf32k", fiber.Config{ReadBufferSize: 32 << 10, BodyLimit: 32 << 20}},
		{"readbuf32k-reducemem", fiber.Config{ReadBufferSize: 32 << 10, BodyLimit: 32 << 20, ReduceMemoryUsage: true}},
	} {
		b.Run(v.name, func(b *testing.B) {
			for range b.N {
				benchHolders(b, v.fc, n)
			}
		})
	}
}

func memInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

func benchHolders(b *testing.B, fc fiber.Config, n int) {
	e := newBenchEnv(b, fc)
	if err := e.svc.Publish(context.Background(), config.PublishRequest{DataID: "hot", Group: "G", Content: "v1", Type: "text"}); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = e.app.Listener(ln) }()
	before := memInUse()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLongPollClientHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "NACOSD_LP_ADDR="+ln.Addr().String(), "NACOSD_LP_N="+strconv.Itoa(n), "NACOSD_LP_MD5="+config.MD5Hex("v1"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Wait() }()
	lines := bufio.NewScanner(out)
	deadline := time.Now().Add(60 * time.Second)
	for e.svc.Holders() < n {
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d holders", e.svc.Holders(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	held := memInUse()
	per := float64(held-before) / float64(n)
	b.ReportMetric(per, "B/holder")
	b.ReportMetric(float64(1<<30)/per, "holders/GiB")
	start := time.Now()
	if err := e.svc.Publish(context.Background(), config.PublishRequest{DataID: "hot", Group: "G", Content: "v2", Type: "text"}); err != nil {
		b.Fatal(err)
	}
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "ALLDONE") {
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "ms-to-wake-all")
			if lines.Text() != "ALLDONE bad=0" {
				b.Fatalf("client: %s", lines.Text())
			}
			break
		}
	}
}

// TestLongPollClientHelper is the client side of BenchmarkLongPollHolders;
// it only runs in the child process.
func TestLongPollClientHelper(t *testing.T) {
	addr := os.Getenv("NACOSD_LP_ADDR")
	if addr == "" {
		t.Skip("helper process for BenchmarkLongPollHolders")
	}
	n, _ := strconv.Atoi(os.Getenv("NACOSD_LP_N"))
	body := url.Values{"Listening-Configs": {"hot\x02G\x02" + os.Getenv("NACOSD_LP_MD5") + "\x01"}}.Encode()
	req := fmt.Sprintf("POST /nacos/v1/cs/configs/listener HTTP/1.1\r\nHost: x\r\nLong-Pulling-Timeout: 60000\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	var wg sync.WaitGroup
	var bad atomic.Int64
	for i := range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		if _, err := c.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			buf := make([]byte, 512)
			var got []byte
			for !bytes.Contains(got, []byte("hot%02G%01")) {
				k, err := c.Read(buf)
				if err != nil {
					bad.Add(1)
					return
				}
				got = append(got, buf[:k]...)
			}
		}()
	}
	wg.Wait()
	fmt.Printf("ALLDONE bad=%d\n", bad.Load())
}
