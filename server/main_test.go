package server

import (
	"testing"

	"github.com/nacosd/nacosd/internal/leakcheck"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// node's Close must end all of its goroutines. (The tests with the real
// nacos-sdk-go v1 client, which has no Close, live in conformance/sdkgo.)
func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(m, leakOptions()...)
}
