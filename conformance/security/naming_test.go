package security

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// Issue 26 item 7: a user with rw on nsA:G1:* registers into group G2 and
// reads G2's instances with serviceName=G2@@svc&groupName=G1 (Java checks
// groupName, the handler uses the group in the name; Java too). The group
// the request reaches is checked.
func TestGroupEscape(t *testing.T) {
	for _, tg := range targets(t) {
		admin := tg.login(t, "nacos", "nacos")
		aq := url.Values{"accessToken": {admin}}
		sfx := itoa(time.Now().UnixNano() % 1e6)
		ns := "nsG" + sfx
		tg.do(t, "POST", "/v1/console/namespaces", aq, url.Values{"customNamespaceId": {ns}, "namespaceName": {ns}}, nil)
		user, role := "g1"+sfx, "g1"+sfx
		tg.do(t, "POST", "/v1/auth/users", aq, url.Values{"username": {user}, "password": {"g1-pw"}}, nil)
		tg.do(t, "POST", "/v1/auth/roles", aq, url.Values{"username": {user}, "role": {role}}, nil)
		tg.do(t, "POST", "/v1/auth/permissions", aq, url.Values{"role": {role}, "resource": {ns + ":G1:*"}, "action": {"rw"}}, nil)
		// the admin registers G2's instance
		tg.do(t, "POST", "/v1/ns/instance", url.Values{"accessToken": {admin}, "namespaceId": {ns}, "serviceName": {"G2@@svc"}, "groupName": {"G2"},
			"ip": {"10.7.7.7"}, "port": {"7"}, "ephemeral": {"false"}}, nil, nil)
		tok := tg.loginEventually(t, user, "g1-pw")
		q := func(kv ...string) url.Values {
			v := url.Values{"accessToken": {tok}, "namespaceId": {ns}}
			for i := 0; i+1 < len(kv); i += 2 {
				v.Set(kv[i], kv[i+1])
			}
			return v
		}
		st, body := tg.do(t, "POST", "/v1/ns/instance", q("serviceName", "G2@@svc", "groupName", "G1", "ip", "6.6.6.6", "port", "66", "ephemeral", "false"), nil, nil)
		refused(t, tg, "group escape: register into G2 with groupName=G1", st, body)
		var lst int
		var lbody string
		for i := 0; i < 30; i++ {
			lst, lbody = tg.do(t, "GET", "/v1/ns/instance/list", q("serviceName", "G2@@svc", "groupName", "G1"), nil, nil)
			if lst != 200 || strings.Contains(lbody, "10.7.7.7") {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if lst == 200 && !strings.Contains(lbody, "10.7.7.7") {
			lst = 404
		}
		refused(t, tg, "group escape: list G2's instances with groupName=G1", lst, lbody)
		st, body = tg.do(t, "DELETE", "/v1/ns/instance", q("serviceName", "G2@@svc", "groupName", "G1", "ip", "10.7.7.7", "port", "7", "ephemeral", "false"), nil, nil)
		refused(t, tg, "group escape: deregister G2's instance with groupName=G1", st, body)
		// control: G1 works
		if st, body := tg.do(t, "POST", "/v1/ns/instance", q("serviceName", "G1@@svc", "groupName", "G1", "ip", "6.6.6.7", "port", "67", "ephemeral", "false"), nil, nil); st != 200 && !tg.java {
			t.Errorf("nacosd: register into G1: %d %s", st, body)
		}
	}
}
