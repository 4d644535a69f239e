package naming

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/nacosd/nacosd/server/switches"
)

// concurrently runs n calls of f at once and fails on any error.
func concurrently(t *testing.T, n int, f func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			errs <- f(i)
		}(i)
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func storedMeta(t *testing.T, e *env, svc string) ServiceMeta {
	t.Helper()
	rec, ok := e.store.Get(BucketMeta, ServiceKey(DefaultNamespace, svc))
	if !ok {
		t.Fatalf("no stored meta for %s", svc)
	}
	var m ServiceMeta
	if err := decodeRecord(rec.Value, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConcurrentUpdateClusterKeepsEveryCluster: concurrent PUT /cluster
// calls on one service must each land (Java mutates the one in-memory
// service under its lock); none may be lost to a read-modify-write race.
func TestConcurrentUpdateClusterKeepsEveryCluster(t *testing.T) {
	e := newEnv(t)
	svc := "DEFAULT_GROUP@@meta"
	if err := e.reg.CreateService(context.Background(), ServiceForm{NamespaceID: DefaultNamespace, ServiceName: svc, Selector: Selector{Type: "none"}, Metadata: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	const n = 16
	concurrently(t, n, func(i int) error {
		return e.reg.UpdateCluster(context.Background(), ClusterForm{NamespaceID: DefaultNamespace, ServiceName: svc,
			ClusterName: "c" + strconv.Itoa(i), CheckPort: 80, HealthChecker: HealthChecker{Type: "NONE"}, Metadata: map[string]string{}})
	})
	m := storedMeta(t, e, svc)
	for i := 0; i < n; i++ {
		if _, ok := m.Clusters["c"+strconv.Itoa(i)]; !ok {
			t.Fatalf("cluster c%d lost: stored clusters %v", i, keys(m.Clusters))
		}
	}
}

// TestUpdateServiceDoesNotDropConcurrentCluster: a service update racing
// cluster updates keeps the clusters.
func TestUpdateServiceDoesNotDropConcurrentCluster(t *testing.T) {
	e := newEnv(t)
	svc := "DEFAULT_GROUP@@meta2"
	if err := e.reg.CreateService(context.Background(), ServiceForm{NamespaceID: DefaultNamespace, ServiceName: svc, Selector: Selector{Type: "none"}, Metadata: map[string]string{}}); err != nil {
		t.Fatal(err)
	}
	const n = 16
	concurrently(t, n, func(i int) error {
		if i%2 == 0 {
			return e.reg.UpdateService(context.Background(), ServiceForm{NamespaceID: DefaultNamespace, ServiceName: svc,
				ProtectThreshold: 0.5, Selector: Selector{Type: "none"}, Metadata: map[string]string{"k": strconv.Itoa(i)}})
		}
		return e.reg.UpdateCluster(context.Background(), ClusterForm{NamespaceID: DefaultNamespace, ServiceName: svc,
			ClusterName: "c" + strconv.Itoa(i), CheckPort: 80, HealthChecker: HealthChecker{Type: "NONE"}, Metadata: map[string]string{}})
	})
	m := storedMeta(t, e, svc)
	for i := 1; i < n; i += 2 {
		if _, ok := m.Clusters["c"+strconv.Itoa(i)]; !ok {
			t.Fatalf("cluster c%d lost: stored clusters %v", i, keys(m.Clusters))
		}
	}
	if m.ProtectThreshold != 0.5 {
		t.Fatalf("protectThreshold %v", m.ProtectThreshold)
	}
}

// TestConcurrentUpdateSwitchKeepsEveryEntry: SwitchManager.update holds a
// lock, so concurrent updates of different entries all stick.
func TestConcurrentUpdateSwitchKeepsEveryEntry(t *testing.T) {
	e := newEnv(t)
	entries := []struct{ entry, value string }{
		{switches.EntryPushCacheMillis, "12345"}, {switches.EntryDefaultCacheMillis, "2345"}, {switches.EntryClientBeatInterval, "6789"},
		{switches.EntryDistroThreshold, "0.5"}, {switches.EntryHealthCheckTimes, "7"}, {switches.EntryServiceStatusSyncPeriod, "9000"},
		{switches.EntryServerStatusSyncPeriod, "3000"}, {switches.EntryDistroServerExpiredMilli, "11111"}, {switches.EntryMasters, "a,b"},
		{switches.EntryDisableAddIP, "true"}, {switches.EntrySendBeatOnly, "true"}, {switches.EntryLightBeatEnabled, "false"},
	}
	concurrently(t, len(entries), func(i int) error {
		return e.reg.UpdateSwitch(context.Background(), entries[i].entry, entries[i].value, false)
	})
	rec, ok := e.store.Get(BucketSwitches, switchesKey)
	if !ok {
		t.Fatal("switches not stored")
	}
	sw, err := switches.Unmarshal(rec.Value[1:])
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(sw.DefaultPushCacheMillis, sw.DefaultCacheMillis, sw.ClientBeatInterval, sw.DistroThreshold, sw.CheckTimes,
		sw.ServiceStatusSynchronizationPeriodMillis, sw.ServerStatusSynchronizationPeriodMillis, sw.DistroServerExpiredMillis,
		sw.Masters, sw.DisableAddIP, sw.SendBeatOnly, sw.LightBeatEnabled)
	if want := "12345 2345 6789 0.5 7 9000 3000 11111 [a b] true true false"; got != want {
		t.Fatalf("stored switches %s, want %s", got, want)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
