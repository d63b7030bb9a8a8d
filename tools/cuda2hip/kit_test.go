package cuda2hip

import (
	"testing"

	"github.com/kiln-dev/kiln/tools/kit/kittest"
)

// TestConformance runs the lane kit conformance suite on the lane.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds CUDA and HIP programs")
	}
	kittest.Run(t, Kit(), testHost)
}
