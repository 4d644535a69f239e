package browser_test

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacos-group/nacos-sdk-go/clients"
	"github.com/nacos-group/nacos-sdk-go/clients/config_client"
	"github.com/nacos-group/nacos-sdk-go/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/common/constant"
	"github.com/nacos-group/nacos-sdk-go/model"
	"github.com/nacos-group/nacos-sdk-go/util"
	"github.com/nacos-group/nacos-sdk-go/vo"

	"github.com/nacosd/nacosd/server/servertest"
)

// TestBrowserInstanceOffline takes an instance offline in the service page
// and sees a subscribed nacos-sdk-go client get the change; an instance
// registered meanwhile appears on the open page without a reload.
func TestBrowserInstanceOffline(t *testing.T) {
	n := startNode(t)
	b := newBrowser(t, consoleBase(n))
	c := sdkClient(t, n)
	for _, port := range []uint64{8001, 8002} {
		ok, err := c.RegisterInstance(vo.RegisterInstanceParam{Ip: "127.0.0.1", Port: port, ServiceName: "orders", Weight: 1,
			Enable: true, Healthy: true, Ephemeral: true, Metadata: map[string]string{"zone": "a"}})
		if err != nil || !ok {
			t.Fatalf("register: %v %v", ok, err)
		}
	}
	var mu sync.Mutex
	var last []model.SubscribeService
	err := c.Subscribe(&vo.SubscribeParam{ServiceName: "orders", SubscribeCallback: func(s []model.SubscribeService, err error) {
		mu.Lock()
		last = s
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	ports := func() string {
		mu.Lock()
		defer mu.Unlock()
		var p []string
		for _, s := range last {
			if s.Enable {
				p = append(p, strconv.FormatUint(s.Port, 10))
			}
		}
		return strings.Join(p, ",")
	}
	servertest.Eventually(t, 10*time.Second, func() error {
		if p := ports(); p != "8001,8002" && p != "8002,8001" {
			return fmt.Errorf("subscriber sees %q", p)
		}
		return nil
	})

	b.open("#/services")
	b.waitText("[data-testid=services]", "orders")
	b.shot("services")
	b.route("#/services/detail?name=orders&group=DEFAULT_GROUP")
	b.waitText("[data-testid=instances-DEFAULT]", "8002")
	b.waitJS("the live stream", `!!document.querySelector('main .live') && document.querySelector('main .live').innerText.trim() === '● live'`)
	b.clickIn(`tr[data-instance="127.0.0.1:8002"]`, "Take offline")
	servertest.Eventually(t, 10*time.Second, func() error {
		if p := ports(); p != "8001" {
			return fmt.Errorf("subscriber sees %q, want only 8001", p)
		}
		return nil
	})
	b.waitText(`tr[data-instance="127.0.0.1:8002"]`, "offline")

	// live: a registration shows up on the open page by itself
	mustOK(t, n.Do("POST", "/nacos/v1/ns/instance", nil, url.Values{"serviceName": {"orders"}, "ip": {"127.0.0.1"}, "port": {"8003"}}, nil), "register 8003")
	b.waitText("[data-testid=instances-DEFAULT]", "8003")
	b.shot("service-detail")

	// edit weight and metadata
	b.clickIn(`tr[data-instance="127.0.0.1:8001"]`, "Edit")
	b.waitJS("the instance dialog", `!!document.querySelector('dialog[open] input[name=weight]')`)
	b.eval(`(() => { const e = document.querySelector('dialog[open] input[name=weight]'); e.select(); return true; })()`, nil)
	b.typeInto(`dialog[open] input[name=weight]`, "3")
	b.typeInto(`dialog[open] textarea[name=metadata]`, "\nversion=2")
	b.clickIn("dialog[open]", "Save")
	servertest.Eventually(t, 10*time.Second, func() error {
		r := n.Do("GET", "/nacos/v1/ns/instance", url.Values{"serviceName": {"orders"}, "ip": {"127.0.0.1"}, "port": {"8001"}}, nil, nil)
		if !strings.Contains(r.Body, `"weight":3.0`) || !strings.Contains(r.Body, `"version":"2"`) {
			return fmt.Errorf("instance: %s", r.Body)
		}
		return nil
	})

	b.route("#/services/detail?name=orders&group=DEFAULT_GROUP&tab=subscribers")
	b.waitJS("the subscribers", `!!document.querySelector('[data-testid=subscribers] tbody tr')`)
	b.shot("service-subscribers")
}

// TestBrowserServiceEdit creates a service in the console, edits its
// protect threshold, metadata and selector and its cluster's health check,
// and deletes it after a confirmation.
func TestBrowserServiceEdit(t *testing.T) {
	n := startNode(t)
	a := api{n, ""}
	b := newBrowser(t, consoleBase(n))
	b.open("#/services")
	b.clickButton("New service")
	b.typeInto(`dialog[open] input[name=serviceName]`, "inventory")
	b.typeInto(`dialog[open] textarea[name=metadata]`, "team=stock")
	b.clickIn("dialog[open]", "Create")
	b.waitText("[data-testid=services]", "inventory")
	mustOK(t, a.do("POST", "/v1/ns/instance", nil, url.Values{"serviceName": {"inventory"}, "ip": {"127.0.0.1"}, "port": {"7001"}, "ephemeral": {"false"}}), "register")

	b.route("#/services/detail?name=inventory&group=DEFAULT_GROUP")
	b.waitText("main", "team=stock")
	b.clickButton("Edit service")
	b.setInput(`dialog[open] input[name=protectThreshold]`, "0.5")
	b.setSelect("dialog[open] select[name=selector]", "label")
	b.typeInto(`dialog[open] input[name=expression]`, "CONSUMER.label.zone = PROVIDER.label.zone")
	b.clickIn("dialog[open]", "Save")
	servertest.Eventually(t, 5*time.Second, func() error {
		r := a.do("GET", "/v1/ns/service", url.Values{"serviceName": {"inventory"}}, nil)
		if !strings.Contains(r.Body, `"protectThreshold":0.5`) || !strings.Contains(r.Body, `"team":"stock"`) || !strings.Contains(r.Body, `CONSUMER.label.zone`) {
			return fmt.Errorf("service: %s", r.Body)
		}
		return nil
	})
	b.waitText("main", "0.5")

	b.waitText("[data-testid=instances-DEFAULT]", "7001")
	b.clickIn(`[data-cluster=DEFAULT]`, "Health check…")
	b.setSelect("dialog[open] select[name=type]", "HTTP")
	b.typeInto(`dialog[open] input[name=path]`, "/health")
	b.shot("service-cluster-edit")
	b.clickIn("dialog[open]", "Save")
	servertest.Eventually(t, 5*time.Second, func() error {
		r := a.do("GET", "/v1/ns/catalog/service", url.Values{"serviceName": {"inventory"}}, nil)
		if !strings.Contains(r.Body, `"type":"HTTP"`) || !strings.Contains(r.Body, `"path":"/health"`) {
			return fmt.Errorf("cluster: %s", r.Body)
		}
		return nil
	})
	b.waitText("[data-cluster=DEFAULT]", "HTTP /health")

	b.route("#/services")
	b.waitText("[data-testid=services]", "inventory")
	b.clickIn(`[data-testid=services] tbody tr:has(a[href*="name=inventory"])`, "Delete")
	b.waitText("dialog[open]", "still has 1 instances")
	b.clickIn("dialog[open]", "Delete")
	servertest.Eventually(t, 5*time.Second, func() error {
		if r := a.do("GET", "/v1/ns/service", url.Values{"serviceName": {"inventory"}}, nil); r.Status == 200 {
			return fmt.Errorf("still there: %s", r.Body)
		}
		return nil
	})
	b.waitJS("the row gone", `!document.querySelector('[data-testid=services]').innerText.includes('inventory')`)
}

// TestBrowserServicePaging searches and pages through 1 000 services.
func TestBrowserServicePaging(t *testing.T) {
	n := startNode(t)
	registerServices(t, n, 1000, 8)
	b := newBrowser(t, consoleBase(n))
	b.open("#/services")
	b.waitText(".pager", "1000 total")
	b.waitText(".pager", "Page 1 of 50")
	b.clickButton("›")
	b.waitText(".pager", "Page 2 of 50")
	b.waitText("[data-testid=services]", "svc-0020")
	b.setSelect(".pager select", "100")
	b.waitText(".pager", "Page 1 of 10")
	b.clickButton("»")
	b.waitText(".pager", "Page 10 of 10")
	b.waitText("[data-testid=services]", "svc-0999")
	// search
	b.typeInto(`input[name=name]`, "svc-09")
	b.clickButton("Search")
	b.waitText(".pager", "100 total")
	b.waitJS("only matches", `[...document.querySelectorAll('[data-testid=services] tbody tr td:first-child')].every((td) => td.innerText.startsWith('svc-09'))`)
	var rows int
	b.eval(`document.querySelectorAll('[data-testid=services] tbody tr').length`, &rows)
	if rows != 100 {
		t.Fatalf("rows on the page: %d", rows)
	}
	// hide empty services: only the ones with instances stay
	b.setInput(`input[name=name]`, "")
	b.check(`input[name=hideEmpty]`)
	b.clickButton("Search")
	b.waitText(".pager", "10 total")
}

// registerServices registers count services svc-0000.. over HTTP, one
// instance in every hundredth so "hide empty" has something to hide.
func registerServices(t testing.TB, n *servertest.Node, count, workers int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				name := fmt.Sprintf("svc-%04d", i)
				var r servertest.Response
				if i%100 == 0 {
					r = n.Do("POST", "/nacos/v1/ns/instance", nil, url.Values{"serviceName": {name}, "ip": {"10.0.0.1"}, "port": {"80"}}, nil)
				} else {
					r = n.Do("POST", "/nacos/v1/ns/service", nil, url.Values{"serviceName": {name}}, nil)
				}
				if r.Status != 200 {
					select {
					case errs <- fmt.Errorf("%s: %d %s", name, r.Status, r.Body):
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < count; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

var sdkFilterOnce sync.Once

// sdkClient is a real nacos-sdk-go v1 naming client on loopback.
func sdkClient(t *testing.T, n *servertest.Node) naming_client.INamingClient {
	t.Helper()
	sdkFilterOnce.Do(func() {
		if err := util.SetFilterNetNumberAndMask("0.0.0.0/0"); err != nil {
			t.Fatal(err)
		}
	})
	host, portS, _ := net.SplitHostPort(n.HTTPAddr())
	port, _ := strconv.ParseUint(portS, 10, 64)
	dir := t.TempDir()
	cc := constant.ClientConfig{TimeoutMs: 5000, NotLoadCacheAtStart: true, LogDir: dir + "/log", CacheDir: dir + "/cache",
		LogLevel: "warn", UpdateCacheWhenEmpty: true}
	sc := []constant.ServerConfig{{IpAddr: host, Port: port, ContextPath: "/nacos"}}
	c, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sdkConfigClient is a real nacos-sdk-go v1 config client on loopback.
func sdkConfigClient(t *testing.T, n *servertest.Node) config_client.IConfigClient {
	t.Helper()
	host, portS, _ := net.SplitHostPort(n.HTTPAddr())
	port, _ := strconv.ParseUint(portS, 10, 64)
	dir := t.TempDir()
	cc := constant.ClientConfig{TimeoutMs: 5000, NotLoadCacheAtStart: true, LogDir: dir + "/log", CacheDir: dir + "/cache", LogLevel: "warn"}
	sc := []constant.ServerConfig{{IpAddr: host, Port: port, ContextPath: "/nacos"}}
	c, err := clients.NewConfigClient(vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
