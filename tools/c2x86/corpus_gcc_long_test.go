//go:build long

package c2x86

import "testing"

// TestCorpusWithGCCRest is TestCorpusWithGCC over the items the default
// tier leaves out: with it, every corpus item is checked once.
func TestCorpusWithGCCRest(t *testing.T) {
	t.Parallel()
	checkCorpusWithGCC(t, func(i int) bool { return i%gccSample != 0 })
}
