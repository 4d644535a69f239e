// Package leakcheck finds the goroutines a test leaves running. It is the
// product module's own, small check, so that its go.mod names no
// test-only dependency (the suites' live in conformance/go.mod).
package leakcheck

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Wait is how long a check waits for goroutines that are ending.
const Wait = 3 * time.Second

// Option adjusts a check.
type Option func(*options)

type options struct {
	funcs []string     // a goroutine with any of these in its stack is not a leak
	ids   map[int]bool // goroutines that ran before the check began
}

// IgnoreFunction leaves out goroutines with fn (package-qualified, as in a
// stack trace) anywhere in their stack.
func IgnoreFunction(fn string) Option {
	return func(o *options) { o.funcs = append(o.funcs, fn) }
}

// IgnoreCurrent leaves out the goroutines running now.
func IgnoreCurrent() Option {
	ids := map[int]bool{}
	for _, g := range goroutines() {
		ids[g.id] = true
	}
	return func(o *options) {
		for id := range ids {
			o.ids[id] = true
		}
	}
}

// VerifyNone fails t when goroutines other than the ignored ones are still
// running after Wait.
func VerifyNone(t testing.TB, opts ...Option) {
	t.Helper()
	if left := find(opts); len(left) > 0 {
		t.Errorf("leakcheck: %d goroutine(s) left running:\n\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// VerifyTestMain runs the package's tests and then the check, and exits
// with the tests' status, or 1 if goroutines were left running.
func VerifyTestMain(m interface{ Run() int }, opts ...Option) {
	code := m.Run()
	if code == 0 {
		if left := find(opts); len(left) > 0 {
			fmt.Fprintf(os.Stderr, "leakcheck: %d goroutine(s) left running after the tests:\n\n%s\n", len(left), strings.Join(left, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

// find waits up to Wait for the goroutines not ignored to end and returns
// the stacks of those that did not.
func find(opts []Option) []string {
	o := &options{ids: map[int]bool{}}
	for _, f := range opts {
		f(o)
	}
	self := selfID()
	deadline := time.Now().Add(Wait)
	for sleep := time.Millisecond; ; sleep = min(2*sleep, 100*time.Millisecond) {
		var left []string
		for _, g := range goroutines() {
			if g.id != self && !o.ids[g.id] && !g.background() && !g.has(o.funcs) {
				left = append(left, g.text)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(sleep)
	}
}

// goroutine is one goroutine of a full stack dump.
type goroutine struct {
	id    int
	state string   // "chan receive", "select", "syscall, 2 minutes"…
	funcs []string // its frames' functions, innermost first
	text  string
}

// goroutines parses runtime.Stack's dump of every goroutine.
func goroutines() []goroutine {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []goroutine
	for _, block := range bytes.Split(buf, []byte("\n\n")) {
		if g, ok := parse(string(block)); ok {
			out = append(out, g)
		}
	}
	return out
}

// parse reads one block: "goroutine 7 [chan receive]:", then a function
// line and a tab-indented file line per frame, and "created by …".
func parse(block string) (goroutine, bool) {
	lines := strings.Split(strings.TrimSpace(block), "\n")
	head, ok := strings.CutPrefix(lines[0], "goroutine ")
	if !ok {
		return goroutine{}, false
	}
	idText, rest, _ := strings.Cut(head, " ")
	id, err := strconv.Atoi(idText)
	if err != nil {
		return goroutine{}, false
	}
	g := goroutine{id: id, text: block}
	if i, j := strings.Index(rest, "["), strings.Index(rest, "]"); i >= 0 && j > i {
		g.state = rest[i+1 : j]
	}
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "\t") || l == "" {
			continue
		}
		l = strings.TrimPrefix(l, "created by ")
		if i := strings.LastIndex(l, "("); i > 0 {
			l = l[:i]
		}
		if i := strings.Index(l, " in goroutine "); i > 0 {
			l = l[:i]
		}
		g.funcs = append(g.funcs, l)
	}
	return g, true
}

func (g goroutine) has(funcs []string) bool {
	for _, f := range g.funcs {
		for _, w := range funcs {
			if f == w {
				return true
			}
		}
	}
	return false
}

// background reports the goroutines of the testing package waiting for
// tests and of the runtime's signal handling, which every test binary has.
func (g goroutine) background() bool {
	if len(g.funcs) == 0 {
		return false
	}
	switch g.funcs[0] {
	case "testing.RunTests", "testing.(*T).Run", "testing.(*T).Parallel", "testing.runFuzzing", "testing.runFuzzTests":
		return strings.HasPrefix(g.state, "chan receive")
	case "os/signal.signal_recv", "os/signal.loop":
		return true
	}
	return g.has([]string{"runtime.ensureSigM"}) || strings.HasPrefix(g.state, "syscall") && g.has([]string{"runtime.goexit"})
}

// selfID is the id of the calling goroutine.
func selfID() int {
	var b [64]byte
	n := runtime.Stack(b[:], false)
	g, _ := parse(string(b[:n]) + "\n")
	return g.id
}
