//go:build long

package sass2rdna

import (
	"testing"

	"github.com/kiln-dev/kiln/tools/kit/kittest"
)

// TestKit runs the lane kit conformance suite on this lane with the real
// sandbox and toolchains. The default tier runs it once for every
// registered lane in tools/lanes (TestConformance there); here it repeats
// under -tags long.
func TestKit(t *testing.T) { kittest.Run(t, Kit(), host) }
