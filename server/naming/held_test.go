package naming

import (
	"context"
	"testing"
	"time"
)

// TestHeldInstanceHolders: a holder's deregistration removes only what it
// wrote last: a client that moved to another member (a new holder
// registered it) keeps its instance when the old member lets go; a beat
// that crosses a deregistration does not bring the instance back, a
// later one does (the client still holds it).
func TestHeldInstanceHolders(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	in := Instance{IP: "10.0.0.1", Port: 80, ClusterName: DefaultCluster, Weight: -1, Healthy: true, Enabled: true, InstanceID: "custom-1"}
	f := InstanceForm{NamespaceID: "public", ServiceName: "G@@h", Instance: in}
	if err := e.reg.RegisterHeld(ctx, f, "A#c1"); err != nil {
		t.Fatal(err)
	}
	v, _ := e.reg.View("public", "G@@h")
	if len(v.Instances) != 1 || v.Instances[0].InstanceID != "custom-1" || v.Instances[0].Weight != -1 || !v.Instances[0].Ephemeral {
		t.Fatalf("registered %+v (the client's id and weight are kept)", v.Instances)
	}
	// the client moved to member B, which registered it
	if err := e.reg.RegisterHeld(ctx, f, "B#c9"); err != nil {
		t.Fatal(err)
	}
	if removed, _ := e.reg.DeregisterHeld(ctx, f, "A#c1"); removed {
		t.Fatal("the old holder removed the new holder's instance")
	}
	if h, ok := e.reg.HolderOf("public", "G@@h", DefaultCluster, "10.0.0.1", 80); !ok || h != "B#c9" {
		t.Fatalf("holder %q %v", h, ok)
	}
	if removed, _ := e.reg.DeregisterHeld(ctx, f, "B#c9"); !removed {
		t.Fatal("the holder's deregistration did nothing")
	}
	e.reg.BeatHeld(ctx, f, "B#c9") // crossed the deregistration
	if _, ok := e.reg.HolderOf("public", "G@@h", DefaultCluster, "10.0.0.1", 80); ok {
		t.Fatal("a beat right after the deregistration brought the instance back")
	}
	e.clk.Advance(4 * time.Second)
	e.reg.BeatHeld(ctx, f, "B#c9")
	if _, ok := e.reg.HolderOf("public", "G@@h", DefaultCluster, "10.0.0.1", 80); !ok {
		t.Fatal("a holder's beat did not register the instance again")
	}
	// a 1.x registration of the same address clears the holder: anyone's
	// deregistration removes it
	if err := e.reg.Register(ctx, InstanceForm{NamespaceID: "public", ServiceName: "G@@h", Instance: Instance{IP: "10.0.0.1", Port: 80,
		ClusterName: DefaultCluster, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true}}); err != nil {
		t.Fatal(err)
	}
	if removed, _ := e.reg.DeregisterHeld(ctx, f, "A#c1"); !removed {
		t.Fatal("an instance of unknown holder was not removed")
	}
}
