//go:build long

package ptx2cuda

import (
	"testing"

	"github.com/kiln-dev/kiln/tools/kit/kittest"
)

// TestKit runs the lane kit conformance suite on the lane. The default tier
// runs it once for every registered lane in tools/lanes (TestConformance
// there); here it repeats under -tags long.
func TestKit(t *testing.T) {
	needNVCC(t)
	kittest.Run(t, Kit(), testHost)
}
