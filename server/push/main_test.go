package push

import (
	"testing"

	"github.com/nacosd/nacosd/internal/leakcheck"
)

// TestMain fails the package if a test leaves a goroutine behind: Close
// must end the ack reader, push rounds and retransmissions.
func TestMain(m *testing.M) { leakcheck.VerifyTestMain(m) }
