//go:build !long

package sass2rdna

// longTier is false in the default tier: TestPeers answers one program.
const longTier = false
