package prompts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// LaneCUDASynth is the CASS synthesis lane: a persona prompt in, one CUDA
// program out.
const LaneCUDASynth = "cuda-synth"

// CUDAItem is one item of a cuda-synth corpus: a persona prompt and a
// reference program written for it (the program is never shown to the
// model; a replay script may answer with it).
type CUDAItem struct {
	ID              string   `json:"-"`
	Category        string   `json:"category"`
	Domain          string   `json:"domain"`
	Features        []string `json:"features"`
	Description     string   `json:"description"`
	Prompt          string   `json:"prompt"`
	ExpectTranslate bool     `json:"expect_translate"`
	// Program is the reference program.cu.
	Program string `json:"-"`
}

// LoadCUDACorpus reads a cuda-synth corpus: one folder per item holding
// program.cu and meta.json (category, domain, features, description,
// prompt, expect_translate; other files such as expected_stdout.txt are
// ignored). Items come sorted by ID; errors name the file.
func LoadCUDACorpus(fsys fs.FS, root string) ([]CUDAItem, error) {
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, &CorpusError{Path: root, Err: err}
	}
	var items []CUDAItem
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		dir := path.Join(root, e.Name())
		metaPath := path.Join(dir, MetaFile)
		b, err := fs.ReadFile(fsys, metaPath)
		if err != nil {
			errs = append(errs, &CorpusError{Path: metaPath, Err: fmt.Errorf("%w: %w", ErrMissingFile, err)})
			continue
		}
		var it CUDAItem
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&it); err != nil {
			errs = append(errs, &CorpusError{Path: metaPath, Err: fmt.Errorf("%w: %w", ErrBadMeta, err)})
			continue
		}
		if it.Category == "" || strings.TrimSpace(it.Prompt) == "" {
			errs = append(errs, &CorpusError{Path: metaPath, Err: fmt.Errorf("%w: category and prompt are required", ErrBadMeta)})
			continue
		}
		prog, err := fs.ReadFile(fsys, path.Join(dir, "program.cu"))
		if err != nil {
			errs = append(errs, &CorpusError{Path: path.Join(dir, "program.cu"), Err: fmt.Errorf("%w: %w", ErrMissingFile, err)})
			continue
		}
		it.ID, it.Program = e.Name(), string(prog)
		items = append(items, it)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, &CorpusError{Path: root, Err: ErrEmptyCorpus}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	return items, nil
}

// LoadBuiltinCUDACorpus reads the embedded cuda-synth corpus.
func LoadBuiltinCUDACorpus() ([]CUDAItem, error) {
	return LoadCUDACorpus(builtin, "corpus/"+LaneCUDASynth)
}
