package conformance

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/model"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
)

// SDKGo2 runs nacos-sdk-go v2 (gRPC to the HTTP port + 1000) scenarios in
// process, rows "sdkgo2/…". Each scenario closes its clients.
type SDKGo2 struct {
	// WorkDir receives the clients' caches and logs.
	WorkDir string
	// RunID makes service names and data ids unique per suite run.
	RunID string
	// Username and Password log the clients in (the auth scenarios).
	Username, Password string

	mu      sync.Mutex
	closers []func()
}

func (g *SDKGo2) params(s *Server, ns, role string) vo.NacosClientParam {
	dir := filepath.Join(g.WorkDir, "sdkgo2-"+s.Name+"-"+ns+"-"+role)
	cc := constant.ClientConfig{TimeoutMs: 10000, NotLoadCacheAtStart: true, LogDir: dir + "/log", CacheDir: dir + "/cache",
		LogLevel: "warn", NamespaceId: ns, Username: g.Username, Password: g.Password, DisableUseSnapShot: true,
		UpdateCacheWhenEmpty: true} // else the SDK ignores a pushed empty list
	var sc []constant.ServerConfig
	for _, port := range s.Ports() {
		sc = append(sc, constant.ServerConfig{IpAddr: "127.0.0.1", Port: uint64(port), ContextPath: "/nacos"})
	}
	return vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc}
}

func (g *SDKGo2) naming(s *Server, ns, role string) (naming_client.INamingClient, error) {
	c, err := clients.NewNamingClient(g.params(s, ns, role))
	if err != nil {
		return nil, fmt.Errorf("naming client: %w", err)
	}
	g.onClose(c.CloseClient)
	return c, nil
}

func (g *SDKGo2) config(s *Server, ns, role string) (config_client.IConfigClient, error) {
	c, err := clients.NewConfigClient(g.params(s, ns, role))
	if err != nil {
		return nil, fmt.Errorf("config client: %w", err)
	}
	g.onClose(c.CloseClient)
	return c, nil
}

func (g *SDKGo2) onClose(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closers = append(g.closers, f)
}

func (g *SDKGo2) closeAll() {
	g.mu.Lock()
	cs := g.closers
	g.closers = nil
	g.mu.Unlock()
	for _, f := range cs {
		f()
	}
}

// Run runs the sdk-go v2 scenarios against s ("auth.*" ones only when
// auth is true) and adds the results.
func (g *SDKGo2) Run(s *Server, rs *Results, auth bool) {
	for _, sc := range g.scenarios() {
		if strings.HasPrefix(sc.name, "auth.") != auth {
			continue
		}
		d, detail, err := sc.run(s)
		g.closeAll()
		r := Result{Scenario: "sdkgo2/" + sc.name, Target: s.Name, OK: err == nil, Ms: d.Milliseconds(), Detail: detail}
		if d < 0 {
			r.Ms = -1
		}
		if err != nil {
			r.Ms, r.Detail = -1, err.Error()
		}
		rs.Add(r)
	}
}

func (g *SDKGo2) svc(base string) string { return "sdkgo2." + base + "." + g.RunID }

func (g *SDKGo2) scenarios() []sdkScenario {
	return []sdkScenario{
		{"naming.register", g.register},
		{"naming.select", g.selectHealthy},
		{"naming.service.list", g.serviceList},
		{"naming.subscribe.push", g.subscribePush},
		{"naming.connection.close", g.connectionClose},
		{"config.publish.get", g.publishGet},
		{"config.listen.push", g.listen},
		{"config.remove", g.remove},
		{"config.namespace", g.configNamespace},
		{"auth.naming.config", g.authOK},
	}
}

func instancesString(l []model.Instance) string {
	var out []string
	for _, i := range l {
		out = append(out, fmt.Sprintf("%s:%d healthy=%v enabled=%v w=%g", i.Ip, i.Port, i.Healthy, i.Enable, i.Weight))
	}
	slices.Sort(out)
	return "[" + strings.Join(out, " ") + "]"
}

func hasPort(l []model.Instance, port uint64) bool {
	return slices.ContainsFunc(l, func(i model.Instance) bool { return i.Port == port })
}

func (g *SDKGo2) register(s *Server) (time.Duration, string, error) {
	c, err := g.naming(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	svc := g.svc("reg")
	start := time.Now()
	p := regParam2(svc, "G2", 19101, map[string]string{"v": "1", "zh": "中文"})
	p.Weight, p.ClusterName = 2.5, "c1"
	ok, err := c.RegisterInstance(p)
	if err != nil || !ok {
		return 0, "", fmt.Errorf("register: %v %v", ok, err)
	}
	d := time.Since(start)
	if _, err := eventually(5*time.Second, func() error {
		l, err := c.SelectAllInstances(vo.SelectAllInstancesParam{ServiceName: svc, GroupName: "G2"})
		if err != nil {
			return err
		}
		if len(l) != 1 || l[0].Port != 19101 || l[0].Metadata["zh"] != "中文" || l[0].Weight != 2.5 || l[0].ClusterName != "c1" || !l[0].Healthy {
			return fmt.Errorf("instances %s", instancesString(l))
		}
		return nil
	}); err != nil {
		return 0, "", err
	}
	// another member of a cluster lists it after the Distro sync
	if _, err := eventually(5*time.Second, func() error {
		if ok, err := listedOn(s.members()[0], "G2@@"+svc, "127.0.0.1:19101"); err != nil || !ok {
			return fmt.Errorf("not listed (%v)", err)
		}
		return nil
	}); err != nil {
		return 0, "", fmt.Errorf("the 1.x API does not list it (%v)", err)
	}
	ok, err = c.DeregisterInstance(vo.DeregisterInstanceParam{Ip: "127.0.0.1", Port: 19101, ServiceName: svc, GroupName: "G2", Cluster: "c1", Ephemeral: true})
	if err != nil || !ok {
		return 0, "", fmt.Errorf("deregister: %v %v", ok, err)
	}
	_, err = eventually(5*time.Second, func() error {
		l, err := c.SelectAllInstances(vo.SelectAllInstancesParam{ServiceName: svc, GroupName: "G2"})
		if err != nil && !strings.Contains(err.Error(), "instance list is empty") {
			return err
		}
		if len(l) != 0 {
			return fmt.Errorf("after deregister %s", instancesString(l))
		}
		return nil
	})
	return d, "register call", err
}

func (g *SDKGo2) selectHealthy(s *Server) (time.Duration, string, error) {
	svc := g.svc("sel")
	// one client per instance: a 2.x connection holds one instance per service
	var c naming_client.INamingClient
	for i, p := range []uint64{19102, 19103, 19104} {
		n, err := g.naming(s, "", fmt.Sprint("sel", i))
		if err != nil {
			return 0, "", err
		}
		rp := regParam2(svc, "G2", p, nil)
		if p == 19104 {
			rp.Weight = 0
		}
		if ok, err := n.RegisterInstance(rp); err != nil || !ok {
			return 0, "", fmt.Errorf("register %d: %v %v", p, ok, err)
		}
		c = n
	}
	d, err := eventually(5*time.Second, func() error {
		all, err := c.SelectAllInstances(vo.SelectAllInstancesParam{ServiceName: svc, GroupName: "G2"})
		if err != nil {
			return err
		}
		if len(all) != 3 {
			return fmt.Errorf("all %s", instancesString(all))
		}
		l, err := c.SelectInstances(vo.SelectInstancesParam{ServiceName: svc, GroupName: "G2", HealthyOnly: true})
		if err != nil {
			return err
		}
		if len(l) != 2 || hasPort(l, 19104) {
			return fmt.Errorf("healthy (weight > 0) %s", instancesString(l))
		}
		one, err := c.SelectOneHealthyInstance(vo.SelectOneHealthInstanceParam{ServiceName: svc, GroupName: "G2"})
		if err != nil {
			return err
		}
		if one.Port != 19102 && one.Port != 19103 {
			return fmt.Errorf("one %v", one)
		}
		return nil
	})
	return d, "until three listed and selected", err
}

func (g *SDKGo2) serviceList(s *Server) (time.Duration, string, error) {
	c, err := g.naming(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	svc, grp := g.svc("list"), "SL2"+g.RunID
	if ok, err := c.RegisterInstance(regParam2(svc, grp, 19105, nil)); err != nil || !ok {
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

func subscribe2(c naming_client.INamingClient, svc, group string) (chan []model.Instance, error) {
	ch := make(chan []model.Instance, 64)
	err := c.Subscribe(&vo.SubscribeParam{ServiceName: svc, GroupName: group, SubscribeCallback: func(l []model.Instance, err error) {
		if err == nil {
			select {
			case ch <- l:
			default:
			}
		}
	}})
	return ch, err
}

func await2(ch chan []model.Instance, timeout time.Duration, want func([]model.Instance) bool) bool {
	t := time.After(timeout)
	for {
		select {
		case l := <-ch:
			if want(l) {
				return true
			}
		case <-t:
			return false
		}
	}
}

func (g *SDKGo2) subscribePush(s *Server) (time.Duration, string, error) {
	sub, err := g.naming(s, "", "subscriber")
	if err != nil {
		return 0, "", err
	}
	reg, err := g.naming(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	svc := g.svc("push")
	ch, err := subscribe2(sub, svc, "G2")
	if err != nil {
		return 0, "", err
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	if ok, err := reg.RegisterInstance(regParam2(svc, "G2", 19106, nil)); err != nil || !ok {
		return 0, "", fmt.Errorf("register: %v %v", ok, err)
	}
	if !await2(ch, 5*time.Second, func(l []model.Instance) bool { return hasPort(l, 19106) }) {
		return 0, "", errors.New("no callback with the new instance within 5 s")
	}
	d := time.Since(start)
	t1 := time.Now()
	if ok, err := reg.DeregisterInstance(vo.DeregisterInstanceParam{Ip: "127.0.0.1", Port: 19106, ServiceName: svc, GroupName: "G2", Ephemeral: true}); err != nil || !ok {
		return 0, "", fmt.Errorf("deregister: %v %v", ok, err)
	}
	if !await2(ch, 5*time.Second, func(l []model.Instance) bool { return !hasPort(l, 19106) }) {
		return 0, "", errors.New("no callback without the removed instance within 5 s")
	}
	return d, fmt.Sprintf("register→callback %d ms, deregister→callback %d ms", d.Milliseconds(), time.Since(t1).Milliseconds()), nil
}

// connectionClose: a client that closes without deregistering loses its
// instances with its connection.
func (g *SDKGo2) connectionClose(s *Server) (time.Duration, string, error) {
	sub, err := g.naming(s, "", "subscriber")
	if err != nil {
		return 0, "", err
	}
	svc := g.svc("close")
	ch, err := subscribe2(sub, svc, "G2")
	if err != nil {
		return 0, "", err
	}
	reg, err := clients.NewNamingClient(g.params(s, "", "closing"))
	if err != nil {
		return 0, "", err
	}
	if ok, err := reg.RegisterInstance(regParam2(svc, "G2", 19107, nil)); err != nil || !ok {
		reg.CloseClient()
		return 0, "", fmt.Errorf("register: %v %v", ok, err)
	}
	if !await2(ch, 10*time.Second, func(l []model.Instance) bool { return hasPort(l, 19107) }) {
		reg.CloseClient()
		return 0, "", errors.New("the instance was never pushed")
	}
	start := time.Now()
	reg.CloseClient()
	if !await2(ch, 20*time.Second, func(l []model.Instance) bool { return !hasPort(l, 19107) }) {
		return 0, "", errors.New("the closed client's instance still listed after 20 s")
	}
	return time.Since(start), "CloseClient until the subscriber's callback without it", nil
}

func (g *SDKGo2) publishGet(s *Server) (time.Duration, string, error) {
	c, err := g.config(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo2.pg." + g.RunID
	content := "k=v\nname=测试😀"
	start := time.Now()
	ok, err := c.PublishConfig(vo.ConfigParam{DataId: id, Group: "G2", Content: content, Type: "properties"})
	if err != nil || !ok {
		return 0, "", fmt.Errorf("publish: %v %v", ok, err)
	}
	pub := time.Since(start)
	if _, err := readable2(c, id, "G2", content); err != nil {
		return 0, "", err
	}
	if got, _ := c.GetConfig(vo.ConfigParam{DataId: "absent." + g.RunID, Group: "G2"}); got != "" {
		return 0, "", fmt.Errorf("absent config read %q", got)
	}
	return time.Since(start), fmt.Sprintf("publish %d ms", pub.Milliseconds()), nil
}

func (g *SDKGo2) listen(s *Server) (time.Duration, string, error) {
	c, err := g.config(s, "", "listener")
	if err != nil {
		return 0, "", err
	}
	p, err := g.config(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo2.lis." + g.RunID
	if ok, err := p.PublishConfig(vo.ConfigParam{DataId: id, Group: "G2", Content: "v0"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish v0: %v %v", ok, err)
	}
	if _, err := readable2(c, id, "G2", "v0"); err != nil {
		return 0, "", err
	}
	ch := make(chan string, 16)
	if err := c.ListenConfig(vo.ConfigParam{DataId: id, Group: "G2", OnChange: func(_, _, _, data string) {
		select {
		case ch <- data:
		default:
		}
	}}); err != nil {
		return 0, "", err
	}
	// the SDK sends its listen requests from a 5 s loop: let the first
	// one reach the server, so that what follows measures the push
	time.Sleep(5500 * time.Millisecond)
	start := time.Now()
	if ok, err := p.PublishConfig(vo.ConfigParam{DataId: id, Group: "G2", Content: "v1"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish v1: %v %v", ok, err)
	}
	timeout := time.After(15 * time.Second)
	for {
		select {
		case data := <-ch:
			if data != "v1" {
				continue
			}
			d := time.Since(start)
			if d > 5*time.Second {
				return d, "", fmt.Errorf("listener told after %s (not pushed?)", d)
			}
			return d, "publish to OnChange", nil
		case <-timeout:
			return 0, "", errors.New("no OnChange with v1 within 15 s")
		}
	}
}

func (g *SDKGo2) remove(s *Server) (time.Duration, string, error) {
	c, err := g.config(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo2.rm." + g.RunID
	if ok, err := c.PublishConfig(vo.ConfigParam{DataId: id, Group: "G2", Content: "x"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish: %v %v", ok, err)
	}
	if _, err := readable2(c, id, "G2", "x"); err != nil {
		return 0, "", err
	}
	start := time.Now()
	if ok, err := c.DeleteConfig(vo.ConfigParam{DataId: id, Group: "G2"}); err != nil || !ok {
		return 0, "", fmt.Errorf("delete: %v %v", ok, err)
	}
	if _, err := readable2(c, id, "G2", ""); err != nil {
		return 0, "", fmt.Errorf("get after delete: %w", err)
	}
	return time.Since(start), "delete until gone", nil
}

func (g *SDKGo2) configNamespace(s *Server) (time.Duration, string, error) {
	ns, err := g.config(s, "sdkgo2-ns-"+g.RunID, "main")
	if err != nil {
		return 0, "", err
	}
	pub, err := g.config(s, "", "main")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo2.ns." + g.RunID
	if ok, err := ns.PublishConfig(vo.ConfigParam{DataId: id, Group: "G2", Content: "in-ns"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish: %v %v", ok, err)
	}
	if _, err := readable2(ns, id, "G2", "in-ns"); err != nil {
		return 0, "", fmt.Errorf("get in ns: %w", err)
	}
	if got, err := pub.GetConfig(vo.ConfigParam{DataId: id, Group: "G2"}); got != "" {
		return 0, "", fmt.Errorf("get in public: %q %v", got, err)
	}
	return -1, "isolated by tenant", nil
}

// authOK: with auth on, a logged-in client registers, is pushed its
// instance, publishes and reads a config.
func (g *SDKGo2) authOK(s *Server) (time.Duration, string, error) {
	if g.Username == "" {
		return 0, "", errors.New("no username")
	}
	c, err := g.naming(s, "", "auth")
	if err != nil {
		return 0, "", err
	}
	svc := g.svc("auth")
	ch, err := subscribe2(c, svc, "G2")
	if err != nil {
		return 0, "", err
	}
	if ok, err := c.RegisterInstance(regParam2(svc, "G2", 19108, nil)); err != nil || !ok {
		return 0, "", fmt.Errorf("register: %v %v", ok, err)
	}
	if !await2(ch, 10*time.Second, func(l []model.Instance) bool { return hasPort(l, 19108) }) {
		return 0, "", errors.New("no push of the registered instance")
	}
	cc, err := g.config(s, "", "auth")
	if err != nil {
		return 0, "", err
	}
	id := "sdkgo2.auth." + g.RunID
	if ok, err := cc.PublishConfig(vo.ConfigParam{DataId: id, Group: "G2", Content: "s"}); err != nil || !ok {
		return 0, "", fmt.Errorf("publish: %v %v", ok, err)
	}
	if _, err := readable2(cc, id, "G2", "s"); err != nil {
		return 0, "", err
	}
	return -1, "logged in as " + g.Username, nil
}

func regParam2(svc, group string, port uint64, md map[string]string) vo.RegisterInstanceParam {
	return vo.RegisterInstanceParam{Ip: "127.0.0.1", Port: port, ServiceName: svc, GroupName: group, Weight: 1,
		Enable: true, Healthy: true, Ephemeral: true, Metadata: md}
}

// readable2 reads (id, group) every 10 ms until it equals want ("" is
// absent) and returns how long that took.
func readable2(c config_client.IConfigClient, id, group, want string) (time.Duration, error) {
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
