package testtier_test

import (
	"testing"

	"github.com/nacosd/nacosd/internal/testtier"
)

// TestUnitTierHasNoTag: the unit tier (go test ./...) turns no tier on.
// Built with a tag, the tier it names is on.
func TestUnitTierHasNoTag(t *testing.T) {
	for _, tier := range []testtier.Tier{testtier.Integration, testtier.Process, testtier.Browser,
		testtier.Cluster, testtier.Jepsen, testtier.Conformance} {
		t.Logf("%s: %v", tier, testtier.On(tier))
	}
	if testtier.On("unit") {
		t.Fatal("an unknown tier is on")
	}
}
