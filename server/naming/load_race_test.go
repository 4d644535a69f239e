package naming

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nacosd/nacosd/raftstore"
)

// writeDuringLoad is a CPStore that, while the registry loads the
// persistent instances (its first scan of BucketInstance, after the scan
// copied the records), commits one more instance of the same service and
// gives that write time to be applied. It is a member restarting while the
// leader replicates the entries it missed.
type writeDuringLoad struct {
	*raftstore.Store
	once  sync.Once
	write func()
	done  chan struct{}
}

func (w *writeDuringLoad) Scan(bucket, prefix string, fn func(string, raftstore.Record) bool) {
	w.Store.Scan(bucket, prefix, func(k string, r raftstore.Record) bool {
		if bucket == BucketInstance {
			w.once.Do(func() {
				go func() { w.write(); close(w.done) }()
				// long enough for an unhindered apply; a store that holds
				// applies back while the registry loads makes it wait
				select {
				case <-w.done:
				case <-time.After(300 * time.Millisecond):
				}
			})
		}
		return fn(k, r)
	})
}

// TestLoadSeesEveryWriteAppliedDuringIt is issue 23's first defect: a
// member restarted on its data directory skipped a contiguous batch of
// persistent-instance changes that were applied while its registry loaded
// the store, and listed the wrong instances until the end of the run.
func TestLoadSeesEveryWriteAppliedDuringIt(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	t.Cleanup(func() { st.Close() })
	ctx := context.Background()
	first := newRegistryOn(t, st)
	in := Instance{IP: "10.0.0.1", Port: 80, Weight: 1, Healthy: true, Enabled: true, ClusterName: DefaultCluster, Metadata: map[string]string{}}
	if err := first.Register(ctx, InstanceForm{NamespaceID: DefaultNamespace, ServiceName: "DEFAULT_GROUP@@svc", Instance: in}); err != nil {
		t.Fatal(err)
	}
	first.Close()

	var writeErr error
	w := &writeDuringLoad{Store: st, done: make(chan struct{})}
	w.write = func() {
		// the entry a leader replicates while this member loads: written
		// with a registry of its own (the leader's), straight to the log
		other := newRegistryOn(t, st)
		defer other.Close()
		in2 := in
		in2.IP = "10.0.0.2"
		writeErr = other.Register(ctx, InstanceForm{NamespaceID: DefaultNamespace, ServiceName: "DEFAULT_GROUP@@svc", Instance: in2})
	}
	reg := newRegistryOn(t, w)
	defer reg.Close()
	<-w.done
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	s := reg.service(DefaultNamespace, "DEFAULT_GROUP@@svc")
	if s == nil {
		t.Fatal("service missing")
	}
	s.mu.RLock()
	n := len(s.persistent)
	s.mu.RUnlock()
	if n != 2 {
		t.Fatalf("the registry lists %d persistent instances, the store holds 2: a write applied during the load was lost", n)
	}
}

func newRegistryOn(t *testing.T, st CPStore) *Registry {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Store = st
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.DisableHealthCheck, cfg.DisableEmptyServiceClean = true, true
	reg, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}
