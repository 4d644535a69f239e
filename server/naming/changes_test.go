package naming

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// changeLog records the change stream.
type changeLog struct {
	mu sync.Mutex
	cs []Change
}

func (l *changeLog) add(c Change) {
	l.mu.Lock()
	l.cs = append(l.cs, c)
	l.mu.Unlock()
}

func (l *changeLog) take() []Change {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.cs
	l.cs = nil
	return out
}

// TestEveryMutationEmitsOneChange: each kind of mutation emits exactly one
// change, and Distro ships exactly the lists this node changed (a metadata
// batch's ephemeral half never reached Distro: issue 23 defect 2; a health
// set on the owner neither).
func TestEveryMutationEmitsOneChange(t *testing.T) {
	e := newEnv(t)
	log := &changeLog{}
	e.reg.Changes().Subscribe(log.add)
	ctx := context.Background()
	const svc = "DEFAULT_GROUP@@stream"
	ships := func(cs []Change) bool { return len(cs) == 1 && cs[0].Ships() }

	e.register(svc, "10.0.0.1", 80, nil)
	if cs := log.take(); !ships(cs) || cs[0].Service != svc || cs[0].NamespaceID != DefaultNamespace ||
		cs[0].Edit != EditPut || cs[0].Key != "10.0.0.1:80:unknown:DEFAULT" {
		t.Fatalf("register: %+v", cs)
	}
	if _, err := e.reg.MetadataBatch(ctx, MetadataBatchForm{NamespaceID: DefaultNamespace, ServiceName: svc,
		ConsistencyType: "ephemeral", Metadata: map[string]string{"k": "v"}}); err != nil {
		t.Fatal(err)
	}
	if cs := log.take(); !ships(cs) || cs[0].Edit != EditNone {
		t.Fatalf("metadata batch: %+v", cs)
	}
	if err := e.reg.SetHealth(DefaultNamespace, svc, DefaultCluster, "10.0.0.1", 80, false); err == nil {
		t.Fatal("health set with a working health check")
	}
	log.take()
	e.reg.Sweep(e.clk.Now()) // acquires the service
	log.take()
	e.clk.Advance(16 * time.Second)
	e.reg.Sweep(e.clk.Now())
	if cs := log.take(); !ships(cs) || cs[0].Kind&ChangedHealth == 0 || cs[0].Edit != EditNone {
		t.Fatalf("unhealthy by sweep: %+v", cs)
	}
	res, err := e.reg.Beat(ctx, BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, ClusterName: DefaultCluster, IP: "10.0.0.1", Port: 80})
	if err != nil || res.Code != compat.BeatOK {
		t.Fatalf("beat: %+v %v", res, err)
	}
	if cs := log.take(); !ships(cs) {
		t.Fatalf("recovered by beat: %+v", cs)
	}
	// what another member sent is not shipped back
	if err := e.reg.ApplyRemote(DefaultNamespace, "DEFAULT_GROUP@@remote", []compat.DistroInstance{{IP: "10.0.0.9", Port: 1, Weight: 1, Healthy: true, Enabled: true},
		{IP: "10.0.0.8", Port: 1, Weight: 1, Healthy: true, Enabled: true}}); err != nil {
		t.Fatal(err)
	}
	if cs := log.take(); len(cs) != 1 || cs[0].Ships() || cs[0].Kind&ChangedRemote == 0 || cs[0].Edit != EditReplace ||
		!slices.Equal(cs[0].Keys, []string{"10.0.0.9:1:unknown:DEFAULT", "10.0.0.8:1:unknown:DEFAULT"}) {
		t.Fatalf("remote list: %+v", cs)
	}
	e.reg.RemoveRemote(DefaultNamespace, "DEFAULT_GROUP@@remote")
	if cs := log.take(); len(cs) != 1 || cs[0].Ships() || cs[0].Edit != EditClear {
		t.Fatalf("remote removal: %+v", cs)
	}
	// persistent writes arrive from raft
	in := Instance{IP: "10.0.0.2", Port: 80, Weight: 1, Healthy: true, Enabled: true, ClusterName: DefaultCluster, Metadata: map[string]string{}}
	if err := e.reg.Register(ctx, InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc, Instance: in}); err != nil {
		t.Fatal(err)
	}
	cs := log.take()
	kinds := ChangeKind(0)
	for _, c := range cs {
		kinds |= c.Kind
		if c.Ships() {
			t.Fatalf("a persistent register shipped: %+v", cs)
		}
	}
	if kinds&ChangedPersistent == 0 {
		t.Fatalf("persistent register: %+v", cs)
	}
	if err := e.reg.Deregister(ctx, InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc,
		Instance: Instance{IP: "10.0.0.1", Port: 80, ClusterName: DefaultCluster, Ephemeral: true}}); err != nil {
		t.Fatal(err)
	}
	if cs := log.take(); !ships(cs) || cs[0].Edit != EditRemove || cs[0].Key != "10.0.0.1:80:unknown:DEFAULT" {
		t.Fatalf("deregister: %+v", cs)
	}
	// expiry removes, in one change
	e.register(svc, "10.0.0.3", 80, nil)
	e.register(svc, "10.0.0.4", 80, nil)
	log.take()
	e.clk.Advance(31 * time.Second) // the scheduled sweeps: unhealthy at 15 s, expired at 30 s
	if cs := log.take(); len(cs) == 0 || !ships(cs[len(cs)-1:]) || cs[len(cs)-1].Edit != EditRemove ||
		!slices.Equal(cs[len(cs)-1].Keys, []string{"10.0.0.3:80:unknown:DEFAULT", "10.0.0.4:80:unknown:DEFAULT"}) {
		t.Fatalf("expiry: %+v", cs)
	}
}

// TestObserveDropsAndCounts: a full observer channel never blocks the
// mutation; the drop is counted.
func TestObserveDropsAndCounts(t *testing.T) {
	var c Changes
	ch := make(chan Change, 1)
	cancel, dropped := c.Observe(ch)
	c.emit(Change{Service: "a"})
	c.emit(Change{Service: "b"}) // full
	if got := dropped.Load(); got != 1 {
		t.Fatalf("dropped %d", got)
	}
	if x := <-ch; x.Service != "a" {
		t.Fatalf("got %+v", x)
	}
	cancel()
	cancel()
	c.emit(Change{Service: "c"})
	if len(ch) != 0 {
		t.Fatal("delivered after cancel")
	}
	var seen []string
	c.Subscribe(func(x Change) { seen = append(seen, x.Service) })
	c.emit(Change{Service: "d"})
	if !slices.Equal(seen, []string{"d"}) {
		t.Fatalf("subscriber saw %v", seen)
	}
}

// TestEditsInApplyOrder: concurrent registrations and deregistrations of
// one service's instances reach a consumer in the order the registry
// applied them, so a consumer that follows the list from the edits alone
// (Distro's view) ends with the registry's list.
func TestEditsInApplyOrder(t *testing.T) {
	e := newEnv(t)
	const svc = "DEFAULT_GROUP@@order"
	var mu sync.Mutex
	model := map[string]bool{}
	var n atomic.Int64
	e.reg.Changes().Subscribe(func(c Change) {
		if c.Service != svc {
			return
		}
		// a consumer of uneven speed: other mutations apply meanwhile
		time.Sleep(time.Duration(n.Add(7)%50) * time.Microsecond)
		mu.Lock()
		defer mu.Unlock()
		for _, k := range append([]string{c.Key}, c.Keys...) {
			switch c.Edit {
			case EditPut:
				model[k] = true
			case EditRemove:
				delete(model, k)
			}
		}
	})
	ctx := context.Background()
	check := func(round int) {
		t.Helper()
		list, _ := e.reg.EphemeralInstances(DefaultNamespace, svc)
		var got, want []string
		for _, in := range list {
			want = append(want, in.IP+":80:unknown:DEFAULT")
		}
		mu.Lock()
		for k := range model {
			got = append(got, k)
		}
		mu.Unlock()
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: followed from the edits %v, registry holds %v", round, got, want)
		}
	}
	// each round, two writers race on each of four instances, one
	// registering, one deregistering
	for round := range 100 {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				in := Instance{IP: "10.0.0." + string(rune('1'+g%4)), Port: 80, Weight: 1, Healthy: true, Enabled: true,
					Ephemeral: true, ClusterName: DefaultCluster, Metadata: map[string]string{}}
				f := InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc, Instance: in}
				var err error
				if (g/4+round)%2 == 0 {
					err = e.reg.Deregister(ctx, f)
				} else {
					err = e.reg.Register(ctx, f)
				}
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		check(round)
	}
}
