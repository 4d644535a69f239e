package naming

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nacosd/nacosd/raftstore"
)

func TestInstKeyRoundTrip(t *testing.T) {
	for _, c := range []struct{ svc, datum string }{
		{"public##DEFAULT_GROUP@@a", "10.0.0.1:80:unknown:DEFAULT"},
		{"", "x"},
		{"ns:with:colons##G@@b", ""},
		{"12:odd", "1:2"},
	} {
		svc, datum, ok := splitInstKey(instKey(c.svc, c.datum))
		if !ok || svc != c.svc || datum != c.datum {
			t.Errorf("split(instKey(%q, %q)) = %q, %q, %v", c.svc, c.datum, svc, datum, ok)
		}
		if !strings.HasPrefix(instKey(c.svc, c.datum), instKeyPrefix(c.svc)) {
			t.Errorf("prefix of %q", c.svc)
		}
	}
	if strings.HasPrefix(instKey("ab", "x"), instKeyPrefix("a")) {
		t.Error("service a's prefix matches service ab's instances")
	}
	for _, bad := range []string{"", ":", "x:abc", "9:abc", "-1:abc"} {
		if _, _, ok := splitInstKey(bad); ok {
			t.Errorf("splitInstKey(%q) ok", bad)
		}
	}
}

// entryBytes records the value bytes of every batch the store applies.
type entryBytes struct {
	mu    sync.Mutex
	sizes []int
}

func (e *entryBytes) watch(ev raftstore.Event) {
	n := 0
	for _, op := range ev.Ops {
		n += len(op.Key) + len(op.Value)
	}
	e.mu.Lock()
	e.sizes = append(e.sizes, n)
	e.mu.Unlock()
}

func (e *entryBytes) last() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sizes[len(e.sizes)-1]
}

func persistent(in *Instance) { in.Ephemeral = false }

// TestPersistentRegisterWritesOneInstance: the entry a register writes does
// not grow with the service (it wrote the whole list before: the 300th
// register of a service wrote 300 instances).
func TestPersistentRegisterWritesOneInstance(t *testing.T) {
	e := newEnv(t)
	var eb entryBytes
	defer e.store.Watch(eb.watch)()
	const svc = "DEFAULT_GROUP@@big"
	e.register(svc, "10.0.0.1", 1, persistent)
	first := eb.last()
	for i := 2; i <= 300; i++ {
		e.register(svc, "10.0.0.1", i, persistent)
	}
	if last := eb.last(); last > first+64 {
		t.Fatalf("register 300 wrote %d bytes, register 1 wrote %d: the entry grows with the service", last, first)
	}
	if n := e.store.Len(BucketInstance); n != 300 {
		t.Fatalf("%d instance records, want 300", n)
	}
	if n := e.store.Len(BucketPersist); n != 0 {
		t.Fatalf("%d whole-list records, want 0", n)
	}
	// deregister deletes one record
	if err := e.reg.Deregister(context.Background(), InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc,
		Instance: Instance{IP: "10.0.0.1", Port: 7, ClusterName: DefaultCluster}}); err != nil {
		t.Fatal(err)
	}
	if n := e.store.Len(BucketInstance); n != 299 {
		t.Fatalf("%d instance records after deregister, want 299", n)
	}
	if r := e.list(ListQuery{ServiceName: svc}); len(r.Hosts) != 299 {
		t.Fatalf("listed %d", len(r.Hosts))
	}
}

// TestOldListRecordsLoadAndConvert stores persistent instances the way
// nacosd wrote them before per-instance records (one JSON list per service,
// version byte 1), then checks they load, list exactly as the same
// instances registered today, are converted on the first write, and
// survive a restart.
func TestOldListRecordsLoadAndConvert(t *testing.T) {
	const svc = "DEFAULT_GROUP@@old"
	key := ServiceKey(DefaultNamespace, svc)
	var list []map[string]any
	for i := 1; i <= 40; i++ {
		list = append(list, map[string]any{"instanceId": fmt.Sprintf("10.1.%d.%d#80#DEFAULT#%s", i%3, i, svc), "ip": fmt.Sprintf("10.1.%d.%d", i%3, i),
			"port": 80, "weight": 1.0, "healthy": true, "enabled": true, "ephemeral": false, "clusterName": DefaultCluster,
			"serviceName": svc, "metadata": map[string]string{"i": fmt.Sprint(i)}, "lastBeat": 1700000000000, "marked": false})
	}
	raw, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := encodeRecord(newServiceMeta(DefaultNamespace, svc))
	if err != nil {
		t.Fatal(err)
	}

	// reference: the same instances registered through today's code
	ref := newEnv(t)
	for i := 1; i <= 40; i++ {
		ref.register(svc, fmt.Sprintf("10.1.%d.%d", i%3, i), 80, func(in *Instance) {
			in.Ephemeral, in.Metadata = false, map[string]string{"i": fmt.Sprint(i)}
		})
	}
	want, err := ref.reg.List(ListQuery{NamespaceID: DefaultNamespace, ServiceName: svc})
	if err != nil {
		t.Fatal(err)
	}

	e := newEnv(t)
	if _, err := e.store.Apply(context.Background(), raftstore.Batch{Ops: []raftstore.Op{
		{Kind: raftstore.OpPut, Bucket: BucketMeta, Key: key, Value: meta},
		{Kind: raftstore.OpPut, Bucket: BucketPersist, Key: key, Value: append([]byte{recordV1}, raw...)},
	}}); err != nil {
		t.Fatal(err)
	}
	reopen := func() {
		e.reg.Close()
		if err := e.store.Close(); err != nil {
			t.Fatal(err)
		}
		e.store = openStore(t, e.dir)
		e.open()
	}
	reopen() // loaded from the old record at start
	got, err := e.reg.List(ListQuery{NamespaceID: DefaultNamespace, ServiceName: svc})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("old records list differently:\n got %s\nwant %s", got, want)
	}

	// the first write converts the service
	e.register(svc, "10.9.9.9", 80, persistent)
	ref.register(svc, "10.9.9.9", 80, persistent)
	if n := e.store.Len(BucketPersist); n != 0 {
		t.Fatalf("old list record still there after a write (%d)", n)
	}
	if n := e.store.Len(BucketInstance); n != 41 {
		t.Fatalf("%d instance records after converting, want 41", n)
	}
	want, _ = ref.reg.List(ListQuery{NamespaceID: DefaultNamespace, ServiceName: svc})
	got, _ = e.reg.List(ListQuery{NamespaceID: DefaultNamespace, ServiceName: svc})
	if string(got) != string(want) {
		t.Fatalf("after converting:\n got %s\nwant %s", got, want)
	}
	reopen()
	got, _ = e.reg.List(ListQuery{NamespaceID: DefaultNamespace, ServiceName: svc})
	if string(got) != string(want) {
		t.Fatalf("after converting and restart:\n got %s\nwant %s", got, want)
	}
	// deleting the service removes every record
	if err := e.reg.DeleteService(context.Background(), DefaultNamespace, svc); err != nil {
		t.Fatal(err)
	}
	if n := e.store.Len(BucketInstance) + e.store.Len(BucketMeta); n != 0 {
		t.Fatalf("%d records left after deleting the service", n)
	}
}

// TestPersistentWritesSurviveSnapshotRestore: the per-instance records go
// through snapshot and restore like any bucket.
func TestPersistentWritesSurviveSnapshotRestore(t *testing.T) {
	e := newEnv(t)
	const svc = "DEFAULT_GROUP@@snap"
	for i := 1; i <= 20; i++ {
		e.register(svc, "10.3.0.1", i, persistent)
	}
	if err := e.store.Snapshot(); err != nil {
		t.Fatal(err)
	}
	for i := 21; i <= 25; i++ {
		e.register(svc, "10.3.0.1", i, persistent)
	}
	e.reg.Close()
	if err := e.store.Close(); err != nil {
		t.Fatal(err)
	}
	e.store = openStore(t, e.dir)
	e.open()
	if r := e.list(ListQuery{ServiceName: svc}); len(r.Hosts) != 25 {
		t.Fatalf("listed %d after snapshot and restart, want 25", len(r.Hosts))
	}
}

// TestConcurrentPersistentRegistersAllLand: 200 registers of one service
// from 16 goroutines all succeed (the per-key queue), none is lost.
func TestConcurrentPersistentRegistersAllLand(t *testing.T) {
	e := newEnv(t)
	const svc = "DEFAULT_GROUP@@crowd"
	concurrently(t, 200, func(i int) error {
		in := Instance{IP: fmt.Sprintf("10.4.%d.%d", i/100, i%100), Port: 80, Weight: 1, Healthy: true, Enabled: true,
			ClusterName: DefaultCluster, Metadata: map[string]string{}}
		return e.reg.Register(context.Background(), InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc, Instance: in})
	})
	if r := e.list(ListQuery{ServiceName: svc}); len(r.Hosts) != 200 {
		t.Fatalf("listed %d, want 200", len(r.Hosts))
	}
}
