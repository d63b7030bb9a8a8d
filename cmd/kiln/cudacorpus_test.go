package main

import (
	"testing"

	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/hipify"
)

// TestCUDACorpusTranslates: the CUDA->HIP translator accepts every corpus
// program marked expect_translate and reports an unsupported construct for
// every program marked otherwise (never a silent pass).
func TestCUDACorpusTranslates(t *testing.T) {
	t.Parallel()
	items, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for _, it := range items {
		res, err := hipify.Translate(it.Program)
		if err != nil {
			t.Errorf("%s: %v", it.ID, err)
			continue
		}
		if res.OK() {
			accepted++
		}
		if res.OK() != it.ExpectTranslate {
			t.Errorf("%s: translator OK=%v, corpus expects %v (issues: %+v)", it.ID, res.OK(), it.ExpectTranslate, res.Unsupported)
		}
	}
	t.Logf("translator accepted %d of %d corpus programs", accepted, len(items))
}
