package browser_test

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"

	"github.com/nacosd/nacosd/server/servertest"
)

// startNode starts nacosd (auth off) for a browser test; instances never
// expire (the beat sweep is pushed out) so registrations made over HTTP
// stay put.
func startNode(t *testing.T) *servertest.Node {
	cfg := servertest.Config(t)
	cfg.Naming.BeatCheckInterval = time.Hour
	cfg.Naming.EmptyServiceCleanInitial = time.Hour
	return servertest.Start(t, cfg)
}

// startAuthNode starts nacosd as startNode does with
// nacos.core.auth.enabled=true; the admin is nacos/nacos.
func startAuthNode(t *testing.T) *servertest.Node {
	cfg := servertest.Config(t)
	cfg.Naming.BeatCheckInterval = time.Hour
	cfg.Naming.EmptyServiceCleanInitial = time.Hour
	servertest.AuthOn(&cfg)
	return servertest.Start(t, cfg)
}

func login(t *testing.T, n *servertest.Node, user, pass string) string {
	t.Helper()
	return n.Login(user, pass)
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func consoleBase(n *servertest.Node) string { return n.URL("/nacos/") }

func mustOK(t *testing.T, r servertest.Response, what string) {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%s: %d %s", what, r.Status, r.Body)
	}
}

// api calls nacosd as a client would, with token (may be "") as accessToken.
type api struct {
	n     *servertest.Node
	token string
}

func (a api) do(method, path string, q, form url.Values) servertest.Response {
	if q == nil {
		q = url.Values{}
	}
	if a.token != "" {
		q.Set("accessToken", a.token)
	}
	return a.n.Do(method, "/nacos"+path, q, form, nil)
}

// config reads a config as a client at 127.0.0.1 would (a beta for
// 127.0.0.1 included).
func (a api) config(dataID, group, tenant string) (int, string) {
	r := a.do("GET", "/v1/cs/configs", url.Values{"dataId": {dataID}, "group": {group}, "tenant": {tenant}}, nil)
	return r.Status, r.Body
}

// waitConfig waits until the config reads want (404 for "").
func (a api) waitConfig(t *testing.T, dataID, group, tenant, want string) {
	t.Helper()
	servertest.Eventually(t, 5*time.Second, func() error {
		st, body := a.config(dataID, group, tenant)
		if want == "" && st == 404 || st == 200 && body == want {
			return nil
		}
		return fmt.Errorf("%s/%s in %q: %d %q, want %q", group, dataID, tenant, st, body, want)
	})
}

// TestBrowserConfigs, with auth on: log in, publish a config through the
// editor (refused while its YAML or JSON is invalid; Ctrl+S and Enter, with
// the diff in between), edit it (diff of old and new), beta-publish it to
// one IP and stop the beta, search by content, clone it to another
// namespace, export and import a zip, roll back from the history, delete
// it, see an API error as a message, log out.
func TestBrowserConfigs(t *testing.T) {
	n := startAuthNode(t)
	admin := api{n, login(t, n, "nacos", "nacos")}
	mustOK(t, admin.do("POST", "/v1/console/namespaces", nil, url.Values{"customNamespaceId": {"dev"}, "namespaceName": {"Development"}}), "namespace dev")
	mustOK(t, admin.do("POST", "/v1/console/namespaces", nil, url.Values{"customNamespaceId": {"imported"}, "namespaceName": {"Imported"}}), "namespace imported")
	b := newBrowser(t, consoleBase(n))

	// the console asks for a login; a wrong password is a message
	b.open("")
	b.waitJS("the login redirect", `location.hash.startsWith('#/login')`)
	b.login("nacos", "wrong")
	b.waitText(".login", "Wrong user name or password")
	b.shot("login")
	b.login("nacos", "nacos")
	b.waitJS("the configs page", `location.hash.startsWith('#/configs') && !!document.querySelector('table.grid')`)
	var tok string
	b.eval(`JSON.parse(localStorage.getItem('token')).accessToken`, &tok) // where the Java console keeps it
	if !strings.HasPrefix(tok, "eyJhbGciOiJIUzI1NiJ9.") {
		t.Fatalf("token in localStorage: %q", tok)
	}

	// a new config from the keyboard; invalid YAML and JSON never leave
	b.route("#/configs/edit?new=1")
	b.waitJS("the editor", `!!document.querySelector('.cm-content')`)
	b.typeInto(`input[name=dataId]`, "app.yaml")
	b.check(`input[name=type][value=yaml]`)
	b.setEditor("a: [1, 2")
	b.key("s", input.ModifierCtrl)
	b.waitText(".editform", "YAML:")
	b.check(`input[name=type][value=json]`)
	b.setEditor(`{"port": 8080,}`)
	b.key("s", input.ModifierCtrl)
	b.waitText(".editform", "JSON:")
	b.check(`input[name=type][value=xml]`)
	b.setEditor(`<server><port>8080</server>`)
	b.key("s", input.ModifierCtrl)
	b.waitText(".editform", "XML:")
	if st, _ := admin.config("app.yaml", "DEFAULT_GROUP", ""); st != 404 {
		t.Fatalf("invalid content was published: %d", st)
	}
	b.check(`input[name=type][value=yaml]`)
	b.setEditor("port: 8080\nname: demo")
	b.shot("config-edit")
	b.key("s", input.ModifierCtrl)
	b.waitJS("the diff", `!!document.querySelector('dialog[open] [data-testid=diff] .cm-mergeView')`)
	b.waitText("dialog[open]", "name: demo")
	b.waitJS("the focus on Publish", `document.activeElement && document.activeElement.id === 'confirm-publish'`)
	b.key("\r")
	admin.waitConfig(t, "app.yaml", "DEFAULT_GROUP", "", "port: 8080\nname: demo")

	// edit: the diff shows the old and the new line
	b.waitJS("the edit page", `location.hash.includes('dataId=app.yaml') && !document.querySelector('dialog[open]')`)
	b.waitJS("the loaded content", `document.querySelector('.cm-content') && document.querySelector('.cm-content').innerText.includes('name: demo')`)
	b.setEditor("port: 9090\nname: demo")
	// a slow network: the reads after the publish come back late, and what
	// is typed next (the beta below) must not be reset by them
	b.latency(400 * time.Millisecond)
	b.clickButton("Publish…")
	b.waitJS("the diff of the edit", `(() => { const d = document.querySelector('dialog[open] [data-testid=diff]');
		return !!d && d.innerText.includes('port: 8080') && d.innerText.includes('port: 9090') && !!d.querySelector('.cm-changedLine, .cm-changedText, .cm-deletedChunk'); })()`)
	b.shot("config-publish-diff")
	b.run("confirm", clickQuery("#confirm-publish"))
	admin.waitConfig(t, "app.yaml", "DEFAULT_GROUP", "", "port: 9090\nname: demo")

	// beta: 127.0.0.1 (this test's client) gets the beta, then the main again
	b.waitJS("the reloaded editor", `!document.querySelector('dialog[open]') && document.querySelector('.cm-content').innerText.includes('9090')`)
	b.check(`input[name=betaOn]`)
	b.typeInto(`input[name=betaIps]`, "127.0.0.1")
	b.setEditor("port: 7070\nname: beta")
	b.latency(0)
	b.clickButton("Publish beta…")
	b.waitText("dialog[open]", "port: 7070")
	b.run("confirm beta", clickQuery("#confirm-publish"))
	admin.waitConfig(t, "app.yaml", "DEFAULT_GROUP", "", "port: 7070\nname: beta")
	if r := admin.do("GET", "/v1/cs/configs", url.Values{"beta": {"true"}, "dataId": {"app.yaml"}, "group": {"DEFAULT_GROUP"}}, nil); !strings.Contains(r.Body, `"betaIps":"127.0.0.1"`) {
		t.Fatalf("beta: %s", r.Body)
	}
	b.waitText(".editform", "A beta is live for 127.0.0.1")
	b.shot("config-beta")
	b.clickButton("Stop beta")
	b.clickIn("dialog[open]", "Stop beta")
	admin.waitConfig(t, "app.yaml", "DEFAULT_GROUP", "", "port: 9090\nname: demo")
	// the editor is back to the content everyone gets, and a normal publish
	b.waitJS("the editor after Stop beta", `!document.querySelector('.editform .alert.info') &&
		document.querySelector('.cm-content').innerText.includes('port: 9090') && !document.querySelector('.cm-content').innerText.includes('7070') &&
		!document.querySelector('input[name=betaOn]').checked && document.querySelector('#publish').innerText === 'Publish…'`)

	// the list (search by content) and the detail with MD5 and modifier
	mustOK(t, admin.do("POST", "/v1/cs/configs", nil, url.Values{"dataId": {"other.properties"}, "group": {"DEFAULT_GROUP"}, "content": {"a=1"}}), "other")
	b.route("#/configs")
	b.waitText("table.grid", "other.properties")
	b.typeInto(`input[name=content]`, "9090")
	b.clickButton("Search")
	b.waitJS("the content search", `(() => { const t = document.querySelector('table.grid tbody').innerText; return t.includes('app.yaml') && !t.includes('other.properties'); })()`)
	b.setInput(`input[name=content]`, "")
	b.clickButton("Search")
	b.waitText("table.grid", "other.properties")
	b.shot("configs")
	b.route("#/configs/detail?dataId=app.yaml&group=DEFAULT_GROUP")
	b.waitJS("the md5", `!!document.querySelector('[data-testid=md5]') && document.querySelector('[data-testid=md5]').innerText.length === 32`)
	b.waitText("main", "nacos from 127.0.0.1")
	b.shot("config-detail")

	// clone app.yaml into dev under a new name
	b.route("#/configs")
	b.waitText("table.grid", "app.yaml")
	b.check(`input[aria-label="Select app.yaml"]`)
	b.clickButton("Clone to namespace…")
	b.setSelect("dialog[open] select[name=target]", "dev")
	b.setInput(`dialog[open] input[aria-label="New data ID"]`, "app-copy.yaml")
	b.clickIn("dialog[open]", "Clone")
	b.waitText("dialog[open] .alert", "1 written")
	b.shot("config-clone")
	admin.waitConfig(t, "app-copy.yaml", "DEFAULT_GROUP", "dev", "port: 9090\nname: demo")
	b.clickIn("dialog[open]", "Close")

	// export the selection as a zip, import it into another namespace
	b.check(`input[aria-label="Select app.yaml"]`)
	b.waitJS("the selection bar", `!!document.querySelector('.selbar a[download]')`)
	exportURL := b.attr(".selbar a[download]", "href")
	st, zipBody := b.fetchBytes(exportURL)
	zr, err := zip.NewReader(bytes.NewReader(zipBody), int64(len(zipBody)))
	if st != 200 || err != nil {
		t.Fatalf("export %s: %d %v", exportURL, st, err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "app.yaml") {
		t.Fatalf("export holds %v", names)
	}
	zipFile := filepath.Join(t.TempDir(), "configs.zip")
	if err := os.WriteFile(zipFile, zipBody, 0o644); err != nil {
		t.Fatal(err)
	}
	b.setSelect("#namespace", "imported")
	b.waitJS("the imported namespace", `!!document.querySelector('main .empty')`)
	b.clickButton("Import")
	b.upload(`dialog[open] input[type=file]`, zipFile)
	b.setSelect("dialog[open] select[name=policy]", "OVERWRITE")
	b.clickIn("dialog[open]", "Import")
	b.waitText("dialog[open] .alert", "1 written")
	b.shot("config-import")
	b.clickIn("dialog[open]", "Close")
	b.waitText("table.grid", "app.yaml")
	admin.waitConfig(t, "app.yaml", "DEFAULT_GROUP", "imported", "port: 9090\nname: demo")
	b.setSelect("#namespace", "")

	// history: roll back the update (an "updated" record holds the content
	// before it); the beta never entered the history, as on Java
	b.route("#/history?dataId=app.yaml&group=DEFAULT_GROUP")
	b.waitText("table.grid", "updated")
	// versions count app.yaml's own records (its creation and its update;
	// other.properties, clone and import wrote records in between)
	var versions []string
	b.eval(`[...document.querySelectorAll('table.grid tbody [data-testid=version]')].map((e) => e.innerText)`, &versions)
	if strings.Join(versions, ",") != "2,1" {
		t.Fatalf("history versions %v, want 2,1", versions)
	}
	b.shot("history")
	b.clickIn("table.grid tbody tr:first-child", "Compare with current")
	b.waitText("dialog[open] [data-testid=diff]", "port: 9090")
	b.clickIn("dialog[open]", "Back to editing")
	b.clickIn("table.grid tbody tr:first-child", "Roll back") // the update: it holds port 8080
	b.waitJS("the rollback diff", `(() => { const d = document.querySelector('dialog[open] [data-testid=diff]'); return !!d && d.innerText.includes('port: 8080'); })()`)
	b.waitText("dialog[open]", "Roll back app.yaml: restore the content from before this update (version 2, updated")
	b.shot("history-rollback")
	b.run("confirm rollback", clickQuery("#confirm-publish"))
	admin.waitConfig(t, "app.yaml", "DEFAULT_GROUP", "", "port: 8080\nname: demo")

	// delete with confirmation
	b.route("#/configs")
	b.waitText("table.grid", "app.yaml")
	b.clickIn(`table.grid tbody tr:has(input[aria-label="Select app.yaml"])`, "Delete")
	b.waitText("dialog[open]", "Delete config app.yaml")
	b.clickIn("dialog[open]", "Delete")
	admin.waitConfig(t, "app.yaml", "DEFAULT_GROUP", "", "")

	// an API error is a message, not a blank page: the server refuses the data ID
	b.route("#/configs/edit?new=1")
	b.waitJS("the editor", `!!document.querySelector('.cm-content')`)
	b.typeInto(`input[name=dataId]`, "bad id")
	b.setEditor("x")
	b.clickButton("Publish…")
	b.waitText(".editform .alert.error", "invalid dataId")
	b.shot("error-message")

	// log out: the token is gone and the console asks for a login again
	b.clickButton("Log out")
	b.waitJS("the login page", `location.hash.startsWith('#/login') && localStorage.getItem('token') === null`)
	b.route("#/services")
	b.waitJS("the login redirect", `location.hash.startsWith('#/login')`)
}
