//go:build long

package cuda2hip

// longTier: -tags long adds the GPU-only twins' CPU verdicts to TestPeers.
const longTier = true
