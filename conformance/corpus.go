package conformance

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
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
}

// ParseCorpus reads a corpus file (format described at its top).
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
			cur = &CorpusRequest{Name: strings.TrimSpace(line[4:]), Header: http.Header{}}
		case cur == nil:
			// preamble comments
		case inBody:
			body = append(body, line)
		case strings.HasPrefix(line, "# expect-body"):
			b := strings.TrimPrefix(strings.TrimPrefix(line, "# expect-body"), " ")
			cur.ExpectBody = &b
		case strings.HasPrefix(line, "# expect "):
			st, err := strconv.Atoi(strings.TrimSpace(line[len("# expect "):]))
			if err != nil {
				return nil, fmt.Errorf("conformance: corpus line %d: %w", n, err)
			}
			cur.ExpectStatus = st
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

// LoadCorpus parses the corpus file at path.
func LoadCorpus(path string) ([]CorpusRequest, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: corpus: %w", err)
	}
	defer f.Close()
	return ParseCorpus(f)
}

// CorpusResponse is what a target answered, normalised.
type CorpusResponse struct {
	Status      int
	ContentType string
	Body        string
	Err         string
}

var normalisers = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?`), `<date>`},
	{regexp.MustCompile(`"(lastRefTime|lastModified|createTime|modifyTime|lastBeat|timestamp)":\s*("\d+"|\d+)`), `"$1":<ms>`},
	{regexp.MustCompile(`"(checksum|md5)":\s*"[0-9a-f]*"`), `"$1":"<hash>"`},
	{regexp.MustCompile(`"(id)":\s*("\d+"|\d+)`), `"$1":<id>`},
	{regexp.MustCompile(`"(cpu|load|mem)":\s*[-0-9.E]+`), `"$1":<f>`},
	{regexp.MustCompile(`"accessToken":"[^"]*"`), `"accessToken":"<token>"`},
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

// Send sends req to s with {run} replaced and returns the normalised response.
func (req CorpusRequest) Send(s *Server, run string, client *http.Client) CorpusResponse {
	target := strings.ReplaceAll(req.Target, "{run}", run)
	hr, err := http.NewRequest(req.Method, s.URL(target), strings.NewReader(strings.ReplaceAll(req.Body, "{run}", run)))
	if err != nil {
		return CorpusResponse{Err: err.Error()}
	}
	hr.Header = req.Header.Clone()
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
	// The server's own HTTP and raft ports appear in operator/servers & co.
	body := regexp.MustCompile(`\b`+strconv.Itoa(s.Port)+`\b`).ReplaceAllString(string(b), "<port>")
	body = regexp.MustCompile(`\b`+strconv.Itoa(s.Port-1000)+`\b`).ReplaceAllString(body, "<raft-port>")
	return CorpusResponse{Status: resp.StatusCode, ContentType: ct, Body: Normalise(body, run)}
}

// RunCorpus sends every request to every server (each server sees the
// requests in file order) and adds one result per request and server:
// against the spec's expectations, and, when several servers ran, against
// the reference's normalised response.
func RunCorpus(reqs []CorpusRequest, servers []*Server, run string, rs *Results) map[string]map[string]CorpusResponse {
	client := &http.Client{Timeout: 40 * time.Second}
	got := map[string]map[string]CorpusResponse{}
	for _, s := range servers {
		for _, r := range reqs {
			start := time.Now()
			resp := r.Send(s, run, client)
			ms := time.Since(start).Milliseconds()
			if got[r.Name] == nil {
				got[r.Name] = map[string]CorpusResponse{}
			}
			got[r.Name][s.Name] = resp
			res := Result{Scenario: "corpus/" + r.Name, Target: s.Name, OK: true, Ms: ms,
				Detail: fmt.Sprintf("%d %s", resp.Status, short(resp.Body))}
			switch {
			case resp.Err != "":
				res.OK, res.Detail = false, resp.Err
			case r.ExpectStatus != 0 && resp.Status != r.ExpectStatus:
				res.OK, res.Detail = false, fmt.Sprintf("status %d, spec says %d; body %s", resp.Status, r.ExpectStatus, short(resp.Body))
			case r.ExpectBody != nil && resp.Body != *r.ExpectBody:
				res.OK, res.Detail = false, fmt.Sprintf("body %q, spec says %q", short(resp.Body), *r.ExpectBody)
			}
			rs.Add(res)
		}
	}
	// Differential check against the reference.
	for _, r := range reqs {
		ref, okR := got[r.Name][TargetReference]
		n, okN := got[r.Name][TargetNacosd]
		if !okR || !okN {
			continue
		}
		if diff := compareResponses(ref, n); diff != "" {
			res, _ := rs.Get("corpus/"+r.Name, TargetNacosd)
			res.OK, res.Detail = false, "differs from java-nacos: "+diff
			rs.Add(res)
		}
	}
	return got
}

func compareResponses(ref, n CorpusResponse) string {
	switch {
	case ref.Status != n.Status:
		return fmt.Sprintf("status %d vs %d", ref.Status, n.Status)
	case ref.ContentType != n.ContentType:
		return fmt.Sprintf("content-type %q vs %q", ref.ContentType, n.ContentType)
	case ref.Body != n.Body:
		return fmt.Sprintf("body %q vs %q", short(ref.Body), short(n.Body))
	}
	return ""
}

func short(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
