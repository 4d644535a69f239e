package conformance

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// Result is the outcome of one scenario run by one client against one target.
type Result struct {
	// Scenario is "<client>/<name>", e.g. "java/naming.push.add".
	Scenario string `json:"scenario"`
	// Target is TargetNacosd or TargetReference.
	Target string `json:"target"`
	OK     bool   `json:"ok"`
	// Ms is the latency the scenario measured, -1 if it measures none.
	Ms     int64  `json:"ms"`
	Detail string `json:"detail"`
}

// Results collects results from concurrent runners.
type Results struct {
	mu  sync.Mutex
	all map[string]map[string]Result // scenario -> target -> result
}

// NewResults returns an empty collection.
func NewResults() *Results { return &Results{all: map[string]map[string]Result{}} }

// Add records r, replacing an earlier result for the same scenario and target.
func (rs *Results) Add(r Result) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	m := rs.all[r.Scenario]
	if m == nil {
		m = map[string]Result{}
		rs.all[r.Scenario] = m
	}
	m[r.Target] = r
}

// Get returns the result of scenario on target.
func (rs *Results) Get(scenario, target string) (Result, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r, ok := rs.all[scenario][target]
	return r, ok
}

// Scenarios returns every scenario name, sorted.
func (rs *Results) Scenarios() []string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := make([]string, 0, len(rs.all))
	for k := range rs.all {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// KnownFailures maps a scenario (or a prefix ending in '*') to the reason it
// is expected to fail on nacosd.
type KnownFailures map[string]string

// LoadKnownFailures reads lines "scenario  reason"; '#' starts a comment.
// A missing file is an empty list.
func LoadKnownFailures(path string) (KnownFailures, error) {
	kf := KnownFailures{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return kf, nil
	}
	if err != nil {
		return nil, fmt.Errorf("conformance: known failures: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, _ := strings.Cut(line, " ")
		kf[name] = strings.TrimSpace(reason)
	}
	return kf, sc.Err()
}

// Reason returns why scenario is a known failure, if it is one.
func (kf KnownFailures) Reason(scenario string) (string, bool) {
	if r, ok := kf[scenario]; ok {
		return r, true
	}
	for k, r := range kf {
		if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(scenario, p) {
			return r, true
		}
	}
	return "", false
}

// Verdict is the judgement of one scenario across targets.
type Verdict string

// Verdicts.
const (
	// VerdictPass: passes on nacosd (and on the reference, when it ran).
	VerdictPass Verdict = "pass"
	// VerdictRegression: fails on nacosd while it passes on the reference
	// (or no reference ran) and is not a known failure. Fails the suite.
	VerdictRegression Verdict = "REGRESSION"
	// VerdictKnown: fails on nacosd, listed in known-failures.txt.
	VerdictKnown Verdict = "known"
	// VerdictWrongScenario: fails on the reference itself; the scenario must be fixed.
	VerdictWrongScenario Verdict = "wrong-scenario"
	// VerdictFixed: listed as a known failure but passes now; remove the line.
	VerdictFixed Verdict = "fixed"
)

// Judge decides the verdict of scenario. Without a reference result, a
// scenario's own assertions (written from the spec) are the referee.
func (rs *Results) Judge(scenario string, kf KnownFailures) Verdict {
	n, okN := rs.Get(scenario, TargetNacosd)
	ref, okR := rs.Get(scenario, TargetReference)
	_, known := kf.Reason(scenario)
	switch {
	case okR && !ref.OK:
		return VerdictWrongScenario
	case okN && n.OK && known:
		return VerdictFixed
	case okN && n.OK:
		return VerdictPass
	case known:
		return VerdictKnown
	default:
		return VerdictRegression
	}
}

// WriteTable prints the scenario × target table in Markdown.
func (rs *Results) WriteTable(w io.Writer, targets []string, kf KnownFailures) (regressions []string) {
	fmt.Fprintf(w, "| scenario |")
	for _, t := range targets {
		fmt.Fprintf(w, " %s |", t)
	}
	fmt.Fprintf(w, " verdict | detail (nacosd) |\n|---|")
	for range targets {
		fmt.Fprintf(w, "---|")
	}
	fmt.Fprintf(w, "---|---|\n")
	for _, s := range rs.Scenarios() {
		fmt.Fprintf(w, "| %s |", s)
		for _, t := range targets {
			r, ok := rs.Get(s, t)
			switch {
			case !ok:
				fmt.Fprintf(w, " n/a |")
			case r.OK && r.Ms >= 0:
				fmt.Fprintf(w, " pass %d ms |", r.Ms)
			case r.OK:
				fmt.Fprintf(w, " pass |")
			default:
				fmt.Fprintf(w, " FAIL |")
			}
		}
		v := rs.Judge(s, kf)
		if v == VerdictRegression {
			regressions = append(regressions, s)
		}
		detail, limit := "", 160
		if r, ok := rs.Get(s, TargetNacosd); ok {
			detail = r.Detail
			if r.OK {
				limit = 70
			}
		}
		if reason, ok := kf.Reason(s); ok && v == VerdictKnown {
			detail = reason + "; " + detail
		}
		detail = strings.ReplaceAll(detail, "|", "\\|")
		detail = strings.ReplaceAll(detail, "\n", " ")
		if len(detail) > limit {
			detail = strings.ToValidUTF8(detail[:limit], "") + "…"
		}
		fmt.Fprintf(w, " %s | %s |\n", v, detail)
	}
	return regressions
}
