package sass2rdna

import (
	"testing"

	"github.com/kiln-dev/kiln/tools/kit/kittest"
)

// TestKit runs the lane kit conformance suite on this lane with the real
// sandbox and toolchains.
func TestKit(t *testing.T) { kittest.Run(t, Kit(), host) }
