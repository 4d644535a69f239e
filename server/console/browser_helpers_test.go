package console_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser tests need Debian's chromium. They run when NACOSD_UI_TEST=1 (make
// ui-test, which installs chromium) and are skipped otherwise, so `make
// test` stays independent of a browser.
func chromiumPath(t testing.TB) string {
	t.Helper()
	if os.Getenv("NACOSD_UI_TEST") != "1" {
		t.Skip("browser test: set NACOSD_UI_TEST=1 (make ui-test)")
	}
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("NACOSD_UI_TEST=1 but no chromium found (apt-get install -y chromium)")
	return ""
}

// browser is one headless chromium with a fresh profile.
type browser struct {
	t    testing.TB
	ctx  context.Context
	base string // http://host:port/nacos/
}

func newBrowser(t testing.TB, base string) *browser {
	t.Helper()
	// The profile is removed after chromium's helpers are gone, which can be
	// a moment after the browser process exits (t.TempDir would fail).
	profile, err := os.MkdirTemp("", "nacosd-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 800),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	// chromedp 0.14 does not know some events of newer browsers; that is noise
	errorf := func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !strings.Contains(msg, "unhandled node event") && !strings.Contains(msg, "unhandled page event") {
			t.Logf("chromedp: %s", msg)
		}
	}
	ctx, cancelC := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf), chromedp.WithErrorf(errorf))
	t.Cleanup(func() {
		cancelC()
		cancelA()
		for i := 0; i < 50 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	// the page's console errors and uncaught exceptions go to the test log
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			t.Logf("browser exception: %s", e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				t.Logf("browser console %s: %s", e.Type, strings.Join(parts, " "))
			}
		}
	})
	if err := chromedp.Run(ctx, emulation.SetDeviceMetricsOverride(1280, 800, 1, false)); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx, base: base}
}

// run runs actions with a deadline, failing the test on error.
func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var page string
		_ = chromedp.Run(b.ctx, chromedp.Evaluate(`document.body ? document.body.innerText.slice(0, 2000) : ''`, &page))
		b.t.Fatalf("%s: %v\npage text:\n%s", what, err, page)
	}
}

// open navigates to a console route ("#/configs").
func (b *browser) open(route string) {
	b.t.Helper()
	b.run("open "+route, chromedp.Navigate(b.base+route), chromedp.WaitReady("#app"))
}

// route changes the hash without a page load.
func (b *browser) route(route string) {
	b.t.Helper()
	b.run("route "+route, chromedp.Evaluate(fmt.Sprintf(`location.hash = %q`, route), nil))
}

// waitText waits until the element's text contains want.
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		var ok bool
		_ = chromedp.Run(b.ctx, chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.innerText.includes(%q); })()`, sel, want), &ok))
		if ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = chromedp.Run(b.ctx, chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.innerText : '(no element)'; })()`, sel), &got))
	b.t.Fatalf("%s never contained %q; it has:\n%s", sel, want, got)
}

// eval evaluates a JS expression into out.
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	b.run("eval "+expr, chromedp.Evaluate(expr, out))
}

// waitJS waits until the JS expression is true.
func (b *browser) waitJS(what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var ok bool
		if err := chromedp.Run(b.ctx, chromedp.Evaluate(expr, &ok)); err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	var page string
	_ = chromedp.Run(b.ctx, chromedp.Evaluate(`document.body.innerText.slice(0, 2000)`, &page))
	b.t.Fatalf("timed out waiting for %s (%s)\npage text:\n%s", what, expr, page)
}

// typeInto types text into an input.
func (b *browser) typeInto(sel, text string) {
	b.t.Helper()
	b.run("type into "+sel, chromedp.SendKeys(sel, text, chromedp.ByQuery))
}

// setSelect picks an option of a <select> as a user would.
func (b *browser) setSelect(sel, value string) {
	b.t.Helper()
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, sel, value), nil)
}

// clickButton clicks the first visible button or link whose text is label.
func (b *browser) clickButton(label string) {
	b.t.Helper()
	xp := fmt.Sprintf(`//*[self::button or self::a][normalize-space()=%q]`, label)
	b.run("click "+label, chromedp.Click(xp, chromedp.BySearch, chromedp.NodeVisible))
}

// clickIn clicks the button or link labelled label inside the element sel.
func (b *browser) clickIn(sel, label string) {
	b.t.Helper()
	var ok bool
	b.eval(fmt.Sprintf(`(() => { const root = document.querySelector(%q); if (!root) return false;
		const el = [...root.querySelectorAll('button, a')].find((e) => e.innerText.trim() === %q);
		if (!el) return false; el.click(); return true; })()`, sel, label), &ok)
	if !ok {
		b.t.Fatalf("no %q in %s", label, sel)
	}
}

// setEditor replaces the content of the (first) CodeMirror editor by
// typing it; a newline is the Enter key as a keyboard sends it (the editor
// auto-indents, so keep test content flat).
func (b *browser) setEditor(text string) {
	b.t.Helper()
	b.run("clear the editor",
		chromedp.WaitVisible(".cm-content", chromedp.ByQuery),
		chromedp.Click(".cm-content", chromedp.ByQuery),
		chromedp.KeyEvent("a", chromedp.KeyModifiers(input.ModifierCtrl)),
		chromedp.KeyEvent("\b"),
	)
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.run("enter",
				input.DispatchKeyEvent(input.KeyRawDown).WithKey("Enter").WithCode("Enter").WithWindowsVirtualKeyCode(13),
				input.DispatchKeyEvent(input.KeyUp).WithKey("Enter").WithCode("Enter").WithWindowsVirtualKeyCode(13))
		}
		if line != "" {
			b.run("type", chromedp.SendKeys(".cm-content", line, chromedp.ByQuery))
		}
	}
}

// shot saves a screenshot of the viewport as docs/console/<name>.png when
// NACOSD_UI_SCREENSHOTS names the docs directory.
func (b *browser) shot(name string) {
	b.t.Helper()
	dir := os.Getenv("NACOSD_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	time.Sleep(300 * time.Millisecond) // let the last render and fonts settle
	b.eval(`(() => { const t = document.querySelector('.toasts'); if (t) t.style.visibility = 'hidden'; return true; })()`, nil)
	var png []byte
	b.run("screenshot "+name, chromedp.CaptureScreenshot(&png))
	b.eval(`(() => { const t = document.querySelector('.toasts'); if (t) t.style.visibility = ''; return true; })()`, nil)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

type chromedpAction = chromedp.Action

func clickQuery(sel string) chromedp.Action {
	return chromedp.Click(sel, chromedp.ByQuery, chromedp.NodeVisible)
}
