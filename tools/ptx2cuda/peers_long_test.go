//go:build long

package ptx2cuda

// longTier: -tags long adds the GPU-only twins' CPU verdicts to TestPeers.
const longTier = true
