package naming

import (
	"testing"
)

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
