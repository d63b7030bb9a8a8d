//go:build long

package cuda2hip

import (
	"testing"

	"github.com/kiln-dev/kiln/tools/kit/kittest"
)

// TestConformance runs the lane kit conformance suite on the lane. The
// default tier runs it once for every registered lane in tools/lanes
// (TestConformance there); here it repeats under -tags long.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds CUDA and HIP programs")
	}
	kittest.Run(t, Kit(), testHost)
}
