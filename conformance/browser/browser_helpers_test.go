package browser_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/nacosd/nacosd/internal/testtier"
)

// Browser tests need Debian's chromium. They run in the browser tier
// (-tags browser: make test-browser, which installs chromium) and are
// skipped otherwise, so the other tiers stay independent of a browser.
func chromiumPath(t testing.TB) string {
	t.Helper()
	testtier.Require(t, testtier.Browser) // make ui-test
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("browser tier but no chromium found (apt-get install -y chromium)")
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

// open navigates to a console route ("#/configs") and waits until the
// app has replaced the page's "Loading…".
func (b *browser) open(route string) {
	b.t.Helper()
	b.run("open "+route, chromedp.Navigate(b.base+route), chromedp.WaitReady("#app"))
	b.waitJS("the app", `!document.querySelector('.boot') && !!document.querySelector('#app > *')`)
}

// login logs in through the login page as a user would: type, press Enter.
func (b *browser) login(user, pass string) {
	b.t.Helper()
	b.waitJS("the login page", `location.hash.startsWith('#/login') && !!document.querySelector('input[name=username]')`)
	b.eval(`(() => { for (const n of ['username', 'password']) document.querySelector('input[name=' + n + ']').value = ''; return true; })()`, nil)
	b.typeInto(`input[name=username]`, user)
	b.typeInto(`input[name=password]`, pass+"\r")
}

// key presses one key (chromedp key names: "\r" Enter, kb.Escape...) with
// modifiers, at whatever has the focus.
func (b *browser) key(k string, mods ...input.Modifier) {
	b.t.Helper()
	var m input.Modifier
	for _, x := range mods {
		m |= x
	}
	b.run("key "+k, chromedp.KeyEvent(k, chromedp.KeyModifiers(m)))
}

// keyDown sends only the keydown of a printable key: what a page that
// handles the key (and prevents its default) sees; b.key would also send
// the character as separate input.
func (b *browser) keyDown(k string) {
	b.t.Helper()
	b.run("keydown "+k, input.DispatchKeyEvent(input.KeyRawDown).WithKey(k), input.DispatchKeyEvent(input.KeyUp).WithKey(k))
}

// active describes the focused element ("BUTTON#confirm-publish").
func (b *browser) active() string {
	var s string
	b.eval(`(() => { const e = document.activeElement; return e ? e.tagName + (e.id ? '#' + e.id : '') + (e.name ? '[' + e.name + ']' : '') : ''; })()`, &s)
	return s
}

// fetchBytes fetches a URL from inside the page (same origin, the page's
// session), as a download link would, and returns status and body.
func (b *browser) fetchBytes(u string) (int, []byte) {
	b.t.Helper()
	var r struct {
		Status int
		Body   string
	}
	b.run("fetch "+u, chromedp.Evaluate(fmt.Sprintf(`fetch(%q).then(async (r) => {
		const a = new Uint8Array(await r.arrayBuffer()); let s = '';
		for (let i = 0; i < a.length; i += 8192) s += String.fromCharCode(...a.subarray(i, i + 8192));
		return { status: r.status, body: btoa(s) }; })`, u), &r, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	body, err := base64.StdEncoding.DecodeString(r.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return r.Status, body
}

// attr reads an attribute of the first element matching sel.
func (b *browser) attr(sel, name string) string {
	b.t.Helper()
	var s string
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.getAttribute(%q) || '' : ''; })()`, sel, name), &s)
	return s
}

// upload sets the file of an <input type=file>, as choosing it would.
func (b *browser) upload(sel, path string) {
	b.t.Helper()
	b.run("upload "+path, chromedp.SetUploadFiles(sel, []string{path}, chromedp.ByQuery))
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
	var msgs string
	_ = chromedp.Run(b.ctx, chromedp.Evaluate(`[...document.querySelectorAll('.toast, .alert')].map((e) => e.innerText).join('\n')`, &msgs))
	b.t.Fatalf("%s never contained %q; it has:\n%s\nmessages on the page:\n%s", sel, want, got, msgs)
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
	b.waitJS("the select "+sel, fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && [...e.options].some((o) => o.value === %q); })()`, sel, value))
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, sel, value), nil)
}

// clickButton clicks the first visible button or link whose text is
// label, waiting for it to appear and be enabled.
func (b *browser) clickButton(label string) {
	b.t.Helper()
	b.clickIn("body", label)
}

// clickIn clicks the button or link labelled label inside the element sel,
// waiting for it to appear (a dialog renders a moment after its opener).
func (b *browser) clickIn(sel, label string) {
	b.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ok bool
		b.eval(fmt.Sprintf(`(() => { const root = document.querySelector(%q); if (!root) return false;
		const el = [...root.querySelectorAll('button, a')].find((e) => e.innerText.trim() === %q && !e.disabled && e.getClientRects().length > 0);
		if (!el) return false; el.click(); return true; })()`, sel, label), &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			var page string
			_ = chromedp.Run(b.ctx, chromedp.Evaluate(`document.body.innerText.slice(0, 2000)`, &page))
			b.t.Fatalf("no %q in %s\npage text:\n%s", label, sel, page)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// check clicks a checkbox or radio button, waiting for it to appear.
func (b *browser) check(sel string) {
	b.t.Helper()
	b.waitJS("the box "+sel, fmt.Sprintf(`!!document.querySelector(%q)`, sel))
	b.eval(fmt.Sprintf(`(() => { document.querySelector(%q).click(); return true; })()`, sel), nil)
}

// setInput replaces the value of an input as typing would (input event).
func (b *browser) setInput(sel, value string) {
	b.t.Helper()
	b.waitJS("the field "+sel, fmt.Sprintf(`!!document.querySelector(%q)`, sel))
	b.eval(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`, sel, value), nil)
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

// shot takes a screenshot of the viewport. It is written as
// <dir>/<name>.png when NACOSD_UI_SCREENSHOTS names the directory
// (docs/console for docs/console.md), else only checked to decode. The
// image is reduced to at most 256 colours, which keeps the committed
// files small (a console page is mostly flat colour).
func (b *browser) shot(name string) {
	b.t.Helper()
	time.Sleep(300 * time.Millisecond) // let the last render and fonts settle
	b.eval(`(() => { const t = document.querySelector('.toasts'); if (t) t.style.visibility = 'hidden'; return true; })()`, nil)
	var raw []byte
	b.run("screenshot "+name, chromedp.CaptureScreenshot(&raw))
	b.eval(`(() => { const t = document.querySelector('.toasts'); if (t) t.style.visibility = ''; return true; })()`, nil)
	small, err := paletted(raw)
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("NACOSD_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), small, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// paletted re-encodes a PNG with the 256 most frequent colours, every
// other colour drawn as its nearest one.
func paletted(raw []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	r := img.Bounds()
	count := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			count[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	cs := make([]color.RGBA, 0, len(count))
	for c := range count {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if count[cs[i]] != count[cs[j]] {
			return count[cs[i]] > count[cs[j]]
		}
		a, b := cs[i], cs[j]
		return uint32(a.R)<<24|uint32(a.G)<<16|uint32(a.B)<<8|uint32(a.A) < uint32(b.R)<<24|uint32(b.G)<<16|uint32(b.B)<<8|uint32(b.A)
	})
	if len(cs) > 256 {
		cs = cs[:256]
	}
	pal := make(color.Palette, len(cs))
	for i, c := range cs {
		pal[i] = c
	}
	out := image.NewPaletted(r, pal)
	index := map[color.RGBA]uint8{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// viewport switches the emulated screen size.
func (b *browser) viewport(w, h int64, mobile bool) {
	b.t.Helper()
	b.run("viewport", emulation.SetDeviceMetricsOverride(w, h, 1, mobile))
}

// latency delays every request of the page by d (0 turns it off), as a slow
// network does: a page must not rely on its reads coming back before the
// user's next keystroke.
func (b *browser) latency(d time.Duration) {
	b.t.Helper()
	b.run("network latency", network.Enable(), network.EmulateNetworkConditions(false, float64(d.Milliseconds()), -1, -1))
}

func clickQuery(sel string) chromedp.Action {
	return chromedp.Click(sel, chromedp.ByQuery, chromedp.NodeVisible)
}
