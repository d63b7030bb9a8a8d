//go:build long

package cassbench_test

// longTier is true under -tags long (./setup.sh test long): the compile
// checks build every bench program.
const longTier = true
