//go:build long

package ptx2cuda

import "testing"

// TestCorpusPTXRest is TestCorpusPTX over the items the default tier
// leaves out (all but the first of each set; about 80 s of nvcc): with it,
// every variant's committed PTX is checked once.
func TestCorpusPTXRest(t *testing.T) {
	if *regenerateFlag {
		t.Skip("-regenerate: TestCorpusPTX rewrites every item")
	}
	checkCorpusPTX(t, func(i int) bool { return i != 0 })
}
