package httpapi

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// gzipped compresses b n times over.
func gzipped(t testing.TB, b []byte, n int) []byte {
	t.Helper()
	for i := 0; i < n; i++ {
		var out bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
		if _, err := zw.Write(b); err != nil {
			t.Fatal(err)
		}
		zw.Close()
		b = out.Bytes()
	}
	return b
}

// bomb is size zero bytes gzipped twice: a few hundred bytes on the wire.
func bomb(t testing.TB, size int) []byte {
	t.Helper()
	var inner bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&inner, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for i := 0; i < size>>20; i++ {
		zw.Write(zero)
	}
	zw.Close()
	return gzipped(t, inner.Bytes(), 1)
}

// bodyApp is ParamLimit before handlers that read the body the ways the
// real ones do: fiber's c.Body, the multipart form, the distro reader.
func bodyApp(t *testing.T) (*fiber.App, *int) {
	t.Helper()
	reached := 0
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler(slog.New(slog.NewTextHandler(io.Discard, nil))), BodyLimit: 64 << 20})
	app.Use(ParamLimit("/nacos"))
	app.Post("/nacos/v1/console/configs/md5", func(c *fiber.Ctx) error {
		reached++
		return c.SendString("len=" + itoaTest(len(c.Body())) + " ce=" + c.Get(fiber.HeaderContentEncoding))
	})
	app.Post("/nacos/v1/cs/configs", func(c *fiber.Ctx) error {
		reached++
		f, err := c.MultipartForm()
		if err != nil {
			return c.Status(400).SendString(err.Error())
		}
		return c.SendString("files=" + itoaTest(len(f.File)))
	})
	app.Put("/nacos/v1/ns/distro/datum", func(c *fiber.Ctx) error {
		reached++
		b, err := requestBody(c)
		if err != nil {
			return err
		}
		return c.SendString("len=" + itoaTest(len(b)))
	})
	return app, &reached
}

func itoaTest(n int) string { return strconv.Itoa(n) }

func send(t *testing.T, app *fiber.App, method, path, ctype, ce string, body []byte) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	if ce != "" {
		req.Header.Set("Content-Encoding", ce)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestGzipBomb: a body whose Content-Encoding inflates past the body limit
// is refused with 413 without being inflated (issue 26 item 1: 590 bytes
// of "gzip, gzip" grew the process by 1.76 GB), whichever way a handler
// reads it.
func TestGzipBomb(t *testing.T) {
	app, reached := bodyApp(t)
	double := bomb(t, 64<<20)
	single := gzipped(t, make([]byte, 64<<20), 1)
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	fw, _ := mw.CreateFormFile("file", "x.zip")
	fw.Write(make([]byte, 32<<20))
	mw.Close()
	mpz := gzipped(t, mp.Bytes(), 1)
	for _, c := range []struct {
		name, method, path, ctype, ce string
		body                          []byte
		status                        int
		budget                        uint64 // allocation allowed: a few times the limit
	}{
		// several codings: refused before any is undone
		{"gzip, gzip", "POST", "/nacos/v1/console/configs/md5", "application/json", "gzip, gzip", double, 415, 8 << 20},
		{"gzip", "POST", "/nacos/v1/console/configs/md5", "application/json", "gzip", single, 413, 16 << 20},
		{"multipart gzip", "POST", "/nacos/v1/cs/configs", mw.FormDataContentType(), "gzip", mpz, 413, 48 << 20},
		// over the 32 MiB node limit
		{"distro gzip without header", "PUT", "/nacos/v1/ns/distro/datum", "application/json", "", gzipped(t, make([]byte, 40<<20), 1), 413, 128 << 20},
	} {
		body := c.body
		*reached = 0
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st, resp := send(t, app, c.method, c.path, c.ctype, c.ce, body)
		runtime.ReadMemStats(&after)
		if st != c.status {
			t.Errorf("%s (%d bytes): %d %.200s, want %d", c.name, len(body), st, resp, c.status)
		}
		if grown := after.TotalAlloc - before.TotalAlloc; grown > c.budget {
			t.Errorf("%s: %d MiB allocated for a %d-byte request", c.name, grown>>20, len(body))
		}
		if c.name != "distro gzip without header" && *reached != 0 {
			t.Errorf("%s: the handler was reached", c.name)
		}
	}
}

// TestContentEncoding: a real compressed body is handed over decoded and
// without its Content-Encoding; a Java node's plain body under
// "Content-Encoding: gzip" as it is; several or unknown codings 415.
func TestContentEncoding(t *testing.T) {
	app, _ := bodyApp(t)
	plain := []byte(`[{"groupKey":"a+b","ip":"1.2.3.4"}]`)
	var zl bytes.Buffer
	zw := zlib.NewWriter(&zl)
	zw.Write(plain)
	zw.Close()
	want := "len=" + itoaTest(len(plain)) + " ce="
	for _, c := range []struct {
		ce     string
		body   []byte
		status int
		part   string
	}{
		{"gzip", gzipped(t, plain, 1), 200, want},
		{"GZIP", gzipped(t, plain, 1), 200, want},
		{"x-gzip", gzipped(t, plain, 1), 200, want},
		{"deflate", zl.Bytes(), 200, want},
		{"identity", plain, 200, want},
		{"gzip", plain, 200, want}, // Java nodes
		{"gzip, gzip", gzipped(t, plain, 2), 415, "at most one"},
		{"br", plain, 415, "not supported"},
		{"gzip", append([]byte{0x1f, 0x8b}, "garbage"...), 400, "malformed"},
	} {
		st, resp := send(t, app, "POST", "/nacos/v1/console/configs/md5", "application/json", c.ce, c.body)
		if st != c.status || !strings.Contains(resp, c.part) {
			t.Errorf("%q: %d %.200s, want %d with %q", c.ce, st, resp, c.status, c.part)
		}
	}
}

// Issue 26 item 14: with auth on, a node-to-node path called without the
// server identity may send only a small body: a 30 MB one is refused (413,
// fasthttp) before it is read; with the identity it is read.
func TestNodeBodyNeedsIdentity(t *testing.T) {
	reached := make(chan int, 4)
	app := fiber.New(fiber.Config{DisableStartupMessage: true, BodyLimit: 64 << 20})
	app.Server().HeaderReceived = HeaderReceived("/nacos", func(h *fasthttp.RequestHeader) bool {
		return string(h.Peek("X-Identity")) == "node-secret-value"
	})
	app.All("/*", func(c *fiber.Ctx) error {
		reached <- len(c.Request().Body())
		return c.SendStatus(403)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(ln)
	defer app.Shutdown()
	body := bytes.Repeat([]byte("x"), 30<<20)
	send := func(path string, hdr map[string]string) int {
		req, _ := http.NewRequest("PUT", "http://"+ln.Addr().String()+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return -1 // the server closed while the body was still being sent
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, p := range []string{"/nacos/v1/ns/distro/datum", "/nacos/v1/core/cluster/report", "/nacos/v1/ns/service/status"} {
		if st := send(p, nil); st != 413 && st != -1 {
			t.Errorf("%s without the identity: %d, want 413 before the body is read", p, st)
		}
		select {
		case n := <-reached:
			t.Errorf("%s without the identity: the handler got %d bytes", p, n)
		default:
		}
	}
	if st := send("/nacos/v1/ns/distro/datum", map[string]string{"X-Identity": "node-secret-value"}); st != 403 {
		t.Fatalf("with the identity: %d", st)
	}
	if n := <-reached; n != len(body) {
		t.Fatalf("with the identity the handler got %d bytes", n)
	}
	// a small forged body is read and refused by the @Secured check (403)
	small := body[:1000]
	req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/nacos/v1/core/cluster/report", bytes.NewReader(small))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := <-reached; resp.StatusCode != 403 || n != len(small) {
		t.Fatalf("small body without the identity: %d, %d bytes", resp.StatusCode, n)
	}
}
