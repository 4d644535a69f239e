package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
	"github.com/nacosd/nacosd/server"
	"github.com/nacosd/nacosd/server/servertest"
)

// javaExchange is one HTTP exchange recorded between Java Nacos 1.4.8
// nodes (compat/testdata/distro/java148).
type javaExchange struct {
	method, uri string
	header      http.Header
	body        string
	status      int
	respType    string
	respBody    string
}

// javaMembers maps the recorded Java members (127.0.0.1:41848, :41858,
// :41868, raft on port-1000) to free ports, so that nothing listening on
// the recorded ports on this machine takes part in the replay.
type javaMembers map[string]string

func newJavaMembers(t *testing.T) javaMembers {
	m := javaMembers{}
	for _, p := range []int{41848, 41858, 41868} {
		q := servertest.FreePortPair(t, "127.0.0.1")
		m["127.0.0.1:"+strconv.Itoa(p)] = "127.0.0.1:" + strconv.Itoa(q)
		m["127.0.0.1:"+strconv.Itoa(p-1000)] = "127.0.0.1:" + strconv.Itoa(q-1000)
		m[`"raftPort":"`+strconv.Itoa(p-1000)+`"`] = `"raftPort":"` + strconv.Itoa(q-1000) + `"`
		m[`"port":`+strconv.Itoa(p)+`,`] = `"port":` + strconv.Itoa(q) + `,`
	}
	return m
}

func (m javaMembers) rewrite(s string) string {
	for k, v := range m {
		s = strings.ReplaceAll(s, k, v)
		s = strings.ReplaceAll(s, strings.ReplaceAll(k, ":", "%3A"), strings.ReplaceAll(v, ":", "%3A"))
	}
	return s
}

func readJavaExchange(t *testing.T, m javaMembers, name string) javaExchange {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "compat", "testdata", "distro", "java148", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	req, resp, _ := strings.Cut(m.rewrite(string(b)), "\n=== response\n")
	head, body, _ := strings.Cut(req, "\n\n")
	lines := strings.Split(head, "\n")
	f := strings.Fields(lines[0])
	e := javaExchange{method: f[0], uri: f[1], header: http.Header{}, body: strings.TrimSuffix(body, "\n")}
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ": ")
		switch strings.ToLower(k) {
		case "host", "content-length", "connection":
			continue
		}
		e.header.Add(k, v)
	}
	rhead, rbody, _ := strings.Cut(resp, "\n\n")
	rl := strings.Split(rhead, "\n")
	e.status, _ = strconv.Atoi(strings.Fields(rl[0])[1])
	for _, l := range rl[1:] {
		if k, v, _ := strings.Cut(l, ": "); strings.EqualFold(k, "Content-Type") {
			e.respType = v
		}
	}
	e.respBody = strings.TrimSuffix(rbody, "\n")
	return e
}

// replay sends the recorded request to n and returns status, type, body.
func replay(t *testing.T, n *servertest.Node, e javaExchange, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(e.method, "http://"+n.HTTPAddr()+e.uri, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = e.header.Clone()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestJavaNodeExchanges replays every recorded exchange of a Java 1.4.8
// cluster against a nacosd member of that cluster: nacosd accepts each
// request as a Java node does and answers with Java's status, content type
// and, where the state is the same, Java's body byte for byte.
func TestJavaNodeExchanges(t *testing.T) {
	testtier.Require(t, testtier.Integration) // starts a cluster node
	jm := newJavaMembers(t)
	cfg := servertest.ClusterConfigs(t, 1)[0]
	self := cfg.NacosServers[0]
	cfg.NacosServers = []string{self, jm["127.0.0.1:41848"], jm["127.0.0.1:41858"], jm["127.0.0.1:41868"]}
	cfg.ClusterTimings.ReportDelay = time.Hour // the Java peers are not running: no reports
	cfg.ClusterTimings.VerifyInterval = time.Hour
	n := servertest.StartCluster(t, []server.Config{cfg})[0]

	check := func(name string, e javaExchange, st int, ct, body string, compareBody bool) {
		t.Helper()
		if st != e.status || !sameType(ct, e.respType) || (compareBody && body != e.respBody) {
			t.Errorf("%s: nacosd %d %q %s\n   java %d %q %s", name, st, ct, body, e.status, e.respType, e.respBody)
		}
	}

	// the snapshot a starting Java node loads: applied as a sync, then
	// served back exactly
	snap := readJavaExchange(t, jm, "datums-get")
	put := readJavaExchange(t, jm, "datum-put")
	st, ct, body := replay(t, n, put, snap.respBody)
	check("datum-put (snapshot state)", put, st, ct, body, true)
	st, ct, body = replay(t, n, snap, "")
	check("datums-get", snap, st, ct, body, true)

	for _, name := range []string{"datum-put", "datum-put-metadata", "checksum-put", "checksum-put-one",
		"service-status", "service-status-empty", "cluster-report", "raft-vote"} {
		e := readJavaExchange(t, jm, name)
		st, ct, body := replay(t, n, e, e.body)
		check(name, e, st, ct, body, true)
	}

	get := readJavaExchange(t, jm, "datum-get")
	st, ct, body = replay(t, n, put, get.respBody) // Java's state of that key, then the query
	check("datum-put (query state)", put, st, ct, body, true)
	st, ct, body = replay(t, n, get, get.body)
	check("datum-get", get, st, ct, body, true)

	// cluster-state was recorded while the old raft still ran (a member
	// asks only peers that have not reported a version yet). Once every
	// member reports 1.4+, RaftPeerSet.shutdown clears the peers and
	// local() throws: the steady state, which nacosd answers.
	cs := readJavaExchange(t, jm, "cluster-state")
	if st, _, body := replay(t, n, cs, cs.body); st != 500 || !strings.Contains(body, "unable to find local peer: ") {
		t.Errorf("cluster-state: %d %q, want 500 unable to find local peer", st, body)
	}
	for _, name := range []string{"instance-statuses"} {
		e := readJavaExchange(t, jm, name)
		st, ct, body := replay(t, n, e, e.body)
		check(name, e, st, ct, body, false)
		if !strings.HasPrefix(body, "{") {
			t.Errorf("%s: body %s", name, body)
		}
	}

	// requests proxied by DistroFilter or sent by a node to itself: taken
	// when this node owns the service, refused as a second hop otherwise
	for _, name := range []string{"instance-post-proxied", "instance-delete-expired", "beat-proxied"} {
		e := readJavaExchange(t, jm, name)
		svc := queryParam(e.uri, "serviceName")
		if !strings.Contains(svc, "@@") {
			svc = "DEFAULT_GROUP@@" + svc
		}
		r := n.Do("GET", "/nacos/v1/ns/operator/distro/server", url.Values{"serviceName": {svc}}, nil, nil)
		var who struct {
			ResponsibleServer string `json:"responsibleServer"`
		}
		if err := json.Unmarshal([]byte(r.Body), &who); err != nil {
			t.Fatalf("distro/server: %s", r.Body)
		}
		owner := who.ResponsibleServer
		st, ct, body := replay(t, n, e, e.body)
		if owner == self {
			// the recorded answers of the client-side exchanges came back
			// through Java's proxy (application/json;charset=UTF-8, see
			// TestClusterThreeNodes); the owner's own answer is Java's
			// handler's
			if e.header.Get("User-Agent") != "Nacos-Server:1.4.8" {
				e.respType = ct
			}
			check(name, e, st, ct, body, true)
		} else if e.header.Get("User-Agent") == "Nacos-Server:1.4.8" {
			if st != 400 || !strings.Contains(body, "receive invalid redirect request from peer") {
				t.Errorf("%s for %s (owner %s): %d %s, want the second-hop refusal", name, svc, owner, st, body)
			}
		} else if st != 500 || body != "java.net.ConnectException: Connection refused (Connection refused)" || ct != "application/json;charset=UTF-8" {
			// proxied to the owner, which is not running here: Java's answer
			// to a refused connection
			t.Errorf("%s for %s (owner %s, down): %d %q %s", name, svc, owner, st, ct, body)
		}
	}
}

func queryParam(uri, name string) string {
	_, q, _ := strings.Cut(uri, "?")
	for _, kv := range strings.Split(q, "&") {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v
		}
	}
	return ""
}

// sameType compares content types as a client reads them (case and the
// blank after ';' aside).
func sameType(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "; ", ";")) }
	return norm(a) == norm(b)
}
