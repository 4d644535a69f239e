package server

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind: every
// node's Close must end all of its goroutines. (The tests with the real
// nacos-sdk-go v1 client, which has no Close, live in conformance/sdkgo.)
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakOptions()...)
}
