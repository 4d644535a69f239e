package httpapi_test

import (
	"archive/zip"
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/internal/clock"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/raftstore/raftstoretest"
	"github.com/nacosd/nacosd/server/config"
	"github.com/nacosd/nacosd/server/httpapi"
)

type cfgEnv struct {
	t   *testing.T
	app *fiber.App
	svc *config.Service
}

func newCfgEnv(t *testing.T, clk clock.Clock, mut ...func(*config.Config)) *cfgEnv {
	t.Helper()
	log := raftstoretest.Logger(t)
	st := raftstoretest.New(t)
	cfg := config.DefaultConfig()
	cfg.Store, cfg.Clock, cfg.Logger, cfg.Location = st, clk, log, time.UTC
	for _, m := range mut {
		m(&cfg)
	}
	svc, err := config.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	app := fiber.New(fiber.Config{ErrorHandler: httpapi.ErrorHandler(log), CaseSensitive: true, BodyLimit: 32 << 20, DisableStartupMessage: true})
	httpapi.MountConfig(app.Group("/nacos"), svc, log)
	return &cfgEnv{t: t, app: app, svc: svc}
}

type resp struct {
	status int
	body   string
	hdr    http.Header
}

func (e *cfgEnv) do(method, path string, form url.Values, hdr map[string]string) resp {
	e.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req := httptest.NewRequest(method, path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	r, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, string(b), r.Header}
}

func (e *cfgEnv) publish(dataID, group, tenant, content string, extra url.Values, hdr map[string]string) {
	e.t.Helper()
	f := url.Values{"dataId": {dataID}, "group": {group}, "content": {content}}
	if tenant != "" {
		f.Set("tenant", tenant)
	}
	for k, v := range extra {
		f[k] = v
	}
	r := e.do("POST", "/nacos/v1/cs/configs", f, hdr)
	if r.status != 200 || r.body != "true" {
		e.t.Fatalf("publish %s: %d %q", dataID, r.status, r.body)
	}
}

func expect(t *testing.T, r resp, status int, body string) {
	t.Helper()
	if r.status != status || r.body != body {
		t.Fatalf("got %d %q\nwant %d %q", r.status, r.body, status, body)
	}
}

func TestConfigGetPublishDelete(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	r := e.do("GET", "/nacos/v1/cs/configs?dataId=a.yaml&group=DEFAULT_GROUP", nil, nil)
	expect(t, r, 404, "config data not exist\n")
	if ct := r.hdr.Get("Content-Type"); ct != "application/json;charset=UTF-8" {
		t.Fatalf("404 content type %q", ct)
	}
	e.publish("a.yaml", "DEFAULT_GROUP", "", "k: v", url.Values{"type": {"yaml"}}, nil)
	r = e.do("GET", "/nacos/v1/cs/configs?dataId=a.yaml&group=DEFAULT_GROUP", nil, nil)
	expect(t, r, 200, "k: v")
	for k, want := range map[string]string{"Config-Type": "yaml", "Content-Type": "text/plain;charset=UTF-8",
		"Content-MD5": config.MD5Hex("k: v"), "Pragma": "no-cache", "Cache-Control": "no-cache,no-store",
		"Expires": "Thu, 01 Jan 1970 00:00:00 GMT"} {
		if got := r.hdr.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, err := http.ParseTime(r.hdr.Get("Last-Modified")); err != nil {
		t.Errorf("Last-Modified %q: %v", r.hdr.Get("Last-Modified"), err)
	}
	// json type → json content type; tenant=public reads tenant "".
	e.publish("b.json", "G", "", `{"a":1}`, url.Values{"type": {"json"}}, nil)
	r = e.do("GET", "/nacos/v1/cs/configs?dataId=b.json&group=G&tenant=public", nil, nil)
	expect(t, r, 200, `{"a":1}`)
	if ct := r.hdr.Get("Content-Type"); ct != "application/json;charset=UTF-8" {
		t.Fatalf("content type %q", ct)
	}
	// Update without type resets it to text.
	e.publish("b.json", "G", "", `{"a":2}`, nil, nil)
	if r = e.do("GET", "/nacos/v1/cs/configs?dataId=b.json&group=G", nil, nil); r.hdr.Get("Config-Type") != "text" {
		t.Fatalf("type after update %q", r.hdr.Get("Config-Type"))
	}
	expect(t, e.do("DELETE", "/nacos/v1/cs/configs?dataId=a.yaml&group=DEFAULT_GROUP", nil, nil), 200, "true")
	expect(t, e.do("GET", "/nacos/v1/cs/configs?dataId=a.yaml&group=DEFAULT_GROUP", nil, nil), 404, "config data not exist\n")
	expect(t, e.do("DELETE", "/nacos/v1/cs/configs/?dataId=nope&group=DEFAULT_GROUP", nil, nil), 200, "true")
}

func TestConfigBadInput(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	big := strings.Repeat("x", 10485761)
	cases := []struct {
		name, method, path string
		form               url.Values
		status             int
		body               string
	}{
		{"missing dataId", "GET", "/nacos/v1/cs/configs?group=G", nil, 500, "caused: Required request parameter 'dataId' for method parameter type String is not present;"},
		{"bad dataId", "GET", "/nacos/v1/cs/configs?dataId=a+b&group=G", nil, 500, "caused: invalid dataId : a b;"},
		{"bad group", "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {"a"}, "group": {"g/x"}, "content": {"c"}}, 500, "caused: invalid group : g/x;"},
		{"bad tenant", "GET", "/nacos/v1/cs/configs?dataId=a&group=G&tenant=a%2Fb", nil, 400, "caused: invalid tenant;"},
		{"long tenant", "GET", "/nacos/v1/cs/configs?dataId=a&group=G&tenant=" + strings.Repeat("t", 129), nil, 400, "caused: too long tag, over 128;"},
		{"bad tag", "GET", "/nacos/v1/cs/configs?dataId=a&group=G&tag=a%40b", nil, 400, "caused: invalid tag : a@b;"},
		{"long tag", "GET", "/nacos/v1/cs/configs?dataId=a&group=G&tag=" + strings.Repeat("t", 17), nil, 400, "caused: too long tag, over 16;"},
		{"blank content", "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {"a"}, "group": {"G"}, "content": {"  "}}, 500, "caused: content is blank :   ;"},
		{"missing content", "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {"a"}, "group": {"G"}}, 500, "caused: Required request parameter 'content' for method parameter type String is not present;"},
		{"big content", "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {"a"}, "group": {"G"}, "content": {big}}, 500, "caused: invalid content, over 10485760;"},
		{"too many tags", "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {"a"}, "group": {"G"}, "content": {"c"}, "config_tags": {"1,2,3,4,5,6"}}, 500, "caused: too much config_tags, over 5;"},
		{"long desc", "POST", "/nacos/v1/cs/configs", url.Values{"dataId": {"a"}, "group": {"G"}, "content": {"c"}, "desc": {strings.Repeat("d", 129)}}, 500, "caused: too long desc, over 128;"},
		{"blank probe", "POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {" "}}, 400, "caused: invalid probeModify;"},
		{"bad probe", "POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {"a\x01"}}, 400, "caused: invalid probeModify;"},
		{"bad escape", "POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {"a%zz"}}, 400, `caused: URLDecoder: Illegal hex characters in escape (%) pattern - Error at index 0 in: "zz";`},
		{"page zero", "GET", "/nacos/v1/cs/configs?search=accurate&dataId=x&group=y&pageNo=0&pageSize=10", nil, 500, "caused: serialize page error, dataId=x, group=y;caused: pageNo and pageSize must be greater than zero;"},
		{"missing pageNo", "GET", "/nacos/v1/cs/configs?search=blur&dataId=&group=&pageSize=10", nil, 500, "caused: Required request parameter 'pageNo' for method parameter type int is not present;"},
	}
	for _, c := range cases {
		r := e.do(c.method, c.path, c.form, nil)
		if r.status != c.status || r.body != c.body {
			t.Errorf("%s: got %d %q, want %d %q", c.name, r.status, r.body, c.status, c.body)
		}
		if ct := r.hdr.Get("Content-Type"); ct != "text/plain;charset=UTF-8" { // StringHttpMessageConverter, as on the reference
			t.Errorf("%s: content type %q", c.name, ct)
		}
	}
	// Nothing was written by the failed publishes.
	expect(t, e.do("GET", "/nacos/v1/cs/configs?dataId=a&group=G", nil, nil), 404, "config data not exist\n")
	r := e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {"a\x02G\x02\x01"}}, map[string]string{"Long-Pulling-Timeout": "x"})
	expect(t, r, 400, `caused: For input string: "x";`)
}

func TestConfigSearchDetailCatalog(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	e.publish("app.yaml", "G1", "", "a: 1", url.Values{"type": {"yaml"}, "appName": {"app"}, "config_tags": {"t1,t2"}, "desc": {"d"}}, nil)
	e.publish("app_x.yaml", "G1", "", "b: 2", nil, nil)
	e.publish("other", "G2", "dev", "c", nil, nil)
	in := e.svc.Info("app.yaml", "G1", "")
	id := itoa64(in.ID)
	r := e.do("GET", "/nacos/v1/cs/configs?search=accurate&dataId=app.yaml&group=&pageNo=1&pageSize=10", nil, nil)
	expect(t, r, 200, `{"totalCount":1,"pageNumber":1,"pagesAvailable":1,"pageItems":[{"id":"`+id+`","dataId":"app.yaml","group":"G1","content":"a: 1","md5":null,"tenant":"","appName":"app","type":"yaml"}]}`)
	r = e.do("GET", "/nacos/v1/cs/configs?search=blur&dataId=app*&group=&pageNo=2&pageSize=1", nil, nil)
	id2 := itoa64(e.svc.Info("app_x.yaml", "G1", "").ID)
	expect(t, r, 200, `{"totalCount":2,"pageNumber":2,"pagesAvailable":2,"pageItems":[{"id":"`+id2+`","dataId":"app_x.yaml","group":"G1","content":"b: 2","md5":null,"tenant":"","appName":"","type":null}]}`)
	r = e.do("GET", "/nacos/v1/cs/configs?search=blur&dataId=app&group=&pageNo=1&pageSize=10", nil, nil)
	expect(t, r, 200, `{"totalCount":0,"pageNumber":1,"pagesAvailable":0,"pageItems":[]}`)
	r = e.do("GET", "/nacos/v1/cs/configs?search=accurate&dataId=&group=&tenant=dev&pageNo=3&pageSize=10", nil, nil)
	expect(t, r, 200, `{"totalCount":1,"pageNumber":3,"pagesAvailable":1,"pageItems":[]}`)
	r = e.do("GET", "/nacos/v1/cs/configs?search=accurate&dataId=&group=&config_tags=t2&pageNo=1&pageSize=10", nil, nil)
	expect(t, r, 200, `{"totalCount":1,"pageNumber":1,"pagesAvailable":1,"pageItems":[{"id":"`+id+`","dataId":"app.yaml","group":"G1","content":"a: 1","md5":null,"tenant":"","appName":"app","type":null}]}`)

	ms := itoa64(in.Modified)
	r = e.do("GET", "/nacos/v1/cs/configs?show=all&dataId=app.yaml&group=G1", nil, nil)
	expect(t, r, 200, `{"id":"`+id+`","dataId":"app.yaml","group":"G1","content":"a: 1","md5":"`+config.MD5Hex("a: 1")+`","tenant":"","appName":"app","type":"yaml","createTime":`+ms+`,"modifyTime":`+ms+`,"createUser":null,"createIp":"0.0.0.0","desc":"d","use":null,"effect":null,"schema":null,"configTags":"t1,t2"}`)
	expect(t, e.do("GET", "/nacos/v1/cs/configs?show=all&dataId=none&group=G1", nil, nil), 200, "")
	r = e.do("GET", "/nacos/v1/cs/configs/catalog?dataId=app.yaml&group=G1", nil, nil)
	expect(t, r, 200, `{"code":200,"message":null,"data":{"createTime":`+ms+`,"modifyTime":`+ms+`,"createUser":null,"createIp":"0.0.0.0","desc":"d","use":null,"effect":null,"type":"yaml","schema":null,"configTags":"t1,t2"}}`)
	expect(t, e.do("GET", "/nacos/v1/cs/configs/catalog?dataId=x&group=G1", nil, nil), 200, `{"code":200,"message":null,"data":null}`)

	// Batch delete by ids.
	r = e.do("DELETE", "/nacos/v1/cs/configs?delType=ids&ids="+id+","+id2+",,", nil, nil)
	expect(t, r, 200, `{"code":200,"message":null,"data":true}`)
	if e.svc.Exists("app.yaml", "G1", "") || e.svc.Exists("app_x.yaml", "G1", "") {
		t.Fatal("batch delete left configs")
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

func TestConfigBetaAndTag(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	e.publish("d", "G", "", "main", nil, nil)
	e.publish("d", "G", "", "beta", nil, map[string]string{"betaIps": "10.0.0.1,10.0.0.2"})
	e.publish("d", "G", "", "tagged", url.Values{"tag": {"blue"}}, nil)
	r := e.do("GET", "/nacos/v1/cs/configs?dataId=d&group=G", nil, map[string]string{"X-Forwarded-For": " 10.0.0.2 , 1.1.1.1"})
	expect(t, r, 200, "beta")
	if r.hdr.Get("isBeta") != "true" || r.hdr.Get("Content-MD5") != config.MD5Hex("beta") {
		t.Fatalf("beta headers %v", r.hdr)
	}
	expect(t, e.do("GET", "/nacos/v1/cs/configs?dataId=d&group=G", nil, map[string]string{"X-Real-IP": "10.0.0.3"}), 200, "main")
	expect(t, e.do("GET", "/nacos/v1/cs/configs?dataId=d&group=G&tag=blue", nil, nil), 200, "tagged")
	expect(t, e.do("GET", "/nacos/v1/cs/configs?dataId=d&group=G&tag=red", nil, nil), 404, "config data not exist\n")
	r = e.do("GET", "/nacos/v1/cs/configs?dataId=d&group=G", nil, map[string]string{"Vipserver-Tag": "blue"})
	expect(t, r, 200, "tagged")
	if r.hdr.Get("Vipserver-Tag") != "blue" {
		t.Fatalf("Vipserver-Tag %q", r.hdr.Get("Vipserver-Tag"))
	}
	b := e.svc.BetaInfo("d", "G", "")
	r = e.do("GET", "/nacos/v1/cs/configs?beta=true&dataId=d&group=G", nil, nil)
	expect(t, r, 200, `{"code":200,"message":"stop beta ok","data":{"id":"`+itoa64(b.ID)+`","dataId":"d","group":"G","content":"beta","md5":null,"tenant":"","appName":"","type":null,"betaIps":"10.0.0.1,10.0.0.2"}}`)
	expect(t, e.do("DELETE", "/nacos/v1/cs/configs?beta=true&dataId=d&group=G", nil, nil), 200, `{"code":200,"message":"stop beta ok","data":true}`)
	expect(t, e.do("GET", "/nacos/v1/cs/configs?beta=true&dataId=d&group=G", nil, nil), 200, `{"code":200,"message":"stop beta ok","data":null}`)
	expect(t, e.do("GET", "/nacos/v1/cs/configs?dataId=d&group=G", nil, map[string]string{"X-Forwarded-For": "10.0.0.2"}), 200, "main")
	expect(t, e.do("DELETE", "/nacos/v1/cs/configs?dataId=d&group=G&tag=blue", nil, nil), 200, "true")
	expect(t, e.do("GET", "/nacos/v1/cs/configs?dataId=d&group=G&tag=blue", nil, nil), 404, "config data not exist\n")
	// Only a tag variant left: item exists, main missing → 404 after Config-Type.
	e.publish("only", "G", "", "t", url.Values{"tag": {"x"}}, nil)
	r = e.do("GET", "/nacos/v1/cs/configs?dataId=only&group=G", nil, nil)
	expect(t, r, 404, "config data not exist\n")
	if r.hdr.Get("Config-Type") != "text" {
		t.Fatalf("Config-Type %q", r.hdr.Get("Config-Type"))
	}
}

func TestConfigHistory(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	e.publish("h", "G", "", "v1", nil, nil)
	e.publish("h", "G", "", "v2", nil, nil)
	expect(t, e.do("DELETE", "/nacos/v1/cs/configs?dataId=h&group=G", nil, nil), 200, "true")
	r := e.do("GET", "/nacos/v1/cs/history?search=accurate&dataId=h&group=G", nil, nil)
	if r.status != 200 || !strings.HasPrefix(r.body, `{"totalCount":3,"pageNumber":1,"pagesAvailable":1,"pageItems":[{"id":"3","lastId":-1,"dataId":"h","group":"G","tenant":"","appName":"","md5":null,"content":null,"srcIp":"0.0.0.0","srcUser":null,"opType":"D         ","createdTime":"2010-05-05T00:00:00.000+00:00","lastModifiedTime":"`) {
		t.Fatalf("history list %d %s", r.status, r.body)
	}
	r = e.do("GET", "/nacos/v1/cs/history?dataId=h&group=G&nid=2", nil, nil)
	if r.status != 200 || !strings.Contains(r.body, `"md5":"`+config.MD5Hex("v1")+`","content":"v1"`) || !strings.Contains(r.body, `"opType":"U         "`) {
		t.Fatalf("history detail %d %s", r.status, r.body)
	}
	expect(t, e.do("GET", "/nacos/v1/cs/history?dataId=x&group=G&nid=2", nil, nil), 403, "Please check dataId and group.")
	expect(t, e.do("GET", "/nacos/v1/cs/history?dataId=h&group=G&nid=99", nil, nil), 200, "")
	r = e.do("GET", "/nacos/v1/cs/history?search=accurate&dataId=h&group=G&pageNo=0", nil, nil)
	expect(t, r, 400, "caused: pageNo and pageSize must be greater than zero;")
}

func TestConfigLongPoll(t *testing.T) {
	t.Parallel()
	clk := clocktest.New(time.Unix(1700000000, 0))
	e := newCfgEnv(t, clk)
	e.publish("lp", "G", "", "v1", nil, nil)
	md5 := config.MD5Hex("v1")
	probe := "lp\x02G\x02" + md5 + "\x01"
	lp := map[string]string{"Long-Pulling-Timeout": "30000"}

	// Stale md5 → immediate answer listing the key.
	r := e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {"lp\x02G\x02old\x01x\x02G\x02\x02ns\x01"}}, lp)
	expect(t, r, 200, "lp%02G%01\n")
	if r.hdr.Get("Pragma") != "no-cache" {
		t.Fatalf("missing no-cache headers: %v", r.hdr)
	}
	// No-hangup with nothing changed → empty 200 at once.
	expect(t, e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {probe}},
		map[string]string{"Long-Pulling-Timeout": "30000", "Long-Pulling-Timeout-No-Hangup": "true"}), 200, "")

	// Held, then woken by a publish.
	done := make(chan resp, 1)
	go func() {
		done <- e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {probe}}, lp)
	}()
	waitHolders(t, e.svc, 1)
	w := e.do("GET", "/nacos/v1/cs/configs/listener?dataId=lp&group=G", nil, nil)
	expect(t, w, 200, `{"collectStatus":200,"lisentersGroupkeyStatus":{"0.0.0.0":"`+md5+`"}}`)
	expect(t, e.do("GET", "/nacos/v1/cs/listener?ip=0.0.0.0", nil, nil), 200, `{"collectStatus":200,"lisentersGroupkeyStatus":{"lp+G":"`+md5+`"}}`)
	e.publish("lp", "G", "", "v2", nil, nil)
	expect(t, <-done, 200, "lp%02G%01\n")

	// Held, then the fake clock passes 29.5 s → empty 200.
	probe = "lp\x02G\x02" + config.MD5Hex("v2") + "\x01"
	go func() {
		done <- e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {probe}}, lp)
	}()
	waitHolders(t, e.svc, 1)
	clk.Advance(29499 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("answered before the hold time: %+v", r)
	default:
	}
	clk.Advance(time.Millisecond)
	expect(t, <-done, 200, "")

	// Republishing identical content wakes nobody; a beta publish wakes only
	// listed IPs.
	go func() {
		done <- e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {probe}}, map[string]string{"Long-Pulling-Timeout": "30000", "X-Real-IP": "10.9.9.9"})
	}()
	waitHolders(t, e.svc, 1)
	e.publish("lp", "G", "", "v2", nil, nil)
	e.publish("lp", "G", "", "beta", nil, map[string]string{"betaIps": "10.0.0.1"})
	if n := e.svc.Holders(); n != 1 {
		t.Fatalf("holders after identical/beta publish = %d", n)
	}
	e.publish("lp", "G", "", "beta2", nil, map[string]string{"betaIps": "10.9.9.9"})
	expect(t, <-done, 200, "lp%02G%01\n")
}

func waitHolders(t *testing.T, s *config.Service, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for s.Holders() != n {
		if time.Now().After(deadline) {
			t.Fatalf("holders = %d, want %d", s.Holders(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestConfigLongPollRealTimer(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{}, func(c *config.Config) { c.MinLongPollHold, c.LongPollDelay = 50*time.Millisecond, 0 })
	e.publish("rt", "G", "", "v", nil, nil)
	probe := "rt\x02G\x02" + config.MD5Hex("v") + "\x01"
	start := time.Now()
	r := e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {probe}}, map[string]string{"Long-Pulling-Timeout": "100"})
	expect(t, r, 200, "")
	if el := time.Since(start); el < 100*time.Millisecond {
		t.Fatalf("answered after %s, before the 100 ms hold", el)
	}
	if n := e.svc.Holders(); n != 0 {
		t.Fatalf("holders after timeout = %d", n)
	}
}

func TestConfigExportImport(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	e.publish("a.yaml", "G", "", "a: 1", url.Values{"type": {"yaml"}, "appName": {"app"}}, nil)
	e.publish("b.txt", "G", "", "b", nil, nil)
	for _, v2 := range []bool{false, true} {
		q := "export=true"
		if v2 {
			q = "exportV2=true"
		}
		r := e.do("GET", "/nacos/v1/cs/configs?"+q+"&tenant=&ids=", nil, nil)
		if r.status != 200 || !strings.HasPrefix(r.hdr.Get("Content-Disposition"), "attachment;filename=nacos_config_export_") {
			t.Fatalf("export %d %v", r.status, r.hdr)
		}
		zr, err := zip.NewReader(bytes.NewReader([]byte(r.body)), int64(len(r.body)))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range zr.File {
			names = append(names, f.Name)
		}
		want := "G/a.yaml,G/b.txt,.meta.yml"
		if v2 {
			want = "G/a.yaml,G/b.txt,.metadata.yml"
		}
		if strings.Join(names, ",") != want {
			t.Fatalf("export entries %v", names)
		}
		// Import into a new namespace.
		ns := "ns" + q[:1]
		if v2 {
			ns = "nsv2"
		}
		expect(t, e.do("POST", "/nacos/v1/console/namespaces", url.Values{"customNamespaceId": {ns}, "namespaceName": {ns}}, nil), 200, "true")
		r = e.upload("/nacos/v1/cs/configs?import=true&namespace="+ns, []byte(r.body))
		expect(t, r, 200, `{"code":200,"message":"导入成功","data":{"succCount":2,"skipCount":0}}`)
		r = e.upload("/nacos/v1/cs/configs?import=true&namespace="+ns+"&policy=SKIP", []byte(r.body))
		if r.status != 200 {
			t.Fatal(r)
		}
		if got := e.svc.Info("a.yaml", "G", ns); got == nil || got.AppName != "app" || got.Content != "a: 1" || got.Type != "yaml" {
			t.Fatalf("imported %+v", got)
		}
	}
	expect(t, e.do("GET", "/nacos/v1/cs/configs?export=true", nil, nil), 500, `caused: Cannot invoke "java.util.List.removeAll(java.util.Collection)" because "ids" is null;`) // Java 17 (reference)
	expect(t, e.upload("/nacos/v1/cs/configs?import=true&namespace=missing", []byte("x")), 200, `{"code":100001,"message":"目标 namespace 不存在","data":{"succCount":0}}`)
	expect(t, e.upload("/nacos/v1/cs/configs?import=true", []byte("not a zip")), 200, `{"code":100004,"message":"解析数据失败","data":{"succCount":0}}`)
	expect(t, e.do("POST", "/nacos/v1/cs/configs?import=true", url.Values{"x": {"y"}}, nil), 200, `{"code":100005,"message":"导入的文件数据为空","data":{}}`)
	// Skip policy on existing configs.
	zb := mkZip(t, map[string]string{"G/a.yaml": "new", "bad/name/x": "z"})
	r := e.upload("/nacos/v1/cs/configs?import=true&policy=SKIP", zb)
	expect(t, r, 200, `{"code":200,"message":"导入成功","data":{"skipData":[{"dataId":"a.yaml","group":"G"}],"succCount":0,"unrecognizedCount":1,"skipCount":1,"unrecognizedData":[{"itemName":"bad/name/x"}]}}`)
	r = e.upload("/nacos/v1/cs/configs?import=true", zb)
	expect(t, r, 200, `{"code":200,"message":"导入成功","data":{"succCount":0,"unrecognizedCount":1,"failData":[{"dataId":"a.yaml","group":"G"}],"skipCount":0,"unrecognizedData":[{"itemName":"bad/name/x"}]}}`)

	// Clone into a namespace.
	id := itoa64(e.svc.Info("b.txt", "G", "").ID)
	req := httptest.NewRequest("POST", "/nacos/v1/cs/configs?clone=true&tenant=nsv2&policy=OVERWRITE", strings.NewReader(`[{"cfgId":`+id+`,"dataId":"c.txt","group":""}]`))
	req.Header.Set("Content-Type", "application/json")
	res, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if string(b) != `{"code":200,"message":"Clone Completed Successfully","data":{"succCount":1,"skipCount":0}}` {
		t.Fatalf("clone %s", b)
	}
	if got := e.svc.Info("c.txt", "G", "nsv2"); got == nil || got.Content != "b" {
		t.Fatalf("cloned %+v", got)
	}
}

func mkZip(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range []string{"G/a.yaml", "bad/name/x"} {
		if c, ok := files[n]; ok {
			w, _ := zw.Create(n)
			_, _ = io.WriteString(w, c)
		}
	}
	_ = zw.Close()
	return buf.Bytes()
}

func (e *cfgEnv) upload(path string, data []byte) resp {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "x.zip")
	_, _ = fw.Write(data)
	_ = mw.Close()
	req := httptest.NewRequest("POST", path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r, err := e.app.Test(req, -1)
	if err != nil {
		e.t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	return resp{r.StatusCode, string(b), r.Header}
}

func TestNamespaces(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	expect(t, e.do("GET", "/nacos/v1/console/namespaces", nil, nil), 200, `{"code":200,"message":null,"data":[{"namespace":"","namespaceShowName":"public","quota":200,"configCount":0,"type":0}]}`)
	expect(t, e.do("POST", "/nacos/v1/console/namespaces", url.Values{"customNamespaceId": {"dev"}, "namespaceName": {"Dev"}, "namespaceDesc": {"d"}}, nil), 200, "true")
	expect(t, e.do("POST", "/nacos/v1/console/namespaces", url.Values{"customNamespaceId": {"dev"}, "namespaceName": {"Dev"}}, nil), 200, "false")
	expect(t, e.do("POST", "/nacos/v1/console/namespaces", url.Values{"customNamespaceId": {"a b"}, "namespaceName": {"x"}}, nil), 200, "false")
	expect(t, e.do("POST", "/nacos/v1/console/namespaces", url.Values{"customNamespaceId": {""}, "namespaceName": {"rnd"}}, nil), 200, "true")
	e.publish("x", "G", "dev", "c", nil, nil)
	e.publish("y", "G", "", "c", nil, nil)
	r := e.do("GET", "/nacos/v1/console/namespaces", nil, nil)
	if !strings.HasPrefix(r.body, `{"code":200,"message":null,"data":[{"namespace":"","namespaceShowName":"public","quota":200,"configCount":1,"type":0},{"namespace":"dev","namespaceShowName":"Dev","quota":200,"configCount":1,"type":2},{"namespace":"`) {
		t.Fatalf("list %s", r.body)
	}
	expect(t, e.do("GET", "/nacos/v1/console/namespaces?show=all&namespaceId=dev", nil, nil), 200, `{"namespace":"dev","namespaceShowName":"Dev","quota":200,"configCount":1,"type":2,"namespaceDesc":"d"}`)
	expect(t, e.do("GET", "/nacos/v1/console/namespaces?show=all&namespaceId=", nil, nil), 200, `{"namespace":"","namespaceShowName":"Public","quota":200,"configCount":1,"type":0,"namespaceDesc":"Public Namespace"}`)
	expect(t, e.do("GET", "/nacos/v1/console/namespaces?checkNamespaceIdExist=true&customNamespaceId=dev", nil, nil), 200, "true")
	expect(t, e.do("PUT", "/nacos/v1/console/namespaces", url.Values{"namespace": {"dev"}, "namespaceShowName": {"Dev2"}}, nil), 200, "true")
	expect(t, e.do("GET", "/nacos/v1/console/namespaces?show=all&namespaceId=dev", nil, nil), 200, `{"namespace":"dev","namespaceShowName":"Dev2","quota":200,"configCount":1,"type":2,"namespaceDesc":null}`)
	expect(t, e.do("DELETE", "/nacos/v1/console/namespaces?namespaceId=dev", nil, nil), 200, "true")
	expect(t, e.do("GET", "/nacos/v1/console/namespaces?checkNamespaceIdExist=true&customNamespaceId=dev", nil, nil), 200, "false")
	expect(t, e.do("POST", "/nacos/v1/console/namespaces", url.Values{"namespaceName": {"x"}}, nil), 500, "caused: Required request parameter 'customNamespaceId' for method parameter type String is not present;")
}

func TestConfigImportCloneEdges(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	// An invalid item stops the import after the earlier items were written.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range [][2]string{{"G/ok1", "a"}, {"G/bad id", "b"}, {"G/ok2", "c"}} {
		w, _ := zw.Create(f[0])
		_, _ = io.WriteString(w, f[1])
	}
	_ = zw.Close()
	r := e.upload("/nacos/v1/cs/configs?import=true", buf.Bytes())
	expect(t, r, 500, "caused: invalid dataId : bad id;")
	if !e.svc.Exists("ok1", "G", "") || e.svc.Exists("ok2", "G", "") {
		t.Fatal("import did not stop at the invalid item")
	}
	expect(t, e.upload("/nacos/v1/cs/configs?import=true&policy=skip", buf.Bytes()), 500,
		"caused: Failed to convert value of type 'java.lang.String' to required type 'com.alibaba.nacos.config.server.model.SameConfigPolicy'; nested exception is org.springframework.core.convert.ConversionFailedException: Failed to convert from type [java.lang.String] to type [@org.springframework.web.bind.annotation.RequestParam com.alibaba.nacos.config.server.model.SameConfigPolicy] for value [skip]; nested exception is java.lang.IllegalArgumentException: No enum constant com.alibaba.nacos.config.server.model.SameConfigPolicy.skip;caused: Failed to convert from type [java.lang.String] to type [@org.springframework.web.bind.annotation.RequestParam com.alibaba.nacos.config.server.model.SameConfigPolicy] for value [skip]; nested exception is java.lang.IllegalArgumentException: No enum constant com.alibaba.nacos.config.server.model.SameConfigPolicy.skip;caused: No enum constant com.alibaba.nacos.config.server.model.SameConfigPolicy.skip;")

	clone := func(q, body string) resp {
		req := httptest.NewRequest("POST", "/nacos/v1/cs/configs?clone=true&"+q, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := e.app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		return resp{res.StatusCode, string(b), res.Header}
	}
	expect(t, clone("tenant=", `[null]`), 200, `{"code":100006,"message":"没有选择任何配置","data":{"succCount":0}}`)
	expect(t, clone("tenant=nope", `[{"cfgId":1}]`), 200, `{"code":100001,"message":"目标 namespace 不存在","data":{"succCount":0}}`)
	expect(t, clone("tenant=public", `[{"cfgId":1}]`), 200, `{"code":100005,"message":"导入的文件数据为空","data":{"succCount":0}}`)
	id := itoa64(e.svc.Info("ok1", "G", "").ID)
	expect(t, clone("tenant=", `[{"cfgId":`+id+`,"dataId":"","group":""}]`), 200, `{"code":200,"message":"Clone Completed Successfully","data":{"succCount":0,"skipCount":0,"failData":[{"dataId":"ok1","group":"G"}]}}`)
	expect(t, clone("", `[]`), 500, "caused: Required request parameter 'tenant' for method parameter type String is not present;")
	// cfgId as Jackson binds a Long: the string the listing gives (as the
	// Java console sends it back, trimmed), "" as null, a fraction truncated
	expect(t, clone("tenant=&policy=OVERWRITE", `[{"cfgId":" `+id+`","dataId":"ok1-copy","group":""}]`), 200, `{"code":200,"message":"Clone Completed Successfully","data":{"succCount":1,"skipCount":0}}`)
	expect(t, clone("tenant=", `[{"cfgId":""}]`), 200, `{"code":100005,"message":"导入的文件数据为空","data":{"succCount":0}}`)
	expect(t, clone("tenant=", `[{"cfgId":1.5}]`), 200, `{"code":100005,"message":"导入的文件数据为空","data":{"succCount":0}}`)
	if r := clone("tenant=", `[{"cfgId":"abc"}]`); r.status != 500 || !strings.Contains(r.body, "not a valid `long` value") {
		t.Fatalf("cfgId abc: %d %s", r.status, r.body)
	}
}

func TestConfigShortPollAndDoubleEncoding(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	e.publish("s", "G", "", "v", nil, nil)
	// Literal %02/%01 text (double-encoded by the client) works too.
	r := e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {"s%02G%02old%01"}}, map[string]string{"Long-Pulling-Timeout": "30000"})
	expect(t, r, 200, "s%02G%01\n")
	// No Long-Pulling-Timeout: short polling; old clients get headers only.
	r = e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {"s\x02G\x02old\x01"}}, map[string]string{"Client-Version": "1.4.8"})
	expect(t, r, 200, "")
	if r.hdr.Get("Probe-Modify-Response") != "s:G;" || r.hdr.Get("Probe-Modify-Response-New") != "s%02G%01" {
		t.Fatalf("short poll headers %v", r.hdr)
	}
	r = e.do("POST", "/nacos/v1/cs/configs/listener", url.Values{"Listening-Configs": {"s\x02G\x02old\x01"}}, map[string]string{"Client-Version": "2.0.4"})
	expect(t, r, 200, "")
	if _, ok := r.hdr["Probe-Modify-Response"]; ok {
		t.Fatalf("2.0.4 got legacy headers %v", r.hdr)
	}
}

func TestConfigMethodNotSupported(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	r := e.do("PUT", "/nacos/v1/cs/configs?dataId=a&group=G", nil, nil)
	expect(t, r, 500, "caused: Request method 'PUT' not supported;")
	if ct := r.hdr.Get("Content-Type"); ct != "text/plain;charset=UTF-8" {
		t.Fatalf("content type %q", ct)
	}
	expect(t, e.do("PATCH", "/nacos/v1/console/namespaces", nil, nil), 500, "caused: Request method 'PATCH' not supported;")
	expect(t, e.do("GET", "/nacos/v1/cs/configs/", url.Values(nil), nil), 500, "caused: Required request parameter 'dataId' for method parameter type String is not present;")
}

func TestConfigOps(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	expect(t, e.do("GET", "/nacos/v1/cs/ops/derby?sql=select+1", nil, nil), 200, `{"code":500,"message":"The current storage mode is not Derby","data":null}`)
	expect(t, e.do("GET", "/nacos/v1/cs/health", nil, nil), 200, "UP")
	expect(t, e.do("POST", "/nacos/v1/cs/ops/localCache", nil, nil), 200, "200")
	expect(t, e.do("GET", "/nacos/v1/cs/communication/dataChange?dataId=a&group=G", nil, nil), 200, "true")
}

func TestConfigEmptyNumberParams(t *testing.T) {
	t.Parallel()
	e := newCfgEnv(t, clock.Real{})
	expect(t, e.do("GET", "/nacos/v1/cs/configs?search=accurate&dataId=&group=&pageNo=&pageSize=1", nil, nil), 500,
		"caused: Required request parameter 'pageNo' for method parameter type int is present but converted to null;")
	expect(t, e.do("GET", "/nacos/v1/cs/history?dataId=a&group=G&nid=", nil, nil), 500,
		"caused: Required request parameter 'nid' for method parameter type Long is present but converted to null;")
	expect(t, e.do("GET", "/nacos/v1/cs/history?dataId=a&group=G", nil, nil), 500,
		"caused: Required request parameter 'nid' for method parameter type Long is not present;")
	expect(t, e.do("GET", "/nacos/v1/cs/history?search=accurate&dataId=a&group=G&pageNo=&pageSize=", nil, nil), 200,
		`{"totalCount":0,"pageNumber":1,"pagesAvailable":0,"pageItems":[]}`)
}
