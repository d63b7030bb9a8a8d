//go:build long

package cudasynth

// longTier is true under -tags long (./setup.sh test long): the corpus
// compile check builds every program.
const longTier = true
