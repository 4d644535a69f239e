package console_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestDocsShowEveryScreenshot: docs/console.md shows exactly the pictures
// the browser tests (conformance/browser) take (each shot of a name →
// docs/console/<name>.png), and each of them is committed; no picture is
// left over from an old page.
func TestDocsShowEveryScreenshot(t *testing.T) {
	taken := map[string]bool{}
	tests, err := filepath.Glob("../../conformance/browser/*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	shot := regexp.MustCompile(`\.shot\("([a-z0-9-]+)"\)`)
	for _, f := range tests {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range shot.FindAllStringSubmatch(string(b), -1) {
			taken[m[1]] = true
		}
	}
	doc, err := os.ReadFile("../../docs/console.md")
	if err != nil {
		t.Fatal(err)
	}
	shown := map[string]bool{}
	for _, m := range regexp.MustCompile(`\]\(console/([a-z0-9-]+)\.png\)`).FindAllStringSubmatch(string(doc), -1) {
		shown[m[1]] = true
	}
	files, err := filepath.Glob("../../docs/console/*.png")
	if err != nil {
		t.Fatal(err)
	}
	committed := map[string]bool{}
	for _, f := range files {
		committed[strings.TrimSuffix(filepath.Base(f), ".png")] = true
	}
	diff := func(a, b map[string]bool) []string {
		var out []string
		for k := range a {
			if !b[k] {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	if len(taken) < 20 {
		t.Fatalf("only %d screenshots found in the tests", len(taken))
	}
	if d := diff(taken, shown); len(d) > 0 {
		t.Errorf("taken by the browser tests but not in docs/console.md: %v", d)
	}
	if d := diff(shown, taken); len(d) > 0 {
		t.Errorf("in docs/console.md but no browser test takes them: %v", d)
	}
	if d := diff(shown, committed); len(d) > 0 {
		t.Errorf("in docs/console.md but not in docs/console/ (run make ui-screenshots): %v", d)
	}
	if d := diff(committed, shown); len(d) > 0 {
		t.Errorf("in docs/console/ but not shown: %v", d)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > 80<<10 {
			t.Errorf("%s is %d KiB: keep screenshots small", f, st.Size()>>10)
		}
	}
}
