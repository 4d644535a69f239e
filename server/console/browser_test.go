package console_test

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
	"github.com/nacos-group/nacos-sdk-go/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/common/constant"
	"github.com/nacos-group/nacos-sdk-go/model"
	"github.com/nacos-group/nacos-sdk-go/util"
	"github.com/nacos-group/nacos-sdk-go/vo"

	"github.com/nacosd/nacosd/server/servertest"
)

// startNode starts nacosd for a browser test; instances never expire (the
// beat sweep is pushed out) so registrations made over HTTP stay put.
func startNode(t *testing.T) *servertest.Node {
	cfg := servertest.Config(t)
	cfg.Naming.BeatCheckInterval = time.Hour
	cfg.Naming.EmptyServiceCleanInitial = time.Hour
	return servertest.Start(t, cfg)
}

func consoleBase(n *servertest.Node) string { return n.URL("/nacos/") }

func mustOK(t *testing.T, r servertest.Response, what string) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", what, r.Status, r.Body)
	}
}

func getConfig(t *testing.T, n *servertest.Node, dataID, group string) (int, string) {
	r := n.Do("GET", "/nacos/v1/cs/configs", url.Values{"dataId": {dataID}, "group": {group}}, nil, nil)
	return r.Status, r.Body
}

// TestBrowserConfigs logs in, publishes a config through the editor (seeing
// the diff first), is stopped by invalid YAML, edits it (diff of old and
// new), and rolls it back from the history.
func TestBrowserConfigs(t *testing.T) {
	n := startNode(t)
	b := newBrowser(t, consoleBase(n))

	// login: the token is kept as the Java console keeps it
	b.open("#/login")
	b.shot("login")
	b.typeInto(`input[name=username]`, "nacos")
	b.typeInto(`input[name=password]`, "wrong")
	b.clickButton("Log in")
	b.waitText(".login", "Wrong user name or password")
	b.eval(`(() => { document.querySelector('input[name=password]').select(); return true; })()`, nil)
	b.typeInto(`input[name=password]`, "nacos")
	b.clickButton("Log in")
	b.waitJS("the configs page", `location.hash.startsWith('#/configs') && !!document.querySelector('table.grid')`)
	var tok string
	b.eval(`JSON.parse(localStorage.getItem('token')).accessToken`, &tok)
	if !strings.HasPrefix(tok, "eyJhbGciOiJIUzI1NiJ9.") {
		t.Fatalf("token in localStorage: %q", tok)
	}

	// a new config through the editor: the diff comes before the publish
	b.route("#/configs/edit?new=1")
	b.waitJS("the editor", `!!document.querySelector('.cm-content')`)
	b.typeInto(`input[name=dataId]`, "app.yaml")
	b.eval(`(() => { document.querySelector('input[name=type][value=yaml]').click(); return true; })()`, nil)
	b.setEditor("port: 8080\nname: demo")
	b.shot("config-edit")
	// invalid YAML is refused before any diff or publish
	b.setEditor("a: [1, 2")
	b.clickButton("Publish…")
	b.waitText(".editform", "YAML:")
	if st, _ := getConfig(t, n, "app.yaml", "DEFAULT_GROUP"); st != 404 {
		t.Fatalf("invalid YAML was published: %d", st)
	}
	b.setEditor("port: 8080\nname: demo")
	b.clickButton("Publish…")
	b.waitJS("the diff", `!!document.querySelector('dialog[open] [data-testid=diff] .cm-mergeView')`)
	b.waitText("dialog[open]", "name: demo")
	b.shot("config-publish-diff")
	b.run("confirm", clickSel("#confirm-publish"))
	servertest.Eventually(t, 5*time.Second, func() error {
		st, body := getConfig(t, n, "app.yaml", "DEFAULT_GROUP")
		if st != 200 || body != "port: 8080\nname: demo" {
			return fmt.Errorf("config: %d %q", st, body)
		}
		return nil
	})

	// edit: the diff shows the old and the new line
	b.waitJS("the edit page", `location.hash.includes('dataId=app.yaml') && !document.querySelector('dialog[open]')`)
	b.waitJS("the loaded content", `document.querySelector('.cm-content') && document.querySelector('.cm-content').innerText.includes('name: demo')`)
	b.setEditor("port: 9090\nname: demo")
	b.clickButton("Publish…")
	b.waitJS("the diff of the edit", `(() => { const d = document.querySelector('dialog[open] [data-testid=diff]');
		return !!d && d.innerText.includes('port: 8080') && d.innerText.includes('port: 9090') && !!d.querySelector('.cm-changedLine, .cm-changedText, .cm-deletedChunk'); })()`)
	b.run("confirm", clickSel("#confirm-publish"))
	servertest.Eventually(t, 5*time.Second, func() error {
		if _, body := getConfig(t, n, "app.yaml", "DEFAULT_GROUP"); body != "port: 9090\nname: demo" {
			return fmt.Errorf("config after edit: %q", body)
		}
		return nil
	})

	// the list and the detail with MD5 and the last modifier
	b.route("#/configs")
	b.waitText("table.grid", "app.yaml")
	b.shot("configs")
	b.route("#/configs/detail?dataId=app.yaml&group=DEFAULT_GROUP")
	b.waitJS("the md5", `!!document.querySelector('[data-testid=md5]') && document.querySelector('[data-testid=md5]').innerText.length === 32`)
	b.shot("config-detail")

	// history: roll back the update (its record holds the old content)
	b.route("#/history?dataId=app.yaml&group=DEFAULT_GROUP")
	b.waitText("table.grid", "updated")
	b.shot("history")
	b.clickIn("table.grid tbody tr:first-child", "Roll back")
	b.waitJS("the rollback diff", `(() => { const d = document.querySelector('dialog[open] [data-testid=diff]'); return !!d && d.innerText.includes('port: 8080'); })()`)
	b.shot("history-rollback")
	b.run("confirm rollback", clickSel("#confirm-publish"))
	servertest.Eventually(t, 5*time.Second, func() error {
		if _, body := getConfig(t, n, "app.yaml", "DEFAULT_GROUP"); body != "port: 8080\nname: demo" {
			return fmt.Errorf("config after rollback: %q", body)
		}
		return nil
	})
	b.waitText("table.grid", "updated")

	// delete with confirmation
	b.route("#/configs")
	b.waitText("table.grid", "app.yaml")
	b.clickIn("table.grid tbody tr:first-child", "Delete")
	b.waitText("dialog[open]", "Delete config app.yaml")
	b.clickIn("dialog[open]", "Delete")
	servertest.Eventually(t, 5*time.Second, func() error {
		if st, _ := getConfig(t, n, "app.yaml", "DEFAULT_GROUP"); st != 404 {
			return fmt.Errorf("still there: %d", st)
		}
		return nil
	})

	// an API error is shown as a message, not a blank page
	b.route("#/history?dataId=a%20b&group=G")
	b.waitJS("an error or an empty history", `!!document.querySelector('.alert.error, .empty, table.grid')`)
}

func clickSel(sel string) chromedpAction { return clickQuery(sel) }

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
	b.waitText("main", "live")
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
	b.eval(`(() => { document.querySelector('input[name=name]').value = ''; document.querySelector('input[name=name]').dispatchEvent(new Event('input', {bubbles: true})); return true; })()`, nil)
	b.eval(`(() => { document.querySelector('input[name=hideEmpty]').click(); return true; })()`, nil)
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
