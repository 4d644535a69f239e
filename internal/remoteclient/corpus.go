package remoteclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nacosd/nacosd/compat/remote"
)

// Case is one request of a gRPC corpus file (conformance/grpccorpus/*.grpc): a Payload sent
// on the unary service of a connection that completed its setup (or, with
// Conn "none", of a channel that only did ServerCheckRequest), whose answer
// (type and JSON) is compared between nacosd and the reference.
//
// The file format: "### <name>" starts a case; "type: <class>" sets
// metadata.type (may be empty: "type:"); "header: <k>=<v>" adds a metadata
// header; "conn: none" sends without a registered connection; "compare:
// <keys>" lists the JSON properties compared ("all" by default, "type" for
// the answer's class only); "poll: <ms>" resends to the reference until
// its answer equals nacosd's (reads after Java's asynchronous dump) or, with
// one server, until it contains "expect: <text>" (a success by default);
// "assert: <text>" is text the answer must contain (the protocol's promise,
// which the reference may break: conformance/java-defects.txt); the
// remaining lines up to the next case are the body, sent as they are ({run}
// replaced by the run id).
type Case struct {
	Name    string
	Type    string
	Headers map[string]string
	NoConn  bool
	// Naming sends on a connection labelled module=naming (Java serves
	// naming writes only to those: "conn: naming").
	Naming bool
	// Wait delays the case on a reference target ("wait: <ms>"): Java 2.x
	// serves naming reads from a cache its push task refreshes 500 ms
	// after a write.
	Wait    time.Duration
	Compare []string
	Poll    time.Duration
	// Expect is the text a polled answer must contain to be settled ("" :
	// any success).
	Expect string
	// Assert is text the answer must contain (what the protocol promises:
	// a server whose answer lacks it fails the case).
	Assert []string
	Body   string
	File   string
}

// LoadCorpus reads every *.grpc file of dir in name order.
func LoadCorpus(dir string) ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.grpc"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []Case
	for _, f := range files {
		cs, err := parseCorpus(f)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

func parseCorpus(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Case
	var cur *Case
	var body []string
	flush := func() {
		if cur != nil {
			cur.Body = strings.TrimSpace(strings.Join(body, "\n"))
			out = append(out, *cur)
		}
		cur, body = nil, nil
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if name, ok := strings.CutPrefix(t, "### "); ok {
			flush()
			cur = &Case{Name: strings.TrimSpace(name), File: filepath.Base(path), Headers: map[string]string{}}
			continue
		}
		if cur == nil {
			if strings.TrimSpace(t) == "" || strings.HasPrefix(t, "#") {
				continue
			}
			return nil, fmt.Errorf("%s:%d: text before the first case", path, line)
		}
		if len(body) == 0 {
			if v, ok := strings.CutPrefix(t, "type:"); ok {
				cur.Type = strings.TrimSpace(v)
				continue
			}
			if v, ok := strings.CutPrefix(t, "header:"); ok {
				k, val, _ := strings.Cut(strings.TrimSpace(v), "=")
				cur.Headers[k] = val
				continue
			}
			if v, ok := strings.CutPrefix(t, "conn:"); ok {
				cur.NoConn = strings.TrimSpace(v) == "none"
				cur.Naming = strings.TrimSpace(v) == "naming"
				continue
			}
			if v, ok := strings.CutPrefix(t, "compare:"); ok {
				cur.Compare = strings.Fields(v)
				continue
			}
			if v, ok := strings.CutPrefix(t, "assert:"); ok {
				cur.Assert = append(cur.Assert, strings.TrimSpace(v))
				continue
			}
			if v, ok := strings.CutPrefix(t, "expect:"); ok {
				cur.Expect = strings.TrimSpace(v)
				continue
			}
			if v, ok := strings.CutPrefix(t, "wait:"); ok {
				var ms int
				fmt.Sscan(strings.TrimSpace(v), &ms)
				cur.Wait = time.Duration(ms) * time.Millisecond
				continue
			}
			if v, ok := strings.CutPrefix(t, "poll:"); ok {
				var ms int
				fmt.Sscan(strings.TrimSpace(v), &ms)
				cur.Poll = time.Duration(ms) * time.Millisecond
				continue
			}
			if strings.HasPrefix(t, "#") {
				continue
			}
		}
		body = append(body, t)
	}
	flush()
	return out, sc.Err()
}

// Answer is a server's answer to a case: the answer's class and body,
// or the gRPC error.
type Answer struct {
	Type string
	Body string
	Err  string
}

// volatile are properties whose values differ between any two servers.
var volatile = regexp.MustCompile(`"(lastModified|connectionId|md5|requestId|lastRefTime)":("[^"]*"|-?[0-9]+)`)

// getterRun is a run of the properties Java's Instance has as getters only
// (Jackson writes them in the JVM's declared-method order, which changes
// between JVM starts: one run of Java 2.5.1 wrote ipDeleteTimeout first,
// the next instanceHeartBeatInterval): Normalized sorts each run.
var getterRun = regexp.MustCompile(`"(?:instanceHeartBeatInterval|instanceHeartBeatTimeOut|ipDeleteTimeout|instanceIdGenerator)":(?:"[^",]*"|-?[0-9]+)` +
	`(?:,"(?:instanceHeartBeatInterval|instanceHeartBeatTimeOut|ipDeleteTimeout|instanceIdGenerator)":(?:"[^",]*"|-?[0-9]+))+`)

// sortGetters sorts the properties of each getter-only run of body.
func sortGetters(body string) string {
	return getterRun.ReplaceAllStringFunc(body, func(run string) string {
		parts := strings.Split(run, ",")
		sort.Strings(parts)
		return strings.Join(parts, ",")
	})
}

// connIDs are connection ids in messages ("Client [<ms>_<ip>_<port>] …").
var connIDs = regexp.MustCompile(`\[[0-9]+_[0-9.]+_[0-9]+\]`)

// Normalized returns the answer with volatile values replaced, and only
// the named properties kept when keys is not empty or "all".
func (a Answer) Normalized(keys []string) string {
	if a.Err != "" {
		return "error " + a.Err
	}
	if len(keys) == 1 && keys[0] == "type" {
		return a.Type
	}
	body := volatile.ReplaceAllString(a.Body, `"$1":"*"`)
	body = connIDs.ReplaceAllString(body, "[*]")
	body = sortGetters(body)
	if len(keys) == 0 || (len(keys) == 1 && keys[0] == "all") {
		return a.Type + " " + body
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		return a.Type + " " + body
	}
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+string(m[k]))
	}
	return a.Type + " " + strings.Join(parts, " ")
}

// Target holds the two connections the corpus uses on one server.
type Target struct {
	Addr string
	// Vars replace "{name}" in headers and bodies (tokens of the target).
	Vars map[string]string
	// Reference marks the referee (Java): cases with a Wait wait there.
	Reference bool
	conn      *Client // registered (stream set up)
	bare      *Client // ServerCheckRequest only
	naming    *Client // registered, labelled module=naming
}

// Open dials both connections.
func (t *Target) Open(ctx context.Context) error {
	var err error
	if t.conn, err = Dial(ctx, t.Addr, Options{}); err != nil {
		return err
	}
	if t.bare, err = Dial(ctx, t.Addr, Options{NoStream: true}); err != nil {
		return err
	}
	t.naming, err = Dial(ctx, t.Addr, Options{Labels: map[string]string{"source": "sdk", "module": "naming", "AppName": "remoteclient"}})
	return err
}

// Close closes both connections.
func (t *Target) Close() {
	if t.conn != nil {
		t.conn.Close()
	}
	if t.bare != nil {
		t.bare.Close()
	}
	if t.naming != nil {
		t.naming.Close()
	}
}

// Check returns why an answer breaks the case's assertions ("" if none).
func (c Case) Check(a Answer) string {
	if a.Err != "" {
		return "error " + a.Err
	}
	for _, want := range c.Assert {
		if !strings.Contains(a.Body, want) {
			return "answer lacks " + want + ": " + a.Type + " " + a.Body
		}
	}
	return ""
}

// Settled reports whether a polled answer is final (see Case.Expect).
func (c Case) Settled(a Answer) bool {
	if c.Expect != "" {
		return strings.Contains(a.Body, c.Expect)
	}
	return strings.Contains(a.Body, `"resultCode":200`)
}

// Send sends one case.
func (t *Target) Send(ctx context.Context, c Case, run string) Answer {
	subst := func(s string) string {
		s = strings.ReplaceAll(s, "{run}", run)
		for k, v := range t.Vars {
			s = strings.ReplaceAll(s, "{"+k+"}", v)
		}
		return s
	}
	h := map[string]string{}
	for k, v := range c.Headers {
		h[k] = subst(v)
	}
	if len(h) == 0 {
		h = nil
	}
	p := &remote.Payload{Metadata: remote.Metadata{Type: c.Type, ClientIP: "127.0.0.1", Headers: h},
		Body: []byte(subst(c.Body))}
	if t.Reference && c.Wait > 0 {
		time.Sleep(c.Wait)
	}
	cl := t.conn
	switch {
	case c.NoConn:
		cl = t.bare
	case c.Naming:
		cl = t.naming
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := cl.Raw(ctx, p)
	if err != nil {
		return Answer{Err: err.Error()}
	}
	return Answer{Type: out.Metadata.Type, Body: string(out.Body)}
}
