//go:build long

package sass2rdna

// longTier: -tags long adds programs to TestPeers.
const longTier = true
