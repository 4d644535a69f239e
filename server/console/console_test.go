package console_test

import (
	"bufio"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/server/servertest"
)

func TestConsolePageAndAssets(t *testing.T) {
	n := startNode(t)
	for _, p := range []string{"/nacos/", "/nacos/index.html"} {
		r := n.Do("GET", p, nil, nil, nil)
		if r.Status != 200 || !strings.Contains(r.Body, `<script type="module" src="console-ui/app-`) {
			t.Fatalf("%s: %d %.300s", p, r.Status, r.Body)
		}
		// the page carries ui/info, so the first screen needs no round trip for it
		if !strings.Contains(r.Body, `<script type="application/json" id="nacosd-info">{"version":"1.4.8","authEnabled":false,"standalone":true,"contextPath":"/nacos","build":{"version":"`) ||
			!strings.Contains(r.Body, `},"defaultAdminPassword":false}</script>`) {
			t.Fatalf("%s does not carry the info: %s", p, r.Body)
		}
		if r.Header.Get("Cache-Control") != "no-cache" || !strings.Contains(r.Header.Get("Content-Security-Policy"), "script-src 'self'") {
			t.Fatalf("%s headers: %v", p, r.Header)
		}
	}
	// without the slash the relative asset and API URLs would be wrong
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(n.URL("/nacos"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "/nacos/" {
		t.Fatalf("/nacos: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	page := n.Do("GET", "/nacos/", nil, nil, nil).Body
	js := regexp.MustCompile(`console-ui/(app-[A-Z0-9]{8}\.js)`).FindStringSubmatch(page)
	if js == nil {
		t.Fatalf("no bundle named in %s", page)
	}
	r := n.Do("GET", "/nacos/console-ui/"+js[1], nil, nil, map[string]string{"Accept-Encoding": "gzip"})
	if r.Status != 200 || r.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(r.Header.Get("Cache-Control"), "immutable") ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("bundle: %d %v", r.Status, r.Header)
	}
	zr, err := gzip.NewReader(strings.NewReader(r.Body))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if r2 := n.Do("GET", "/nacos/console-ui/"+js[1], nil, nil, nil); r2.Body != string(plain) || r2.Header.Get("Content-Encoding") != "" {
		t.Fatal("gzip and identity bodies differ")
	}
	if r := n.Do("GET", "/nacos/console-ui/third-party-licenses.txt", nil, nil, nil); r.Status != 200 || !strings.Contains(r.Body, "preact") || r.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("licenses: %d %v", r.Status, r.Header)
	}
	if r := n.Do("GET", "/nacos/console-ui/nope.js", nil, nil, nil); r.Status != 404 {
		t.Fatalf("unknown asset: %d", r.Status)
	}
	// the 1.x console endpoints are untouched
	if r := n.Do("GET", "/nacos/v1/console/server/state", nil, nil, nil); !strings.HasPrefix(r.Body, `{"version":"1.4.8","standalone_mode":"standalone","function_mode":null,"nacosd_version":"`) {
		t.Fatalf("server/state: %s", r.Body)
	}
}

func TestConsoleInfoAndCluster(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.Build = buildinfo.Info{Version: "v0.0.0-20261206031000-0123456789ab", Revision: "0123456789abcdef",
		Time: time.Date(2026, 12, 6, 3, 10, 0, 0, time.UTC), Modified: true, GoVersion: "go1.26.8"}
	cfg.Ops.ExposePrometheus = true
	n := servertest.Start(t, cfg)
	if r := n.Do("GET", "/nacos/v1/console/ui/info", nil, nil, nil); r.Body != `{"version":"1.4.8","authEnabled":false,"standalone":true,"contextPath":"/nacos",`+
		`"build":{"version":"v0.0.0-20261206031000-0123456789ab","revision":"0123456789abcdef","revisionTime":"2026-12-06T03:10:00Z","modified":true,"go":"go1.26.8"},"defaultAdminPassword":false}` {
		t.Fatalf("info: %s", r.Body)
	}
	// beside the version clients read, the build
	if r := n.Do("GET", "/nacos/v1/console/server/state", nil, nil, nil); r.Body != `{"version":"1.4.8","standalone_mode":"standalone","function_mode":null,`+
		`"nacosd_version":"v0.0.0-20261206031000-0123456789ab","nacosd_revision":"0123456789abcdef","nacosd_revision_time":"2026-12-06T03:10:00Z"}` {
		t.Fatalf("server/state: %s", r.Body)
	}
	// and in the metrics
	if r := n.Do("GET", "/nacos/actuator/prometheus", nil, nil, nil); r.Status != 200 ||
		!strings.Contains(r.Body, `nacosd_build_info{goversion="go1.26.8",revision="0123456789abcdef",revision_time="2026-12-06T03:10:00Z",version="v0.0.0-20261206031000-0123456789ab"} 1`) {
		t.Fatalf("metrics lack nacosd_build_info:\n%s", r.Body)
	}
	var v struct {
		Standalone bool
		Raft       struct{ State, Term string }
		Nodes      []struct {
			Address, State, RaftRole, Version string
			Self                              bool
			LastRefreshTime                   int64
		}
	}
	r := n.Do("GET", "/nacos/v1/console/cluster/nodes", nil, nil, nil)
	if err := json.Unmarshal([]byte(r.Body), &v); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	if !v.Standalone || v.Raft.State != "Leader" || len(v.Nodes) != 1 || !v.Nodes[0].Self || v.Nodes[0].RaftRole != "Leader" ||
		v.Nodes[0].State != "UP" || v.Nodes[0].Version != "1.4.8" || v.Nodes[0].Address != n.HTTPAddr() || v.Nodes[0].LastRefreshTime == 0 {
		t.Fatalf("cluster view: %s", r.Body)
	}
}

func publishConfig(t *testing.T, n *servertest.Node, dataID, group, content string, header map[string]string) {
	t.Helper()
	mustOK(t, n.Do("POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": {dataID}, "group": {group}, "content": {content}, "type": {"yaml"}}, header), "publish "+dataID)
}

func TestConsoleConfigSearchAndMD5(t *testing.T) {
	n := startNode(t)
	publishConfig(t, n, "a.yaml", "G", "db: mysql\nport: 1", nil)
	publishConfig(t, n, "b.yaml", "G", "db: postgres", nil)
	publishConfig(t, n, "c.yaml", "H", "db: mysql", nil)

	var page struct {
		TotalCount, PagesAvailable int
		PageItems                  []struct{ DataID, Group, Type, MD5 string }
	}
	q := url.Values{"dataId": {"*.yaml"}, "group": {""}, "content": {"mysql"}, "pageNo": {"1"}, "pageSize": {"1"}}
	r := n.Do("GET", "/nacos/v1/console/configs", q, nil, nil)
	if err := json.Unmarshal([]byte(r.Body), &page); err != nil {
		t.Fatalf("%v: %s", err, r.Body)
	}
	if page.TotalCount != 2 || page.PagesAvailable != 2 || len(page.PageItems) != 1 || page.PageItems[0].DataID != "a.yaml" ||
		page.PageItems[0].Type != "yaml" || len(page.PageItems[0].MD5) != 32 {
		t.Fatalf("content search: %s", r.Body)
	}
	q.Set("search", "accurate")
	q.Set("dataId", "c.yaml")
	if r := n.Do("GET", "/nacos/v1/console/configs", q, nil, nil); !strings.Contains(r.Body, `"totalCount":1,`) {
		t.Fatalf("accurate: %s", r.Body)
	}
	if r := n.Do("GET", "/nacos/v1/console/configs", url.Values{"pageNo": {"0"}, "pageSize": {"10"}}, nil, nil); r.Status != 400 {
		t.Fatalf("bad page: %d %s", r.Status, r.Body)
	}

	// the MD5 a client is served: the beta one for a beta IP
	publishConfig(t, n, "a.yaml", "G", "db: beta", map[string]string{"betaIps": "10.0.0.9"})
	body := `[{"groupKey":"a.yaml+G","ip":"10.0.0.1"},{"groupKey":"a.yaml+G","ip":"10.0.0.9"},{"groupKey":"x+G+ns1","ip":"10.0.0.1"}]`
	req, _ := http.NewRequest("POST", n.URL("/nacos/v1/console/configs/md5"), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md5s []struct{ DataID, Group, Tenant, IP, MD5 string }
	if err := json.NewDecoder(resp.Body).Decode(&md5s); err != nil {
		t.Fatal(err)
	}
	if len(md5s) != 3 || md5s[0].MD5 != md5Hex("db: mysql\nport: 1") || md5s[1].MD5 != md5Hex("db: beta") ||
		md5s[2].MD5 != "" || md5s[2].Tenant != "ns1" || md5s[2].DataID != "x" {
		t.Fatalf("md5s: %+v", md5s)
	}
	if r := n.Do("POST", "/nacos/v1/console/configs/md5", nil, nil, map[string]string{"Content-Type": "application/json"}); r.Status != 400 {
		t.Fatalf("empty body: %d", r.Status)
	}
}

// TestConsoleEvents reads the event stream: a registration in the watched
// service arrives, one in another service does not.
func TestConsoleEvents(t *testing.T) {
	n := startNode(t)
	resp, err := http.Get(n.URL("/nacos/v1/console/events?namespaceId=public&serviceName=orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("content type %q", ct)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitLine := func(want string) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stream ended before %q", want)
				}
				if strings.Contains(l, "orders") && !strings.Contains(want, "orders") {
					t.Fatalf("unexpected event %q", l)
				}
				if strings.Contains(l, "other") {
					t.Fatalf("event of another service: %q", l)
				}
				if l == want {
					return
				}
			case <-deadline:
				t.Fatalf("no %q", want)
			}
		}
	}
	waitLine("retry: 2000")
	mustOK(t, n.Do("POST", "/nacos/v1/ns/instance", nil, url.Values{"serviceName": {"other"}, "ip": {"10.0.0.2"}, "port": {"80"}}, nil), "register other")
	mustOK(t, n.Do("POST", "/nacos/v1/ns/instance", nil, url.Values{"serviceName": {"orders"}, "ip": {"10.0.0.1"}, "port": {"80"}}, nil), "register orders")
	waitLine(`data: {"namespaceId":"public","serviceName":"DEFAULT_GROUP@@orders"}`)
	// closing the server ends the stream (it does not hold the shutdown)
	start := time.Now()
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	for range lines {
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("shutdown with an open stream took %v", d)
	}
}

// startNode starts nacosd (auth off); instances never expire (the beat
// sweep is pushed out) so registrations made over HTTP stay put.
func startNode(t *testing.T) *servertest.Node {
	cfg := servertest.Config(t)
	cfg.Naming.BeatCheckInterval = time.Hour
	cfg.Naming.EmptyServiceCleanInitial = time.Hour
	return servertest.Start(t, cfg)
}

func mustOK(t *testing.T, r servertest.Response, what string) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", what, r.Status, r.Body)
	}
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
