// Package buildinfo says which build of nacosd is running: the module
// version, the VCS revision and its time, whether the tree had local
// changes, and the Go version. The go command stamps the revision into the
// binary (debug.ReadBuildInfo) unless told not to (-buildvcs=false, which
// .ci/run sets) or unable to (a git worktree, a tree without .git); the
// Makefile then passes the same facts with -ldflags -X (see `make build`).
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Set at link time by `make build` (-ldflags "-X ...=..."), read only when
// the binary carries no VCS stamp of its own.
var (
	revision     string // full commit hash
	revisionTime string // commit time, RFC 3339
	modified     string // "true" when the tree had local changes
)

// Info is one build's identity.
type Info struct {
	// Version is the module version: a release tag, Go's pseudo-version
	// v0.0.0-<time>-<revision> of an untagged commit (+dirty with local
	// changes), or "(devel)" when nothing is known.
	Version string
	// Revision is the VCS commit ("" when unknown).
	Revision string
	// Time is the commit's time (zero when unknown).
	Time time.Time
	// Modified reports local changes on top of Revision.
	Modified bool
	// GoVersion is the toolchain that built the binary.
	GoVersion string
}

// Read returns the running binary's build info.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fromLinker(Info{Version: "(devel)", GoVersion: runtime.Version()})
	}
	return fromBuild(bi)
}

// fromBuild reads a build's stamp, falling back to the linker's values.
func fromBuild(bi *debug.BuildInfo) Info {
	in := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	if in.Revision == "" {
		in = fromLinker(in)
	}
	return in
}

func fromLinker(in Info) Info {
	if in.GoVersion == "" {
		in.GoVersion = runtime.Version()
	}
	if revision == "" {
		if in.Version == "" {
			in.Version = "(devel)"
		}
		return in
	}
	in.Revision = revision
	in.Time, _ = time.Parse(time.RFC3339, revisionTime)
	in.Modified = modified == "true"
	if in.Version == "" || in.Version == "(devel)" {
		in.Version = pseudoVersion(in)
	}
	return in
}

// pseudoVersion is the version the go command gives an untagged commit:
// v0.0.0-yyyymmddhhmmss-<12 hex digits>, +dirty with local changes.
func pseudoVersion(in Info) string {
	rev := in.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "v0.0.0-" + in.Time.UTC().Format("20060102150405") + "-" + rev
	if in.Modified {
		v += "+dirty"
	}
	return v
}

// ShortRevision is the first 12 digits of the revision, "unknown" without one.
func (in Info) ShortRevision() string {
	switch {
	case in.Revision == "":
		return "unknown"
	case len(in.Revision) > 12:
		return in.Revision[:12]
	}
	return in.Revision
}

// TimeText is the commit time in RFC 3339 (UTC), "" when unknown.
func (in Info) TimeText() string {
	if in.Time.IsZero() {
		return ""
	}
	return in.Time.UTC().Format(time.RFC3339)
}

// String is the one-line form of `nacosd version`.
func (in Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "nacosd %s", in.Version)
	if in.Revision == "" {
		b.WriteString(" (revision unknown: built without VCS information)")
	} else {
		fmt.Fprintf(&b, " (revision %s", in.Revision)
		if t := in.TimeText(); t != "" {
			fmt.Fprintf(&b, ", %s", t)
		}
		if in.Modified {
			b.WriteString(", with local changes")
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " %s", in.GoVersion)
	return b.String()
}
