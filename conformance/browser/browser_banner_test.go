package browser_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserDefaultPasswordBanner, with auth on (issue 26 item 12): while
// nacos has the password nacos, the login page and every page after it show
// a banner saying so; changing the password on the Users page removes it,
// and a fresh page load does not show it again.
func TestBrowserDefaultPasswordBanner(t *testing.T) {
	n := startAuthNode(t)
	b := newBrowser(t, consoleBase(n))
	b.open("#/login")
	b.waitText("#default-password-banner", "still has the default password")
	b.login("nacos", "nacos")
	b.waitJS("the configs page", `location.hash.startsWith('#/configs')`)
	b.waitText("#default-password-banner", "still has the default password")
	b.route("#/users")
	b.waitText("#default-password-banner", "Users")
	b.clickIn(`[data-testid=users] tbody tr:has(td[data-user=nacos])`, "Change password")
	b.typeInto(`dialog[open] input[name=password]`, "Not-the-default-1")
	b.typeInto(`dialog[open] input[name=again]`, "Not-the-default-1\r")
	b.waitJS("the banner gone", `!document.getElementById('default-password-banner')`)
	// the admin's token ended with its password (token epochs): log in again
	b.route("#/configs")
	b.login("nacos", "Not-the-default-1")
	b.waitJS("the configs page", `location.hash.startsWith('#/configs')`)
	b.run("reload", chromedp.Reload())
	b.waitJS("the app", `!document.querySelector('.boot') && !!document.querySelector('#app > *') && location.hash.startsWith('#/configs')`)
	var banner bool
	b.eval(`!!document.getElementById('default-password-banner')`, &banner)
	if banner {
		t.Fatal("the banner is back after the password change")
	}
}
