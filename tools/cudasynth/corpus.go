package cudasynth

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
)

//go:embed corpus
var corpusFS embed.FS

// CorpusItem is one item of a cuda-synth corpus: a persona prompt and a
// reference program written for it (the program is never shown to the
// model; a replay script may answer with it).
type CorpusItem struct {
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

// LoadCorpus reads a cuda-synth corpus: one folder per item holding
// program.cu and meta.json (category, domain, features, description,
// prompt, expect_translate; other files such as expected_stdout.txt are
// ignored). Items come sorted by ID; errors name the file.
func LoadCorpus(fsys fs.FS, root string) ([]CorpusItem, error) {
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, &prompts.CorpusError{Path: root, Err: err}
	}
	var items []CorpusItem
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		dir := path.Join(root, e.Name())
		metaPath := path.Join(dir, prompts.MetaFile)
		b, err := fs.ReadFile(fsys, metaPath)
		if err != nil {
			errs = append(errs, &prompts.CorpusError{Path: metaPath, Err: fmt.Errorf("%w: %w", prompts.ErrMissingFile, err)})
			continue
		}
		var it CorpusItem
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&it); err != nil {
			errs = append(errs, &prompts.CorpusError{Path: metaPath, Err: fmt.Errorf("%w: %w", prompts.ErrBadMeta, err)})
			continue
		}
		if it.Category == "" || strings.TrimSpace(it.Prompt) == "" {
			errs = append(errs, &prompts.CorpusError{Path: metaPath, Err: fmt.Errorf("%w: category and prompt are required", prompts.ErrBadMeta)})
			continue
		}
		prog, err := fs.ReadFile(fsys, path.Join(dir, "program.cu"))
		if err != nil {
			errs = append(errs, &prompts.CorpusError{Path: path.Join(dir, "program.cu"), Err: fmt.Errorf("%w: %w", prompts.ErrMissingFile, err)})
			continue
		}
		it.ID, it.Program = e.Name(), string(prog)
		items = append(items, it)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, &prompts.CorpusError{Path: root, Err: prompts.ErrEmptyCorpus}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	return items, nil
}

// LoadBuiltinCorpus reads the embedded cuda-synth corpus (corpus/, 50
// programs with their prompts).
func LoadBuiltinCorpus() ([]CorpusItem, error) {
	return LoadCorpus(corpusFS, "corpus")
}
