//go:build !long

package cudasynth

// longTier is false in the default tier (./setup.sh test): the corpus
// compile check builds every tenth program.
const longTier = false
