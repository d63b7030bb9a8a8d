//go:build !long

package hipify

// longTier is false in the default tier (./setup.sh test): the compile
// tests build compileSample.
const longTier = false
