package console

import (
	"bytes"
	"compress/gzip"
	"embed"
	"io/fs"
	"mime"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"
)

// dist is the built console (ui/dist, committed; see DESIGN.md).
//
//go:embed ui/dist
var dist embed.FS

// assetDir is the URL directory of the bundle under the context path; the
// index page refers to it relatively, so any context path works.
const assetDir = "console-ui"

// csp keeps the console to its own origin: no inline or foreign scripts.
// CodeMirror writes style elements, hence 'unsafe-inline' for styles only.
const csp = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'self'; base-uri 'self'; form-action 'self'"

// hashedName matches the bundler's content-hashed file names (app-XXXXXXXX.js).
var hashedName = regexp.MustCompile(`-[A-Z0-9]{8}\.[a-z]+$`)

type asset struct {
	body, gz []byte
	ctype    string
	once     sync.Once
}

// gzipped compresses the body on first use.
func (a *asset) gzipped() []byte {
	a.once.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = zw.Write(a.body)
		_ = zw.Close()
		if b.Len() < len(a.body) {
			a.gz = b.Bytes()
		}
	})
	return a.gz
}

type assets struct {
	files map[string]*asset // by name in ui/dist/assets
	page  *asset
	// info is the server facts the page carries (JSON), read per request.
	info func() []byte
}

// infoMark is where the page carries the info JSON: index.html holds
// <script type="application/json" id="nacosd-info">{}</script>, a data
// block that is never executed (so the CSP's script-src does not apply).
var infoMark = []byte(`id="nacosd-info">{}<`)

func newAssets(info func() []byte) *assets {
	a := &assets{files: map[string]*asset{}, info: info}
	sub, err := fs.Sub(dist, "ui/dist")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	_ = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		switch path.Ext(p) {
		case ".js", ".mjs":
			ct = "text/javascript; charset=utf-8"
		case ".css":
			ct = "text/css; charset=utf-8"
		case ".html":
			ct = "text/html; charset=utf-8"
		case ".txt":
			ct = "text/plain; charset=utf-8"
		}
		if p == "index.html" {
			a.page = &asset{body: b, ctype: ct}
		} else if dir, name := path.Split(p); dir == "assets/" {
			a.files[name] = &asset{body: b, ctype: ct}
		}
		return nil
	})
	if a.page == nil {
		a.page = &asset{body: []byte("<!doctype html><title>nacosd</title><p>The console bundle is missing: run make ui.</p>"), ctype: "text/html; charset=utf-8"}
	}
	return a
}

func send(c *fiber.Ctx, a *asset, cache string) error {
	c.Set(fiber.HeaderContentType, a.ctype)
	c.Set(fiber.HeaderCacheControl, cache)
	c.Set("Content-Security-Policy", csp)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	if strings.Contains(c.Get(fiber.HeaderAcceptEncoding), "gzip") {
		if gz := a.gzipped(); gz != nil {
			c.Set(fiber.HeaderContentEncoding, "gzip")
			return c.Send(gz)
		}
	}
	return c.Send(a.body)
}

// index serves the page; it is small and names the hashed bundle, so it is
// revalidated every time while the bundle is cached for good.
func (a *assets) index(c *fiber.Ctx) error {
	// <context-path> without the slash: relative URLs need the directory form.
	if p := c.Path(); !strings.HasSuffix(p, "/") && !strings.HasSuffix(p, ".html") {
		return c.Redirect(p+"/", fiber.StatusFound)
	}
	i := bytes.Index(a.page.body, infoMark)
	if i < 0 || a.info == nil {
		return send(c, a.page, "no-cache")
	}
	// '<' can only be inside a JSON string here: written as \u003c, no
	// "</script" or "<!--" can end or upset the data block.
	info := bytes.ReplaceAll(a.info(), []byte("<"), []byte(`\u003c`))
	at := i + len(infoMark) - 3 // the {}
	body := make([]byte, 0, len(a.page.body)+len(info))
	body = append(append(append(body, a.page.body[:at]...), info...), a.page.body[at+2:]...)
	return send(c, &asset{body: body, ctype: a.page.ctype}, "no-cache")
}

func (a *assets) file(c *fiber.Ctx) error {
	f, ok := a.files[c.Params("file")]
	if !ok {
		return fiber.ErrNotFound
	}
	cache := "no-cache" // unhashed names (the licenses)
	if hashedName.MatchString(c.Params("file")) {
		cache = "public, max-age=31536000, immutable"
	}
	return send(c, f, cache)
}
