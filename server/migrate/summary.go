package migrate

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
)

// Kinds of copied data, in the order they are copied and reported.
const (
	KindNamespaces  = "namespaces"
	KindConfigs     = "configs"
	KindBeta        = "beta configs"
	KindTag         = "tag configs"
	KindHistory     = "config history rows"
	KindUsers       = "users"
	KindRoles       = "roles"
	KindPermissions = "permissions"
	KindServices    = "services"
	KindClusters    = "clusters"
	KindInstances   = "persistent instances"
)

var kinds = []string{KindNamespaces, KindConfigs, KindBeta, KindTag, KindHistory, KindUsers, KindRoles, KindPermissions,
	KindServices, KindClusters, KindInstances}

const (
	outcomeCreated   = "created"
	outcomeUpdated   = "updated"
	outcomeUnchanged = "unchanged"
)

// Counts are the outcomes of one kind.
type Counts struct {
	Created, Updated, Unchanged, Skipped int
}

// Total is every record of the kind seen at the source.
func (c Counts) Total() int { return c.Created + c.Updated + c.Unchanged + c.Skipped }

// Skip is a record that was not copied, and why.
type Skip struct {
	Kind, Item, Reason string
}

// Summary is what a run copied (or, dry, would copy).
type Summary struct {
	DryRun bool
	From   []string // the sources read
	To     string

	mu     sync.Mutex
	counts map[string]*Counts
	skips  []Skip
	notes  []string
}

func newSummary() *Summary { return &Summary{counts: map[string]*Counts{}} }

func (s *Summary) c(kind string) *Counts {
	c := s.counts[kind]
	if c == nil {
		c = &Counts{}
		s.counts[kind] = c
	}
	return c
}

func (s *Summary) add(kind, outcome string) { s.addN(kind, outcome, 1) }

func (s *Summary) addN(kind, outcome string, n int) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.c(kind)
	switch outcome {
	case outcomeCreated:
		c.Created += n
	case outcomeUpdated:
		c.Updated += n
	case outcomeUnchanged:
		c.Unchanged += n
	}
}

func (s *Summary) skip(kind, item, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c(kind).Skipped++
	s.skips = append(s.skips, Skip{kind, item, reason})
}

// note records something the run could not read at all, with the reason.
func (s *Summary) note(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, fmt.Sprintf(format, args...))
}

// Counts returns the outcomes of one kind.
func (s *Summary) Counts(kind string) Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.counts[kind]; c != nil {
		return *c
	}
	return Counts{}
}

// Skips lists the records not copied.
func (s *Summary) Skips() []Skip {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Skip(nil), s.skips...)
}

// Notes lists what could not be read at all.
func (s *Summary) Notes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.notes...)
}

// Changed reports whether the run wrote (or, dry, would write) anything.
func (s *Summary) Changed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.counts {
		if c.Created+c.Updated > 0 {
			return true
		}
	}
	return false
}

// Print writes the summary table, the skipped records (at most 50, then a
// count) and the notes.
func (s *Summary) Print(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	verb := "copied"
	if s.DryRun {
		verb = "would copy (dry run: nothing written)"
	}
	fmt.Fprintf(w, "nacosd migrate: %s from %s into %s\n", verb, strings.Join(s.From, " + "), s.To)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tfound\tcreated\tupdated\tunchanged\tskipped\t")
	for _, k := range kinds {
		c := Counts{}
		if p := s.counts[k]; p != nil {
			c = *p
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", k, c.Total(), c.Created, c.Updated, c.Unchanged, c.Skipped)
	}
	tw.Flush()
	if len(s.skips) > 0 {
		fmt.Fprintf(w, "skipped (%d):\n", len(s.skips))
		sk := append([]Skip(nil), s.skips...)
		sort.SliceStable(sk, func(i, j int) bool { return sk[i].Kind < sk[j].Kind })
		for i, x := range sk {
			if i == 50 {
				fmt.Fprintf(w, "  … and %d more\n", len(sk)-50)
				break
			}
			fmt.Fprintf(w, "  %s %s: %s\n", x.Kind, x.Item, x.Reason)
		}
	}
	for _, n := range s.notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
