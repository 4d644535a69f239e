package cold

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mappedKB is the resident kB of this process's mappings of path.
func mappedKB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in, kb := false, 0
	for sc.Scan() {
		l := sc.Text()
		if fs := strings.Fields(l); len(fs) >= 5 && strings.Contains(fs[0], "-") && !strings.HasSuffix(fs[0], ":") {
			in = len(fs) >= 6 && fs[5] == path
			continue
		}
		if in && strings.HasPrefix(l, "Rss:") {
			var n int
			fmt.Sscan(strings.TrimPrefix(l, "Rss:"), &n)
			kb += n
		}
	}
	return kb
}

// Writing and reading a disk bucket does not leave its file's pages in
// RSS: they are dropped every coldDropAfter bytes.
func TestColdPagesDropped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := newStore(t, dir)
	path, _ := filepath.Abs(filepath.Join(dir, File))
	val := strings.Repeat("x", 700)
	for i := range 30000 {
		apply(c, uint64(i+1), put("h", fmt.Sprintf("g%03d\x00%020d", i%100, i), val))
	}
	if err := c.flushPending(); err != nil {
		t.Fatal(err)
	}
	// kB: what can be touched between drops, with bolt's fault-around. The
	// count of touched pages is an estimate (a page per transaction, and
	// how many transactions the writer makes depends on its timing): 3×
	// was passed by 40 kB in one CI run. The file holds over 21 MB.
	max := 4 * coldDropAfter / 1024
	if kb := mappedKB(t, path); kb > max {
		t.Fatalf("after 30 000 writes (%d MB of values) %d kB of fsm.db resident, want <= %d", 30000*700>>20, kb, max)
	}
	n := 0
	c.Scan("h", "", false, 0, func(string, Record) bool { n++; return true })
	if n != 30000 {
		t.Fatalf("scan saw %d", n)
	}
	if c := c.Count("h", "g001"); c != 300 {
		t.Fatalf("count = %d", c)
	}
	if kb := mappedKB(t, path); kb > max {
		t.Fatalf("after a full scan %d kB of fsm.db resident, want <= %d", kb, max)
	}
}
