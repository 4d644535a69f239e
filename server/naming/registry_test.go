package naming

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/push"
)

type recPusher struct {
	mu      sync.Mutex
	subs    []push.Subscriber
	changed []string
}

func (p *recPusher) Subscribe(s push.Subscriber) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.subs = append(p.subs, s)
}

func (p *recPusher) ServiceChanged(ns, svc string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.changed = append(p.changed, ns+"##"+svc)
}

type env struct {
	t     *testing.T
	dir   string
	store *raftstore.Store
	reg   *Registry
	clk   *clocktest.Fake
	push  *recPusher
}

func openStore(t *testing.T, dir string) *raftstore.Store {
	t.Helper()
	cfg := raftstore.DefaultConfig()
	cfg.Dir, cfg.NodeID, cfg.BindAddr, cfg.Bootstrap = dir, "n1", "127.0.0.1:0", true
	cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout, cfg.CommitTimeout = 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond, 5*time.Millisecond
	s, err := raftstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), clk: clocktest.New(time.Unix(1700000000, 0)), push: &recPusher{}}
	e.store = openStore(t, e.dir)
	e.open()
	t.Cleanup(func() {
		e.reg.Close()
		e.store.Close()
	})
	return e
}

func (e *env) open() {
	cfg := DefaultConfig()
	cfg.Store, cfg.Pusher, cfg.Clock = e.store, e.push, e.clk
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.DisableHealthCheck = true // never probe addresses from tests
	reg, err := New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	reg.Changes().Subscribe(func(c Change) { e.push.ServiceChanged(c.NamespaceID, c.Service) })
	e.reg = reg
}

func (e *env) register(svc, ip string, port int, mutate func(*Instance)) {
	e.t.Helper()
	in := Instance{IP: ip, Port: port, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: DefaultCluster, Metadata: map[string]string{}}
	if mutate != nil {
		mutate(&in)
	}
	if err := e.reg.Register(context.Background(), InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc, Instance: in}); err != nil {
		e.t.Fatal(err)
	}
}

type listResult struct {
	Hosts []struct {
		IP          string            `json:"ip"`
		Port        int               `json:"port"`
		Valid       bool              `json:"valid"`
		Healthy     bool              `json:"healthy"`
		ServiceName string            `json:"serviceName"`
		InstanceID  string            `json:"instanceId"`
		Metadata    map[string]string `json:"metadata"`
		Ephemeral   bool              `json:"ephemeral"`
	} `json:"hosts"`
	Dom         string `json:"dom"`
	Name        string `json:"name"`
	CacheMillis int    `json:"cacheMillis"`
}

func (e *env) list(q ListQuery) listResult {
	e.t.Helper()
	if q.NamespaceID == "" {
		q.NamespaceID = DefaultNamespace
	}
	b, err := e.reg.List(q)
	if err != nil {
		e.t.Fatal(err)
	}
	var r listResult
	if err := json.Unmarshal(b, &r); err != nil {
		e.t.Fatalf("%v: %s", err, b)
	}
	return r
}

const javaUA = "Nacos-Java-Client:v1.4.8"
const goUA = "Nacos-Go-Client:v1.1.6"

func TestListShapeAndAgentNaming(t *testing.T) {
	e := newEnv(t)
	e.register("DEFAULT_GROUP@@demo", "10.0.0.5", 8080, func(in *Instance) { in.Metadata = map[string]string{"k": "v"} })
	b, err := e.reg.List(ListQuery{NamespaceID: DefaultNamespace, ServiceName: "DEFAULT_GROUP@@demo", Agent: javaUA})
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	wantPrefix := `{"hosts":[{"ip":"10.0.0.5","port":8080,"valid":true,"healthy":true,"marked":false,"instanceId":"10.0.0.5#8080#DEFAULT#DEFAULT_GROUP@@demo","metadata":{"k":"v"},"enabled":true,"weight":1.0,"clusterName":"DEFAULT","serviceName":"DEFAULT_GROUP@@demo","ephemeral":true}],"dom":"DEFAULT_GROUP@@demo","name":"DEFAULT_GROUP@@demo","cacheMillis":3000,"lastRefTime":1700000000000,"checksum":"`
	if !strings.HasPrefix(got, wantPrefix) {
		t.Fatalf("list body\n got %s\nwant %s...", got, wantPrefix)
	}
	if !strings.HasSuffix(got, `","useSpecifiedURL":false,"clusters":"","env":"","metadata":{}}`) {
		t.Fatalf("list tail: %s", got)
	}
	r := e.list(ListQuery{ServiceName: "DEFAULT_GROUP@@demo", Agent: goUA})
	if r.Dom != "demo" || r.Name != "DEFAULT_GROUP@@demo" || r.Hosts[0].ServiceName != "demo" {
		t.Fatalf("go agent naming: %+v", r)
	}
	// absent service
	b, _ = e.reg.List(ListQuery{NamespaceID: DefaultNamespace, ServiceName: "DEFAULT_GROUP@@nope", Clusters: "a,b"})
	if string(b) != `{"name":"DEFAULT_GROUP@@nope","clusters":"a,b","cacheMillis":3000,"hosts":[]}` {
		t.Fatalf("absent: %s", b)
	}
	// isCheck
	b, _ = e.reg.List(ListQuery{NamespaceID: DefaultNamespace, ServiceName: "DEFAULT_GROUP@@demo", IsCheck: true})
	if string(b) != "{}" {
		t.Fatalf("isCheck: %s", b)
	}
}

func TestSubscribeOnlyForPushAgents(t *testing.T) {
	e := newEnv(t)
	e.register("DEFAULT_GROUP@@demo", "10.0.0.5", 8080, nil)
	cases := []struct {
		agent string
		push  bool
	}{{javaUA, true}, {goUA, true}, {"Nacos-go-Client:v1.0.1", false}, {"Nacos-Python-Client:v0.1.16", false}, {"Nacos-Java-Client:vX", false}, {"Nacos-Server:1.4.8", false}}
	for _, c := range cases {
		before := len(e.push.subs)
		r := e.list(ListQuery{ServiceName: "DEFAULT_GROUP@@demo", Agent: c.agent, UDPPort: 5555, ClientIP: "127.0.0.1"})
		subscribed := len(e.push.subs) > before
		if subscribed != c.push || (r.CacheMillis == 10000) != c.push {
			t.Errorf("agent %q: subscribed=%v cacheMillis=%d, want push=%v", c.agent, subscribed, r.CacheMillis, c.push)
		}
	}
}

func TestProtectThresholdAndHealthyOnly(t *testing.T) {
	e := newEnv(t)
	svc := "DEFAULT_GROUP@@p"
	e.register(svc, "10.0.0.1", 1, nil)
	e.register(svc, "10.0.0.2", 1, nil)
	e.register(svc, "10.0.0.3", 1, func(in *Instance) { in.Enabled = false })
	// no beats for 16s: all unhealthy → threshold 0.0 promotes them all
	e.clk.Advance(16 * time.Second)
	e.reg.Sweep(e.clk.Now())
	r := e.list(ListQuery{ServiceName: svc, HealthyOnly: true})
	if len(r.Hosts) != 2 {
		t.Fatalf("want 2 enabled hosts promoted, got %+v", r.Hosts)
	}
	for _, h := range r.Hosts {
		if !h.Healthy || !h.Valid {
			t.Fatalf("promoted host not healthy: %+v", h)
		}
	}
	// one beat → one healthy, 1/3 > 0: the unhealthy one is reported as such, dropped with healthyOnly
	if _, err := e.reg.Beat(context.Background(), BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, ClusterName: DefaultCluster, IP: "10.0.0.1", Port: 1}); err != nil {
		t.Fatal(err)
	}
	r = e.list(ListQuery{ServiceName: svc})
	// the unhealthy host first: Java's ipMap iterates FALSE before TRUE (reference)
	if len(r.Hosts) != 2 || r.Hosts[0].Healthy || !r.Hosts[1].Healthy {
		t.Fatalf("after beat: %+v", r.Hosts)
	}
	r = e.list(ListQuery{ServiceName: svc, HealthyOnly: true})
	if len(r.Hosts) != 1 || r.Hosts[0].IP != "10.0.0.1" {
		t.Fatalf("healthyOnly: %+v", r.Hosts)
	}
}

func TestBeatExpiry(t *testing.T) {
	e := newEnv(t)
	svc := "DEFAULT_GROUP@@b"
	e.register(svc, "10.0.0.1", 80, nil)
	e.register(svc, "10.0.0.2", 80, func(in *Instance) {
		in.Metadata = map[string]string{MetaHeartBeatTimeout: "3000", MetaIPDeleteTimeout: "6000", MetaHeartBeatInterval: "1000"}
	})
	health := func() map[string]bool {
		out := map[string]bool{}
		s := e.reg.service(DefaultNamespace, svc)
		s.mu.RLock()
		defer s.mu.RUnlock()
		for _, in := range s.ephemeral {
			out[in.IP] = in.Healthy
		}
		return out
	}
	// the sweeper runs every 5 s on the fake clock
	e.clk.Advance(5 * time.Second) // t=5: .2 past 3s → unhealthy
	if h := health(); !h["10.0.0.1"] || h["10.0.0.2"] {
		t.Fatalf("t=5s: %v", h)
	}
	e.clk.Advance(5 * time.Second) // t=10: .2 past 6s → deleted
	if h := health(); len(h) != 1 || !h["10.0.0.1"] {
		t.Fatalf("t=10s: %v", h)
	}
	e.clk.Advance(5 * time.Second) // t=15: not yet (> 15000 needed)
	if h := health(); !h["10.0.0.1"] {
		t.Fatalf("t=15s: %v", h)
	}
	e.clk.Advance(5 * time.Second) // t=20: unhealthy
	if h := health(); h["10.0.0.1"] {
		t.Fatalf("t=20s: %v", h)
	}
	res, err := e.reg.Beat(context.Background(), BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, ClusterName: DefaultCluster, IP: "10.0.0.1", Port: 80})
	if err != nil || res.Code != 10200 {
		t.Fatalf("beat: %+v %v", res, err)
	}
	if h := health(); !h["10.0.0.1"] {
		t.Fatalf("beat did not recover: %v", h)
	}
	e.clk.Advance(35 * time.Second) // gone after 30 s without beat
	if h := health(); len(h) != 0 {
		t.Fatalf("t=55s: %v", h)
	}
	// a light beat for the deleted instance → 20404
	res, _ = e.reg.Beat(context.Background(), BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, ClusterName: DefaultCluster, IP: "10.0.0.1", Port: 80})
	if string(res.JSON()) != `{"clientBeatInterval":5000,"code":20404}` {
		t.Fatalf("unknown beat: %s", res.JSON())
	}
	// a beat with JSON re-registers
	beat, err := ParseBeat(`{"cluster":"DEFAULT","ip":"10.0.0.1","metadata":{"preserved.heart.beat.interval":"2000"},"period":5000,"port":80,"scheduled":false,"serviceName":"DEFAULT_GROUP@@b","stopped":false,"weight":1.0}`)
	if err != nil {
		t.Fatal(err)
	}
	res, err = e.reg.Beat(context.Background(), BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, ClusterName: DefaultCluster, Beat: beat})
	if err != nil || string(res.JSON()) != `{"clientBeatInterval":2000,"code":10200,"lightBeatEnabled":true}` {
		t.Fatalf("re-register beat: %s %v", res.JSON(), err)
	}
	if h := health(); !h["10.0.0.1"] {
		t.Fatalf("not re-registered: %v", h)
	}
}

func TestInstanceIDKeptAndSnowflake(t *testing.T) {
	e := newEnv(t)
	svc := "DEFAULT_GROUP@@ids"
	sf := func(in *Instance) { in.Metadata = map[string]string{MetaInstanceIDGen: "snowflake"} }
	e.register(svc, "10.0.0.1", 1, sf)
	e.register(svc, "10.0.0.2", 1, sf)
	e.register(svc, "10.0.0.1", 1, func(in *Instance) { sf(in); in.Weight = 2 })
	r := e.list(ListQuery{ServiceName: svc})
	ids := map[string]string{}
	for _, h := range r.Hosts {
		ids[h.IP] = h.InstanceID
	}
	if ids["10.0.0.1"] != "0" || ids["10.0.0.2"] != "1" {
		t.Fatalf("snowflake ids: %v", ids)
	}
}

func TestPersistentInstancesSurviveRestart(t *testing.T) {
	e := newEnv(t)
	svc := "DEFAULT_GROUP@@pers"
	e.register(svc, "10.0.0.9", 9, func(in *Instance) { in.Ephemeral = false; in.Metadata = map[string]string{"a": "b"} })
	e.register(svc, "10.0.0.8", 8, nil) // ephemeral, lost on restart
	if err := e.reg.CreateService(context.Background(), ServiceForm{NamespaceID: "ns1", ServiceName: "G@@meta", ProtectThreshold: 0.5, Metadata: map[string]string{"x": "y"}, Selector: Selector{Type: "none"}}); err != nil {
		t.Fatal(err)
	}
	e.reg.Close()
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	e.store = openStore(t, e.dir)
	e.open()
	r := e.list(ListQuery{ServiceName: svc})
	if len(r.Hosts) != 1 || r.Hosts[0].IP != "10.0.0.9" || r.Hosts[0].Ephemeral || r.Hosts[0].Metadata["a"] != "b" {
		t.Fatalf("after restart: %+v", r.Hosts)
	}
	b, err := e.reg.GetService("ns1", "G@@meta")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"name":"meta","namespaceId":"ns1","protectThreshold":0.5,"metadata":{"x":"y"},"selector":{"type":"none"},"groupName":"G","clusters":[]}`; string(b) != want {
		t.Fatalf("service after restart\n got %s\nwant %s", b, want)
	}
	// deregister the persistent one through the CP store
	if err := e.reg.Deregister(context.Background(), InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc, Instance: Instance{IP: "10.0.0.9", Port: 9, ClusterName: DefaultCluster}}); err != nil {
		t.Fatal(err)
	}
	if r := e.list(ListQuery{ServiceName: svc}); len(r.Hosts) != 0 {
		t.Fatalf("persistent deregister: %+v", r.Hosts)
	}
}

func TestValidationErrors(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name   string
		svc    string
		mutate func(*Instance)
		status int
		body   string
	}{
		{"weight", "DEFAULT_GROUP@@v", func(in *Instance) { in.Weight = 10001 }, 500, "caused: instance format invalid: The weights range from 0.0 to 10000.0;"},
		{"cluster", "DEFAULT_GROUP@@v", func(in *Instance) { in.ClusterName = "a_b" }, 400, "caused: cluster name can only have these characters: 0-9a-zA-Z-, current: a_b;"},
		{"service", "DEFAULT_GROUP@@v v", nil, 400, "caused: dom name can only have these characters: 0-9a-zA-Z-._:, current: DEFAULT_GROUP@@v v;"},
	}
	for _, c := range cases {
		in := Instance{IP: "1.1.1.1", Port: 80, Weight: 1, ClusterName: DefaultCluster, Ephemeral: true, Enabled: true, Healthy: true}
		if c.mutate != nil {
			c.mutate(&in)
		}
		err := e.reg.Register(context.Background(), InstanceForm{NamespaceID: DefaultNamespace, ServiceName: c.svc, Instance: in})
		ce := asCompat(err)
		if ce == nil || ce.Status != c.status || ce.Body != c.body {
			t.Errorf("%s: got %v, want %d %s", c.name, err, c.status, c.body)
		}
	}
	if s := e.reg.service(DefaultNamespace, "DEFAULT_GROUP@@v"); s != nil && s.count() != 0 {
		t.Fatalf("a rejected register left an instance")
	}
}

func TestEmptyServiceCleanAndConcurrentRegister(t *testing.T) {
	e := newEnv(t)
	svc := "DEFAULT_GROUP@@empty"
	e.register(svc, "10.0.0.1", 1, nil)
	if err := e.reg.Deregister(context.Background(), InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc, Instance: Instance{IP: "10.0.0.1", Port: 1, ClusterName: DefaultCluster, Ephemeral: true}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ { // 4 empty checks: not yet (count > 3 needed)
		e.reg.CleanEmptyServices()
	}
	if !e.reg.HasService(DefaultNamespace, svc) {
		t.Fatal("removed after 4 checks")
	}
	e.reg.CleanEmptyServices()
	if e.reg.HasService(DefaultNamespace, svc) {
		t.Fatal("still there after the 5th empty check")
	}
	// a register racing with the clean never lands in a dropped service
	for i := 0; i < 50; i++ {
		done := make(chan struct{})
		go func() {
			for j := 0; j < 5; j++ {
				e.reg.CleanEmptyServices()
			}
			close(done)
		}()
		e.register("DEFAULT_GROUP@@race", "10.0.0.2", i+1, nil)
		<-done
		if r := e.list(ListQuery{ServiceName: "DEFAULT_GROUP@@race"}); len(r.Hosts) == 0 {
			t.Fatalf("round %d: registered instance lost", i)
		}
		if err := e.reg.Deregister(context.Background(), InstanceForm{NamespaceID: DefaultNamespace, ServiceName: "DEFAULT_GROUP@@race", Instance: Instance{IP: "10.0.0.2", Port: i + 1, ClusterName: DefaultCluster, Ephemeral: true}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestServiceNames(t *testing.T) {
	e := newEnv(t)
	e.register("G1@@same", "10.0.0.1", 1, nil)
	e.register("G2@@same", "10.0.0.1", 1, nil)
	e.register("G1@@other", "10.0.0.1", 1, nil)
	b, err := e.reg.ServiceNames("", "sam")
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"services":{"public":["same"]},"count":1}` {
		t.Fatalf("names: %s", b)
	}
	if _, err := e.reg.ServiceNames("nope", ""); asCompat(err) == nil || asCompat(err).Status != 500 || asCompat(err).Body != "" {
		t.Fatalf("unknown namespace: %v", err)
	}
	if _, err := e.reg.ServiceNames("", "("); asCompat(err) == nil || asCompat(err).Status != 400 {
		t.Fatalf("bad regex: %v", err)
	}
}

func TestListServicesPagingAndSelector(t *testing.T) {
	e := newEnv(t)
	for i, name := range []string{"a", "b", "c"} {
		e.register("DEFAULT_GROUP@@"+name, "10.0.0.1", i+1, func(in *Instance) { in.Metadata = map[string]string{"zone": name} })
	}
	e.register("G2@@d", "10.0.0.1", 9, nil)
	cases := []struct {
		group, selector string
		pageNo, size    int
		want            string
	}{
		{"DEFAULT_GROUP", "", 1, 2, `{"doms":["a","b"],"count":3}`},
		{"DEFAULT_GROUP", "", 2, 2, `{"doms":["c"],"count":3}`},
		{"DEFAULT_GROUP", "", 3, 2, `{"doms":[],"count":3}`},
		{"DEFAULT_GROUP", "", 1, 2147483647, `{"doms":["a","b","c"],"count":3}`}, // SCA and Dubbo page size
		{"*", "", 1, 10, `{"doms":["DEFAULT_GROUP@@a","DEFAULT_GROUP@@b","DEFAULT_GROUP@@c","G2@@d"],"count":4}`},
		{"DEFAULT_GROUP", `{"type":"label","expression":"INSTANCE.metadata.zone = 'b'"}`, 1, 10, `{"doms":["b"],"count":1}`},
		{"DEFAULT_GROUP", `{"type":"label","expression":"SERVICE.metadata.zone = 'b'"}`, 1, 10, `{"doms":[],"count":0}`},
		{"DEFAULT_GROUP", `{"type":"none","expression":"x"}`, 1, 10, `{"doms":["a","b","c"],"count":3}`},
		// "=x".split("=") is ["", "x"] and "".split("\\.") is [""]: no
		// INSTANCE/SERVICE factor, every service
		{"DEFAULT_GROUP", `{"type":"label","expression":"=x"}`, 1, 10, `{"doms":["a","b","c"],"count":3}`},
	}
	for _, c := range cases {
		b, err := e.reg.ListServices(DefaultNamespace, c.group, c.selector, c.pageNo, c.size)
		if err != nil || string(b) != c.want {
			t.Errorf("%+v: got %s %v", c, b, err)
		}
	}
	errs := []struct {
		selector string
		status   int
		body     string
	}{
		{`{"type":"foo","expression":"x"}`, 400, "caused: No enum constant com.alibaba.nacos.api.selector.SelectorType.foo;"},
		{`{"expression":"x"}`, 500, `caused: Cannot invoke "com.fasterxml.jackson.databind.JsonNode.asText()" because the return value of "com.fasterxml.jackson.databind.JsonNode.get(String)" is null;`}, // Java 17 NPE message (reference)
		{`{"type":"label","expression":"INSTANCE.metadata.zone"}`, 500, "caused: Index 1 out of bounds for length 1;"},
		{`{"type":"label","expression":"="}`, 500, "caused: Index 0 out of bounds for length 0;"}, // "=".split("=") is empty
		{`{"type":"label","expression":".=x"}`, 500, "caused: Index 0 out of bounds for length 0;"},
	}
	for _, c := range errs {
		_, err := e.reg.ListServices(DefaultNamespace, "DEFAULT_GROUP", c.selector, 1, 10)
		if ce := asCompat(err); ce == nil || ce.Status != c.status || ce.Body != c.body {
			t.Errorf("%s: got %v, want %d %q", c.selector, err, c.status, c.body)
		}
	}
}

func TestCatalogServices(t *testing.T) {
	e := newEnv(t)
	e.register("DEFAULT_GROUP@@alpha", "10.0.0.1", 1, nil)
	e.register("DEFAULT_GROUP@@alpha", "10.0.0.2", 2, nil)
	e.register("G2@@beta", "10.0.0.3", 3, nil)
	q := CatalogServicesQuery{NamespaceID: DefaultNamespace, PageNo: 1, PageSize: 10}
	b, err := e.reg.CatalogServices(q)
	want := `{"serviceList":[{"name":"alpha","groupName":"DEFAULT_GROUP","clusterCount":1,"ipCount":2,"healthyInstanceCount":2,"triggerFlag":"false"},` +
		`{"name":"beta","groupName":"G2","clusterCount":1,"ipCount":1,"healthyInstanceCount":1,"triggerFlag":"false"}],"count":2}`
	if err != nil || string(b) != want {
		t.Fatalf("catalog\n got %s %v\nwant %s", b, err, want)
	}
	q.GroupNameParam = "G"
	q.ServiceNameParam = "et"
	if b, _ := e.reg.CatalogServices(q); !strings.Contains(string(b), `"name":"beta"`) || strings.Contains(string(b), "alpha") {
		t.Fatalf("search: %s", b)
	}
	q = CatalogServicesQuery{NamespaceID: DefaultNamespace, PageNo: 2, PageSize: 1, Instance: "10.0.0.3:3"}
	if b, _ := e.reg.CatalogServices(q); string(b) != `{"serviceList":[{"name":"beta","groupName":"G2","clusterCount":1,"ipCount":1,"healthyInstanceCount":1,"triggerFlag":"false"}],"count":1}` {
		t.Fatalf("instance filter (pageSize covers all): %s", b)
	}
	q = CatalogServicesQuery{NamespaceID: DefaultNamespace, PageNo: 5, PageSize: 1}
	if b, _ := e.reg.CatalogServices(q); string(b) != `{"serviceList":[],"count":0}` {
		t.Fatalf("page past the end: %s", b)
	}
}
