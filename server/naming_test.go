package server_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server/servertest"
)

const javaUA = "Nacos-Java-Client:v1.4.8"

func TestNamingHTTPErrors(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	v := func(kv ...string) url.Values {
		out := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	cases := []struct {
		name         string
		method, path string
		query        url.Values
		status       int
		body         string
	}{
		{"missing serviceName", "POST", "/nacos/v1/ns/instance", v("ip", "1.1.1.1", "port", "80"), 400, "caused: Param 'serviceName' is required.;"},
		{"missing ip", "POST", "/nacos/v1/ns/instance", v("serviceName", "s", "port", "80"), 400, "caused: Param 'ip' is required.;"},
		{"bad port", "POST", "/nacos/v1/ns/instance", v("serviceName", "s", "ip", "1.1.1.1", "port", "x"), 400, `caused: For input string: "x";`},
		{"bad weight", "POST", "/nacos/v1/ns/instance", v("serviceName", "s", "ip", "1.1.1.1", "port", "1", "weight", "abc"), 400, `caused: For input string: "abc";`},
		{"weight range", "POST", "/nacos/v1/ns/instance", v("serviceName", "s", "ip", "1.1.1.1", "port", "1", "weight", "10001"), 500, "caused: instance format invalid: The weights range from 0.0 to 10000.0;"},
		{"bad cluster", "POST", "/nacos/v1/ns/instance", v("serviceName", "s", "ip", "1.1.1.1", "port", "1", "clusterName", "a.b"), 400, "caused: cluster name can only have these characters: 0-9a-zA-Z-, current: a.b;"},
		{"bad service chars", "POST", "/nacos/v1/ns/instance", v("serviceName", "s s", "ip", "1.1.1.1", "port", "1"), 400, "caused: dom name can only have these characters: 0-9a-zA-Z-._:, current: DEFAULT_GROUP@@s s;"},
		{"empty group", "POST", "/nacos/v1/ns/instance", v("serviceName", "@@s", "ip", "1.1.1.1", "port", "1"), 400, "caused: Param 'serviceName' is illegal, groupName can't be empty;"},
		{"bad metadata", "POST", "/nacos/v1/ns/instance", v("serviceName", "s", "ip", "1.1.1.1", "port", "1", "metadata", "a=b=c"), 500, "caused: metadata format incorrect:a=b=c;"},
		{"beat json parsed before serviceName", "PUT", "/nacos/v1/ns/instance/beat", v("beat", "{"), 500,
			"caused: errCode: 101, errMsg: Nacos deserialize for class [com.alibaba.nacos.naming.healthcheck.RsInfo] failed.  ;caused: Unexpected end-of-input: expected close marker for Object (start marker at [Source: (String)\"{\"; line: 1, column: 1])\n at [Source: (String)\"{\"; line: 1, column: 2];"}, // the reference's words
		{"beat port parsed before serviceName", "PUT", "/nacos/v1/ns/instance/beat", v("port", "x"), 400, `caused: For input string: "x";`},
		{"beat unknown", "PUT", "/nacos/v1/ns/instance/beat", v("serviceName", "s", "ip", "1.1.1.1", "port", "1"), 200, `{"clientBeatInterval":5000,"code":20404}`},
		{"detail no service", "GET", "/nacos/v1/ns/instance", v("serviceName", "nope", "ip", "1.1.1.1", "port", "1"), 500, "caused: no service DEFAULT_GROUP@@nope found!;"},
		{"deregister reads the instance first", "DELETE", "/nacos/v1/ns/instance", v("ip", "1.1.1.1", "port", "x"), 400, `caused: For input string: "x";`},
		{"deregister ignores metadata", "DELETE", "/nacos/v1/ns/instance", v("serviceName", "nope", "ip", "1.1.1.1", "port", "1", "metadata", "a=b=c"), 200, "ok"},
		{"patch looks up before parsing", "PATCH", "/nacos/v1/ns/instance", v("serviceName", "nope", "ip", "1.1.1.1", "port", "1", "metadata", "a=b=c", "weight", "x"), 400, "caused: instance not found;"},
		{"deregister missing service", "DELETE", "/nacos/v1/ns/instance", v("serviceName", "nope", "ip", "1.1.1.1", "port", "1"), 200, "ok"},
		{"list absent", "GET", "/nacos/v1/ns/instance/list", v("serviceName", "nope"), 200, `{"name":"DEFAULT_GROUP@@nope","clusters":"","cacheMillis":3000,"hosts":[]}`},
		{"service list needs pageNo", "GET", "/nacos/v1/ns/service/list", v("pageSize", "10"), 400, "caused: Param 'pageNo' is required.;"},
		{"service list empty", "GET", "/nacos/v1/ns/service/list", v("pageNo", "1", "pageSize", "10"), 200, `{"doms":[],"count":0}`},
		{"get missing service", "GET", "/nacos/v1/ns/service", v("serviceName", "nope"), 500, "caused: service DEFAULT_GROUP@@nope is not found!;"},
		{"delete missing service", "DELETE", "/nacos/v1/ns/service", v("serviceName", "nope"), 400, "caused: specified service not exist, serviceName : DEFAULT_GROUP@@nope;"},
		{"statuses missing", "GET", "/nacos/v1/ns/instance/statuses", v("key", "public##DEFAULT_GROUP@@nope"), 500, "caused: service: DEFAULT_GROUP@@nope not found.;"},
		{"switch bad", "PUT", "/nacos/v1/ns/operator/switches", v("entry", "defaultCacheMillis", "value", "10"), 400, "caused: min default cache time  is too small(<1000);"},
		{"health needs healthy", "PUT", "/nacos/v1/ns/health", v("serviceName", "s"), 400, "caused: Param 'healthy' is required.;"},
		{"rt missing", "GET", "/nacos/v1/ns/catalog/rt/service", v("serviceName", "nope"), 400, "caused: request service doesn't exist;"},
		{"old raft", "GET", "/nacos/v1/ns/raft/state", nil, 500, "caused: old raft protocol already stop;"},
	}
	for _, c := range cases {
		r := n.Do(c.method, c.path, c.query, nil, map[string]string{"User-Agent": javaUA})
		if r.Status != c.status || r.Body != c.body {
			t.Errorf("%s: got %d %q, want %d %q", c.name, r.Status, r.Body, c.status, c.body)
		}
	}
	if r := n.Do("GET", "/nacos/v1/ns/healthcheckers", nil, nil, nil); r.Status != 404 || !strings.Contains(r.Body, `"status":404,"error":"Not Found","message":"No message available","path":"/nacos/v1/ns/healthcheckers"`) {
		t.Errorf("healthcheckers: %d %s", r.Status, r.Body)
	}
	// 501 for methods/paths Java Nacos does not map
	for _, c := range []struct{ method, path string }{{"POST", "/nacos/v1/ns/instance/list"}, {"GET", "/nacos/v1/ns/health/checkers"}, {"POST", "/nacos/v1/ns/operator/metrics"}} {
		r := n.Do(c.method, c.path, nil, nil, nil)
		if r.Status != 501 || !strings.Contains(r.Body, `"message":"no such api:`+c.method+`:`+c.path+`"`) {
			t.Errorf("%s %s: got %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
}

func TestNamingFormBodyAndQueryPrecedence(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	// Java puts the beat JSON in a PUT form body; query values win over body values.
	r := n.Do("POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"DEFAULT_GROUP@@f"}, "ip": {"127.0.0.1"}, "port": {"1"}},
		url.Values{"port": {"2"}, "weight": {"2.5"}}, map[string]string{"User-Agent": javaUA})
	if r.Status != 200 || r.Body != "ok" {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	r = n.Do("GET", "/nacos/v1/ns/instance", url.Values{"serviceName": {"f"}, "ip": {"127.0.0.1"}, "port": {"1"}}, nil, nil)
	want := `{"service":"DEFAULT_GROUP@@f","ip":"127.0.0.1","port":1,"clusterName":"DEFAULT","weight":2.5,"healthy":true,"instanceId":"127.0.0.1#1#DEFAULT#DEFAULT_GROUP@@f","metadata":{}}`
	if r.Body != want {
		t.Fatalf("detail\n got %s\nwant %s", r.Body, want)
	}
	beat := `{"cluster":"DEFAULT","ip":"127.0.0.1","metadata":{},"period":5000,"port":1,"scheduled":false,"serviceName":"DEFAULT_GROUP@@f","stopped":false,"weight":1.0}`
	r = n.Do("PUT", "/nacos/v1/ns/instance/beat", url.Values{"serviceName": {"DEFAULT_GROUP@@f"}}, url.Values{"beat": {beat}}, nil)
	if r.Body != `{"clientBeatInterval":5000,"code":10200,"lightBeatEnabled":true}` {
		t.Fatalf("beat: %s", r.Body)
	}
	r = n.Do("PUT", "/nacos/v1/ns/instance/beat", url.Values{"serviceName": {"DEFAULT_GROUP@@f"}}, url.Values{"beat": {"{bad"}}, nil)
	if r.Status != 500 || !strings.HasPrefix(r.Body, "caused: errCode: 101, errMsg: Nacos deserialize for class [com.alibaba.nacos.naming.healthcheck.RsInfo] failed.  ;caused: ") {
		t.Fatalf("bad beat: %d %s", r.Status, r.Body)
	}
}

// udpClient is a Java-client-like push receiver on 127.0.0.1.
type udpClient struct {
	conn *net.UDPConn
}

type pushPacket struct {
	Type        string `json:"type"`
	Data        string `json:"data"`
	LastRefTime int64  `json:"lastRefTime"`
	from        *net.UDPAddr
	gzipped     bool
}

func (u *udpClient) read(t *testing.T, timeout time.Duration) (pushPacket, error) {
	t.Helper()
	buf := make([]byte, 65536)
	_ = u.conn.SetReadDeadline(time.Now().Add(timeout))
	n, from, err := u.conn.ReadFromUDP(buf)
	if err != nil {
		return pushPacket{}, err
	}
	b := buf[:n]
	var p pushPacket
	if len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return p, err
		}
		b, err = io.ReadAll(zr)
		if err != nil {
			return p, err
		}
		p.gzipped = true
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("%w: %s", err, b)
	}
	p.from = from
	return p, nil
}

func (u *udpClient) ack(t *testing.T, p pushPacket) {
	t.Helper()
	msg := `{"type": "push-ack", "lastRefTime":"` + strconv.FormatInt(p.LastRefTime, 10) + `", "data":""}`
	if _, err := u.conn.WriteToUDP([]byte(msg), p.from); err != nil {
		t.Fatal(err)
	}
}

func TestUDPPushOnRegister(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	u := &udpClient{conn}
	port := strconv.Itoa(conn.LocalAddr().(*net.UDPAddr).Port)
	list := func() string {
		return n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"DEFAULT_GROUP@@pushme"}, "udpPort": {port}, "clientIP": {"127.0.0.1"}, "clusters": {""}}, nil,
			map[string]string{"User-Agent": javaUA}).Body
	}
	if body := list(); !strings.Contains(body, `"cacheMillis":10000`) {
		t.Fatalf("subscriber not registered: %s", body)
	}
	start := time.Now()
	r := n.Do("POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"DEFAULT_GROUP@@pushme"}, "ip": {"127.0.0.1"}, "port": {"8080"}}, nil, map[string]string{"User-Agent": javaUA})
	if r.Body != "ok" {
		t.Fatal(r.Body)
	}
	p, err := u.read(t, 5*time.Second)
	if err != nil {
		t.Fatalf("no push: %v", err)
	}
	t.Logf("push arrived %v after register (Java Nacos debounces 1 s)", time.Since(start))
	if p.Type != "dom" || !strings.Contains(p.Data, `"ip":"127.0.0.1","port":8080`) || !strings.Contains(p.Data, `"cacheMillis":10000`) {
		t.Fatalf("bad packet: %+v", p)
	}
	u.ack(t, p)
	servertest.Eventually(t, 5*time.Second, func() error {
		st := n.Do("GET", "/nacos/v1/ns/operator/push/state", nil, nil, nil).Body
		if !strings.HasPrefix(st, `{"succeed":1,"total":1,`) {
			return fmt.Errorf("push state %s", st)
		}
		return nil
	})
	subs := n.Do("GET", "/nacos/v1/ns/service/subscribers", url.Values{"serviceName": {"pushme"}}, nil, nil).Body
	if !strings.Contains(subs, `"addrStr":"127.0.0.1:`+port+`","agent":"`+javaUA+`"`) || !strings.HasSuffix(subs, `"count":1}`) {
		t.Fatalf("subscribers: %s", subs)
	}
}

func TestPersistentInstanceSurvivesRestart(t *testing.T) {
	cfg := servertest.Config(t)
	n := servertest.Start(t, cfg)
	r := n.Do("POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"G@@p"}, "ip": {"127.0.0.1"}, "port": {"9"}, "ephemeral": {"false"}, "metadata": {`{"a":"b"}`}}, nil, nil)
	if r.Body != "ok" {
		t.Fatal(r.Body)
	}
	r = n.Do("PUT", "/nacos/v1/ns/operator/switches", url.Values{"entry": {"defaultCacheMillis"}, "value": {"4000"}}, nil, nil)
	if r.Body != "ok" {
		t.Fatal(r.Body)
	}
	// the restart gets new ports (a new node identity): a standalone node
	// must still come up with its data
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n2 := servertest.Start(t, cfg)
	body := n2.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"G@@p"}}, nil, map[string]string{"User-Agent": javaUA}).Body
	if !strings.Contains(body, `"ip":"127.0.0.1","port":9,`) || !strings.Contains(body, `"metadata":{"a":"b"}`) || !strings.Contains(body, `"ephemeral":false`) || !strings.Contains(body, `"cacheMillis":4000`) {
		t.Fatalf("after restart: %s", body)
	}
}

// TestBeatExpiryRealTime runs the expiry with real time and shortened
// per-instance timeouts (metadata overrides): unhealthy, then deleted.
func TestBeatExpiryRealTime(t *testing.T) {
	cfg := servertest.Config(t)
	cfg.Naming.BeatCheckInterval = 100 * time.Millisecond
	n := servertest.Start(t, cfg)
	// unhealthy from 1 s to 3 s: wide enough to be seen on a loaded machine
	md := `{"preserved.heart.beat.timeout":"1000","preserved.ip.delete.timeout":"3000"}`
	r := n.Do("POST", "/nacos/v1/ns/instance", url.Values{"serviceName": {"DEFAULT_GROUP@@rt"}, "ip": {"127.0.0.1"}, "port": {"1"}, "metadata": {md}}, nil, nil)
	if r.Body != "ok" {
		t.Fatal(r.Body)
	}
	list := func() string {
		return n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"DEFAULT_GROUP@@rt"}, "healthyOnly": {"true"}}, nil, nil).Body
	}
	seenUnhealthy := false
	servertest.Eventually(t, 10*time.Second, func() error {
		body := list()
		if strings.Contains(body, `"healthy":true`) && !seenUnhealthy {
			// protect threshold promotes a lone unhealthy instance; look at statuses instead
		}
		st := n.Do("GET", "/nacos/v1/ns/instance/statuses", url.Values{"key": {"public##DEFAULT_GROUP@@rt"}}, nil, nil).Body
		if st == `{"ips":["127.0.0.1:1_false"]}` {
			seenUnhealthy = true
		}
		if seenUnhealthy && st == `{"ips":[]}` {
			return nil
		}
		return fmt.Errorf("statuses %s (seen unhealthy %v)", st, seenUnhealthy)
	})
}

func TestStatusGateAndLimitedURLs(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	set := func(entry, value string) {
		t.Helper()
		if r := n.Do("PUT", "/nacos/v1/ns/operator/switches", url.Values{"entry": {entry}, "value": {value}}, nil, nil); r.Body != "ok" {
			t.Fatalf("switch %s=%s: %d %s", entry, value, r.Status, r.Body)
		}
	}
	set("limitedUrlMap", "/nacos/v1/ns/instance/list?serviceName=limited:429")
	if r := n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"limited"}}, nil, nil); r.Status != 429 || r.Body != "" {
		t.Fatalf("limited url: %d %q", r.Status, r.Body)
	}
	set("overriddenServerStatus", "WRITE_ONLY")
	if r := n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"x"}}, nil, nil); r.Status != 503 || r.Body != "server is WRITE_ONLYnow, please try again later!" {
		t.Fatalf("read while WRITE_ONLY: %d %q", r.Status, r.Body)
	}
	if r := n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"x"}}, nil, map[string]string{"User-Agent": "Nacos-Server:1.4.8"}); r.Status != 200 {
		t.Fatalf("server agent passes the gate: %d %q", r.Status, r.Body)
	}
	if r := n.Do("GET", "/nacos/v1/ns/operator/metrics", nil, nil, nil); r.Status != 503 {
		t.Fatalf("metrics while WRITE_ONLY: %d", r.Status)
	}
	set("overriddenServerStatus", "null") // clears it
	if r := n.Do("GET", "/nacos/v1/ns/operator/metrics", nil, nil, nil); r.Status != 200 || !strings.HasPrefix(r.Body, `{"status":"UP",`) {
		t.Fatalf("metrics after clearing: %d %s", r.Status, r.Body)
	}
}

// TestGoClientRawBeat sends a beat the way nacos-sdk-go v1 does: a PUT body
// built by hand without URL-encoding, no top-level ip/port, empty namespace.
func TestGoClientRawBeat(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	r := n.Do("POST", "/nacos/v1/ns/instance", nil, url.Values{"serviceName": {"DEFAULT_GROUP@@gobeat"}, "groupName": {"DEFAULT_GROUP"},
		"ip": {"127.0.0.1"}, "port": {"8001"}, "namespaceId": {""}, "weight": {"1"}, "enable": {"true"}, "healthy": {"true"}, "metadata": {`{"v":"1"}`}, "ephemeral": {"true"}},
		map[string]string{"User-Agent": "Nacos-Go-Client:v1.1.6"})
	if r.Body != "ok" {
		t.Fatal(r.Status, r.Body)
	}
	body := `namespaceId=&serviceName=DEFAULT_GROUP@@gobeat&beat={"ip":"127.0.0.1","port":8001,"weight":1,"serviceName":"DEFAULT_GROUP@@gobeat","cluster":"DEFAULT","metadata":{"v":"1"},"scheduled":false}`
	req, _ := http.NewRequest("PUT", n.URL("/nacos/v1/ns/instance/beat"), strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded;charset=utf-8")
	req.Header.Set("User-Agent", "Nacos-Go-Client:v1.1.6")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != `{"clientBeatInterval":5000,"code":10200,"lightBeatEnabled":true}` {
		t.Fatalf("go beat: %d %s", resp.StatusCode, b)
	}
	// the Go agent sees bare names
	list := n.Do("GET", "/nacos/v1/ns/instance/list", url.Values{"serviceName": {"DEFAULT_GROUP@@gobeat"}, "namespaceId": {""}}, nil, map[string]string{"User-Agent": "Nacos-Go-Client:v1.1.6"}).Body
	if !strings.Contains(list, `"serviceName":"gobeat"`) || !strings.Contains(list, `"dom":"gobeat","name":"DEFAULT_GROUP@@gobeat"`) {
		t.Fatalf("go list: %s", list)
	}
}

func TestLoginDefaultUser(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	// the Java client: username in the query, password in the form body
	r := n.Do("POST", "/nacos/v1/auth/users/login", url.Values{"username": {"nacos"}}, url.Values{"password": {"nacos"}}, nil)
	if r.Status != 200 || !strings.HasPrefix(r.Body, `{"accessToken":"eyJhbGciOiJIUzI1NiJ9.`) || !strings.HasSuffix(r.Body, `","tokenTtl":18000,"globalAdmin":true,"username":"nacos"}`) ||
		!strings.HasPrefix(r.Header.Get("Authorization"), "Bearer eyJ") {
		t.Fatalf("login: %d %s %v", r.Status, r.Body, r.Header)
	}
	if r := n.Do("POST", "/nacos/v1/auth/login", url.Values{"username": {"nacos"}, "password": {"bad"}}, nil, nil); r.Status != 403 || r.Body != "unknown user!" {
		t.Fatalf("bad password: %d %q", r.Status, r.Body)
	}
	if r := n.Do("POST", "/nacos/v1/auth/users/login", url.Values{"password": {"nacos"}}, nil, nil); r.Status != 500 ||
		r.Body != "caused: Required request parameter 'username' for method parameter type String is not present;" {
		t.Fatalf("missing username: %d %q", r.Status, r.Body)
	}
}
