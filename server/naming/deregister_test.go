package naming

import (
	"context"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat"
)

// TestBeatRightAfterDeregisterDoesNotRevive is issue 23's seventh defect:
// a client's beat in flight while it deregisters (nacos-sdk-go removes its
// beat task, but a beat already under way still arrives) re-registered
// the instance from its beat JSON, as Java does, and the acknowledged
// deregistration did not take (the instance expired 30 s later). Such a
// beat is answered and ignored; a client still beating after the quiet
// window brings its instance back, as in Java.
func TestBeatRightAfterDeregisterDoesNotRevive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const svc = "DEFAULT_GROUP@@dereg"
	e.register(svc, "10.0.0.1", 80, nil)
	if err := e.reg.Deregister(ctx, InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc,
		Instance: Instance{IP: "10.0.0.1", Port: 80, ClusterName: DefaultCluster, Ephemeral: true}}); err != nil {
		t.Fatal(err)
	}
	beat := func() BeatResult {
		t.Helper()
		eph := true
		res, err := e.reg.Beat(ctx, BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, Beat: &BeatInfo{
			IP: "10.0.0.1", Port: 80, Cluster: DefaultCluster, ServiceName: svc, Weight: 1, Ephemeral: &eph, Metadata: map[string]string{}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	e.clk.Advance(200 * time.Millisecond)
	if res := beat(); res.Code != compat.BeatOK {
		t.Fatalf("late beat answered %d", res.Code)
	}
	if e.reg.HasInstance(DefaultNamespace, svc, DefaultCluster, "10.0.0.1", 80) {
		t.Fatal("a beat sent while deregistering brought the instance back")
	}
	// a light beat (no JSON) in flight is answered OK too: a 20404 makes
	// the Java client register again
	res, err := e.reg.Beat(ctx, BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, ClusterName: DefaultCluster, IP: "10.0.0.1", Port: 80})
	if err != nil || res.Code != compat.BeatOK {
		t.Fatalf("late light beat: %+v %v", res, err)
	}
	// a client that really still beats: its next beat, a period later,
	// registers again (Java's data compensation)
	e.clk.Advance(5 * time.Second)
	beat()
	if !e.reg.HasInstance(DefaultNamespace, svc, DefaultCluster, "10.0.0.1", 80) {
		t.Fatal("a beat after the quiet window did not re-register")
	}
	// an explicit register right after a deregister is never held back
	if err := e.reg.Deregister(ctx, InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc,
		Instance: Instance{IP: "10.0.0.1", Port: 80, ClusterName: DefaultCluster, Ephemeral: true}}); err != nil {
		t.Fatal(err)
	}
	e.register(svc, "10.0.0.1", 80, nil)
	if res := beat(); res.Code != compat.BeatOK || !e.reg.HasInstance(DefaultNamespace, svc, DefaultCluster, "10.0.0.1", 80) {
		t.Fatalf("beat after a re-register: %+v", res)
	}
}
