// Package testtier gates the slower tiers of nacosd's tests behind build
// tags, one tag per tier (docs/testing.md lists them with the make target
// that runs each): `go test ./...` runs the unit tier, `go test -tags
// integration ./...` adds the integration tier, and so on. A test of a
// tier starts with Require(t, tier); built without the tag it is skipped,
// saying which tag runs it. Every test compiles in every tier, so `go
// vet ./...` checks them all.
package testtier

import "testing"

// Tier is a tier of the tests, named by the build tag that turns it on.
type Tier string

// The tiers above the unit tier.
const (
	// Integration: several in-process nodes (raft, Distro, forwarding),
	// real-time waits of tens of seconds, real client libraries in
	// process (conformance/sdkgo).
	Integration Tier = "integration"
	// Process: builds bin/nacosd (or re-executes the test binary) and
	// runs it as a process on loopback: kill -9, signals, the CLI.
	Process Tier = "process"
	// Browser: the console in Debian's chromium (conformance/browser).
	Browser Tier = "browser"
	// Cluster: three nacosd processes on 127.0.0.11-13 with a Java
	// member, iptables partitions (conformance/cluster; as root).
	Cluster Tier = "cluster"
	// Jepsen: the fault-injection checker on 127.0.0.21-23
	// (conformance/jepsen; as root).
	Jepsen Tier = "jepsen"
	// Conformance: against Java Nacos, the referee, and real Java, Go,
	// Python and Node clients (conformance/, server/migrate's Java test).
	Conformance Tier = "conformance"
)

// On reports whether the test binary was built with tier's tag.
func On(tier Tier) bool {
	switch tier {
	case Integration:
		return integration
	case Process:
		return process
	case Browser:
		return browser
	case Cluster:
		return cluster
	case Jepsen:
		return jepsen
	case Conformance:
		return conformance
	}
	return false
}

// Require skips t unless the test binary was built with tier's tag.
func Require(t testing.TB, tier Tier) {
	t.Helper()
	if !On(tier) {
		t.Skipf("%s tier: go test -tags %s (docs/testing.md)", tier, tier)
	}
}
