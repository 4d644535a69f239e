package browser_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp/kb"
	"github.com/nacos-group/nacos-sdk-go/vo"

	"github.com/nacosd/nacosd/server/servertest"
)

// TestBrowserListeners: a real nacos-sdk-go config client listens to a
// config; the listener query finds it both ways, with its MD5 up to date,
// and still up to date after a publish the client receives.
func TestBrowserListeners(t *testing.T) {
	n := startNode(t)
	a := api{n, ""}
	mustOK(t, a.do("POST", "/v1/cs/configs", nil, url.Values{"dataId": {"feature.flags"}, "group": {"DEFAULT_GROUP"}, "content": {"dark=on"}}), "publish")
	c := sdkConfigClient(t, n)
	var mu sync.Mutex
	got := ""
	if err := c.ListenConfig(vo.ConfigParam{DataId: "feature.flags", Group: "DEFAULT_GROUP", OnChange: func(_, _, _, data string) {
		mu.Lock()
		got = data
		mu.Unlock()
	}}); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, consoleBase(n))
	b.open("#/listeners?by=config&dataId=feature.flags&group=DEFAULT_GROUP")
	b.waitText("[data-testid=listeners]", "127.0.0.1")
	b.waitText("[data-testid=listeners]", "up to date")
	b.shot("listeners-config")

	mustOK(t, a.do("POST", "/v1/cs/configs", nil, url.Values{"dataId": {"feature.flags"}, "group": {"DEFAULT_GROUP"}, "content": {"dark=off"}}), "publish")
	servertest.Eventually(t, 10*time.Second, func() error {
		mu.Lock()
		defer mu.Unlock()
		if got != "dark=off" {
			return fmt.Errorf("the client has %q", got)
		}
		return nil
	})
	// the page polls: the new MD5 shows up, the client holds it
	md5 := md5Hex("dark=off")
	b.waitText("[data-testid=listeners]", md5)
	b.waitText("[data-testid=listeners]", "up to date")

	b.clickButton("By client IP")
	b.typeInto(`input[name=ip]`, "127.0.0.1")
	b.clickButton("Query")
	b.waitText("[data-testid=listeners]", "feature.flags")
	b.waitText("[data-testid=listeners]", "up to date")
	b.shot("listeners-ip")
}

// TestBrowserAdmin, with auth on: namespaces (create, counts, edit,
// delete), users, roles and permissions; then the new user logs in, sees
// no access-control pages, is refused the public namespace with a message
// and works in the one granted. The cluster page shows this node.
func TestBrowserAdmin(t *testing.T) {
	n := startAuthNode(t)
	admin := api{n, login(t, n, "nacos", "nacos")}
	b := newBrowser(t, consoleBase(n))
	b.open("#/login")
	b.login("nacos", "nacos")
	b.waitJS("the configs page", `location.hash.startsWith('#/configs')`)

	// namespaces
	b.route("#/namespaces")
	b.waitText("[data-testid=namespaces]", "public")
	b.clickButton("New namespace")
	b.typeInto(`dialog[open] input[name=customNamespaceId]`, "staging")
	b.typeInto(`dialog[open] input[name=namespaceName]`, "Staging")
	b.typeInto(`dialog[open] textarea[name=namespaceDesc]`, "pre-production")
	b.clickIn("dialog[open]", "Create")
	b.waitText("[data-testid=namespaces]", "staging")
	for _, id := range []string{"a.properties", "b.properties"} {
		mustOK(t, admin.do("POST", "/v1/cs/configs", nil, url.Values{"dataId": {id}, "group": {"G"}, "tenant": {"staging"}, "content": {"x=1"}}), "publish")
	}
	b.clickButton("Refresh")
	b.waitJS("the config count", `[...document.querySelectorAll('[data-testid=namespaces] tbody tr')].some((r) => r.innerText.includes('staging') && r.cells[2].innerText.trim() === '2' && r.cells[3].innerText.trim() === '200')`)
	b.clickIn(`[data-testid=namespaces] tbody tr:has(code[data-id=staging])`, "Edit")
	b.waitJS("the namespace detail", `document.querySelector('dialog[open] textarea[name=namespaceDesc]') && document.querySelector('dialog[open] textarea[name=namespaceDesc]').value === 'pre-production'`)
	b.setInput(`dialog[open] input[name=namespaceName]`, "Staging EU")
	b.clickIn("dialog[open]", "Save")
	b.waitText("[data-testid=namespaces]", "Staging EU")
	b.shot("namespaces")
	// a throw-away namespace, deleted after the confirmation
	mustOK(t, admin.do("POST", "/v1/console/namespaces", nil, url.Values{"customNamespaceId": {"scratch"}, "namespaceName": {"Scratch"}}), "scratch")
	b.clickButton("Refresh")
	b.clickIn(`[data-testid=namespaces] tbody tr:has(code[data-id=scratch])`, "Delete")
	b.waitText("dialog[open]", "Delete namespace Scratch")
	b.clickIn("dialog[open]", "Delete")
	b.waitJS("scratch gone", `!document.querySelector('[data-testid=namespaces]').innerText.includes('scratch')`)
	// the switcher offers the new namespace on every page
	b.waitJS("the switcher", `[...document.querySelectorAll('#namespace option')].some((o) => o.value === 'staging')`)

	// users, roles, permissions
	b.route("#/users")
	b.waitText("[data-testid=users]", "nacos")
	b.clickButton("New user")
	b.typeInto(`dialog[open] input[name=username]`, "alice")
	b.typeInto(`dialog[open] input[name=password]`, "first-pass")
	b.typeInto(`dialog[open] input[name=again]`, "first-pass")
	b.clickIn("dialog[open]", "Save")
	b.waitText("[data-testid=users]", "alice")
	b.clickIn(`[data-testid=users] tbody tr:has(td[data-user=alice])`, "Change password")
	b.typeInto(`dialog[open] input[name=password]`, "alice-pass")
	b.typeInto(`dialog[open] input[name=again]`, "alice-pass")
	b.clickIn("dialog[open]", "Save")
	b.waitText(".toasts", "update user ok")
	b.shot("users")

	b.route("#/roles")
	b.clickButton("Bind role")
	b.typeInto(`dialog[open] input[name=role]`, "stagers")
	b.typeInto(`dialog[open] input[name=username]`, "ali")
	b.waitJS("the user suggestion", `[...document.querySelectorAll('dialog[open] datalist#suggest-username option')].some((o) => o.value === 'alice')`)
	b.typeInto(`dialog[open] input[name=username]`, "ce")
	b.clickIn("dialog[open]", "Save")
	b.waitText("[data-testid=roles]", "stagers")
	b.shot("roles")

	b.route("#/permissions")
	b.clickButton("Add permission")
	b.typeInto(`dialog[open] input[name=role]`, "stagers")
	b.setSelect(`dialog[open] select[name=resource]`, "staging")
	b.setSelect(`dialog[open] select[name=action]`, "rw")
	b.clickIn("dialog[open]", "Add")
	b.waitText("[data-testid=permissions]", "staging:*:*")
	b.shot("permissions")
	if r := admin.do("GET", "/v1/auth/permissions", url.Values{"role": {"stagers"}, "pageNo": {"1"}, "pageSize": {"10"}}, nil); !strings.Contains(r.Body, `"resource":"staging:*:*","action":"rw"`) {
		t.Fatalf("permissions: %s", r.Body)
	}

	// the cluster page
	b.route("#/cluster")
	b.waitText("[data-testid=nodes]", "Leader")
	b.waitText("[data-testid=nodes]", "UP")
	b.waitText("[data-testid=nodes]", "1.4.8")
	b.waitText("[data-testid=nodes]", "this node")
	b.shot("cluster")

	// live refresh works with auth on (the stream carries the token)
	b.route("#/services")
	b.waitJS("the live stream", `!!document.querySelector('main .live') && document.querySelector('main .live').innerText.trim() === '● live'`)

	// alice: no access control, public refused with the server's message,
	// staging works
	b.clickButton("Log out")
	b.login("alice", "alice-pass")
	b.waitJS("alice's console", `location.hash.startsWith('#/configs')`)
	b.waitJS("no access control", `!document.querySelector('nav.side').innerText.includes('Users')`)
	b.setSelect("#namespace", "")
	b.waitText("main .alert.error", "authorization failed!")
	b.setSelect("#namespace", "staging")
	b.waitText("table.grid", "a.properties")
}

// TestBrowserPhoneAndKeys, with auth off: the keyboard shortcuts work, the
// console needs no login except for the access-control pages, and at a
// phone's width every page fits the screen (tables become cards, the menu
// folds away).
func TestBrowserPhoneAndKeys(t *testing.T) {
	n := startNode(t)
	a := api{n, ""}
	for i, id := range []string{"orders.yaml", "payments.yaml", "gateway.json"} {
		mustOK(t, a.do("POST", "/v1/cs/configs", nil, url.Values{"dataId": {id}, "group": {"DEFAULT_GROUP"}, "appName": {"shop"}, "content": {fmt.Sprint("v: ", i)}}), "publish")
	}
	for _, port := range []string{"8001", "8002"} {
		mustOK(t, a.do("POST", "/v1/ns/instance", nil, url.Values{"serviceName": {"orders"}, "ip": {"127.0.0.1"}, "port": {port}, "metadata": {`{"zone":"eu-1"}`}}), "register")
	}
	b := newBrowser(t, consoleBase(n))

	// keys at 1280x800: / focuses the search, ? lists the keys, Esc closes
	b.open("#/configs")
	b.waitText("table.grid", "orders.yaml")
	b.run("focus the page", clickQuery("main h1"))
	b.keyDown("/") // a keydown the page takes: no character reaches the field
	if got := b.active(); got != "INPUT[dataId]" {
		t.Fatalf("/ focused %q", got)
	}
	b.run("blur", clickQuery("main h1"))
	b.keyDown("?")
	b.waitText("dialog[open]", "Ctrl+S")
	b.shot("keys")
	b.key(kb.Escape)
	b.waitJS("the closed dialog", `!document.querySelector('dialog[open]')`)
	// Tab from the top reaches the skip link first, then the header
	b.open("#/configs")
	b.key("\t")
	if got := b.active(); got != "A" || !strings.Contains(b.attr(":focus", "class"), "skip") {
		t.Fatalf("first Tab stop: %q", got)
	}
	b.key("\r")
	if got := b.active(); got != "MAIN#main" {
		t.Fatalf("skip link moved the focus to %q", got)
	}
	b.key("\t", input.ModifierShift) // back out: nothing traps the focus

	// auth off: no login anywhere, except for users, roles and permissions,
	// which need an admin login also then (as on Java)
	b.route("#/users")
	b.waitText(".login", "need an admin login even with authentication off")
	b.login("nacos", "nacos")
	b.waitJS("the users page", `location.hash.startsWith('#/users')`)
	b.waitText("[data-testid=users]", "nacos")
	b.clickButton("Log out")
	b.route("#/configs")
	b.waitText("table.grid", "orders.yaml")

	b.viewport(390, 844, true)
	fits := func(what string) {
		t.Helper()
		b.waitJS(what+" fits the width", `document.documentElement.scrollWidth <= window.innerWidth + 1`)
	}
	b.open("#/configs")
	b.waitText("table.grid", "orders.yaml")
	b.waitJS("cards", `getComputedStyle(document.querySelector('table.grid thead')).display === 'none' && document.querySelector('table.grid tbody td[data-label="Data ID"]') !== null`)
	fits("the config list")
	b.shot("phone-configs")
	b.route("#/services/detail?name=orders&group=DEFAULT_GROUP")
	b.waitText("[data-testid=instances-DEFAULT]", "8002")
	fits("the service")
	b.shot("phone-service")
	b.run("open the menu", clickQuery("button.menu"))
	b.waitJS("the menu", `getComputedStyle(document.querySelector('nav.side')).display !== 'none'`)
	b.shot("phone-menu")
	b.clickIn("nav.side", "Namespaces")
	b.waitJS("the menu folded", `getComputedStyle(document.querySelector('nav.side')).display === 'none' && location.hash === '#/namespaces'`)
	fits("the namespaces")
	b.route("#/configs/edit?dataId=orders.yaml&group=DEFAULT_GROUP")
	b.waitJS("the editor", `!!document.querySelector('.cm-content')`)
	fits("the editor")
	b.viewport(1280, 800, false)
}
