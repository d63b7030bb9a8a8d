//go:build !long

package c2x86

// longTier is false in the default tier: TestPeerCompilersSample checks
// each sampled item in one configuration, every configuration once.
const longTier = false
