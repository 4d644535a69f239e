package connbound

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/server/naming"
)

// recorder is a Writer that records the ops it applied, and fails those
// of services in fail.
type recorder struct {
	mu   sync.Mutex
	ops  []string
	fail map[string]bool
}

func (r *recorder) Apply(_ context.Context, ops []Op) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := make([]error, len(ops))
	for i, op := range ops {
		if r.fail[op.Service] {
			errs[i] = errors.New("owner down")
			continue
		}
		r.ops = append(r.ops, fmt.Sprintf("%s %s %s:%d %s", op.Kind, op.Service, op.Instance.IP, op.Instance.Port, op.Holder))
	}
	return errs
}

func (r *recorder) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := append([]string(nil), r.ops...)
	sort.Strings(out)
	r.ops = nil
	return strings.Join(out, "; ")
}

func newTest(t *testing.T) (*Manager, *recorder, *clocktest.Fake) {
	t.Helper()
	clk := clocktest.New(time.Unix(1000, 0))
	w := &recorder{fail: map[string]bool{}}
	cfg := DefaultConfig()
	cfg.Writer, cfg.Self, cfg.Clock = w, "n1:8848", clk
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(m.Close)
	return m, w, clk
}

func inst(ip string, port int) naming.Instance {
	return naming.Instance{IP: ip, Port: port, ClusterName: "DEFAULT", Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}
}

// TestSetReplacesPerService: a connection holds one set of instances per
// service (Java 2.x: a register replaces the connection's instance, a
// batch replaces them all); what it no longer holds is deregistered.
func TestSetReplacesPerService(t *testing.T) {
	m, w, _ := newTest(t)
	ctx := context.Background()
	if err := m.Set(ctx, "c1", "public", "G@@a", []naming.Instance{inst("10.0.0.1", 1)}); err != nil {
		t.Fatal(err)
	}
	if got := w.take(); got != "register G@@a 10.0.0.1:1 n1:8848#c1" {
		t.Fatal(got)
	}
	m.Set(ctx, "c1", "public", "G@@a", []naming.Instance{inst("10.0.0.2", 2), inst("10.0.0.3", 3), inst("10.0.0.3", 3)})
	if got := w.take(); got != "deregister G@@a 10.0.0.1:1 n1:8848#c1; register G@@a 10.0.0.2:2 n1:8848#c1; register G@@a 10.0.0.3:3 n1:8848#c1" {
		t.Fatal(got)
	}
	m.Remove(ctx, "c1", "public", "G@@a")
	if got := w.take(); got != "deregister G@@a 10.0.0.2:2 n1:8848#c1; deregister G@@a 10.0.0.3:3 n1:8848#c1" || m.Count() != 0 {
		t.Fatal(got, m.Count())
	}
}

// TestBeatsKeepInstancesAlive: held instances are beaten every
// BeatInterval (at their own interval when their metadata asks for a
// shorter one), and a failed registration is returned while the beats
// keep trying it.
func TestBeatsKeepInstancesAlive(t *testing.T) {
	m, w, clk := newTest(t)
	ctx := context.Background()
	fast := inst("10.0.0.2", 2)
	fast.Metadata = map[string]string{"preserved.heart.beat.interval": "2000"}
	m.Set(ctx, "c1", "public", "G@@a", []naming.Instance{inst("10.0.0.1", 1)})
	m.Set(ctx, "c2", "public", "G@@b", []naming.Instance{fast})
	w.take()
	clk.Advance(2 * time.Second)
	if got := w.take(); got != "beat G@@b 10.0.0.2:2 n1:8848#c2" {
		t.Fatalf("after 2 s: %q", got)
	}
	clk.Advance(3 * time.Second)
	if got := w.take(); got != "beat G@@a 10.0.0.1:1 n1:8848#c1; beat G@@b 10.0.0.2:2 n1:8848#c2" {
		t.Fatalf("after 5 s: %q", got)
	}
	w.fail["G@@down"] = true
	if err := m.Set(ctx, "c1", "public", "G@@down", []naming.Instance{inst("10.0.0.9", 9)}); err == nil {
		t.Fatal("a registration its owner refused answered ok")
	}
	if m.Count() != 3 {
		t.Fatalf("held %d: the refused registration must stay held so the beats register it", m.Count())
	}
}

// TestDropAfterGrace: a closed connection's instances are deregistered
// DropGrace later (a moving client registers them through another member
// meanwhile); its beats stop at once; a write that arrives after the
// drop is refused and undone.
func TestDropAfterGrace(t *testing.T) {
	m, w, clk := newTest(t)
	ctx := context.Background()
	m.Set(ctx, "c1", "public", "G@@a", []naming.Instance{inst("10.0.0.1", 1)})
	w.take()
	m.Drop("c1")
	clk.Advance(4 * time.Second)
	if got := w.take(); got != "" {
		t.Fatalf("before the grace: %q", got)
	}
	clk.Advance(2 * time.Second)
	if got := w.take(); got != "deregister G@@a 10.0.0.1:1 n1:8848#c1" {
		t.Fatalf("after the grace: %q", got)
	}
	if err := m.Set(ctx, "c1", "public", "G@@a", []naming.Instance{inst("10.0.0.1", 1)}); !errors.Is(err, ErrDisconnected) {
		t.Fatalf("write after the drop: %v", err)
	}
	if got := w.take(); got != "deregister G@@a 10.0.0.1:1 n1:8848#c1" && got != "" {
		t.Fatalf("late write: %q", got)
	}
	// a shutting-down node leaves its instances to their owners
	m.Set(ctx, "c2", "public", "G@@b", []naming.Instance{inst("10.0.0.2", 2)})
	w.take()
	m.Close()
	m.Drop("c2")
	clk.Advance(10 * time.Second)
	if got := w.take(); got != "" {
		t.Fatalf("after close: %q", got)
	}
}

// TestDroppedIDsForgottenInOrder: a dropped connection's id refuses writes
// for goneFor, then is forgotten; one dropped again later is remembered
// from its last drop; thousands of drops keep only the recent ids.
func TestDroppedIDsForgottenInOrder(t *testing.T) {
	m, _, clk := newTest(t)
	ctx := context.Background()
	set := func(id string) error {
		return m.Set(ctx, id, "public", "G@@a", []naming.Instance{inst("10.0.0.1", 1)})
	}
	m.Drop("a")
	m.Drop("b")
	clk.Advance(time.Minute)
	m.Drop("b") // again: remembered from now
	clk.Advance(goneFor)
	m.Drop("c")
	if err := set("a"); err != nil {
		t.Fatalf("a, dropped more than goneFor ago: %v", err)
	}
	for _, id := range []string{"b", "c"} {
		if err := set(id); !errors.Is(err, ErrDisconnected) {
			t.Fatalf("%s, dropped within goneFor: %v", id, err)
		}
	}
	for i := 0; i < 5000; i++ {
		m.Drop("x" + strconv.Itoa(i))
		clk.Advance(100 * time.Millisecond)
	}
	m.mu.Lock()
	gone, queued := m.gone.Len(), m.gone.Queued()
	m.mu.Unlock()
	if want := int(goneFor/(100*time.Millisecond)) + 1; gone > want || queued > want+2 {
		t.Fatalf("after 5000 drops 100 ms apart: %d ids remembered, %d queued; want at most %d", gone, queued, want)
	}
}
