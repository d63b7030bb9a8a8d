//go:build long

package c2x86

import (
	"testing"

	"github.com/kiln-dev/kiln/prompts"
)

// TestCorpusWithGCCRest is TestCorpusWithGCC over the items the default
// tier leaves out: with it, every corpus item is checked once.
func TestCorpusWithGCCRest(t *testing.T) {
	t.Parallel()
	checkCorpusWithGCC(t, func(all []prompts.CorpusItem) func(id string) bool {
		in := inPeerSample(all)
		return func(id string) bool { return !in(id) }
	})
}
