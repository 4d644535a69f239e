package httpapi

import (
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/internal/buildinfo"
)

type fakeCluster struct {
	self       compat.Member
	members    []compat.Member
	standalone bool
	ready      error
}

func (f *fakeCluster) Self() compat.Member      { return f.self }
func (f *fakeCluster) Members() []compat.Member { return f.members }
func (f *fakeCluster) Standalone() bool         { return f.standalone }
func (f *fakeCluster) Ready() error             { return f.ready }
func (f *fakeCluster) Report(m compat.ReportedMember, _ string) (bool, string, string) {
	for _, mem := range f.members {
		if mem.Address() == m.EffectiveAddress() {
			return true, "", ""
		}
	}
	return false, "", ""
}
func (f *fakeCluster) Leave([]string) error { return nil }
func (f *fakeCluster) UpAddresses() []string {
	var out []string
	for _, m := range f.members {
		if m.State == compat.MemberUp {
			out = append(out, m.Address())
		}
	}
	return out
}

func member(ip string, port int, state string) compat.Member {
	return compat.Member{IP: ip, Port: port, State: state, ExtendInfo: map[string]any{"site": "unknow"}}
}

func newCoreApp(t *testing.T, cl Cluster) *fiber.App {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler(log)})
	MountCore(app.Group("/nacos"), cl, cl.(Membership))
	return app
}

type coreResp struct {
	status      int
	contentType string
	body        string
}

func doCore(t *testing.T, app *fiber.App, method, target, contentType, body string) coreResp {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := app.Test(req, -1)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return coreResp{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

func memberJSON(ip string, port int, state string) string {
	addr := ip + ":" + itoa(port)
	return `{"ip":"` + ip + `","port":` + itoa(port) + `,"state":"` + state + `","extendInfo":{"site":"unknow"},"address":"` + addr + `","failAccessCnt":0}`
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func testCluster() *fakeCluster {
	self := member("10.0.0.2", 8848, "UP")
	self.ExtendInfo = map[string]any{"version": "1.4.8", "site": "unknow", "raftPort": "7848"}
	return &fakeCluster{
		self: self,
		members: []compat.Member{
			member("10.0.0.3", 8848, "DOWN"),
			self,
			member("10.0.0.1", 8848, "UP"),
			member("10.0.0.10", 8848, "UP"),
		},
	}
}

func TestCoreEndpoints(t *testing.T) {
	t.Parallel()
	cl := testCluster()
	app := newCoreApp(t, cl)
	selfJSON := `{"ip":"10.0.0.2","port":8848,"state":"UP","extendInfo":{"raftPort":"7848","site":"unknow","version":"1.4.8"},"address":"10.0.0.2:8848","failAccessCnt":0}`
	const js, txt = ContentTypeJSON, ContentTypeText
	tests := []struct {
		method, target string
		status         int
		ct, body       string
	}{
		{"GET", "/nacos/v1/core/cluster/self", 200, js, `{"code":200,"message":null,"data":` + selfJSON + `}`},
		{"GET", "/nacos/v1/core/cluster/health", 200, js, `{"code":200,"message":null,"data":"UP"}`},
		{"GET", "/nacos/v1/core/cluster/nodes", 200, js, `{"code":200,"message":null,"data":[` +
			memberJSON("10.0.0.10", 8848, "UP") + "," + memberJSON("10.0.0.1", 8848, "UP") + "," + selfJSON + "," + memberJSON("10.0.0.3", 8848, "DOWN") + `]}`},
		// String order: "10.0.0.10:…" < "10.0.0.1:…" ('0' < ':')
		{"GET", "/nacos/v1/core/cluster/nodes?keyword=10.0.0.1", 200, js, `{"code":200,"message":null,"data":[` +
			memberJSON("10.0.0.10", 8848, "UP") + "," + memberJSON("10.0.0.1", 8848, "UP") + `]}`},
		{"GET", "/nacos/v1/core/cluster/nodes?keyword=10.0.0.3:8848", 200, js, `{"code":200,"message":null,"data":[` + memberJSON("10.0.0.3", 8848, "DOWN") + `]}`},
		{"GET", "/nacos/v1/core/cluster/nodes?keyword=%20", 200, js, ""}, // blank: all (checked below)
		{"GET", "/nacos/v1/core/cluster/nodes?keyword=192", 200, js, `{"code":200,"message":null,"data":[]}`},
		{"GET", "/nacos/v1/core/cluster/simple/nodes", 200, js, ""},
		{"GET", "/nacos/v1/console/health/liveness", 200, txt, "OK"},
		{"GET", "/nacos/v1/console/health/readiness", 200, txt, "OK"},
		{"GET", "/nacos/v1/console/server/state", 200, js, `{"version":"1.4.8","standalone_mode":"cluster","function_mode":null}`},
		{"POST", "/nacos/v1/core/cluster/self", 500, txt, "caused: Request method 'POST' not supported;"},
		{"DELETE", "/nacos/v1/console/health/liveness", 500, txt, "caused: Request method 'DELETE' not supported;"},
		{"GET", "/nacos/v1/core/cluster/report", 500, txt, "caused: Request method 'GET' not supported;"},
		{"HEAD", "/nacos/v1/console/health/liveness", 200, txt, ""},
	}
	for _, tc := range tests {
		r := doCore(t, app, tc.method, tc.target, "", "")
		if r.status != tc.status || r.contentType != tc.ct || (tc.body != "" && r.body != tc.body) {
			t.Errorf("%s %s = %d %q %s\nwant %d %q %s", tc.method, tc.target, r.status, r.contentType, r.body, tc.status, tc.ct, tc.body)
		}
	}
	all := doCore(t, app, "GET", "/nacos/v1/core/cluster/nodes", "", "").body
	if blank := doCore(t, app, "GET", "/nacos/v1/core/cluster/nodes?keyword=%20", "", "").body; blank != all {
		t.Errorf("blank keyword: %s", blank)
	}
	simple := doCore(t, app, "GET", "/nacos/v1/core/cluster/simple/nodes", "", "").body
	want := `{"code":200,"message":null,"data":[` + simpleOrder("10.0.0.1:8848", "10.0.0.10:8848", "10.0.0.2:8848") + `]}`
	if simple != want {
		t.Errorf("simple nodes = %s, want %s", simple, want)
	}
}

// simpleOrder quotes the addresses in ConcurrentHashMap order, computed
// independently from the handler: bucket = (h ^ h>>>16) & 15.
func simpleOrder(addrs ...string) string {
	type e struct {
		a string
		b uint32
	}
	var es []e
	for _, a := range addrs {
		var h int32
		for _, r := range a {
			h = 31*h + int32(r)
		}
		u := uint32(h)
		es = append(es, e{a, (u ^ u>>16) & 15})
	}
	for i := 1; i < len(es); i++ { // stable insertion sort by bucket
		for j := i; j > 0 && es[j].b < es[j-1].b; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
	var q []string
	for _, x := range es {
		q = append(q, `"`+x.a+`"`)
	}
	return strings.Join(q, ",")
}

func TestConcurrentHashOrder(t *testing.T) {
	t.Parallel()
	// "Aa" and "BB" share hash 2112 (bin 0): insertion order within the bin.
	if got := concurrentHashOrder([]string{"b", "BB", "a", "Aa"}); strings.Join(got, ",") != "BB,Aa,a,b" {
		t.Errorf("order = %v", got)
	}
	// 12 keys: ConcurrentHashMap has grown to 32 bins (HashMap would still have 16).
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "q"}
	got := concurrentHashOrder(keys)
	if got[0] != "a" || got[len(got)-1] != "q" { // 'q'=113 → bin 17 of 32, bin 1 of 16
		t.Errorf("order with 12 keys = %v", got)
	}
}

func TestCoreStandaloneAndReadiness(t *testing.T) {
	t.Parallel()
	cl := testCluster()
	cl.standalone = true
	cl.ready = errors.New("Naming is not in readiness")
	app := newCoreApp(t, cl)
	r := doCore(t, app, "GET", "/nacos/v1/console/server/state", "", "")
	if r.body != `{"version":"1.4.8","standalone_mode":"standalone","function_mode":null}` {
		t.Errorf("state = %s", r.body)
	}
	r = doCore(t, app, "GET", "/nacos/v1/console/health/readiness", "", "")
	if r.status != 500 || r.contentType != ContentTypeText || r.body != "Naming is not in readiness" {
		t.Errorf("readiness = %d %q %s", r.status, r.contentType, r.body)
	}
	cl2 := testCluster()
	cl2.self.State = "STARTING"
	r = doCore(t, newCoreApp(t, cl2), "GET", "/nacos/v1/core/cluster/health", "", "")
	if r.body != `{"code":200,"message":null,"data":"STARTING"}` {
		t.Errorf("health = %s", r.body)
	}
}

func TestCoreReport(t *testing.T) {
	t.Parallel()
	app := newCoreApp(t, testCluster())
	const (
		js      = "application/json"
		illegal = `{"code":400,"message":"Node information is illegal","data":null}`
		yes     = `{"code":200,"message":null,"data":"true"}`
		no      = `{"code":200,"message":null,"data":"false"}`
		missing = "caused: Required request body is missing: public com.alibaba.nacos.common.model.RestResult<java.lang.String> com.alibaba.nacos.core.controller.NacosClusterController.report(com.alibaba.nacos.core.cluster.Member);"
	)
	tests := []struct {
		name, ct, body string
		status         int
		want           string
		prefix         bool
	}{
		{"known", js, `{"ip":"10.0.0.1","port":8848,"state":"DOWN","extendInfo":{"a":1},"address":"10.0.0.1:8848","failAccessCnt":7,"abilities":{}}`, 200, yes, false},
		{"self is known", "application/json;charset=UTF-8", `{"ip":"10.0.0.2","port":8848,"address":"10.0.0.2:8848"}`, 200, yes, false},
		{"unknown", js, `{"ip":"10.9.9.9","port":8848,"address":"10.9.9.9:8848"}`, 200, no, false},
		{"port as string", js, `{"ip":"10.0.0.1","port":"8848","address":"10.0.0.1:8848"}`, 200, yes, false},
		{"no address", js, `{"ip":"10.0.0.1","port":8848}`, 200, illegal, false},
		{"blank address", js, `{"ip":"10.0.0.1","port":8848,"address":"  "}`, 200, illegal, false},
		{"null ip", js, `{"ip":null,"port":8848,"address":"10.0.0.1:8848"}`, 200, illegal, false},
		{"no port", js, `{"ip":"10.0.0.1","address":"10.0.0.1:8848"}`, 200, illegal, false},
		{"port -1", js, `{"ip":"10.0.0.1","port":-1,"address":"10.0.0.1:8848"}`, 200, illegal, false},
		{"case-sensitive names", js, `{"IP":"10.0.0.1","Port":8848,"Address":"10.0.0.1:8848"}`, 200, illegal, false},
		{"empty object", js, `{}`, 200, illegal, false},
		{"empty body", js, ``, 500, missing, false},
		{"json null", js, `null`, 500, missing, false},
		{"no content type no body", "", ``, 500, missing, false},
		{"no content type", "", `{}`, 500, "caused: Content type 'application/octet-stream' not supported;", false},
		{"form", "application/x-www-form-urlencoded", `ip=1`, 500, "caused: Content type 'application/x-www-form-urlencoded' not supported;", false},
		{"text", "text/plain; charset=UTF-8", `{}`, 500, "caused: Content type 'text/plain;charset=UTF-8' not supported;", false},
		{"white space", js, "  ", 500, "caused: JSON parse error: No content to map due to end-of-input;", false},
		{"bad json", js, `{"ip":`, 500, "caused: JSON parse error: ", true},
		{"array", js, `[]`, 500, "caused: JSON parse error: ", true},
		{"bad state", js, `{"ip":"10.0.0.1","port":8848,"address":"10.0.0.1:8848","state":"up"}`, 500, "caused: JSON parse error: ", true},
		{"bad port", js, `{"ip":"10.0.0.1","port":"x","address":"10.0.0.1:8848"}`, 500, "caused: JSON parse error: ", true},
	}
	for _, tc := range tests {
		r := doCore(t, app, "POST", "/nacos/v1/core/cluster/report", tc.ct, tc.body)
		okBody := r.body == tc.want || (tc.prefix && strings.HasPrefix(r.body, tc.want))
		wantCT := ContentTypeJSON
		if tc.status != 200 {
			wantCT = ContentTypeText
		}
		if r.status != tc.status || !okBody || r.contentType != wantCT {
			t.Errorf("%s: %d %q %s\nwant %d %q %s", tc.name, r.status, r.contentType, r.body, tc.status, wantCT, tc.want)
		}
	}
}

type buildCluster struct{ *fakeCluster }

func (buildCluster) Build() buildinfo.Info {
	return buildinfo.Info{Version: "v1.2.3", Revision: "abc", Time: time.Date(2026, 12, 6, 3, 10, 0, 0, time.UTC)}
}

// TestServerStateBuild: a node that knows its build shows it after Java's keys.
func TestServerStateBuild(t *testing.T) {
	t.Parallel()
	cl := testCluster()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	app := fiber.New(fiber.Config{ErrorHandler: ErrorHandler(log)})
	MountCore(app.Group("/nacos"), buildCluster{cl}, cl)
	r := doCore(t, app, "GET", "/nacos/v1/console/server/state", "", "")
	if r.body != `{"version":"1.4.8","standalone_mode":"cluster","function_mode":null,"nacosd_version":"v1.2.3","nacosd_revision":"abc","nacosd_revision_time":"2026-12-06T03:10:00Z"}` {
		t.Errorf("state = %s", r.body)
	}
}
