package cudasynth

// Tests of the cuda-synth corpus loader and the embedded corpus (moved from
// package prompts, which no longer knows any lane).

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kiln-dev/kiln/prompts"
)

func TestLoadBuiltinCorpus(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) < 40 {
		t.Fatalf("%d items, want >= 40", len(items))
	}
	cats := map[string]int{}
	for _, it := range items {
		cats[it.Category]++
		if !strings.Contains(it.Program, "__global__") || !strings.Contains(it.Program, "main(") {
			t.Errorf("%s: program has no kernel or no main", it.ID)
		}
		if it.Prompt == "" || it.ID == "" {
			t.Errorf("%s: empty prompt or id", it.ID)
		}
	}
	if len(cats) < 8 {
		t.Errorf("only %d categories: %v", len(cats), cats)
	}
}

func TestLoadCorpusErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		fs   fstest.MapFS
		want error
		file string
	}{
		"missing meta": {fstest.MapFS{"c/a/program.cu": {Data: []byte("x")}}, prompts.ErrMissingFile, "c/a/meta.json"},
		"bad meta":     {fstest.MapFS{"c/a/meta.json": {Data: []byte(`{"category": 3}`)}, "c/a/program.cu": {Data: []byte("x")}}, prompts.ErrBadMeta, "c/a/meta.json"},
		"no prompt":    {fstest.MapFS{"c/a/meta.json": {Data: []byte(`{"category": "x"}`)}, "c/a/program.cu": {Data: []byte("x")}}, prompts.ErrBadMeta, "c/a/meta.json"},
		"no program":   {fstest.MapFS{"c/a/meta.json": {Data: []byte(`{"category": "x", "prompt": "p"}`)}}, prompts.ErrMissingFile, "c/a/program.cu"},
		"empty":        {fstest.MapFS{"c/README.md": {Data: []byte("x")}}, prompts.ErrEmptyCorpus, "c"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadCorpus(c.fs, "c")
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.file) {
				t.Fatalf("err = %v, want %v naming %s", err, c.want, c.file)
			}
		})
	}
}
