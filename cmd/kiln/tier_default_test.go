//go:build !long

package main

// longTier is false in the default tier (./setup.sh test): every behaviour
// runs end to end once, on a sample where a test walks a corpus and with a
// few kills where it kills processes; the repeats, soaks and matrices wait
// for -tags long (tier_long_test.go, ./setup.sh test long).
const longTier = false
