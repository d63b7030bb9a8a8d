//go:build long

package hipify

// longTier is true under -tags long (./setup.sh test long): the compile
// tests build every testdata program.
const longTier = true
