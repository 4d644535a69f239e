package server_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

// series is one scraped sample: its name (summaries and histograms
// flattened to _sum, _count, _bucket) and labels.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

func scrape(t *testing.T, n *servertest.Node) []series {
	t.Helper()
	r := n.Do("GET", "/nacos/actuator/prometheus", nil, nil, nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "text/plain;version=0.0.4;charset=utf-8" {
		t.Fatalf("scrape: %d %q", r.Status, r.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(r.Body))
	if err != nil {
		t.Fatalf("scrape does not parse: %v", err)
	}
	var out []series
	for name, mf := range mfs {
		for _, m := range mf.Metric {
			ls := map[string]string{}
			for _, lp := range m.Label {
				ls[lp.GetName()] = lp.GetValue()
			}
			add := func(n string, v float64) { out = append(out, series{n, ls, v}) }
			switch mf.GetType() {
			case dto.MetricType_SUMMARY:
				add(name+"_sum", m.Summary.GetSampleSum())
				add(name+"_count", float64(m.Summary.GetSampleCount()))
			case dto.MetricType_HISTOGRAM:
				add(name+"_sum", m.Histogram.GetSampleSum())
				add(name+"_count", float64(m.Histogram.GetSampleCount()))
				add(name+"_bucket", 0)
			case dto.MetricType_COUNTER:
				add(name, m.Counter.GetValue())
			default:
				add(name, m.Gauge.GetValue())
			}
		}
	}
	return out
}

func find(ss []series, name string, labels map[string]string) (float64, bool) {
	for _, s := range ss {
		if s.name != name {
			continue
		}
		ok := true
		for k, v := range labels {
			if s.labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			return s.value, true
		}
	}
	return 0, false
}

func opsNode(t *testing.T) *servertest.Node {
	cfg := servertest.Config(t)
	cfg.Ops.ExposePrometheus = true
	cfg.Ops.AccessLog.Enabled = true
	cfg.Ops.AccessLog.Dir = filepath.Join(t.TempDir(), "logs")
	cfg.Ops.AccessLog.Pattern = `%h %l %u %t "%r" %s %b %D %{User-Agent}i %{Authorization}i`
	return servertest.Start(t, cfg)
}

// TestActuatorAndMetrics: the actuator endpoints answer as Spring Boot 2.7
// does in Java Nacos 1.4.8, and requests show up under Java's meter names
// and labels.
func TestActuatorAndMetrics(t *testing.T) {
	n := opsNode(t)
	form := url.Values{"dataId": {"d1"}, "group": {"g"}, "content": {"x"}}
	if r := n.Do("POST", "/nacos/v1/cs/configs", nil, form, nil); r.Body != "true" {
		t.Fatalf("publish: %d %s", r.Status, r.Body)
	}
	n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"d1"}, "group": {"g"}}, nil, nil)
	n.Do("GET", "/nacos/v1/cs/configs/", url.Values{"dataId": {"nope"}, "group": {"g"}}, nil, nil)
	n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {""}, "group": {"g"}}, nil, nil) // counted, then refused
	n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"d1"}}, nil, nil)               // group missing: not counted
	n.Do("DELETE", "/nacos/v1/console/health/liveness", nil, nil, nil)
	n.Do("GET", "/nacos/v1/no/such/path", nil, nil, nil)
	n.Do("POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"s1"}, "ip": {"127.0.0.9"}, "port": {"80"}, "ephemeral": {"false"}}, nil, nil)
	n.Do("GET", "/nacos/v1/ns/instance/list", nil, nil, nil)

	ss := scrape(t, n)
	mon := func(module, name string) map[string]string { return map[string]string{"module": module, "name": name} }
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"nacos_monitor", mon("config", "getConfig"), 3},
		{"nacos_monitor", mon("config", "publish"), 1},
		{"nacos_monitor", mon("config", "configCount"), 1},
		{"nacos_monitor", mon("naming", "serviceCount"), 1},
		{"nacos_monitor", mon("naming", "ipCount"), 1},
		{"nacos_timer_seconds_count", mon("config", "notifyRt"), 1},
		{"nacos_exception_total", mon("config", "db"), 0},
		{"http_server_requests_seconds_count", map[string]string{"exception": "None", "method": "POST", "outcome": "SUCCESS", "status": "200", "uri": "/v1/cs/configs"}, 1},
		{"http_server_requests_seconds_count", map[string]string{"exception": "None", "method": "GET", "outcome": "CLIENT_ERROR", "status": "404", "uri": "/v1/cs/configs"}, 1},
		{"http_server_requests_seconds_count", map[string]string{"exception": "NacosException", "method": "GET", "status": "500", "uri": "/v1/cs/configs"}, 1},
		{"http_server_requests_seconds_count", map[string]string{"exception": "MissingServletRequestParameterException", "method": "GET", "status": "500", "uri": "/v1/cs/configs"}, 1},
		{"http_server_requests_seconds_count", map[string]string{"exception": "HttpRequestMethodNotSupportedException", "method": "DELETE", "status": "500", "uri": "root"}, 1},
		{"http_server_requests_seconds_count", map[string]string{"exception": "None", "method": "GET", "status": "404", "uri": "/**"}, 1},
		{"http_server_requests_seconds_count", map[string]string{"exception": "IllegalArgumentException", "method": "GET", "status": "400", "uri": "/v1/ns/instance/list"}, 1},
	} {
		got, ok := find(ss, c.name, c.labels)
		if !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	if _, ok := find(ss, "http_server_requests_seconds_max", map[string]string{"uri": "/v1/cs/configs", "method": "POST"}); !ok {
		t.Error("http_server_requests_seconds_max missing")
	}

	// health, its components, the links page, content negotiation
	for _, c := range []struct {
		path, accept, ct, body string
		status                 int
	}{
		{"/nacos/actuator/health", "", "application/vnd.spring-boot.actuator.v3+json", `{"status":"UP"}`, 200},
		{"/nacos/actuator/health", "application/json", "application/json", `{"status":"UP"}`, 200},
		{"/nacos/actuator/health", "text/plain", "text/plain;charset=UTF-8", "caused: Could not find acceptable representation;", 500},
		{"/nacos/actuator/health/ping", "", "", "", 404},
		{"/nacos/v1/console/health/liveness", "", "text/plain;charset=UTF-8", "OK", 200},
		{"/nacos/v1/console/health/readiness", "", "text/plain;charset=UTF-8", "OK", 200},
	} {
		h := map[string]string{}
		if c.accept != "" {
			h["Accept"] = c.accept
		}
		r := n.Do("GET", c.path, nil, nil, h)
		if r.Status != c.status || r.Body != c.body || (c.ct != "" && r.Header.Get("Content-Type") != c.ct) {
			t.Errorf("GET %s (Accept %q) = %d %q %q, want %d %q %q", c.path, c.accept, r.Status, r.Header.Get("Content-Type"), r.Body, c.status, c.ct, c.body)
		}
	}
	r := n.Do("GET", "/nacos/actuator", nil, nil, nil)
	var links struct {
		Links map[string]struct {
			Href      string `json:"href"`
			Templated bool   `json:"templated"`
		} `json:"_links"`
	}
	if err := json.Unmarshal([]byte(r.Body), &links); err != nil {
		t.Fatalf("links: %v %s", err, r.Body)
	}
	if l := links.Links["prometheus"]; l.Href != n.URL("/nacos/actuator/prometheus") || !links.Links["health-path"].Templated {
		t.Errorf("links %s", r.Body)
	}
	if r := n.Do("POST", "/nacos/actuator/health", nil, nil, nil); r.Status != 500 || r.Body != "caused: Request method 'POST' not supported;" {
		t.Errorf("POST health: %d %q", r.Status, r.Body)
	}
}

// TestPrometheusNotExposed: without the exposure property Java answers
// Spring's 404 and still serves health.
func TestPrometheusNotExposed(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	if r := n.Do("GET", "/nacos/actuator/prometheus", nil, nil, nil); r.Status != 404 || !strings.Contains(r.Body, `"status":404`) {
		t.Errorf("prometheus: %d %s", r.Status, r.Body)
	}
	if r := n.Do("GET", "/nacos/actuator/health", nil, nil, nil); r.Status != 200 {
		t.Errorf("health: %d %s", r.Status, r.Body)
	}
}

// TestAccessLog: one Tomcat-pattern line per request, in
// <dir>/access_log.<date>.log, with tokens and passwords redacted.
func TestAccessLog(t *testing.T) {
	n := opsNode(t)
	n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"d"}, "group": {"g"}, "accessToken": {"SECRET-TOKEN"}, "password": {"pw1"}},
		nil, map[string]string{"Authorization": "Bearer SECRET-BEARER", "User-Agent": "Nacos-Java-Client:v1.4.8"})
	n.Do("POST", "/nacos/v1/auth/users/login", url.Values{"username": {"nacos"}, "password": {"SECRET-PW"}}, nil, nil)
	file := filepath.Join(n.Cfg.Ops.AccessLog.Dir, "access_log."+time.Now().Format("2006-01-02")+".log")
	var data []byte
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, _ = os.ReadFile(file)
		if strings.Count(string(data), "\n") >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	text := string(data)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 2 {
		t.Fatalf("access log %s:\n%s", file, text)
	}
	re := regexp.MustCompile(`^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] "GET /nacos/v1/cs/configs\?\S+ HTTP/1\.1" 404 \d+ \d+ Nacos-Java-Client:v1\.4\.8 Bearer \*\*\*$`)
	if !re.MatchString(lines[0]) {
		t.Errorf("line %q does not match %s", lines[0], re)
	}
	if strings.Contains(text, "SECRET") || !strings.Contains(lines[0], "accessToken=***") || !strings.Contains(lines[0], "password=***") {
		t.Errorf("secret written or not redacted:\n%s", text)
	}
}

// TestDashboardQueriesAnswer: every query of docs/grafana/nacosd-dashboard.json
// (the community Nacos dashboard's queries plus nacosd's) selects at least
// one series that nacosd exposes, so no panel reads "No data".
func TestDashboardQueriesAnswer(t *testing.T) {
	data, err := os.ReadFile("../docs/grafana/nacosd-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	n := opsNode(t)
	n.Do("POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": {"d1"}, "group": {"g"}, "content": {"x"}}, nil)
	n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {"d1"}, "group": {"g"}}, nil, nil)
	ss := scrape(t, n)
	queries := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			sels, err := selectors(tg.Expr)
			if err != nil {
				t.Errorf("panel %q: %v", p.Title, err)
				continue
			}
			queries++
			for _, s := range sels {
				if !s.matchesAny(ss) {
					t.Errorf("panel %q: %s selects nothing in %q", p.Title, s, tg.Expr)
				}
			}
		}
	}
	if queries < 50 {
		t.Fatalf("only %d queries read from the dashboard", queries)
	}
}

// selector is a PromQL vector selector: a metric name and label matchers.
type selector struct {
	name     string
	matchers []matcher
}

type matcher struct {
	label, op string
	re        *regexp.Regexp
	value     string
}

func (s selector) String() string {
	var b strings.Builder
	b.WriteString(s.name)
	for _, m := range s.matchers {
		b.WriteString("{" + m.label + m.op + m.value + "}")
	}
	return b.String()
}

func (s selector) matchesAny(ss []series) bool {
	for _, x := range ss {
		if x.name != s.name {
			continue
		}
		ok := true
		for _, m := range s.matchers {
			v := x.labels[m.label]
			switch m.op {
			case "=":
				ok = v == m.value
			case "!=":
				ok = v != m.value
			case "=~":
				ok = m.re.MatchString(v)
			case "!~":
				ok = !m.re.MatchString(v)
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

var (
	byClause  = regexp.MustCompile(`\b(by|without)\s*\([^)]*\)`)
	rangeSel  = regexp.MustCompile(`\[[0-9a-z]+\]`)
	identOrBr = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*|\{[^}]*\}|\(`)
	matcherRe = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*(?:'([^']*)'|"([^"]*)")\s*$`)
	functions = map[string]bool{"sum": true, "max": true, "min": true, "avg": true, "count": true, "rate": true, "irate": true,
		"increase": true, "histogram_quantile": true, "by": true, "without": true}
)

// selectors extracts the vector selectors of a PromQL expression (enough
// PromQL for dashboards: aggregations, functions, ranges, arithmetic). The
// instance label is Prometheus's own, so its matchers are dropped.
func selectors(expr string) ([]selector, error) {
	e := rangeSel.ReplaceAllString(byClause.ReplaceAllString(expr, ""), "")
	toks := identOrBr.FindAllString(e, -1)
	var out []selector
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		if tok == "(" || strings.HasPrefix(tok, "{") {
			continue
		}
		if functions[tok] && i+1 < len(toks) && toks[i+1] == "(" {
			continue
		}
		s := selector{name: tok}
		if i+1 < len(toks) && strings.HasPrefix(toks[i+1], "{") {
			i++
			body := strings.Trim(toks[i], "{}")
			for _, part := range strings.Split(body, ",") {
				if strings.TrimSpace(part) == "" {
					continue
				}
				m := matcherRe.FindStringSubmatch(part)
				if m == nil {
					return nil, &selectorError{expr, part}
				}
				if m[1] == "instance" {
					continue
				}
				v := m[3] + m[4]
				mt := matcher{label: m[1], op: m[2], value: v}
				if strings.Contains(m[2], "~") {
					re, err := regexp.Compile("^(?:" + v + ")$")
					if err != nil {
						return nil, err
					}
					mt.re = re
				}
				s.matchers = append(s.matchers, mt)
			}
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, &selectorError{expr, ""}
	}
	return out, nil
}

type selectorError struct{ expr, part string }

func (e *selectorError) Error() string { return "cannot read selector " + e.part + " in " + e.expr }

// TestDefaultAdminPassword (issue 26 item 12): with auth on, a node whose
// nacos still has the password nacos says so in
// nacosd_auth_default_admin_password and in the console's ui/info until the
// password changes; a node started with nacosd.auth.admin-password never
// lets nacos/nacos in.
func TestDefaultAdminPassword(t *testing.T) {
	start := func(adminPW string) *servertest.Node {
		cfg := servertest.Config(t)
		cfg.Ops.ExposePrometheus = true
		cfg.Auth = server.AuthConfig{Enabled: true, SecretKey: clusterSecret, TokenExpire: time.Hour,
			ServerIdentityKey: clusterIdentKey, ServerIdentityValue: clusterIdentVal, AdminPassword: adminPW}
		return servertest.Start(t, cfg)
	}
	gauge := func(n *servertest.Node) float64 {
		v, ok := find(scrape(t, n), "nacosd_auth_default_admin_password", nil)
		if !ok {
			t.Fatal("nacosd_auth_default_admin_password missing")
		}
		return v
	}
	n := start("")
	if g := gauge(n); g != 1 {
		t.Fatalf("gauge with nacos/nacos: %v", g)
	}
	if r := n.Do("GET", "/nacos/v1/console/ui/info", nil, nil, nil); !strings.Contains(r.Body, `"defaultAdminPassword":true`) {
		t.Fatalf("ui/info: %s", r.Body)
	}
	tok, err := clusterLogin(t, n, "nacos", "nacos")
	if err != nil {
		t.Fatal(err)
	}
	if r := n.Do("PUT", "/nacos/v1/auth/users", url.Values{"accessToken": {tok}}, url.Values{"username": {"nacos"}, "newPassword": {"Changed-pw-1"}}, nil); r.Status != 200 {
		t.Fatalf("password change: %d %s", r.Status, r.Body)
	}
	if g := gauge(n); g != 0 {
		t.Fatalf("gauge after the change: %v", g)
	}
	if r := n.Do("GET", "/nacos/v1/console/ui/info", nil, nil, nil); !strings.Contains(r.Body, `"defaultAdminPassword":false`) {
		t.Fatalf("ui/info after the change: %s", r.Body)
	}

	m := start("First-start-pw")
	if _, err := clusterLogin(t, m, "nacos", "nacos"); err == nil {
		t.Fatal("nacos/nacos logs in on a node started with an admin password")
	}
	if _, err := clusterLogin(t, m, "nacos", "First-start-pw"); err != nil {
		t.Fatal(err)
	}
	if g := gauge(m); g != 0 {
		t.Fatalf("gauge with an admin password: %v", g)
	}
}
