package conformance

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CorpusRequest is one raw HTTP request of conformance/corpus/*.http.
type CorpusRequest struct {
	Name   string
	Method string
	// Target is the path and query, with {run} still in it.
	Target string
	Header http.Header
	Body   string
	// ExpectStatus is the status the spec gives (0: none given).
	ExpectStatus int
	// ExpectBody is the exact body the spec gives (nil: none given).
	ExpectBody *string
	// ExpectType is the content type the answer must have (lower case, no
	// spaces; "" none given): with Poll, it tells a settled answer from a
	// transient one that has the same status.
	ExpectType string
	// Poll, when set, resends the request until the spec's expectations
	// hold or Poll has passed (a write becomes readable on Java only after
	// its asynchronous dump; a real app waits the same way).
	Poll time.Duration
	// PollMatch, when set, resends the request to the reference until its
	// answer equals nacosd's (as Compare compares) or PollMatch has
	// passed: for reads after writes that Java applies asynchronously
	// (persistent instances and service metadata go through its CP
	// store's notifier), whose settled answer is what is compared.
	PollMatch time.Duration
	// Compare is what the differential check compares: "all" (default:
	// status, client-read headers, body), "keys" (as all, but JSON object
	// keys in any order: Jackson writes getter-only properties in the
	// JVM's declared-method order, which changes between JVM starts),
	// "unordered" (as all, but JSON
	// bodies compared with object keys and array elements in any order:
	// for answers whose order follows Java's hash tables through a
	// history nacosd does not replay), "extends" (as keys, but nacosd's
	// JSON object may carry keys Java's lacks: nacosd's own additions, such
	// as the build in /v1/console/server/state), "status" (status and
	// content type only, for answers that carry machine state such as load
	// figures) or "none".
	Compare string
	// Upload, when set, sends Body as a zip file in a multipart form:
	// {field, filename}; the body holds the zip entries as
	// "--- entry <path>" lines each followed by its content.
	Upload *[2]string
	// File is the corpus file the request came from (its area).
	File string
	// Captures take values out of each target's answer for later
	// requests to that target: "{name}" is replaced by the first
	// submatch of the regexp in the raw body (server-assigned ids).
	Captures []Capture
}

// Capture is a "# capture <name> <regexp>" directive.
type Capture struct {
	Name string
	Re   *regexp.Regexp
}

// Vars are the substitutions of one target's requests: "run" and every
// captured value.
type Vars map[string]string

func (v Vars) subst(s string) string {
	for k, val := range v {
		s = strings.ReplaceAll(s, "{"+k+"}", val)
	}
	return s
}

// ParseCorpus reads a corpus file (format in corpus/README.md).
func ParseCorpus(r io.Reader) ([]CorpusRequest, error) {
	var out []CorpusRequest
	var cur *CorpusRequest
	inBody := false
	var body []string
	flush := func() {
		if cur != nil {
			cur.Body = strings.TrimRight(strings.Join(body, "\n"), "\n")
			out = append(out, *cur)
		}
		cur, inBody, body = nil, false, nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "### "):
			flush()
			cur = &CorpusRequest{Name: strings.TrimSpace(line[4:]), Header: http.Header{}, Compare: "all"}
		case cur == nil:
			// preamble comments
		case inBody:
			body = append(body, line)
		case strings.HasPrefix(line, "# expect-body"):
			b := strings.TrimPrefix(strings.TrimPrefix(line, "# expect-body"), " ")
			cur.ExpectBody = &b
		case strings.HasPrefix(line, "# expect-type "):
			cur.ExpectType = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(line[len("# expect-type "):])), " ", "")
		case strings.HasPrefix(line, "# expect "):
			st, err := strconv.Atoi(strings.TrimSpace(line[len("# expect "):]))
			if err != nil {
				return nil, fmt.Errorf("conformance: corpus line %d: %w", n, err)
			}
			cur.ExpectStatus = st
		case strings.HasPrefix(line, "# poll "):
			ms, err := strconv.Atoi(strings.TrimSpace(line[len("# poll "):]))
			if err != nil {
				return nil, fmt.Errorf("conformance: corpus line %d: %w", n, err)
			}
			cur.Poll = time.Duration(ms) * time.Millisecond
		case strings.HasPrefix(line, "# poll-match "):
			ms, err := strconv.Atoi(strings.TrimSpace(line[len("# poll-match "):]))
			if err != nil {
				return nil, fmt.Errorf("conformance: corpus line %d: %w", n, err)
			}
			cur.PollMatch = time.Duration(ms) * time.Millisecond
		case strings.HasPrefix(line, "# capture "):
			name, expr, ok := strings.Cut(strings.TrimSpace(line[len("# capture "):]), " ")
			re, err := regexp.Compile(expr)
			if !ok || err != nil || re.NumSubexp() < 1 {
				return nil, fmt.Errorf("conformance: corpus line %d: want # capture <name> <regexp with a group>", n)
			}
			cur.Captures = append(cur.Captures, Capture{name, re})
		case strings.HasPrefix(line, "# compare "):
			cur.Compare = strings.TrimSpace(line[len("# compare "):])
			if cur.Compare != "all" && cur.Compare != "status" && cur.Compare != "none" && cur.Compare != "unordered" && cur.Compare != "keys" && cur.Compare != "extends" {
				return nil, fmt.Errorf("conformance: corpus line %d: compare %q", n, cur.Compare)
			}
		case strings.HasPrefix(line, "# upload-zip "):
			f := strings.Fields(line[len("# upload-zip "):])
			if len(f) != 2 {
				return nil, fmt.Errorf("conformance: corpus line %d: want # upload-zip <field> <filename>", n)
			}
			cur.Upload = &[2]string{f[0], f[1]}
		case strings.HasPrefix(line, "#"):
		case cur.Method == "":
			if strings.TrimSpace(line) == "" {
				continue
			}
			m, t, ok := strings.Cut(line, " ")
			if !ok {
				return nil, fmt.Errorf("conformance: corpus line %d: want METHOD /path, got %q", n, line)
			}
			cur.Method, cur.Target = m, strings.TrimSpace(t)
		case strings.TrimSpace(line) == "":
			inBody = true
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("conformance: corpus line %d: bad header %q", n, line)
			}
			cur.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	flush()
	return out, sc.Err()
}

// LoadCorpus parses every *.http file of dir, in name order.
func LoadCorpus(dir string) ([]CorpusRequest, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.http"))
	if err != nil {
		return nil, fmt.Errorf("conformance: corpus: %w", err)
	}
	sort.Strings(files)
	var all []CorpusRequest
	seen := map[string]string{}
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("conformance: corpus: %w", err)
		}
		reqs, err := ParseCorpus(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("conformance: corpus %s: %w", filepath.Base(p), err)
		}
		for i := range reqs {
			reqs[i].File = filepath.Base(p)
			if prev, dup := seen[reqs[i].Name]; dup {
				return nil, fmt.Errorf("conformance: corpus: %s named twice (%s, %s)", reqs[i].Name, prev, reqs[i].File)
			}
			seen[reqs[i].Name] = reqs[i].File
		}
		all = append(all, reqs...)
	}
	return all, nil
}

// CorpusResponse is what a target answered, normalised.
type CorpusResponse struct {
	Status      int
	ContentType string
	// Headers holds the normalised values of the headers clients read
	// (ComparedHeaders), present ones only.
	Headers map[string]string
	Body    string
	Err     string
	// Raw is the body as it came (captures read it).
	Raw string
}

// ComparedHeaders are the response headers Nacos clients and consoles read.
var ComparedHeaders = []string{"Content-MD5", "Config-Type", "Content-Encoding", "Cache-Control", "Pragma", "Expires",
	"Last-Modified", "Content-Disposition", "Encrypted-Data-Key"}

var normalisers = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`), `<date>`},
	{regexp.MustCompile(`(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT`), `<http-date>`},
	{regexp.MustCompile(`"(lastRefTime|lastModified|createTime|modifyTime|lastBeat|timestamp|createdTime|lastModifiedTime|lastUpdateTime)":\s*("\d+"|\d+)`), `"$1":<ms>`},
	{regexp.MustCompile(`"(checksum|md5)":\s*"[0-9a-f]*"`), `"$1":"<hash>"`},
	{regexp.MustCompile(`"(id|nid|cfgId)":\s*("\d+"|\d+)`), `"$1":<id>`},
	{regexp.MustCompile(`"(cpu|load|mem)":\s*[-0-9.E]+`), `"$1":<f>`},
	// the old naming raft's peer timers and the health checker's
	// normalised RT start random
	{regexp.MustCompile(`"(leaderDueMs|heartbeatDueMs|checkRTNormalized)":\s*-?\d+`), `"$1":<n>`},
	{regexp.MustCompile(`"accessToken":"[^"]*"`), `"accessToken":"<token>"`},
	{regexp.MustCompile(`(^|[^0-9])20\d{12}([^0-9]|$)`), `${1}<yyyyMMddHHmmss>${2}`},
	{regexp.MustCompile(`\b1\d{12}\b`), `<ms>`},
}

// Normalise replaces timestamps, checksums, ids, dates and load figures.
func Normalise(body, run string) string {
	body = strings.ReplaceAll(body, run, "{run}")
	for _, n := range normalisers {
		body = n.re.ReplaceAllString(body, n.repl)
	}
	return body
}

// uploadBody builds the multipart form of an upload-zip request.
func (req CorpusRequest) uploadBody(vars Vars) (string, []byte, error) {
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	var cur io.Writer
	content := vars.subst(req.Body)
	if content != "" {
		for i, line := range strings.Split(content, "\n") {
			if name, ok := strings.CutPrefix(line, "--- entry "); ok {
				w, err := zw.Create(strings.TrimSpace(name))
				if err != nil {
					return "", nil, err
				}
				cur = w
				continue
			}
			if cur == nil {
				return "", nil, fmt.Errorf("conformance: %s: zip content before the first entry (line %d)", req.Name, i+1)
			}
			if _, err := io.WriteString(cur, line+"\n"); err != nil {
				return "", nil, err
			}
		}
	}
	if err := zw.Close(); err != nil {
		return "", nil, err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.SetBoundary("nacosdCorpusBoundary7e3f")
	fw, err := mw.CreateFormFile(req.Upload[0], req.Upload[1])
	if err != nil {
		return "", nil, err
	}
	fw.Write(zbuf.Bytes())
	if err := mw.Close(); err != nil {
		return "", nil, err
	}
	return mw.FormDataContentType(), body.Bytes(), nil
}

// Send sends req to s with {run} replaced and returns the normalised response.
func (req CorpusRequest) Send(s *Server, vars Vars, client *http.Client) CorpusResponse {
	run := vars["run"]
	target := vars.subst(req.Target)
	body := []byte(vars.subst(req.Body))
	ctype := ""
	if req.Upload != nil {
		var err error
		if ctype, body, err = req.uploadBody(vars); err != nil {
			return CorpusResponse{Err: err.Error()}
		}
	}
	hr, err := http.NewRequest(req.Method, s.URL(target), bytes.NewReader(body))
	if err != nil {
		return CorpusResponse{Err: err.Error()}
	}
	hr.Header = req.Header.Clone()
	for k, vs := range hr.Header {
		for i, v := range vs {
			hr.Header[k][i] = vars.subst(v)
		}
	}
	if ctype != "" {
		hr.Header.Set("Content-Type", ctype)
	}
	resp, err := client.Do(hr)
	if err != nil {
		return CorpusResponse{Err: err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return CorpusResponse{Err: err.Error()}
	}
	ct := strings.ReplaceAll(strings.ToLower(resp.Header.Get("Content-Type")), " ", "")
	text := string(b)
	if bytes.HasPrefix(b, []byte("PK\x03\x04")) {
		text = zipText(b)
	}
	// The server's own HTTP and raft ports appear in operator/servers & co.
	ports := func(v string) string {
		v = regexp.MustCompile(`\b`+strconv.Itoa(s.Port)+`\b`).ReplaceAllString(v, "<port>")
		return regexp.MustCompile(`\b`+strconv.Itoa(s.Port-1000)+`\b`).ReplaceAllString(v, "<raft-port>")
	}
	out := CorpusResponse{Status: resp.StatusCode, ContentType: ct, Body: Normalise(ports(text), run), Headers: map[string]string{}, Raw: text}
	for _, h := range ComparedHeaders {
		if v := resp.Header.Values(h); len(v) > 0 {
			out.Headers[h] = Normalise(strings.Join(v, ", "), run)
		}
	}
	return out
}

// zipText renders a zip archive as its entries in order: name, then the
// content (export/import bodies are compared entry by entry).
func zipText(b []byte) string {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return "zip (unreadable: " + err.Error() + ")"
	}
	var sb strings.Builder
	sb.WriteString("zip:")
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			fmt.Fprintf(&sb, "\n--- %s (unreadable: %v)", f.Name, err)
			continue
		}
		c, _ := io.ReadAll(rc)
		rc.Close()
		fmt.Fprintf(&sb, "\n--- %s\n%s", f.Name, c)
	}
	return sb.String()
}

// meets reports whether resp holds the spec's expectations, and why not.
func (req CorpusRequest) meets(resp CorpusResponse) string {
	switch {
	case resp.Err != "":
		return resp.Err
	case req.ExpectStatus != 0 && resp.Status != req.ExpectStatus:
		return fmt.Sprintf("status %d, spec says %d; body %s", resp.Status, req.ExpectStatus, short(resp.Body))
	case req.ExpectBody != nil && resp.Body != *req.ExpectBody:
		return fmt.Sprintf("body %q, spec says %q", short(resp.Body), *req.ExpectBody)
	case req.ExpectType != "" && resp.ContentType != req.ExpectType:
		return fmt.Sprintf("content type %q, want %q", resp.ContentType, req.ExpectType)
	}
	return ""
}

// RunCorpus sends every request to every server (each server sees the
// requests in file order; servers run concurrently) and adds one result per
// request and server: against the spec's expectations, and, when several
// servers ran, against the reference's normalised response. Requests named
// in l.JavaDefects are judged by their expectations only.
func RunCorpus(reqs []CorpusRequest, servers []*Server, run string, rs *Results, l Lists) map[string]map[string]CorpusResponse {
	client := &http.Client{Timeout: 40 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	got := map[string]map[string]CorpusResponse{}
	var mu sync.Mutex
	// nacosd's answer to each request, for the reference's poll-match
	nacosdDone := make([]chan CorpusResponse, len(reqs))
	for i := range nacosdDone {
		nacosdDone[i] = make(chan CorpusResponse, 1)
	}
	hasNacosd := false
	for _, s := range servers {
		hasNacosd = hasNacosd || s.Name == TargetNacosd
	}
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			vars := Vars{"run": run}
			for i, r := range reqs {
				start := time.Now()
				resp := r.Send(s, vars, client)
				for r.Poll > 0 && r.meets(resp) != "" && time.Since(start) < r.Poll {
					time.Sleep(20 * time.Millisecond)
					resp = r.Send(s, vars, client)
				}
				if s.Name == TargetNacosd {
					nacosdDone[i] <- resp
				} else if r.PollMatch > 0 && hasNacosd && s.Name == TargetReference {
					var want CorpusResponse
					select {
					case want = <-nacosdDone[i]:
						nacosdDone[i] <- want
					case <-time.After(r.PollMatch + time.Minute):
					}
					for compareResponses(r.Compare, resp, want) != "" && time.Since(start) < r.PollMatch {
						time.Sleep(20 * time.Millisecond)
						resp = r.Send(s, vars, client)
					}
				}
				for _, c := range r.Captures {
					if m := c.Re.FindStringSubmatch(resp.Raw); m != nil {
						vars[c.Name] = m[1]
					}
				}
				ms := time.Since(start).Milliseconds()
				res := Result{Scenario: "corpus/" + r.Name, Target: s.Name, OK: true, Ms: ms,
					Detail: fmt.Sprintf("%d %s", resp.Status, short(resp.Body))}
				if why := r.meets(resp); why != "" {
					res.OK, res.Detail = false, why
				}
				rs.Add(res)
				mu.Lock()
				if got[r.Name] == nil {
					got[r.Name] = map[string]CorpusResponse{}
				}
				got[r.Name][s.Name] = resp
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Differential check against the reference.
	for _, r := range reqs {
		ref, okR := got[r.Name][TargetReference]
		n, okN := got[r.Name][TargetNacosd]
		if _, defect := l.JavaDefects.Reason("corpus/" + r.Name); !okR || !okN || defect {
			continue
		}
		if diff := compareResponses(r.Compare, ref, n); diff != "" {
			res, _ := rs.Get("corpus/"+r.Name, TargetNacosd)
			res.OK, res.Detail = false, "differs from java-nacos: "+diff
			rs.Add(res)
		}
	}
	return got
}

func compareResponses(mode string, ref, n CorpusResponse) string {
	if mode == "none" {
		return ""
	}
	switch {
	case ref.Status != n.Status:
		return fmt.Sprintf("status java %d, nacosd %d; bodies java %q, nacosd %q", ref.Status, n.Status, short(ref.Body), short(n.Body))
	case ref.ContentType != n.ContentType:
		return fmt.Sprintf("content-type java %q, nacosd %q", ref.ContentType, n.ContentType)
	case mode == "status":
		return ""
	}
	for _, h := range ComparedHeaders {
		if rv, nv := ref.Headers[h], n.Headers[h]; rv != nv {
			return fmt.Sprintf("header %s java %q, nacosd %q", h, rv, nv)
		}
	}
	if ref.Body == n.Body {
		return ""
	}
	if mode == "unordered" || mode == "keys" || mode == "extends" {
		va, okA := decodeNumbers(ref.Body)
		vb, okB := decodeNumbers(n.Body)
		if ma, ok := va.(map[string]any); ok && mode == "extends" {
			if mb, ok := vb.(map[string]any); ok {
				for k := range mb {
					if _, java := ma[k]; !java {
						delete(mb, k)
					}
				}
			}
		}
		if okA && okB {
			ca, cb := canonical(va, mode == "unordered"), canonical(vb, mode == "unordered")
			if ca == cb {
				return ""
			}
			return "body (" + mode + ", canonical) " + bodyDiff(ca, cb)
		}
	}
	return "body " + bodyDiff(ref.Body, n.Body)
}

// bodyDiff shows both bodies from a little before their first difference.
func bodyDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-40)
	if from > 0 {
		return fmt.Sprintf("java …%q, nacosd …%q (at byte %d)", short(a[from:]), short(b[from:]), i)
	}
	return fmt.Sprintf("java %q, nacosd %q", short(a), short(b))
}

// sameJSON reports whether a and b are the same JSON value when object
// keys, and with anyOrder array elements too, may come in any order.
func sameJSON(a, b string, anyOrder bool) bool {
	va, okA := decodeNumbers(a)
	vb, okB := decodeNumbers(b)
	return okA && okB && canonical(va, anyOrder) == canonical(vb, anyOrder)
}

// bareHolder is a normalisation placeholder standing where a JSON value
// goes ("lastBeat":<ms>).
var bareHolder = regexp.MustCompile(`([:\[,]\s*)(<[a-z-]+>)`)

// decodeNumbers decodes s keeping each number's text (1.0 stays 1.0);
// placeholders in value positions are read as strings.
func decodeNumbers(s string) (any, bool) {
	s = bareHolder.ReplaceAllString(s, `$1"$2"`)
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return nil, false
	}
	return v, true
}

// canonical renders v with object keys sorted (encoding/json does) and,
// with anyOrder, array elements sorted by their own canonical form.
func canonical(v any, anyOrder bool) string {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]json.RawMessage, len(t))
		for k, e := range t {
			m[k] = json.RawMessage(canonical(e, anyOrder))
		}
		b, _ := json.Marshal(m)
		return string(b)
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = canonical(e, anyOrder)
		}
		if anyOrder {
			sort.Strings(parts)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		b, _ := json.Marshal(t)
		return string(b)
	}
}

func short(s string) string {
	if len(s) > 200 {
		return strings.ToValidUTF8(s[:200], "") + "…"
	}
	return s
}
