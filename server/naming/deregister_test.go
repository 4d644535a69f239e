package naming

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
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

// TestProxiedBeatFromBeforeDeregisterDoesNotRevive is checker seed 908: a
// beat a member received before the deregistration and delivered to the
// owner after it — 7.5 s later, its proxy's request held up by a partition
// — re-registered the instance. The member's receive time (ReceivedAt)
// tells it from a beat sent after the deregistration, which still
// re-registers as in Java.
func TestProxiedBeatFromBeforeDeregisterDoesNotRevive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const svc = "DEFAULT_GROUP@@held"
	e.register(svc, "10.0.0.1", 80, nil)
	sent := e.clk.Now().UnixMilli() // the beat reaches a member that proxies it
	e.clk.Advance(500 * time.Millisecond)
	if err := e.reg.Deregister(ctx, InstanceForm{NamespaceID: DefaultNamespace, ServiceName: svc,
		Instance: Instance{IP: "10.0.0.1", Port: 80, ClusterName: DefaultCluster, Ephemeral: true}}); err != nil {
		t.Fatal(err)
	}
	beat := func(receivedAt int64) BeatResult {
		t.Helper()
		eph := true
		res, err := e.reg.Beat(ctx, BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, ReceivedAt: receivedAt, Beat: &BeatInfo{
			IP: "10.0.0.1", Port: 80, Cluster: DefaultCluster, ServiceName: svc, Weight: 1, Ephemeral: &eph, Metadata: map[string]string{}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	e.clk.Advance(7500 * time.Millisecond) // past the quiet window; sweeps run meanwhile
	e.reg.Sweep(e.clk.Now())
	if res := beat(sent); res.Code != compat.BeatOK {
		t.Fatalf("held-up beat answered %d", res.Code)
	}
	if e.reg.HasInstance(DefaultNamespace, svc, DefaultCluster, "10.0.0.1", 80) {
		t.Fatal("a beat received before the deregistration brought the instance back")
	}
	// a beat received after it: the client still beats, its instance returns
	beat(e.clk.Now().UnixMilli())
	if !e.reg.HasInstance(DefaultNamespace, svc, DefaultCluster, "10.0.0.1", 80) {
		t.Fatal("a beat received after the deregistration did not re-register")
	}
}

// TestHeldUpBeatCountsFromItsReceipt is checker seed 1001: a stopped
// client's last beat, proxied through a partitioned member, reached the
// owner 11 s late and kept the instance listed 41 s after that beat. A
// proxied beat now counts from when the member received it.
func TestHeldUpBeatCountsFromItsReceipt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const svc = "DEFAULT_GROUP@@late"
	e.register(svc, "10.0.0.1", 80, nil)
	e.clk.Advance(time.Second)
	received := e.clk.Now().UnixMilli() // the client's last beat, held up on its way
	e.clk.Advance(11 * time.Second)
	eph := true
	if _, err := e.reg.Beat(ctx, BeatForm{NamespaceID: DefaultNamespace, ServiceName: svc, ReceivedAt: received, Beat: &BeatInfo{
		IP: "10.0.0.1", Port: 80, Cluster: DefaultCluster, ServiceName: svc, Weight: 1, Ephemeral: &eph, Metadata: map[string]string{}}}); err != nil {
		t.Fatal(err)
	}
	e.clk.Advance(19*time.Second + 100*time.Millisecond) // 30.1 s after the beat was received
	e.reg.Sweep(e.clk.Now())
	if e.reg.HasInstance(DefaultNamespace, svc, DefaultCluster, "10.0.0.1", 80) {
		t.Fatal("instance listed 30.1 s after its last beat was received: the held-up beat counted from its arrival")
	}
}

// switchReplicator owns services while owned is set.
type switchReplicator struct{ owned atomic.Bool }

func (s *switchReplicator) Responsible(string) bool { return s.owned.Load() }

// TestNewOwnerExpiresOnReportedBeats is issue 23's ninth defect: a member
// that became the owner of a service gave every copy a fresh 30 s window,
// so a stopped instance stayed listed up to 30 s longer after an ownership
// change. With its previous owner's beat reports, the new owner expires
// exactly the instances that stopped beating; without them (a Java owner)
// it still gives the fresh window.
func TestNewOwnerExpiresOnReportedBeats(t *testing.T) {
	for _, reported := range []bool{true, false} {
		t.Run(fmt.Sprint("reported=", reported), func(t *testing.T) {
			e := newEnv(t)
			e.reg.Close()
			rep := &switchReplicator{}
			cfg := DefaultConfig()
			cfg.Store, cfg.Pusher, cfg.Clock, cfg.Replicator = e.store, e.push, e.clk, rep
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			cfg.DisableHealthCheck = true
			reg, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			e.reg = reg
			const svc = "DEFAULT_GROUP@@takeover"
			start := e.clk.Now().UnixMilli()
			// the copies the previous owner synced: registered at start
			if err := reg.ApplyRemote(DefaultNamespace, svc, []compat.DistroInstance{
				{IP: "10.0.0.1", Port: 80, Weight: 1, Healthy: true, Enabled: true, ClusterName: DefaultCluster, LastBeat: start},
				{IP: "10.0.0.2", Port: 80, Weight: 1, Healthy: true, Enabled: true, ClusterName: DefaultCluster, LastBeat: start},
			}); err != nil {
				t.Fatal(err)
			}
			// .1 keeps beating at its owner, .2 stopped at start
			e.clk.Advance(29 * time.Second)
			if reported {
				reg.ApplyBeatTimes(DefaultNamespace, svc, map[string]int64{"10.0.0.1:80:unknown:DEFAULT": e.clk.Now().UnixMilli() - 1000})
			}
			rep.owned.Store(true) // the owner died: this member takes over
			reg.Sweep(e.clk.Now())
			e.clk.Advance(1500 * time.Millisecond) // 30.5 s after .2's last beat
			reg.Sweep(e.clk.Now())
			gone := !reg.HasInstance(DefaultNamespace, svc, DefaultCluster, "10.0.0.2", 80)
			if gone != reported {
				t.Fatalf("stopped instance gone at 30.5 s: %v", gone)
			}
			if !reg.HasInstance(DefaultNamespace, svc, DefaultCluster, "10.0.0.1", 80) {
				t.Fatal("the beating instance was expired")
			}
		})
	}
}
