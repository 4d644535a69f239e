package browser_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/nacosd/nacosd/internal/buildinfo"
	"github.com/nacosd/nacosd/server/servertest"
)

// frontDoors are the addresses a user types or the README gives: the
// console from its bare URL, no #/route.
var frontDoors = []string{"/nacos/", "/nacos", "/nacos/index.html", "/nacos/#/", "/nacos/#"}

// visit loads u afresh (a full page load, not a hash change) and returns
// once the app has replaced the page's "Loading…".
func (b *browser) visit(u string) {
	b.t.Helper()
	b.run("visit "+u, chromedp.Navigate("about:blank"), chromedp.Navigate(u), chromedp.WaitReady("#app"))
}

// waitConfigsShown waits for the configs page, visible: its table or its
// empty note in <main>, the hash at #/configs.
func (b *browser) waitConfigsShown(what string) {
	b.t.Helper()
	b.waitJS(what+": the configs page", `(() => { const m = document.querySelector('main');
		return location.hash.startsWith('#/configs') && !!m && m.getClientRects().length > 0 && !m.closest('[hidden]') &&
			!!m.querySelector('table.grid, .empty') && m.innerText.includes('Configs'); })()`)
}

// TestBrowserFrontDoor: the bare URLs show the console, with auth off, with
// auth on before a login (the login page, then the configs) and after one.
// They showed an empty page: App navigated during its render, before its
// hashchange listener existed.
func TestBrowserFrontDoor(t *testing.T) {
	t.Run("auth off", func(t *testing.T) {
		cfg := servertest.Config(t)
		cfg.Build = buildinfo.Info{Version: "v0.0.0-20261206031000-0123456789ab", Revision: "0123456789abcdef0123456789abcdef01234567",
			Time: time.Date(2026, 12, 6, 3, 10, 0, 0, time.UTC), GoVersion: "go1.26.8"}
		n := servertest.Start(t, cfg)
		b := newBrowser(t, consoleBase(n))
		for round := 0; round < 2; round++ {
			for _, p := range frontDoors {
				b.visit(n.URL(p))
				b.waitConfigsShown(p)
			}
		}
		// the About box names the build
		b.clickButton("About")
		b.waitText("dialog[open] [data-testid=about]", "0123456789abcdef0123456789abcdef01234567")
		b.waitText("dialog[open] [data-testid=about]", "v0.0.0-20261206031000-0123456789ab")
		b.waitText("dialog[open] [data-testid=about]", "2026-12-06T03:10:00Z")
		b.clickIn("dialog[open]", "Close")
	})
	t.Run("auth on", func(t *testing.T) {
		n := startAuthNode(t)
		admin := api{n, login(t, n, "nacos", "nacos")}
		mustOK(t, admin.do("POST", "/v1/cs/configs", nil, url.Values{"dataId": {"front.yaml"}, "group": {"G"}, "content": {"a: 1"}}), "publish")
		b := newBrowser(t, consoleBase(n))
		for _, p := range frontDoors {
			b.visit(n.URL(p))
			b.eval(`(() => { localStorage.removeItem('token'); return true; })()`, nil)
			b.visit(n.URL(p)) // not logged in
			b.waitJS(p+": the login page", `location.hash.startsWith('#/login') && !!document.querySelector('input[name=username]') &&
				document.querySelector('input[name=username]').getClientRects().length > 0`)
			b.login("nacos", "nacos")
			b.waitConfigsShown(p + " after the login")
			b.waitText("table.grid", "front.yaml")
			b.visit(n.URL(p)) // logged in
			b.waitConfigsShown(p + " logged in")
			b.waitText("table.grid", "front.yaml")
		}
	})
}

// TestBrowserNamespaceLinks: links carry the namespace both ways. A link
// copied in one namespace opens there for a reader whose console was in
// another (it said "does not exist"); a link to public opens public; the
// API's tenant= and the Java 1.4.8 console's own routes work as links too.
func TestBrowserNamespaceLinks(t *testing.T) {
	n := startNode(t)
	a := api{n, ""}
	mustOK(t, a.do("POST", "/v1/console/namespaces", nil, url.Values{"customNamespaceId": {"dev"}, "namespaceName": {"Development"}}), "namespace dev")
	mustOK(t, a.do("POST", "/v1/cs/configs", nil, url.Values{"dataId": {"dev.yaml"}, "group": {"DEFAULT_GROUP"}, "tenant": {"dev"}, "content": {"env: dev"}}), "dev.yaml")
	mustOK(t, a.do("POST", "/v1/cs/configs", nil, url.Values{"dataId": {"pub.yaml"}, "group": {"DEFAULT_GROUP"}, "content": {"env: public"}}), "pub.yaml")
	mustOK(t, a.do("POST", "/v1/ns/instance", url.Values{"serviceName": {"dev-svc"}, "ip": {"10.0.0.1"}, "port": {"80"}, "namespaceId": {"dev"}, "ephemeral": {"false"}}, nil), "dev-svc")

	// the sender works in dev: the address bar and every link say so
	sender := newBrowser(t, consoleBase(n))
	sender.open("#/configs")
	sender.setSelect("#namespace", "dev")
	sender.waitJS("the namespace in the address bar", `location.hash.includes('namespace=dev')`)
	sender.waitText("table.grid", "dev.yaml")
	sender.waitJS("links with the namespace", `[...document.querySelectorAll('table.grid a')].filter((a) => a.innerText === 'dev.yaml').every((a) => a.getAttribute('href').includes('namespace=dev'))`)
	sender.clickIn(`table.grid`, "dev.yaml")
	sender.waitText("main", "env: dev")
	var link string
	sender.eval(`location.href`, &link)
	if !strings.Contains(link, "namespace=dev") {
		t.Fatalf("detail link %s lacks the namespace", link)
	}

	// the reader's console is in public (a fresh browser): the link opens dev
	reader := newBrowser(t, consoleBase(n))
	reader.visit(link)
	reader.waitText("main", "env: dev")
	reader.waitJS("the switcher on dev", `document.querySelector('#namespace').value === 'dev'`)
	// and the namespace stays for the next page, as the switcher says
	reader.route("#/configs")
	reader.waitText("table.grid", "dev.yaml")

	// back: a link to public opens public though the reader is now in dev
	reader.visit(n.URL("/nacos/#/configs/detail?dataId=pub.yaml&group=DEFAULT_GROUP&namespace="))
	reader.waitText("main", "env: public")
	reader.waitJS("the switcher on public", `document.querySelector('#namespace').value === ''`)

	// tenant= as the API names it
	reader.visit(n.URL("/nacos/#/configs/edit?dataId=dev.yaml&group=DEFAULT_GROUP&tenant=dev"))
	reader.waitJS("the editor with dev.yaml", `!!document.querySelector('.cm-content') && document.querySelector('.cm-content').innerText.includes('env: dev')`)

	// a Java 1.4.8 console link (a bookmark, a wiki page)
	reader.visit(n.URL("/nacos/#/configeditor?serverId=center&dataId=dev.yaml&group=DEFAULT_GROUP&namespace=dev&edasAppName=&edasAppId=&searchDataId=&searchGroup="))
	reader.waitJS("the Java link in the editor", `location.hash.startsWith('#/configs/edit?') && location.hash.includes('namespace=dev') &&
		!!document.querySelector('.cm-content') && document.querySelector('.cm-content').innerText.includes('env: dev')`)
	reader.visit(n.URL("/nacos/#/historyRollback?historyServerId=center&historyDataId=dev.yaml&historyGroup=DEFAULT_GROUP&namespace=dev"))
	reader.waitJS("the Java history link", `location.hash.startsWith('#/history?') && location.hash.includes('dataId=dev.yaml')`)
	reader.waitText("table.grid", "created")

	// a service of dev, linked from public
	reader.visit(n.URL("/nacos/#/configs?namespace="))
	reader.waitText("table.grid", "pub.yaml")
	reader.visit(n.URL("/nacos/#/services/detail?name=dev-svc&group=DEFAULT_GROUP&namespace=dev"))
	reader.waitText("main", "10.0.0.1")
}
