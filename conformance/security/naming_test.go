package security

import (
	"net"
	"net/http"
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

// Issue 26 item 8: legacy and status endpoints Java leaves open with auth
// on: each needs a token and the permission of its modern counterpart.
func TestLegacyEndpoints(t *testing.T) {
	for _, tg := range targets(t) {
		admin := tg.login(t, "nacos", "nacos")
		aq := url.Values{"accessToken": {admin}}
		sfx := itoa(time.Now().UnixNano() % 1e6)
		nsA, nsB := "lgA"+sfx, "lgB"+sfx
		for _, ns := range []string{nsA, nsB} {
			tg.do(t, "POST", "/v1/console/namespaces", aq, url.Values{"customNamespaceId": {ns}, "namespaceName": {ns}}, nil)
			tg.do(t, "POST", "/v1/ns/instance", url.Values{"accessToken": {admin}, "namespaceId": {ns}, "serviceName": {"legacy" + sfx},
				"ip": {"10.8.8.8"}, "port": {"8"}, "ephemeral": {"false"}}, nil, nil)
		}
		user, role := "lg"+sfx, "lg"+sfx
		tg.do(t, "POST", "/v1/auth/users", aq, url.Values{"username": {user}, "password": {"lg-pw"}}, nil)
		tg.do(t, "POST", "/v1/auth/roles", aq, url.Values{"username": {user}, "role": {role}}, nil)
		tg.do(t, "POST", "/v1/auth/permissions", aq, url.Values{"role": {role}, "resource": {nsA + ":*:*"}, "action": {"rw"}}, nil)
		tok := tg.loginEventually(t, user, "lg-pw")
		beat := `{"ip":"6.6.6.6","port":66,"cluster":"DEFAULT","serviceName":"DEFAULT_GROUP@@legacy` + sfx + `"}`
		for _, who := range []struct {
			name string
			tok  string
		}{{"without a token", ""}, {"with a token of " + nsA, tok}} {
			q := func(kv ...string) url.Values {
				v := url.Values{}
				if who.tok != "" {
					v.Set("accessToken", who.tok)
				}
				for i := 0; i+1 < len(kv); i += 2 {
					v.Set(kv[i], kv[i+1])
				}
				return v
			}
			for _, c := range []struct {
				name, path string
				q          url.Values
				leak       string // a 200 body showing it means the attack worked
			}{
				{"clientBeat registers into " + nsB, "/v1/ns/api/clientBeat", q("namespaceId", nsB, "dom", "legacy"+sfx, "beat", beat), "clientBeatInterval"},
				{"srvIPXT lists " + nsB, "/v1/ns/api/srvIPXT", q("namespaceId", nsB, "dom", "legacy"+sfx), "10.8.8.8"},
				{"allDomNames dumps every namespace", "/v1/ns/api/allDomNames", q(), nsB},
				{"catalog/rt of " + nsB, "/v1/ns/catalog/rt/service", q("namespaceId", nsB, "serviceName", "legacy"+sfx), "["},
				{"what 127.0.0.1 listens to, every namespace", "/v1/cs/listener", q("ip", "127.0.0.1", "all", "true", "tenant", nsB), "collectStatus"},
			} {
				if who.tok != "" && c.path == "/v1/cs/listener" {
					continue // no listener from 127.0.0.1 in nsB here: covered without a token
				}
				st, body := tg.do(t, "GET", c.path, c.q, nil, nil)
				if st == 200 && !strings.Contains(body, c.leak) {
					st = 404 // answered, nothing of it
				}
				refused(t, tg, "legacy endpoint "+who.name+": "+c.name, st, body)
			}
			if !tg.java {
				st, body := tg.do(t, "GET", "/v1/ns/operator/push/state", q("detail", "true"), nil, nil)
				refused(t, tg, "push/state "+who.name, st, body)
			}
		}
		// control: the modern counterpart's permission is enough
		if st, body := tg.do(t, "GET", "/v1/ns/api/srvIPXT", url.Values{"accessToken": {tok}, "namespaceId": {nsA}, "dom": {"legacy" + sfx}}, nil, nil); !tg.java && st != 200 {
			t.Errorf("nacosd: srvIPXT in %s with rw there: %d %s", nsA, st, body)
		}
		if st, body := tg.do(t, "GET", "/v1/ns/api/clientBeat", url.Values{"accessToken": {tok}, "namespaceId": {nsA}, "dom": {"legacy" + sfx}, "beat": {beat}}, nil, nil); !tg.java && st != 200 {
			t.Errorf("nacosd: clientBeat in %s with rw there: %d %s", nsA, st, body)
		}
	}
}

// Issue 26 item 9: a subscribe naming a third party's clientIP and udpPort
// made the server send that party every change of the service (Java too).
// nacosd pushes to the subscriber's own source address (unless a trusted
// source, nacosd.push.trusted-sources) and caps the bytes per target.
func TestPushReflection(t *testing.T) {
	for _, tg := range targets(t) {
		admin := tg.login(t, "nacos", "nacos")
		svcName := "refl" + itoa(time.Now().UnixNano()%1e6)
		reg := func(ip string) {
			tg.do(t, "POST", "/v1/ns/instance", url.Values{"accessToken": {admin}, "serviceName": {svcName}, "ip": {ip}, "port": {"9"}, "ephemeral": {"false"}}, nil, nil)
		}
		reg("10.9.9.1")
		victim, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
		if err != nil {
			t.Fatal(err)
		}
		defer victim.Close()
		port := victim.LocalAddr().(*net.UDPAddr).Port
		requester, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 3), Port: port})
		if err != nil {
			t.Fatal(err)
		}
		defer requester.Close()
		req, _ := http.NewRequest("GET", tg.base+"/v1/ns/instance/list?"+url.Values{"serviceName": {svcName}, "clientIP": {"127.0.0.2"},
			"udpPort": {itoa(int64(port))}, "accessToken": {admin}}.Encode(), nil)
		req.Header.Set("User-Agent", "Nacos-Java-Client:v1.4.8")
		resp, err := from("127.0.0.3").Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		reg("10.9.9.2") // a change: pushed to the subscriber
		got := func(c *net.UDPConn) int {
			_ = c.SetReadDeadline(time.Now().Add(4 * time.Second))
			buf := make([]byte, 65536)
			n, _, err := c.ReadFromUDP(buf)
			if err != nil {
				return 0
			}
			return n
		}
		n := got(victim)
		st := 403
		if n > 0 {
			st = 200
		}
		refused(t, tg, "UDP push reflection to a third party's clientIP", st, "victim received "+itoa(int64(n))+" bytes")
		if !tg.java {
			if m := got(requester); m == 0 {
				t.Errorf("nacosd: the push did not reach the subscriber's own address either")
			}
		}
	}
}
