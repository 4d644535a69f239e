package server_test

import (
	"bufio"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/server/servertest"
)

// Held long polls leave fasthttp until answered (server/httpapi/held.go);
// these tests drive them over raw TCP and compare the bytes on the wire.

func md5Hex(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

// rawClient is one keep-alive connection.
type rawClient struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, n *servertest.Node) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", n.HTTPAddr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawClient{t: t, c: c, r: bufio.NewReader(c)}
}

func (rc *rawClient) send(req string) {
	rc.t.Helper()
	if _, err := io.WriteString(rc.c, req); err != nil {
		rc.t.Fatal(err)
	}
}

// read returns one response as it came (head and body), within d.
func (rc *rawClient) read(d time.Duration) (string, error) {
	_ = rc.c.SetReadDeadline(time.Now().Add(d))
	var head strings.Builder
	length := 0
	for {
		line, err := rc.r.ReadString('\n')
		head.WriteString(line)
		if err != nil {
			return head.String(), err
		}
		if line == "\r\n" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
			length, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	body := make([]byte, length)
	_, err := io.ReadFull(rc.r, body)
	return head.String() + string(body), err
}

func (rc *rawClient) mustRead(d time.Duration) string {
	rc.t.Helper()
	s, err := rc.read(d)
	if err != nil {
		rc.t.Fatalf("read %q: %v", s, err)
	}
	return s
}

// closed reports whether the server closed the connection within d.
func (rc *rawClient) closed(d time.Duration) bool {
	_ = rc.c.SetReadDeadline(time.Now().Add(d))
	_, err := rc.r.ReadByte()
	return err == io.EOF
}

func listenRequest(proto, dataID, group, md5 string, extra string) string {
	body := "Listening-Configs=" + url.QueryEscape(dataID+"\x02"+group+"\x02"+md5+"\x01")
	return fmt.Sprintf("POST /nacos/v1/cs/configs/listener %s\r\nHost: x\r\nLong-Pulling-Timeout: 30000\r\n%sContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n%s",
		proto, extra, len(body), body)
}

func getConfigRequest(dataID, group string) string {
	return "GET /nacos/v1/cs/configs?dataId=" + dataID + "&group=" + group + " HTTP/1.1\r\nHost: x\r\n\r\n"
}

func publish(t *testing.T, n *servertest.Node, dataID, group, content string) {
	t.Helper()
	r := n.Do("POST", "/nacos/v1/cs/configs", nil, url.Values{"dataId": {dataID}, "group": {group}, "content": {content}}, nil)
	if r.Status != 200 || r.Body != "true" {
		t.Fatalf("publish %s: %d %s", dataID, r.Status, r.Body)
	}
}

// waitHeld waits until a poll of this test's client (127.0.0.1) is held on
// dataID/group.
func waitHeld(t *testing.T, n *servertest.Node, dataID, group string) {
	t.Helper()
	servertest.Eventually(t, 5*time.Second, func() error {
		r := n.Do("GET", "/nacos/v1/cs/configs/listener", url.Values{"dataId": {dataID}, "group": {group}}, nil, nil)
		if !strings.Contains(r.Body, `"127.0.0.1"`) {
			return fmt.Errorf("watchers %s", r.Body)
		}
		return nil
	})
}

var dateRe = regexp.MustCompile(`\r\nDate: [^\r]+\r\n`)

func noDate(t *testing.T, s string) string {
	t.Helper()
	if !dateRe.MatchString(s) {
		t.Fatalf("no Date header in %q", s)
	}
	return dateRe.ReplaceAllString(s, "\r\nDate: *\r\n")
}

// The answers of a held poll, byte for byte as fasthttp wrote them when
// the handler blocked (raw capture before held.go).
const (
	heldChangedAnswer = "HTTP/1.1 200 OK\r\nDate: *\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: 10\r\n" +
		"Pragma: no-cache\r\nExpires: Thu, 01 Jan 1970 00:00:00 GMT\r\nCache-Control: no-cache,no-store\r\n\r\nhp%02g%01\n"
	heldEmptyAnswer = "HTTP/1.1 200 OK\r\nDate: *\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: 0\r\n\r\n"
)

// TestHeldPollAnswerAndKeepAlive: a held poll is answered after a publish
// with the bytes of before, and its connection then serves the next
// requests, another held poll among them.
func TestHeldPollAnswerAndKeepAlive(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	publish(t, n, "hp", "g", "v1")
	rc := dialRaw(t, n)
	rc.send(listenRequest("HTTP/1.1", "hp", "g", md5Hex("v1"), ""))
	waitHeld(t, n, "hp", "g")
	publish(t, n, "hp", "g", "v2")
	if got := noDate(t, rc.mustRead(5*time.Second)); got != heldChangedAnswer {
		t.Fatalf("held answer\n%q\nwant\n%q", got, heldChangedAnswer)
	}
	rc.send(getConfigRequest("hp", "g"))
	if got := rc.mustRead(5 * time.Second); !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, "\r\n\r\nv2") {
		t.Fatalf("second request on the connection: %q", got)
	}
	// held again on the same connection, answered again
	rc.send(listenRequest("HTTP/1.1", "hp", "g", md5Hex("v2"), ""))
	waitHeld(t, n, "hp", "g")
	publish(t, n, "hp", "g", "v3")
	if got := noDate(t, rc.mustRead(5*time.Second)); got != heldChangedAnswer {
		t.Fatalf("second held answer %q", got)
	}
	rc.send(getConfigRequest("hp", "g"))
	if got := rc.mustRead(5 * time.Second); !strings.HasSuffix(got, "\r\n\r\nv3") {
		t.Fatalf("request after the second hold: %q", got)
	}
}

// TestHeldPollPipelined: a request sent behind a held poll (pipelined,
// already read by fasthttp) is served after the poll's answer.
func TestHeldPollPipelined(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	publish(t, n, "hp", "g", "v1")
	rc := dialRaw(t, n)
	rc.send(listenRequest("HTTP/1.1", "hp", "g", md5Hex("v1"), "") + getConfigRequest("hp", "g"))
	waitHeld(t, n, "hp", "g")
	publish(t, n, "hp", "g", "v2")
	if got := noDate(t, rc.mustRead(5*time.Second)); got != heldChangedAnswer {
		t.Fatalf("held answer %q", got)
	}
	if got := rc.mustRead(5 * time.Second); !strings.HasSuffix(got, "\r\n\r\nv2") {
		t.Fatalf("pipelined request: %q", got)
	}
}

// TestHeldPollConnectionClose: "Connection: close" and HTTP/1.0 without
// keep-alive close after the answer; HTTP/1.0 with keep-alive stays open.
func TestHeldPollConnectionClose(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	publish(t, n, "hp", "g", "v1")
	cases := []struct {
		name, proto, extra, header string
		open                       bool
	}{
		{"close", "HTTP/1.1", "Connection: close\r\n", "\r\nConnection: close\r\n", false},
		{"http10", "HTTP/1.0", "", "\r\nConnection: close\r\n", false},
		{"http10-keepalive", "HTTP/1.0", "Connection: keep-alive\r\n", "\r\nConnection: keep-alive\r\n", true},
	}
	clients := make([]*rawClient, len(cases))
	for i, tc := range cases {
		clients[i] = dialRaw(t, n)
		clients[i].send(listenRequest(tc.proto, "hp", "g", md5Hex("v1"), tc.extra))
	}
	waitHeld(t, n, "hp", "g")
	time.Sleep(100 * time.Millisecond) // all three held
	publish(t, n, "hp", "g", "v2")
	for i, tc := range cases {
		rc := clients[i]
		got := rc.mustRead(5 * time.Second)
		if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.Contains(got, tc.header) || !strings.HasSuffix(got, "\r\n\r\nhp%02g%01\n") {
			t.Errorf("%s: answer %q", tc.name, got)
			continue
		}
		if !tc.open {
			if !rc.closed(5 * time.Second) {
				t.Errorf("%s: connection left open", tc.name)
			}
			continue
		}
		rc.send("GET /nacos/v1/cs/configs?dataId=hp&group=g HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
		if got := rc.mustRead(5 * time.Second); !strings.HasSuffix(got, "\r\n\r\nv2") {
			t.Errorf("%s: next request %q", tc.name, got)
		}
	}
}

// TestHeldPollShutdown: closing the node answers every held poll at once
// (empty 200) and closes the connections, and so it does with connections
// answered earlier that wait for their next request.
func TestHeldPollShutdown(t *testing.T) {
	n := servertest.Start(t, servertest.Config(t))
	publish(t, n, "hp", "g", "v1")
	idle := dialRaw(t, n)
	idle.send(listenRequest("HTTP/1.1", "hp", "g", "stale", "")) // answered at once
	idle.mustRead(5 * time.Second)
	idle2 := dialRaw(t, n)
	idle2.send(listenRequest("HTTP/1.1", "other", "g", "", ""))
	waitHeld(t, n, "other", "g")
	publish(t, n, "other", "g", "x") // answered through held.go, then waits for a request
	idle2.mustRead(5 * time.Second)
	const k = 20
	clients := make([]*rawClient, k)
	for i := range clients {
		clients[i] = dialRaw(t, n)
		clients[i].send(listenRequest("HTTP/1.1", "hp", "g", md5Hex("v1"), ""))
	}
	servertest.Eventually(t, 5*time.Second, func() error {
		r := n.Do("GET", "/nacos/v1/cs/listener", url.Values{"ip": {"127.0.0.1"}}, nil, nil)
		if !strings.Contains(r.Body, "hp+g") {
			return fmt.Errorf("watched %s", r.Body)
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond) // all k held
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	var wg sync.WaitGroup
	for i, rc := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := rc.read(5 * time.Second)
			if err != nil {
				t.Errorf("holder %d: %q %v", i, got, err)
				return
			}
			if want := "HTTP/1.1 200 OK\r\nDate: *\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"; noDate(t, got) != want {
				t.Errorf("holder %d: %q", i, got)
			}
			if !rc.closed(5 * time.Second) {
				t.Errorf("holder %d: connection left open", i)
			}
		}()
	}
	wg.Wait()
	for i, rc := range []*rawClient{idle, idle2} {
		if !rc.closed(5 * time.Second) {
			t.Errorf("idle connection %d left open", i)
		}
	}
	if err := <-closed; err != nil {
		t.Errorf("close: %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("shutdown took %v", el)
	}
}

// TestHeldPollDisconnected: held polls cost no goroutine, and holders
// whose clients went away leave none behind once answered.
func TestHeldPollDisconnected(t *testing.T) {
	cfg := servertest.Config(t)
	n := servertest.Start(t, cfg)
	publish(t, n, "hp", "g", "v1")
	publish(t, n, "hq", "g", "v1")
	time.Sleep(100 * time.Millisecond)
	before := goroutines()
	const k = 50
	var conns []net.Conn
	for i := range k {
		c, err := net.Dial("tcp", n.HTTPAddr())
		if err != nil {
			t.Fatal(err)
		}
		id := "hp"
		if i%2 == 1 {
			id = "hq"
		}
		io.WriteString(c, listenRequest("HTTP/1.1", id, "g", md5Hex("v1"), ""))
		conns = append(conns, c)
	}
	servertest.Eventually(t, 5*time.Second, func() error {
		r := n.Do("GET", "/nacos/v1/cs/listener", url.Values{"ip": {"127.0.0.1"}}, nil, nil)
		if !strings.Contains(r.Body, "hp+g") || !strings.Contains(r.Body, "hq+g") {
			return fmt.Errorf("watched %s", r.Body)
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond)
	// fasthttp's idle workers linger up to 10 s: count what holds a poll
	if g := holding(); g != 0 {
		t.Errorf("%d goroutines hold the %d polls", g, k)
	}
	for _, c := range conns {
		c.Close()
	}
	publish(t, n, "hp", "g", "v2")
	publish(t, n, "hq", "g", "v2")
	servertest.Eventually(t, 10*time.Second, func() error {
		if g := holding(); g != 0 {
			return fmt.Errorf("%d goroutines still in held.go or the listen handler", g)
		}
		if g := goroutines(); g > before+5 {
			return fmt.Errorf("%d goroutines, %d before the holders", g, before)
		}
		return nil
	})
}

// holding counts the goroutines in the long-poll handler or held.go.
func holding() int {
	k := 0
	for _, g := range stacks() {
		if strings.Contains(g, "httpapi.(*configHandlers).listen") || strings.Contains(g, "httpapi.(*heldPoll") {
			k++
		}
	}
	return k
}

// goroutines counts the goroutines but fasthttp's idle workers, which
// linger up to 10 s after their last connection.
func goroutines() int {
	k := 0
	for _, g := range stacks() {
		if !strings.Contains(g, "fasthttp.(*workerPool).workerFunc") || strings.Contains(g, "serveConn") {
			k++
		}
	}
	return k
}

func stacks() []string {
	buf := make([]byte, 1<<22)
	return strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n")
}

// TestHeldPollObserved: the access log and the metrics see a held poll
// once it is answered, with its whole duration and the bytes sent, as when
// the handler blocked.
func TestHeldPollObserved(t *testing.T) {
	n := opsNode(t)
	publish(t, n, "hp", "g", "v1")
	rc := dialRaw(t, n)
	rc.send(listenRequest("HTTP/1.1", "hp", "g", md5Hex("v1"), "User-Agent: held-client\r\n"))
	waitHeld(t, n, "hp", "g")
	time.Sleep(300 * time.Millisecond)
	file := filepath.Join(n.Cfg.Ops.AccessLog.Dir, "access_log."+time.Now().Format("2006-01-02")+".log")
	time.Sleep(1100 * time.Millisecond) // the log's flush interval
	if data, _ := os.ReadFile(file); strings.Contains(string(data), "POST /nacos/v1/cs/configs/listener") {
		t.Fatalf("held poll logged before its answer:\n%s", data)
	}
	publish(t, n, "hp", "g", "v2")
	rc.mustRead(5 * time.Second)
	re := regexp.MustCompile(`"POST /nacos/v1/cs/configs/listener HTTP/1\.1" 200 10 (\d+) held-client -\n`)
	servertest.Eventually(t, 5*time.Second, func() error {
		data, _ := os.ReadFile(file)
		m := re.FindStringSubmatch(string(data))
		if m == nil {
			return fmt.Errorf("no listener line in\n%s", data)
		}
		if ms, _ := strconv.Atoi(m[1]); ms < 1400 {
			return fmt.Errorf("held for %s ms: %s", m[1], m[0])
		}
		return nil
	})
	got, ok := find(scrape(t, n), "http_server_requests_seconds_count", map[string]string{"method": "POST", "status": "200", "uri": "/v1/cs/configs/listener"})
	if !ok || got != 1 {
		t.Errorf("listener requests counted %v (present %v)", got, ok)
	}
}
