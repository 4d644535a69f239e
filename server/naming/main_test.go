package naming

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: a closed
// Registry (and its store) must have ended all of its work.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
