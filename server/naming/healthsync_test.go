package naming

import (
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// recReplicator owns every service and records the changes Distro would
// ship (Change.Ships).
type recReplicator struct {
	mu      sync.Mutex
	changed []string
}

func (r *recReplicator) Responsible(string) bool { return true }
func (r *recReplicator) observe(c Change) {
	if !c.Ships() {
		return
	}
	r.mu.Lock()
	r.changed = append(r.changed, c.NamespaceID+"/"+c.Service)
	r.mu.Unlock()
}

func (r *recReplicator) reset() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.changed
	r.changed = nil
	return out
}

// TestUnhealthyFlipIsReplicated: when the owner's beat check turns an
// instance unhealthy, the list goes to the other members at once (Java
// leaves health flips to its checksum and status rounds, up to 5 s later;
// a Java client spreading its queries over a cluster saw the instance
// healthy on other members after the owner had marked it).
func TestUnhealthyFlipIsReplicated(t *testing.T) {
	e := newEnv(t)
	e.reg.Close()
	rep := &recReplicator{}
	cfg := DefaultConfig()
	cfg.Store, cfg.Pusher, cfg.Clock, cfg.Replicator = e.store, e.push, e.clk, rep
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.DisableHealthCheck = true
	reg, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.reg = reg
	reg.Changes().Subscribe(rep.observe)
	svc := "DEFAULT_GROUP@@flip"
	e.register(svc, "10.0.0.1", 1, nil)
	e.reg.Sweep(e.clk.Now()) // the first sweep acquires the service
	rep.reset()
	e.clk.Advance(16 * time.Second)
	e.reg.Sweep(e.clk.Now())
	if got := rep.reset(); !slices.Contains(got, DefaultNamespace+"/"+svc) {
		t.Fatalf("unhealthy flip not replicated: %v", got)
	}
	e.reg.Sweep(e.clk.Now()) // nothing changed since
	if got := rep.reset(); len(got) != 0 {
		t.Fatalf("a sweep without changes replicated %v", got)
	}
}
