//go:build long

package c2x86

import "testing"

// TestPeerCompilersCorpus runs the peer suite (corpus_peer_test.go) on all
// 250 corpus items in all twelve configurations: 3,000 assemblies and their
// mutants. Long tier: go test -tags long ./tools/c2x86 -run TestPeerCompilersCorpus
// (figures in corpus/README.md).
func TestPeerCompilersCorpus(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	runPeerSuite(t, items, true)
}
