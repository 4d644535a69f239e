package security

import (
	"archive/zip"
	"bytes"
	"math/rand"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
)

// Request limits, as Java Nacos 1.4.8 enforces them (measured on the
// referee, docs/security.md "Limits"), refused by nacosd with a clear error
// before a large allocation. With NACOSD_SECURITY_JAVA set, the same
// requests go to Java and its answers are logged.

type limitCase struct {
	name   string
	method string
	path   string
	query  url.Values
	body   []byte
	ctype  string
	header map[string]string
	// want: nacosd's status and a part of its body ("" any)
	status int
	part   string
}

func raw(tg target, t *testing.T, c limitCase) (int, string) {
	t.Helper()
	u := tg.base + c.path
	if len(c.query) > 0 {
		u += "?" + c.query.Encode()
	}
	req, err := http.NewRequest(c.method, u, bytes.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.ctype != "" {
		req.Header.Set("Content-Type", c.ctype)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1, err.Error()
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	return resp.StatusCode, b.String()
}

func form(kv ...string) []byte {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return []byte(v.Encode())
}

func importBody(t *testing.T, size int) (string, []byte) {
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "G/lim.imp", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	b := make([]byte, size)
	for i := range b {
		b[i] = byte('a' + r.Intn(26))
	}
	w.Write(b)
	zw.Close()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "x.zip")
	fw.Write(zb.Bytes())
	mw.Close()
	return mw.FormDataContentType(), body.Bytes()
}

func TestLimits(t *testing.T) {
	tgs := []target{startNacosd(t)}
	if addr := os.Getenv("NACOSD_SECURITY_JAVA"); addr != "" {
		tgs = append(tgs, target{name: "java", base: "http://" + addr + "/nacos", java: true})
	}
	for _, tg := range tgs {
		tok := tg.login(t, "nacos", "nacos")
		q := url.Values{"accessToken": {tok}}
		fctype := "application/x-www-form-urlencoded"
		content := func(n int) []byte {
			return form("dataId", "lim.c"+strconv.Itoa(n), "group", "G", "content", strings.Repeat("a", n))
		}
		many := func(n int, last bool) []byte {
			var sb strings.Builder
			if !last {
				sb.WriteString("dataId=lim.p&group=G&content=x&")
			}
			for i := 0; i < n; i++ {
				sb.WriteString("p" + strconv.Itoa(i) + "=1&")
			}
			if last {
				sb.WriteString("dataId=lim.p&group=G&content=x")
			}
			return []byte(strings.TrimSuffix(sb.String(), "&"))
		}
		keys := func(n int) []byte {
			var sb strings.Builder
			for i := 0; i < n; i++ {
				sb.WriteString("lim.l" + strconv.Itoa(i) + "\x02G\x02" + strings.Repeat("0", 32) + "\x01")
			}
			return form("Listening-Configs", sb.String())
		}
		ict, small := importBody(t, 500<<10)
		bct, big := importBody(t, 1100<<10)
		listenHdr := map[string]string{"Long-Pulling-Timeout": "30000", "Long-Pulling-Timeout-No-Hangup": "true"}
		cases := []limitCase{
			{name: "form body just under 2 MiB", method: "POST", path: "/v1/cs/configs", query: q, body: content(2<<20 - 100), ctype: fctype, status: 200, part: "true"},
			{name: "form body over 2 MiB", method: "POST", path: "/v1/cs/configs", query: q, body: content(2<<20 + 1000), ctype: fctype, status: 413, part: "at most 2097152 bytes for a form"},
			{name: "10000 parameters", method: "POST", path: "/v1/cs/configs", query: q, body: many(9996, true), ctype: fctype, status: 200, part: "true"},
			{name: "10001 parameters, dataId first", method: "POST", path: "/v1/cs/configs", query: q, body: many(9998, false), ctype: fctype, status: 400, part: "more than 10000 request parameters"},
			{name: "10001 parameters, dataId last", method: "POST", path: "/v1/cs/configs", query: q, body: many(9998, true), ctype: fctype, status: 400, part: "more than 10000 request parameters"},
			{name: "dataId of 255", method: "POST", path: "/v1/cs/configs", query: q, body: form("dataId", strings.Repeat("d", 255), "group", "G", "content", "x"), ctype: fctype, status: 200, part: "true"},
			{name: "dataId of 256 (Java: true, write lost)", method: "POST", path: "/v1/cs/configs", query: q, body: form("dataId", strings.Repeat("d", 256), "group", "G", "content", "x"), ctype: fctype, status: 500, part: "too long dataId, over 255"},
			{name: "group of 129 (Java: true, write lost)", method: "POST", path: "/v1/cs/configs", query: q, body: form("dataId", "lim.g", "group", strings.Repeat("g", 129), "content", "x"), ctype: fctype, status: 500, part: "too long group, over 128"},
			{name: "tenant of 129", method: "POST", path: "/v1/cs/configs", query: q, body: form("dataId", "lim.t", "group", "G", "content", "x", "tenant", strings.Repeat("t", 129)), ctype: fctype, status: 400, part: "too long tag, over 128"},
			{name: "10000 listened keys", method: "POST", path: "/v1/cs/configs/listener", query: q, body: keys(10000), ctype: fctype, header: listenHdr, status: 200, part: "lim.l"},
			{name: "10001 listened keys", method: "POST", path: "/v1/cs/configs/listener", query: q, body: keys(10001), ctype: fctype, header: listenHdr, status: 400, part: "invalid probeModify"},
			{name: "import of 500 KiB", method: "POST", path: "/v1/cs/configs", query: url.Values{"import": {"true"}, "namespace": {""}, "accessToken": {tok}}, body: small, ctype: ict, status: 200},
			{name: "import over 1 MiB", method: "POST", path: "/v1/cs/configs", query: url.Values{"import": {"true"}, "namespace": {""}, "accessToken": {tok}}, body: big, ctype: bct, status: 500, part: "exceeds its maximum permitted size of 1048576 bytes"},
			{name: "JSON body over 2 MiB", method: "POST", path: "/v1/cs/configs", query: url.Values{"clone": {"true"}, "accessToken": {tok}}, body: bytes.Repeat([]byte(" "), 3<<20), ctype: "application/json", status: 413},
			{name: "request head of 20 KiB", method: "GET", path: "/v1/cs/configs", query: url.Values{"dataId": {"x"}, "group": {"G"}, "accessToken": {tok}}, header: map[string]string{"X-Pad": strings.Repeat("h", 20<<10)}, status: 404},
			{name: "request head over 32 KiB", method: "GET", path: "/v1/cs/configs", query: url.Values{"dataId": {"x"}, "group": {"G"}}, header: map[string]string{"X-Pad": strings.Repeat("h", 40<<10)}, status: 431},
		}
		for _, c := range cases {
			st, body := raw(tg, t, c)
			if tg.java {
				t.Logf("java: %s: %d %.200s", c.name, st, body)
				continue
			}
			if st != c.status || !strings.Contains(body, c.part) {
				t.Errorf("nacosd: %s: %d %.300s, want %d with %q", c.name, st, body, c.status, c.part)
			}
		}
	}
}
