package conformance

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/nacos-group/nacos-sdk-go/clients"
	"github.com/nacos-group/nacos-sdk-go/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/common/constant"
	"github.com/nacos-group/nacos-sdk-go/model"
	"github.com/nacos-group/nacos-sdk-go/util"
	"github.com/nacos-group/nacos-sdk-go/vo"
)

// SDKGo runs nacos-sdk-go v1.1.6 scenarios in process. Its clients have no
// Close in v1; their goroutines live until the test binary exits.
type SDKGo struct {
	// WorkDir receives the clients' caches and logs.
	WorkDir string
	// RunID makes service names and data ids unique per suite run.
	RunID string
}

var sdkFilter sync.Once

// loopbackOnly makes nacos-sdk-go send an empty clientIP, so the server
// pushes to 127.0.0.1 rather than this machine's interface address. It
// changes a package variable of the SDK, once per process.
func loopbackOnly() error {
	var err error
	sdkFilter.Do(func() { err = util.SetFilterNetNumberAndMask("0.0.0.0/0") })
	return err
}

func (g *SDKGo) params(s *Server, ns, role string) (vo.NacosClientParam, error) {
	if err := loopbackOnly(); err != nil {
		return vo.NacosClientParam{}, fmt.Errorf("conformance: sdk-go filter: %w", err)
	}
	dir := filepath.Join(g.WorkDir, "sdkgo-"+s.Name+"-"+ns+"-"+role)
	cc := constant.ClientConfig{TimeoutMs: 5000, NotLoadCacheAtStart: true, LogDir: dir + "/log", CacheDir: dir + "/cache",
		LogLevel: "warn", UpdateCacheWhenEmpty: true, NamespaceId: ns}
	var sc []constant.ServerConfig
	for _, port := range s.Ports() {
		sc = append(sc, constant.ServerConfig{IpAddr: "127.0.0.1", Port: uint64(port), ContextPath: "/nacos"})
	}
	return vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc}, nil
}

func (g *SDKGo) naming(s *Server, ns, role string) (naming_client.INamingClient, error) {
	p, err := g.params(s, ns, role)
	if err != nil {
		return nil, err
	}
	return clients.NewNamingClient(p)
}

func (g *SDKGo) config(s *Server, ns, role string) (config_client.IConfigClient, error) {
	p, err := g.params(s, ns, role)
	if err != nil {
		return nil, err
	}
	return clients.NewConfigClient(p)
}

// eventually polls cond every 100 ms until it returns nil or timeout passes;
// it returns the elapsed time or the condition's last error.
func eventually(timeout time.Duration, cond func() error) (time.Duration, error) {
	start := time.Now()
	for {
		err := cond()
		if err == nil {
			return time.Since(start), nil
		}
		if time.Since(start) > timeout {
			return time.Since(start), fmt.Errorf("after %s: %w", time.Since(start).Round(time.Millisecond), err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type sdkScenario struct {
	name string
	run  func(s *Server) (time.Duration, string, error)
}

// Run runs every sdk-go scenario against s and adds the results.
func (g *SDKGo) Run(s *Server, rs *Results) {
	for _, sc := range g.scenarios() {
		d, detail, err := sc.run(s)
		r := Result{Scenario: "sdkgo/" + sc.name, Target: s.Name, OK: err == nil, Ms: d.Milliseconds(), Detail: detail}
		if d < 0 {
			r.Ms = -1
		}
		if err != nil {
			r.Ms, r.Detail = -1, err.Error()
		}
		rs.Add(r)
	}
}

func (g *SDKGo) svc(base string) string { return "sdkgo." + base + "." + g.RunID }

func hostsString(l []model.Instance) string {
	s := "["
	for _, i := range l {
		s += fmt.Sprintf("%s:%d healthy=%v enabled=%v ", i.Ip, i.Port, i.Healthy, i.Enable)
	}
	return s + "]"
}

func (g *SDKGo) scenarios() []sdkScenario {
	return []sdkScenario{
		{"naming.register", g.register},
		{"naming.select", g.selectHealthy},
		{"naming.service.list", g.serviceList},
		{"naming.push.add", g.pushAdd},
		{"naming.push.remove", g.pushRemove},
		{"config.publish.get", g.publishGet},
		{"config.listener", g.listener},
		{"config.remove", g.remove},
		{"config.namespace", g.configNamespace},
	}
}

func regParam(svc, group string, port uint64, md map[string]string) vo.RegisterInstanceParam {
	return vo.RegisterInstanceParam{Ip: "127.0.0.1", Port: port, ServiceName: svc, GroupName: group, Weight: 1,
		Enable: true, Healthy: true, Ephemeral: true, Metadata: md}
}

func (g *SDKGo) register(s *Server) (time.Duration, string, error) {
	c, err := g.naming(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	svc := g.svc("reg")
	start := time.Now()
	ok, err := c.RegisterInstance(regParam(svc, "", 19001, map[string]string{"v": "1"}))
	if err != nil || !ok {
		return 0, "", fmt.Errorf("register: %v %v", ok, err)
	}
	d := time.Since(start)
	if _, err := eventually(5*time.Second, func() error {
		l, err := c.SelectAllInstances(vo.SelectAllInstancesParam{ServiceName: svc})
		if err != nil {
			return err
		}
		if len(l) != 1 || l[0].Port != 19001 || l[0].Metadata["v"] != "1" {
			return fmt.Errorf("instances %s", hostsString(l))
		}
		return nil
	}); err != nil {
		return 0, "", err
	}
	ok, err = c.DeregisterInstance(vo.DeregisterInstanceParam{Ip: "127.0.0.1", Port: 19001, ServiceName: svc, Ephemeral: true})
	if err != nil || !ok {
		return 0, "", fmt.Errorf("deregister: %v %v", ok, err)
	}
	return d, "register latency", nil
}

func (g *SDKGo) selectHealthy(s *Server) (time.Duration, string, error) {
	c, err := g.naming(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	svc := g.svc("sel")
	for _, p := range []uint64{19002, 19003} {
		if ok, err := c.RegisterInstance(regParam(svc, "G1", p, nil)); err != nil || !ok {
			return 0, "", fmt.Errorf("register %d: %v %v", p, ok, err)
		}
	}
	d, err := eventually(5*time.Second, func() error {
		l, err := c.SelectInstances(vo.SelectInstancesParam{ServiceName: svc, GroupName: "G1", HealthyOnly: true})
		if err != nil {
			return err
		}
		if len(l) != 2 {
			return fmt.Errorf("healthy %s", hostsString(l))
		}
		one, err := c.SelectOneHealthyInstance(vo.SelectOneHealthInstanceParam{ServiceName: svc, GroupName: "G1"})
		if err != nil {
			return err
		}
		if one.Port != 19002 && one.Port != 19003 {
			return fmt.Errorf("one %v", one)
		}
		return nil
	})
	return d, "select healthy in group", err
}

func (g *SDKGo) serviceList(s *Server) (time.Duration, string, error) {
	c, err := g.naming(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	svc, grp := g.svc("list"), "SL"+g.RunID
	if ok, err := c.RegisterInstance(regParam(svc, grp, 19004, nil)); err != nil || !ok {
		return 0, "", fmt.Errorf("register: %v %v", ok, err)
	}
	d, err := eventually(5*time.Second, func() error {
		l, err := c.GetAllServicesInfo(vo.GetAllServiceInfoParam{GroupName: grp, PageNo: 1, PageSize: 10})
		if err != nil {
			return err
		}
		if l.Count != 1 || len(l.Doms) != 1 || l.Doms[0] != svc {
			return fmt.Errorf("count %d doms %v", l.Count, l.Doms)
		}
		return nil
	})
	return d, "GetAllServicesInfo", err
}

// watchService subscribes and returns a channel of host lists.
func watchService(c naming_client.INamingClient, svc string) (chan []model.SubscribeService, error) {
	ch := make(chan []model.SubscribeService, 64)
	err := c.Subscribe(&vo.SubscribeParam{ServiceName: svc, SubscribeCallback: func(l []model.SubscribeService, err error) {
		if err == nil {
			select {
			case ch <- l:
			default:
			}
		}
	}})
	return ch, err
}

func waitHosts(ch chan []model.SubscribeService, start time.Time, want func([]model.SubscribeService) bool) (time.Duration, error) {
	timeout := time.After(15 * time.Second)
	for {
		select {
		case l := <-ch:
			if want(l) {
				return time.Since(start), nil
			}
		case <-timeout:
			return 0, errors.New("no matching subscribe callback within 15 s")
		}
	}
}

func (g *SDKGo) pushAdd(s *Server) (time.Duration, string, error) {
	sub, err := g.naming(s, "", "subscriber")
	if err != nil {
		return 0, "", err
	}
	reg, err := g.naming(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	svc := g.svc("padd")
	// The subscriber's first query registers its UDP port; it needs a
	// non-empty service to cache, so one instance exists first.
	if ok, err := reg.RegisterInstance(regParam(svc, "", 19005, nil)); err != nil || !ok {
		return 0, "", fmt.Errorf("register: %v %v", ok, err)
	}
	ch, err := watchService(sub, svc)
	if err != nil {
		return 0, "", err
	}
	time.Sleep(1500 * time.Millisecond) // setup: let the first poll finish before measuring
	start := time.Now()
	if ok, err := reg.RegisterInstance(regParam(svc, "", 19006, nil)); err != nil || !ok {
		return 0, "", fmt.Errorf("register: %v %v", ok, err)
	}
	d, err := waitHosts(ch, start, func(l []model.SubscribeService) bool { return len(l) == 2 })
	if err == nil && d > 5*time.Second {
		err = fmt.Errorf("callback after %s (poll, not push?)", d)
	}
	return d, "register to callback", err
}

func (g *SDKGo) pushRemove(s *Server) (time.Duration, string, error) {
	sub, err := g.naming(s, "", "subscriber")
	if err != nil {
		return 0, "", err
	}
	reg, err := g.naming(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	svc := g.svc("prm")
	for _, p := range []uint64{19007, 19008} {
		if ok, err := reg.RegisterInstance(regParam(svc, "", p, nil)); err != nil || !ok {
			return 0, "", fmt.Errorf("register: %v %v", ok, err)
		}
	}
	ch, err := watchService(sub, svc)
	if err != nil {
		return 0, "", err
	}
	time.Sleep(1500 * time.Millisecond) // setup: let the first poll finish before measuring
	start := time.Now()
	if ok, err := reg.DeregisterInstance(vo.DeregisterInstanceParam{Ip: "127.0.0.1", Port: 19008, ServiceName: svc, Ephemeral: true}); err != nil || !ok {
		return 0, "", fmt.Errorf("deregister: %v %v", ok, err)
	}
	d, err := waitHosts(ch, start, func(l []model.SubscribeService) bool { return len(l) == 1 && l[0].Port == 19007 })
	if err == nil && d > 5*time.Second {
		err = fmt.Errorf("callback after %s (poll, not push?)", d)
	}
	return d, "deregister to callback", err
}

// readable reads (id, group) every 10 ms until it equals want ("" is
// absent: the SDK reports a 404 so) and returns how long that took. Java
// 1.4.8 serves reads from a dump written after the commit, so an app that
// reads its own write polls the same way.
func readable(c config_client.IConfigClient, id, group, want string) (time.Duration, error) {
	start := time.Now()
	for {
		got, err := c.GetConfig(vo.ConfigParam{DataId: id, Group: group})
		if err == nil && got == want {
			return time.Since(start), nil
		}
		if time.Since(start) > 10*time.Second {
			return 0, fmt.Errorf("%s@%s after %s: got %q %v", id, group, time.Since(start).Round(time.Millisecond), got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (g *SDKGo) publishGet(s *Server) (time.Duration, string, error) {
	c, err := g.config(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo.pg." + g.RunID
	content := "k=v\nname=测试😀"
	start := time.Now()
	ok, err := c.PublishConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", Content: content})
	if err != nil || !ok {
		return 0, "", fmt.Errorf("publish: %v %v", ok, err)
	}
	pub := time.Since(start)
	if _, err := readable(c, id, "DEFAULT_GROUP", content); err != nil {
		return 0, "", err
	}
	d := time.Since(start)
	return d, fmt.Sprintf("publish %d ms, readable %d ms after the publish began", pub.Milliseconds(), d.Milliseconds()), nil
}

func (g *SDKGo) listener(s *Server) (time.Duration, string, error) {
	c, err := g.config(s, "", "listener")
	if err != nil {
		return 0, "", err
	}
	p, err := g.config(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo.lis." + g.RunID
	if ok, err := p.PublishConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", Content: "v0"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish v0: %v %v", ok, err)
	}
	ch := make(chan string, 16)
	if err := c.ListenConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", OnChange: func(_, _, _, data string) {
		select {
		case ch <- data:
		default:
		}
	}}); err != nil {
		return 0, "", err
	}
	time.Sleep(2500 * time.Millisecond) // setup: the listener's first (no-hangup) poll and the hanging one
	for len(ch) > 0 {
		<-ch
	}
	start := time.Now()
	if ok, err := p.PublishConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", Content: "v1"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish v1: %v %v", ok, err)
	}
	timeout := time.After(35 * time.Second)
	for {
		select {
		case data := <-ch:
			if data != "v1" {
				continue
			}
			d := time.Since(start)
			if d > 5*time.Second { // held long poll woken at once, not the 30 s cycle
				return d, "", fmt.Errorf("listener woken after %s", d)
			}
			return d, "publish to OnChange", nil
		case <-timeout:
			return 0, "", errors.New("no OnChange with v1 within 35 s")
		}
	}
}

func (g *SDKGo) remove(s *Server) (time.Duration, string, error) {
	c, err := g.config(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo.rm." + g.RunID
	if ok, err := c.PublishConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", Content: "x"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish: %v %v", ok, err)
	}
	if _, err := readable(c, id, "DEFAULT_GROUP", "x"); err != nil {
		return 0, "", err
	}
	start := time.Now()
	ok, err := c.DeleteConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP"})
	if err != nil || !ok {
		return 0, "", fmt.Errorf("delete: %v %v", ok, err)
	}
	del := time.Since(start)
	if _, err := readable(c, id, "DEFAULT_GROUP", ""); err != nil {
		return 0, "", fmt.Errorf("get after delete: %w", err)
	}
	d := time.Since(start)
	return d, fmt.Sprintf("delete %d ms, gone %d ms after the delete began", del.Milliseconds(), d.Milliseconds()), nil
}

func (g *SDKGo) configNamespace(s *Server) (time.Duration, string, error) {
	ns, err := g.config(s, "sdkgo-ns-"+g.RunID, "main")
	if err != nil {
		return 0, "", err
	}
	pub, err := g.config(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo.ns." + g.RunID
	if ok, err := ns.PublishConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP", Content: "in-ns"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish: %v %v", ok, err)
	}
	if _, err := readable(ns, id, "DEFAULT_GROUP", "in-ns"); err != nil {
		return 0, "", fmt.Errorf("get in ns: %w", err)
	}
	if got, err := pub.GetConfig(vo.ConfigParam{DataId: id, Group: "DEFAULT_GROUP"}); err != nil || got != "" {
		return 0, "", fmt.Errorf("get in public: %q %v", got, err)
	}
	return -1, "isolated by tenant", nil
}
