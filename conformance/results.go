package conformance

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
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

// Reason returns why scenario is a known failure, if it is one. A key
// is the scenario name, a prefix ending in '*', or a path.Match pattern
// ("java*/config.x": every Java client version).
func (kf KnownFailures) Reason(scenario string) (string, bool) {
	if r, ok := kf[scenario]; ok {
		return r, true
	}
	for k, r := range kf {
		if p, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(scenario, p) {
			return r, true
		}
		if ok, _ := path.Match(k, scenario); ok {
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
	// VerdictWrongScenario: fails on the reference itself and is no listed
	// Java defect; the scenario must be fixed.
	VerdictWrongScenario Verdict = "wrong-scenario"
	// VerdictFixed: listed as a known failure but passes now; remove the line.
	VerdictFixed Verdict = "fixed"
	// VerdictJavaDefect: a Java 1.4.8 defect nacosd fixes on purpose (listed
	// in java-defects.txt): fails on the reference, passes on nacosd.
	VerdictJavaDefect Verdict = "java-defect"
	// VerdictStaleDefect: listed in java-defects.txt but passes on the
	// reference this run: the entry is stale (reported, never fails CI).
	VerdictStaleDefect Verdict = "stale-java-defect"
)

// Lists are the verdict files beside the suite: known nacosd failures and
// the Java 1.4.8 defects nacosd fixes on purpose.
type Lists struct {
	Known       KnownFailures
	JavaDefects KnownFailures
}

// LoadLists reads known-failures.txt and java-defects.txt from dir.
func LoadLists(dir string) (Lists, error) {
	kf, err := LoadKnownFailures(filepath.Join(dir, "known-failures.txt"))
	if err != nil {
		return Lists{}, err
	}
	jd, err := LoadKnownFailures(filepath.Join(dir, "java-defects.txt"))
	if err != nil {
		return Lists{}, err
	}
	return Lists{Known: kf, JavaDefects: jd}, nil
}

// Judge decides the verdict of scenario. Without a reference result, a
// scenario's own assertions (written from the spec) are the referee. A
// scenario that also ran on the nacosd cluster gets the worse of the two
// verdicts: the cluster must pass what a single nacosd passes.
// known-failures.txt entries "nacosd-cluster:<scenario>" apply to the
// cluster only.
func (rs *Results) Judge(scenario string, l Lists) Verdict {
	v := rs.judgeTarget(scenario, TargetNacosd, l)
	if _, ok := rs.Get(scenario, TargetCluster); ok {
		if c := rs.judgeTarget(scenario, TargetCluster, l); verdictRank[c] > verdictRank[v] {
			v = c
		}
	}
	return v
}

// verdictRank orders verdicts from best to worst.
var verdictRank = map[Verdict]int{VerdictPass: 0, VerdictJavaDefect: 1, VerdictFixed: 2, VerdictKnown: 3,
	VerdictStaleDefect: 4, VerdictWrongScenario: 5, VerdictRegression: 6}

func (rs *Results) judgeTarget(scenario, target string, l Lists) Verdict {
	n, okN := rs.Get(scenario, target)
	ref, okR := rs.Get(scenario, TargetReference)
	_, known := l.Known.Reason(scenario)
	if target == TargetCluster && !known {
		_, known = l.Known.Reason(TargetCluster + ":" + scenario)
	}
	_, defect := l.JavaDefects.Reason(scenario)
	nPass := okN && n.OK
	switch {
	case defect && nPass && okR && ref.OK:
		return VerdictStaleDefect
	case defect && nPass:
		return VerdictJavaDefect
	case defect && known:
		return VerdictKnown
	case defect:
		return VerdictRegression // nacosd must keep passing what Java gets wrong
	case okR && !ref.OK:
		return VerdictWrongScenario
	case nPass && known:
		return VerdictFixed
	case nPass:
		return VerdictPass
	case known:
		return VerdictKnown
	default:
		return VerdictRegression
	}
}

// Summary counts verdicts per group.
type Summary struct {
	Group  string
	Counts map[Verdict]int
	Total  int
}

// verdictOrder is the column order of the summary.
var verdictOrder = []Verdict{VerdictPass, VerdictJavaDefect, VerdictRegression, VerdictWrongScenario, VerdictKnown, VerdictFixed, VerdictStaleDefect}

// Group returns the table section of a scenario: the runner, and for the
// corpus its area ("corpus/cs.get" → "corpus cs").
func Group(scenario string) string {
	runner, name, ok := strings.Cut(scenario, "/")
	if !ok {
		return scenario
	}
	if runner == "corpus" {
		area, _, _ := strings.Cut(name, ".")
		return "corpus " + area
	}
	if runner == "auth" { // auth/<client>/… or auth/matrix.…
		area, _, _ := strings.Cut(name, "/")
		area, _, _ = strings.Cut(area, ".")
		return "auth " + area
	}
	return runner
}

// Report is the outcome of WriteTable.
type Report struct {
	Regressions, Wrong, Stale []string
	Totals                    map[Verdict]int
	Scenarios                 int
}

// WriteTable prints a summary (verdict counts per group) and then the
// scenario × target table, one section per group, in Markdown.
func (rs *Results) WriteTable(w io.Writer, targets []string, l Lists) Report {
	rep := Report{Totals: map[Verdict]int{}}
	groups := map[string][]string{}
	var order []string
	for _, s := range rs.Scenarios() {
		g := Group(s)
		if groups[g] == nil {
			order = append(order, g)
		}
		groups[g] = append(groups[g], s)
	}
	sort.Strings(order)
	verdicts := map[string]Verdict{}
	fmt.Fprintf(w, "| group | scenarios |")
	for _, v := range verdictOrder {
		fmt.Fprintf(w, " %s |", v)
	}
	fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("---|", len(verdictOrder)))
	for _, g := range order {
		counts := map[Verdict]int{}
		for _, s := range groups[g] {
			v := rs.Judge(s, l)
			verdicts[s] = v
			counts[v]++
			rep.Totals[v]++
			rep.Scenarios++
			switch v {
			case VerdictRegression:
				rep.Regressions = append(rep.Regressions, s)
			case VerdictWrongScenario:
				rep.Wrong = append(rep.Wrong, s)
			case VerdictStaleDefect:
				rep.Stale = append(rep.Stale, s)
			}
		}
		writeCounts(w, g, len(groups[g]), counts)
	}
	writeCounts(w, "**all**", rep.Scenarios, rep.Totals)
	for _, g := range order {
		fmt.Fprintf(w, "\n### %s\n\n| scenario |", g)
		for _, t := range targets {
			fmt.Fprintf(w, " %s |", t)
		}
		fmt.Fprintf(w, " verdict | detail (nacosd) |\n|---|%s---|---|\n", strings.Repeat("---|", len(targets)))
		for _, s := range groups[g] {
			rs.writeRow(w, s, targets, verdicts[s], l)
		}
	}
	return rep
}

func writeCounts(w io.Writer, group string, total int, counts map[Verdict]int) {
	fmt.Fprintf(w, "| %s | %d |", group, total)
	for _, v := range verdictOrder {
		if n := counts[v]; n > 0 {
			fmt.Fprintf(w, " %d |", n)
		} else {
			fmt.Fprintf(w, " |")
		}
	}
	fmt.Fprintln(w)
}

func (rs *Results) writeRow(w io.Writer, s string, targets []string, v Verdict, l Lists) {
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
	detail, limit := "", 160
	if r, ok := rs.Get(s, TargetNacosd); ok {
		detail = r.Detail
		if r.OK {
			limit = 70
		}
	}
	if r, ok := rs.Get(s, TargetCluster); ok && !r.OK {
		detail, limit = "on the cluster: "+r.Detail, 160
	}
	switch v {
	case VerdictKnown:
		reason, ok := l.Known.Reason(s)
		if !ok {
			reason, _ = l.Known.Reason(TargetCluster + ":" + s)
		}
		detail = reason + "; " + detail
	case VerdictJavaDefect, VerdictStaleDefect:
		reason, _ := l.JavaDefects.Reason(s)
		detail, limit = "Java defect: "+reason, 200
	case VerdictWrongScenario:
		if r, ok := rs.Get(s, TargetReference); ok {
			detail = "on java-nacos: " + r.Detail
		}
	}
	detail = strings.ReplaceAll(detail, "|", "\\|")
	detail = strings.ReplaceAll(detail, "\n", " ")
	if len(detail) > limit {
		detail = strings.ToValidUTF8(detail[:limit], "") + "…"
	}
	fmt.Fprintf(w, " %s | %s |\n", v, detail)
}
