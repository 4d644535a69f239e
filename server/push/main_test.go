package push

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves a goroutine behind: Close
// must end the ack reader, push rounds and retransmissions.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
