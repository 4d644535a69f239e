package jepsen

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Options are the checks' parameters.
type Options struct {
	// Stale is the staleness a read of a node in the majority may show
	// (check 1b) and that a node may still show ConvergeBound after it
	// came back (check 3).
	Stale time.Duration
	Lin   LinOptions
	Eph   EphOptions
	// MaxShown bounds the violations printed per check.
	MaxShown int
}

// DefaultOptions are `make jepsen`'s.
func DefaultOptions() Options {
	return Options{Stale: time.Second, Lin: LinOptions{Timeout: 30 * time.Second, Budget: 3 * time.Minute}, Eph: DefaultEphOptions(), MaxShown: 12}
}

// Report is every check's result and the tables.
type Report struct {
	Run        *Run
	Opt        Options
	Results    []*Result
	Stale      []StaleRow
	Recoveries []Recovery
	Avail      []AvailRow
	Leader     []LeaderFault
	Expiry     []ExpiryRow
}

// Check runs every check on a run.
func Check(run *Run, opt Options) *Report {
	rep := &Report{Run: run, Opt: opt}
	conv, recs := CheckConvergence(run, opt.Stale)
	eph, exp := CheckEphemeral(run, opt.Eph)
	rep.Results = []*Result{
		CheckStrict(run, opt.Lin),
		CheckBounded(run, opt.Stale, opt.Lin),
		CheckFinal(run, opt.Lin),
		conv,
		CheckRYW(run),
		CheckMonotonic(run),
		eph,
	}
	rep.Stale = Staleness(run)
	rep.Recoveries = recs
	rep.Expiry = exp
	rep.Avail, rep.Leader = Availability(run)
	av := &Result{ID: "7", Title: "availability (report only)"}
	ok, all := 0, 0
	for _, r := range rep.Avail {
		if r.Kind.IsCP() {
			ok += r.OK
			all += r.OK + r.Fail + r.Unkn
		}
	}
	av.Summary = fmt.Sprintf("%d of %d CP writes acknowledged", ok, all)
	rep.Results = append(rep.Results, av, CheckRefusals(run))
	return rep
}

// Failed reports whether any check failed.
func (rep *Report) Failed() bool {
	for _, r := range rep.Results {
		if r.Failed() {
			return true
		}
	}
	return false
}

// FailedChecks lists the failed checks' ids.
func (rep *Report) FailedChecks() []string {
	var ids []string
	for _, r := range rep.Results {
		if r.Failed() {
			ids = append(ids, fmt.Sprintf("%s (%d)", r.ID, len(r.Violations)))
		}
	}
	return ids
}

func secs(ns int64) string {
	if ns < 0 {
		return "–"
	}
	if ns == inf {
		return "∞"
	}
	return fmt.Sprintf("%.3f s", float64(ns)/1e9)
}

// Markdown renders the report.
func (rep *Report) Markdown() string {
	run := rep.Run
	var b strings.Builder
	verdict := "PASS"
	if rep.Failed() {
		verdict = "FAIL: " + strings.Join(rep.FailedChecks(), ", ")
	}
	fmt.Fprintf(&b, "# nacosd fault-injection check: seed %d, %v — %s\n\n", run.Seed, run.Duration, verdict)
	grpcOps := 0
	for _, op := range run.Ops {
		if op.Proto == "grpc" {
			grpcOps++
		}
	}
	fmt.Fprintf(&b, "Reproduce: `make jepsen SEED=%d DURATION=%v`. %d nodes, %d clients, %d beating instances; %d ops recorded (%d over Nacos 2.x gRPC, in %d %% of the clients' sessions); casMd5 honoured by the server: %v (when not, a CAS publish is checked as a plain publish, as 1.4.8 ignores the header).\n\n",
		run.Seed, run.Duration, run.Nodes, run.Clients, len(run.Beaters), len(run.Ops), grpcOps, run.GRPCShare, run.CASHonoured)

	b.WriteString("## Faults\n\n| # | planned | hit | began | back | held |\n|---|---|---|---|---|---|\n")
	for _, f := range run.Schedule {
		note := ""
		if f.Err != "" {
			note = " (" + f.Err + ")"
		}
		fmt.Fprintf(&b, "| %d | %s after %.1f s quiet, %.1f s | %s node %d%s | %s | %s | %s |\n",
			f.N, f.Kind, f.Gap.Seconds(), f.Hold.Seconds(), f.Label, f.Node+1, note, secs(f.Start), secs(f.Healed), secs(f.Healed-f.Start))
	}
	b.WriteString("\n## Checks\n\n| check | result | |\n|---|---|---|\n")
	for _, r := range rep.Results {
		res := "ok"
		switch {
		case r.Failed():
			res = fmt.Sprintf("**%d violation(s)**", len(r.Violations))
		case len(r.Violations) > 0:
			res = fmt.Sprintf("%d finding(s)", len(r.Violations))
		case !r.Fails:
			res = "report"
		}
		fmt.Fprintf(&b, "| %s. %s | %s | %s |\n", r.ID, r.Title, res, r.Summary)
	}

	b.WriteString("\n## Staleness of reads (by node and its situation or the cluster's phase)\n\n")
	b.WriteString("Staleness of a read: how far its invocation must move back for what it returned to be current (a value is stale once an acknowledged write that began after its write had completed). Only changed values can show it.\n\n")
	b.WriteString("| node | phase | reads | stale | max | stalest op |\n|---|---|---|---|---|---|\n")
	for _, s := range rep.Stale {
		id := ""
		if s.MaxOp != nil && s.Max > 0 {
			id = fmt.Sprint(s.MaxOp.ID)
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %s | %s |\n", s.Node+1, s.Label, s.Reads, s.Stale, secs(s.Max), id)
	}

	b.WriteString("\n## Recoveries (check 3: reads fresh again)\n\n| node | was | back at | reads fresh (within the staleness bound) after | reads looked at |\n|---|---|---|---|---|\n")
	for _, r := range rep.Recoveries {
		conv := secs(r.Converged)
		if r.Worst != nil {
			conv = "**" + conv + "**"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %d in %s |\n", r.Node+1, r.Kind, secs(r.Back), conv, r.Reads, secs(r.Window))
	}
	fmt.Fprintf(&b, "\nAfter the workload stopped (%s) every node held the same state after %s.\n", secs(run.End), secs(run.Converged))

	b.WriteString("\n## Availability (check 7)\n\n| op | phase | ok | fail | unknown | no-leader answers (under 2.5 s) | mean / max latency |\n|---|---|---|---|---|---|---|\n")
	for _, a := range rep.Avail {
		mean := int64(0)
		if a.Completed > 0 {
			mean = a.SumLatency / int64(a.Completed)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d (%d) | %.0f / %.0f ms |\n", a.Kind, a.Phase, a.OK, a.Fail, a.Unkn,
			a.NoLeader, a.FastNoLeader, float64(mean)/1e6, float64(a.MaxLatency)/1e6)
	}
	b.WriteString("\n| fault on the leader | began | first acknowledged CP write invoked after it | no-leader answers | refused | unknown |\n|---|---|---|---|---|---|\n")
	for _, l := range rep.Leader {
		first := "none"
		if l.FirstOK != nil {
			first = fmt.Sprintf("%s later (op %d, node %d)", secs(l.After), l.FirstOK.ID, l.FirstOK.Node+1)
		}
		fmt.Fprintf(&b, "| %s node %d | %s | %s | %d | %d | %d |\n", l.Label, l.Node+1, secs(l.At), first, l.NoLeader, l.Refusals, l.Unknowns)
	}
	if len(rep.Expiry) > 0 {
		b.WriteString("\n## Stopped instances (check 6)\n\n| instance | service | stopped | deregistered (acknowledged) | last beat | last listed (node not cut off) | after the last beat |\n|---|---|---|---|---|---|---|\n")
		for _, e := range rep.Expiry {
			after := "–"
			if e.LastSeen >= 0 {
				after = secs(e.LastSeen - e.LastBeat)
			}
			dereg := "no"
			if e.Dereg != nil {
				dereg = secs(e.Dereg.Complete)
			} else if e.Beater.Deregister {
				dereg = "never acknowledged"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", e.Beater.Inst, e.Beater.Service, secs(e.Beater.Stopped), dereg,
				secs(e.LastBeat), secs(e.LastSeen), after)
		}
	}

	b.WriteString("\n## Violations\n")
	any := false
	for _, r := range rep.Results {
		if len(r.Violations) == 0 && len(r.Notes) == 0 {
			continue
		}
		any = true
		fmt.Fprintf(&b, "\n### %s. %s: %d\n", r.ID, r.Title, len(r.Violations))
		var kinds []string
		byKind := map[string][]Violation{}
		for _, v := range r.Violations {
			if _, ok := byKind[v.Kind]; !ok {
				kinds = append(kinds, v.Kind)
			}
			byKind[v.Kind] = append(byKind[v.Kind], v)
		}
		for _, k := range kinds {
			vs := byKind[k]
			if k != "" {
				fmt.Fprintf(&b, "\n#### %s: %d\n", k, len(vs))
			}
			b.WriteString("\n")
			for i, v := range vs {
				if i >= rep.Opt.MaxShown {
					fmt.Fprintf(&b, "- … and %d more (all in the saved run: NACOSD_JEPSEN_REPLAY)\n", len(vs)-i)
					break
				}
				writeViolation(&b, v)
			}
		}
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- note: `%s`\n", n)
		}
	}
	if !any {
		b.WriteString("\nnone\n")
	}
	return b.String()
}

func writeViolation(b *strings.Builder, v Violation) {
	fmt.Fprintf(b, "- %s\n", v.Msg)
	seen := map[int]bool{}
	ops := append([]*Op(nil), v.Ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i] != nil && ops[j] != nil && ops[i].Invoke < ops[j].Invoke })
	for _, op := range ops {
		if op == nil || seen[op.ID] {
			continue
		}
		seen[op.ID] = true
		fmt.Fprintf(b, "  - `%s`\n", op)
	}
}
