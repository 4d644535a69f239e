package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/testtier"
)

func TestFromBuildStamp(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261206031000-0123456789ab"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-12-06T03:10:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	in := fromBuild(bi)
	if in.Revision != "0123456789abcdef0123456789abcdef01234567" || !in.Modified || in.TimeText() != "2026-12-06T03:10:00Z" ||
		in.Version != "v0.0.0-20261206031000-0123456789ab" || in.ShortRevision() != "0123456789ab" {
		t.Fatalf("%+v", in)
	}
	want := "nacosd v0.0.0-20261206031000-0123456789ab (revision 0123456789abcdef0123456789abcdef01234567, 2026-12-06T03:10:00Z, with local changes) go1.26.8"
	if in.String() != want {
		t.Errorf("String() = %q, want %q", in.String(), want)
	}
}

func TestNothingKnown(t *testing.T) {
	in := fromBuild(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}})
	if in.Version != "(devel)" || in.ShortRevision() != "unknown" || in.TimeText() != "" {
		t.Fatalf("%+v", in)
	}
	if !strings.Contains(in.String(), "revision unknown") {
		t.Errorf("String() = %q", in.String())
	}
}

func TestPseudoVersion(t *testing.T) {
	in := Info{Revision: "fedcba9876543210fedcba9876543210fedcba98", Time: time.Date(2026, 12, 6, 11, 10, 0, 0, time.FixedZone("CST", 8*3600))}
	if got := pseudoVersion(in); got != "v0.0.0-20261206031000-fedcba987654" {
		t.Errorf("pseudoVersion = %q", got)
	}
	in.Modified = true
	if got := pseudoVersion(in); got != "v0.0.0-20261206031000-fedcba987654+dirty" {
		t.Errorf("pseudoVersion = %q", got)
	}
}

// TestLinkerFallback builds a binary as `make build` does with the VCS stamp
// switched off (-buildvcs=false, as .ci/run builds): the -X values carry
// the revision, and the version is derived from them.
func TestLinkerFallback(t *testing.T) {
	testtier.Require(t, testtier.Process) // builds a binary
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	if err := os.WriteFile(main, []byte(`package main

import (
	"fmt"

	"github.com/nacosd/nacosd/internal/buildinfo"
)

func main() { fmt.Print(buildinfo.Read().String()) }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// the program must be inside the module to import an internal package
	prog, err := os.MkdirTemp(".", "_linktest-") // "_": never picked up by ./... if left behind
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(prog) })
	if err := os.Rename(main, filepath.Join(prog, "main.go")); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "prog")
	p := "github.com/nacosd/nacosd/internal/buildinfo."
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "-ldflags",
		"-X "+p+"revision=fedcba9876543210fedcba9876543210fedcba98 -X "+p+"revisionTime=2026-12-06T03:10:00Z -X "+p+"modified=false",
		"./"+prog)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "nacosd v0.0.0-20261206031000-fedcba987654 (revision fedcba9876543210fedcba9876543210fedcba98, 2026-12-06T03:10:00Z) go") {
		t.Errorf("version = %q", out)
	}
}
