package browser_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/nacosd/nacosd/server/servertest"
)

// firstRow makes window.__row a promise of the time from navigation start
// (performance.now()'s origin) to the first row of the page's main table
// being displayed (in the document and not hidden): the moment a user sees
// data. One promise instead of polling from the test, so the measurement
// adds no work to the page's main thread.
const firstRow = `(() => {
  const sel = 'main table.grid tbody tr';
  window.__row = new Promise((resolve) => {
    new MutationObserver((_, o) => {
      const row = document.querySelector(sel);
      if (row && row.getClientRects().length > 0) { o.disconnect(); resolve(performance.now()); }
    }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['hidden', 'style', 'class'] });
  });
})();`

// traceJS lists when the document and each request started and ended (ms).
const traceJS = `JSON.stringify({doc: performance.getEntriesByType('navigation').map((e) => ({start: e.fetchStart, html: e.responseEnd, interactive: e.domInteractive, dcl: e.domContentLoadedEventEnd})), res: performance.getEntriesByType('resource').map((e) => [e.name.replace(/^.*\/nacos\//, '').slice(0, 40), e.startTime, e.responseEnd])}, (k, v) => typeof v === 'number' ? Math.round(v) : v)`

// BenchmarkBrowserServicesPage measures how long the console takes, in
// chromium from localhost, to show the services page of a namespace with
// 10 000 services: navigation start to the first row on screen. "cold" has
// an empty browser cache (first visit: page, bundle, API calls), "warm" a
// cached bundle (every later visit; the page itself is revalidated).
// Reported per case: ms-cold or ms-warm (median wall time), p95-ms, and
// cpu-ms (median main-thread time of the page until then, which a busy
// machine inflates far less than the wall time). The figures go to
// docs/console.md; run with make ui-bench.
func BenchmarkBrowserServicesPage(b *testing.B) {
	cfg := servertest.Config(b)
	cfg.Naming.BeatCheckInterval = time.Hour
	cfg.Naming.EmptyServiceCleanInitial = time.Hour
	n := servertest.Start(b, cfg)
	registerServices(b, n, 10_000, 8)
	br := newBrowser(b, consoleBase(n))
	br.run("install the probe", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(firstRow).Do(ctx)
		return err
	}), network.Enable(), performance.Enable().WithTimeDomain(performance.EnableTimeDomainThreadTicks))
	// the floor: a static page holding one such row, from a plain Go HTTP
	// server on localhost: what the browser alone takes on this machine now
	floor := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>floor</title><main><table class="grid"><tbody><tr><td>svc-0000</td></tr></tbody></table></main>`))
	}))
	defer floor.Close()
	b.Run("static-floor", func(b *testing.B) {
		var ms []float64
		for i := 0; i < b.N; i++ {
			br.run("reset", chromedp.Navigate("about:blank"))
			wall, _ := loadURL(b, br, floor.URL+"/")
			ms = append(ms, wall)
		}
		sort.Float64s(ms)
		b.ReportMetric(ms[len(ms)/2], "ms")
		b.ReportMetric(0, "ns/op")
	})

	for _, route := range []struct{ name, hash string }{
		{"list", "#/services"},
		{"search", "#/services?name=svc-99&hideEmpty=1"},
		{"deep", "#/services?pageNo=250&pageSize=20"},
	} {
		for _, cold := range []bool{true, false} {
			kind := "warm"
			if cold {
				kind = "cold"
			}
			b.Run(route.name+"-"+kind, func(b *testing.B) {
				var ms, cpu []float64
				for i := 0; i < b.N; i++ {
					wall, busy := loadOnce(b, br, route.hash, cold)
					ms, cpu = append(ms, wall), append(cpu, busy)
				}
				sort.Float64s(ms)
				sort.Float64s(cpu)
				b.ReportMetric(ms[len(ms)/2], "ms-"+kind)
				b.ReportMetric(ms[(len(ms)*95)/100], "p95-ms")
				b.ReportMetric(cpu[len(cpu)/2], "cpu-ms")
				b.ReportMetric(0, "ns/op") // the figure is the page time, not the loop
			})
		}
	}
}

// loadOnce opens the console at hash in a fresh document and returns the
// milliseconds to the first table row, and the CPU time the page's main
// thread spent meanwhile (thread ticks: what the load costs the browser,
// whatever else the machine runs).
func loadOnce(b *testing.B, br *browser, hash string, cold bool) (wall, busy float64) {
	b.Helper()
	b.StopTimer()
	// leave the console for a small page of the same site: the next load
	// is a fresh document
	actions := []chromedp.Action{chromedp.Navigate(br.base + "console-ui/third-party-licenses.txt")}
	if cold {
		actions = append(actions, network.ClearBrowserCache())
	}
	br.run("reset", actions...)
	b.StartTimer()
	return loadURL(b, br, br.base+hash)
}

// loadURL navigates to u and returns the milliseconds to the first
// displayed table row and the document's main-thread time until then.
func loadURL(b *testing.B, br *browser, u string) (wall, busy float64) {
	b.Helper()
	br.run("load", chromedp.Navigate(u))
	var t float64
	ctx, cancel := context.WithTimeout(br.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.__row`, &t, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	})); err != nil || t == 0 {
		var page string
		br.run("page text", chromedp.Evaluate(`document.body.innerText.slice(0, 500)`, &page))
		b.Fatalf("%s: no table row within 10 s (%v); page:\n%s", u, err, page)
	}
	if os.Getenv("NACOSD_UI_BENCH_TRACE") != "" {
		var tr string
		br.run("trace", chromedp.Evaluate(traceJS, &tr))
		b.Logf("first row %.0f ms: %s", t, tr)
	}
	return t, mainThreadTime(b, br)
}

// mainThreadTime is the TaskDuration of the current document so far, in
// milliseconds of main-thread time (Chrome counts it per document, from
// its navigation).
func mainThreadTime(b *testing.B, br *browser) float64 {
	b.Helper()
	var ms []*performance.Metric
	br.run("metrics", chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		ms, err = performance.GetMetrics().Do(ctx)
		return err
	}))
	if os.Getenv("NACOSD_UI_BENCH_TRACE") != "" {
		var parts []string
		for _, m := range ms {
			if strings.HasSuffix(m.Name, "Duration") {
				parts = append(parts, fmt.Sprintf("%s=%.1f", m.Name, m.Value*1000))
			}
		}
		b.Logf("metrics: %s", strings.Join(parts, " "))
	}
	for _, m := range ms {
		if m.Name == "TaskDuration" {
			return m.Value * 1000
		}
	}
	b.Fatal("no TaskDuration metric")
	return 0
}
