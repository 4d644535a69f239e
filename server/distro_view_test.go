package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/nacosd/nacosd/compat"
	"github.com/nacosd/nacosd/distro"
	"github.com/nacosd/nacosd/internal/clock/clocktest"
	"github.com/nacosd/nacosd/raftstore"
	"github.com/nacosd/nacosd/server/naming"
	"github.com/nacosd/nacosd/server/push"
)

// soloMembers is a one-member cluster for the view tests.
type soloMembers struct{}

const soloAddr = "127.0.0.1:8848"

func (soloMembers) SelfAddress() string    { return soloAddr }
func (soloMembers) Healthy() []string      { return []string{soloAddr} }
func (soloMembers) Others() []string       { return nil }
func (soloMembers) IsMember(a string) bool { return a == soloAddr }
func (soloMembers) IsNacosd(a string) bool { return a == soloAddr }
func (noPeers) Do(context.Context, distro.Request) (distro.Response, error) {
	return distro.Response{}, errors.New("no peers")
}

type noPeers struct{}

// viewEnv is a naming registry on a real raft store with Distro's view fed
// by its change stream, wired as the server wires them (distroStore,
// distroChange).
type viewEnv struct {
	reg *naming.Registry
	d   *distro.Distro
	clk *clocktest.Fake
}

func newViewEnv(t *testing.T) *viewEnv {
	t.Helper()
	cfg := raftstore.DefaultConfig()
	cfg.Dir, cfg.NodeID, cfg.BindAddr, cfg.Bootstrap = t.TempDir(), "n1", "127.0.0.1:0", true
	cfg.HeartbeatTimeout, cfg.ElectionTimeout, cfg.LeaderLeaseTimeout, cfg.CommitTimeout = 50*time.Millisecond, 50*time.Millisecond, 50*time.Millisecond, 5*time.Millisecond
	st, err := raftstore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := clocktest.New(time.Unix(1700000000, 0))
	ds := &distroStore{}
	d, err := distro.New(distro.Config{Store: ds, Members: soloMembers{}, Transport: noPeers{}, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	nc := naming.DefaultConfig()
	nc.Store, nc.Clock, nc.DisableHealthCheck = st, clk, true
	nc.Pusher = nopPusher{}
	nc.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	reg, err := naming.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reg.Close() })
	ds.reg = reg
	reg.Changes().Subscribe(func(c naming.Change) {
		if lc, ok := distroChange(c, false); ok {
			d.Changed(lc)
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for !st.IsLeader() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return &viewEnv{reg: reg, d: d, clk: clk}
}

type nopPusher struct{}

func (nopPusher) Subscribe(push.Subscriber) {}

func (e *viewEnv) register(t *testing.T, svc, ip string, port int, weight float64) {
	t.Helper()
	in := naming.Instance{IP: ip, Port: port, Weight: weight, Healthy: true, Enabled: true, Ephemeral: true,
		ClusterName: naming.DefaultCluster, Metadata: map[string]string{}}
	if err := e.reg.Register(context.Background(), naming.InstanceForm{NamespaceID: naming.DefaultNamespace, ServiceName: svc, Instance: in}); err != nil {
		t.Fatal(err)
	}
}

func ips(d compat.Datum) []string {
	var out []string
	for _, in := range d.Instances {
		out = append(out, in.IP)
	}
	return out
}

// TestDatumOrderAsJava registers rec.b's three instances in the order the
// recorded Java cluster got them (compat/testdata/distro/java148/datum-put:
// .4, .5, .6) and checks the datum lists them as Java's did (.4, .6, .5:
// HashMap order of their datum keys). The order lives in Distro's view,
// fed by the registry's change stream.
func TestDatumOrderAsJava(t *testing.T) {
	e := newViewEnv(t)
	for _, ip := range []string{"127.0.9.4", "127.0.9.5", "127.0.9.6"} {
		e.register(t, "DEFAULT_GROUP@@rec.b", ip, 8080, 2)
	}
	d, ok := e.d.Datum(distro.ServiceRef{NamespaceID: naming.DefaultNamespace, Service: "DEFAULT_GROUP@@rec.b"})
	if !ok {
		t.Fatal("no datum")
	}
	if got, want := ips(d), []string{"127.0.9.4", "127.0.9.6", "127.0.9.5"}; !slices.Equal(got, want) {
		t.Fatalf("datum order %v, want Java's %v", got, want)
	}
}

// TestEphemeralChecksumCached: the cached checksum is the one of the datum,
// and follows list and health changes.
func TestEphemeralChecksumCached(t *testing.T) {
	e := newViewEnv(t)
	svc := "DEFAULT_GROUP@@sum"
	ref := distro.ServiceRef{NamespaceID: naming.DefaultNamespace, Service: svc}
	check := func(when string) {
		t.Helper()
		d, _ := e.d.Datum(ref)
		got, ok := e.d.Checksum(ref)
		if want := compat.InstancesChecksum(d.Instances); !ok || got != want {
			t.Fatalf("%s: cached %s, datum's %s", when, got, want)
		}
	}
	in := naming.Instance{IP: "10.0.0.1", Port: 80, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true,
		ClusterName: naming.DefaultCluster, Metadata: map[string]string{"b": "2", "a": "1"}}
	if err := e.reg.Register(context.Background(), naming.InstanceForm{NamespaceID: naming.DefaultNamespace, ServiceName: svc, Instance: in}); err != nil {
		t.Fatal(err)
	}
	check("one instance")
	e.register(t, svc, "10.0.0.2", 80, 1)
	check("two instances")
	e.reg.ApplyHealth(naming.DefaultNamespace, svc, map[string]bool{"10.0.0.1:80": true})
	check("after a health change")
}

// TestDistroViewFollowsRegistry: a list received from the owner keeps the
// owner's order; a list emptied by deregistrations stays held (Java keeps
// the key); a list its owner dropped is no longer held while the service
// stays; a deleted service's list is gone.
func TestDistroViewFollowsRegistry(t *testing.T) {
	e := newViewEnv(t)
	ref := distro.ServiceRef{NamespaceID: naming.DefaultNamespace, Service: "DEFAULT_GROUP@@recv"}
	sent := []compat.DistroInstance{
		{IP: "10.0.0.3", Port: 1, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: "DEFAULT", ServiceName: ref.Service},
		{IP: "10.0.0.1", Port: 1, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: "DEFAULT", ServiceName: ref.Service},
		{IP: "10.0.0.2", Port: 1, Weight: 1, Healthy: true, Enabled: true, Ephemeral: true, ClusterName: "DEFAULT", ServiceName: ref.Service},
	}
	body := compat.DatumsJSON([]compat.Datum{{Key: compat.EphemeralKey(ref.NamespaceID, ref.Service), Instances: sent, Timestamp: 1}}, compat.DatumBatchCapacity)
	if err := e.d.OnDatums(body, distro.Sender{}); err != nil {
		t.Fatal(err)
	}
	d, ok := e.d.Datum(ref)
	if got := ips(d); !ok || !slices.Equal(got, []string{"10.0.0.3", "10.0.0.1", "10.0.0.2"}) {
		t.Fatalf("received list %v (held %v), want the owner's order", got, ok)
	}
	if string(e.d.AllDatums()) != string(body) {
		t.Fatalf("served back\n%s\nreceived\n%s", e.d.AllDatums(), body)
	}
	e.reg.RemoveRemote(ref.NamespaceID, ref.Service)
	if slices.Contains(e.d.Held(), ref) || !e.reg.HasService(ref.NamespaceID, ref.Service) {
		t.Fatalf("after the owner dropped it: held %v, service kept %v", e.d.Held(), e.reg.HasService(ref.NamespaceID, ref.Service))
	}

	own := distro.ServiceRef{NamespaceID: naming.DefaultNamespace, Service: "DEFAULT_GROUP@@own"}
	e.register(t, own.Service, "10.0.1.1", 80, 1)
	if err := e.reg.Deregister(context.Background(), naming.InstanceForm{NamespaceID: own.NamespaceID, ServiceName: own.Service,
		Instance: naming.Instance{IP: "10.0.1.1", Port: 80, ClusterName: naming.DefaultCluster, Ephemeral: true}}); err != nil {
		t.Fatal(err)
	}
	if d, ok := e.d.Datum(own); !ok || len(d.Instances) != 0 {
		t.Fatalf("emptied list: %+v held %v, want held and empty", d, ok)
	}
	if err := e.reg.DeleteService(context.Background(), own.NamespaceID, own.Service); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(e.d.Held(), own) {
		t.Fatalf("a deleted service's list is still held: %v", e.d.Held())
	}
}
