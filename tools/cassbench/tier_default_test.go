//go:build !long

package cassbench_test

// longTier is false in the default tier (./setup.sh test): the compile
// checks build the first program of each category.
const longTier = false
