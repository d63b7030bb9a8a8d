//go:build !long

package cuda2hip

// longTier is false in the default tier: TestPeers verifies the peers and
// the twins a CPU host fails, not the GPU-only twins.
const longTier = false
