//go:build long

package main

// longTier is true under -tags long (./setup.sh test long): the kill
// loops, the corpus-wide matrices, the cluster node kills, the browser and
// the benchmarks-as-tests run in full. See tier_default_test.go.
const longTier = true
