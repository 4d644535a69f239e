package naming

import (
	"slices"
	"testing"

	"github.com/nacosd/nacosd/compat"
)

// TestDatumOrderAsJava registers rec.b's three instances in the order the
// recorded Java cluster got them (compat/testdata/distro/java148/datum-put:
// .4, .5, .6) and checks the datum lists them as Java's did (.4, .6, .5:
// HashMap order of their datum keys).
func TestDatumOrderAsJava(t *testing.T) {
	e := newEnv(t)
	for _, ip := range []string{"127.0.9.4", "127.0.9.5", "127.0.9.6"} {
		e.register("DEFAULT_GROUP@@rec.b", ip, 8080, func(in *Instance) { in.Weight = 2 })
	}
	d, ok := e.reg.EphemeralDatum(DefaultNamespace, "DEFAULT_GROUP@@rec.b")
	if !ok {
		t.Fatal("no datum")
	}
	var got []string
	for _, in := range d.Instances {
		got = append(got, in.IP)
	}
	if want := []string{"127.0.9.4", "127.0.9.6", "127.0.9.5"}; !slices.Equal(got, want) {
		t.Fatalf("datum order %v, want Java's %v", got, want)
	}
}

// TestServiceChecksumAsJava: the service checksums a Java node sent in
// /v1/ns/service/status (compat/testdata/distro/java148/service-status)
// for the states it held: rec.a with three healthy instances of weight 2,
// rec.p with one unhealthy persistent instance.
func TestServiceChecksumAsJava(t *testing.T) {
	e := newEnv(t)
	for _, ip := range []string{"127.0.9.1", "127.0.9.2", "127.0.9.3"} {
		e.register("DEFAULT_GROUP@@rec.a", ip, 8080, func(in *Instance) { in.Weight = 2 })
	}
	if got, _ := e.reg.StatusChecksum(DefaultNamespace, "DEFAULT_GROUP@@rec.a"); got != "a5bc0fd0cc31f94b8f6e246548e1bdcb" {
		t.Errorf("rec.a checksum %s, Java a5bc0fd0cc31f94b8f6e246548e1bdcb", got)
	}
	e.register("DEFAULT_GROUP@@rec.p", "127.0.9.99", 8081, func(in *Instance) { in.Ephemeral = false })
	e.reg.ApplyHealth(DefaultNamespace, "DEFAULT_GROUP@@rec.p", map[string]bool{})
	if got, _ := e.reg.StatusChecksum(DefaultNamespace, "DEFAULT_GROUP@@rec.p"); got != "b459d2c35308ea065ab27c3211cd95a5" {
		t.Errorf("rec.p checksum %s, Java b459d2c35308ea065ab27c3211cd95a5", got)
	}
}

// TestEphemeralChecksumCached: the cached checksum is the one of the datum,
// and follows list and health changes.
func TestEphemeralChecksumCached(t *testing.T) {
	e := newEnv(t)
	svc := "DEFAULT_GROUP@@sum"
	check := func(when string) {
		t.Helper()
		d, _ := e.reg.EphemeralDatum(DefaultNamespace, svc)
		got, ok := e.reg.EphemeralChecksum(DefaultNamespace, svc)
		if want := compat.InstancesChecksum(d.Instances); !ok || got != want {
			t.Fatalf("%s: cached %s, datum's %s", when, got, want)
		}
	}
	e.register(svc, "10.0.0.1", 80, func(in *Instance) { in.Metadata = map[string]string{"b": "2", "a": "1"} })
	check("one instance")
	e.register(svc, "10.0.0.2", 80, nil)
	check("two instances")
	e.reg.ApplyHealth(DefaultNamespace, svc, map[string]bool{"10.0.0.1:80": true})
	check("after a health change")
}
