package prompts

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoadBuiltinCUDACorpus(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCUDACorpus()
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

func TestLoadCUDACorpusErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		fs   fstest.MapFS
		want error
		file string
	}{
		"missing meta": {fstest.MapFS{"c/a/program.cu": {Data: []byte("x")}}, ErrMissingFile, "c/a/meta.json"},
		"bad meta":     {fstest.MapFS{"c/a/meta.json": {Data: []byte(`{"category": 3}`)}, "c/a/program.cu": {Data: []byte("x")}}, ErrBadMeta, "c/a/meta.json"},
		"no prompt":    {fstest.MapFS{"c/a/meta.json": {Data: []byte(`{"category": "x"}`)}, "c/a/program.cu": {Data: []byte("x")}}, ErrBadMeta, "c/a/meta.json"},
		"no program":   {fstest.MapFS{"c/a/meta.json": {Data: []byte(`{"category": "x", "prompt": "p"}`)}}, ErrMissingFile, "c/a/program.cu"},
		"empty":        {fstest.MapFS{"c/README.md": {Data: []byte("x")}}, ErrEmptyCorpus, "c"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadCUDACorpus(c.fs, "c")
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.file) {
				t.Fatalf("err = %v, want %v naming %s", err, c.want, c.file)
			}
		})
	}
}
