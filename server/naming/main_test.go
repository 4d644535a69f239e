package naming

import (
	"testing"

	"github.com/nacosd/nacosd/internal/leakcheck"
)

// TestMain fails the package if a test leaves a goroutine behind: a closed
// Registry (and its store) must have ended all of its work.
func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
