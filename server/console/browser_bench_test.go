package console_test

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/nacosd/nacosd/server/servertest"
)

// firstRow records, in window.__firstRow, the time from navigation start
// (performance.now()'s origin) to the first row of the page's main table:
// the moment a user sees data.
const firstRow = `(() => {
  const sel = 'main table.grid tbody tr';
  new MutationObserver((_, o) => {
    if (document.querySelector(sel)) { window.__firstRow = performance.now(); o.disconnect(); }
  }).observe(document, { subtree: true, childList: true });
})();`

// traceJS lists when the document and each request started and ended (ms).
const traceJS = `JSON.stringify({doc: performance.getEntriesByType('navigation').map((e) => ({start: e.fetchStart, html: e.responseEnd, interactive: e.domInteractive, dcl: e.domContentLoadedEventEnd})), res: performance.getEntriesByType('resource').map((e) => [e.name.replace(/^.*\/nacos\//, '').slice(0, 40), e.startTime, e.responseEnd])}, (k, v) => typeof v === 'number' ? Math.round(v) : v)`

// BenchmarkBrowserServicesPage measures how long the console takes, in
// chromium from localhost, to show the services page of a namespace with
// 10 000 services: navigation start to the first row on screen. "cold" has
// an empty browser cache (first visit: page, bundle, API calls), "warm" a
// cached bundle (every later visit; the page itself is revalidated). The
// figures are reported as ms-cold and ms-warm (medians) and p95-*; see
// docs/console.md. Run with make ui-bench.
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
	}), network.Enable())
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
				var ms []float64
				for i := 0; i < b.N; i++ {
					ms = append(ms, loadOnce(b, br, route.hash, cold))
				}
				sort.Float64s(ms)
				b.ReportMetric(ms[len(ms)/2], "ms-"+kind)
				b.ReportMetric(ms[(len(ms)*95)/100], "p95-ms")
				b.ReportMetric(0, "ns/op") // the figure is the page time, not the loop
			})
		}
	}
}

// loadOnce opens the console at hash in a fresh document and returns the
// milliseconds to the first table row.
func loadOnce(b *testing.B, br *browser, hash string, cold bool) float64 {
	b.Helper()
	b.StopTimer()
	actions := []chromedp.Action{chromedp.Navigate("about:blank")}
	if cold {
		actions = append(actions, network.ClearBrowserCache())
	}
	br.run("reset", actions...)
	b.StartTimer()
	br.run("load", chromedp.Navigate(br.base+hash))
	var t float64
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var v any
		br.run("read the probe", chromedp.Evaluate(`window.__firstRow || 0`, &v))
		if f, ok := v.(float64); ok && f > 0 {
			if os.Getenv("NACOSD_UI_BENCH_TRACE") != "" {
				var tr string
				br.run("trace", chromedp.Evaluate(traceJS, &tr))
				b.Logf("first row %.0f ms: %s", f, tr)
			}
			t = f
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if t == 0 {
		var page string
		br.run("page text", chromedp.Evaluate(`document.body.innerText.slice(0, 500)`, &page))
		b.Fatalf("%s: no table row within 10 s; page:\n%s", hash, page)
	}
	return t
}
