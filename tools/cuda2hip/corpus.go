package cuda2hip

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// Item is one CUDA program to translate.
type Item struct {
	ID          string
	Category    string
	Domain      string
	Description string
	// Program is the CUDA program (program.cu).
	Program string
	// ExpectTranslate is false when the rule-based translator is known to
	// refuse the program (meta.json "expect_translate": false).
	ExpectTranslate bool
	// Categories are all of the item's categories, Category the first;
	// nil means just Category (corpus items have one, records may carry
	// several).
	Categories []string
	// Meta is metadata its tasks carry (a record's provenance).
	Meta map[string]string
}

// categories are the item's categories.
func (it Item) categories() []string {
	if len(it.Categories) > 0 {
		return it.Categories
	}
	return []string{it.Category}
}

// itemMeta is the part of a meta.json this lane reads: cuda-synth's
// fields (tools/cudasynth/corpus) or a benchmark's; other fields are
// ignored, so a CASS-Bench-style meta.json with more fields loads too.
type itemMeta struct {
	Category        string `json:"category"`
	Domain          string `json:"domain"`
	Description     string `json:"description"`
	ExpectTranslate *bool  `json:"expect_translate"`
}

// DefaultCategory is the category of an item whose meta.json names
// neither a category nor a domain (or that has no meta.json).
const DefaultCategory = "program"

// LoadCorpus reads CUDA programs in the cuda-synth corpus layout: one
// folder per item under root (names starting with . or _ skipped) holding
// program.cu (required) and meta.json (optional: category, domain,
// description, expect_translate; other fields are ignored); other files,
// such as expected_stdout.txt, are not read: a translation is compared
// with the CUDA program's own run. An item's category is its meta's
// category, else its domain, else DefaultCategory. Items come sorted by
// ID; errors name the file.
func LoadCorpus(fsys fs.FS, root string) ([]Item, error) {
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, &prompts.CorpusError{Path: root, Err: err}
	}
	var items []Item
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		dir := path.Join(root, e.Name())
		progPath := path.Join(dir, cudasynth.SourceFile)
		prog, err := fs.ReadFile(fsys, progPath)
		if err != nil {
			errs = append(errs, &prompts.CorpusError{Path: progPath, Err: fmt.Errorf("%w: %w", prompts.ErrMissingFile, err)})
			continue
		}
		if strings.TrimSpace(string(prog)) == "" {
			errs = append(errs, &prompts.CorpusError{Path: progPath, Err: errors.New("empty program")})
			continue
		}
		it := Item{ID: e.Name(), Program: string(prog), ExpectTranslate: true}
		metaPath := path.Join(dir, prompts.MetaFile)
		b, err := fs.ReadFile(fsys, metaPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, &prompts.CorpusError{Path: metaPath, Err: err})
			continue
		default:
			var m itemMeta
			if err := json.NewDecoder(bytes.NewReader(b)).Decode(&m); err != nil {
				errs = append(errs, &prompts.CorpusError{Path: metaPath, Err: fmt.Errorf("%w: %w", prompts.ErrBadMeta, err)})
				continue
			}
			it.Category, it.Domain, it.Description = m.Category, m.Domain, m.Description
			if m.ExpectTranslate != nil {
				it.ExpectTranslate = *m.ExpectTranslate
			}
		}
		it.Category = categoryOf(it.Category, it.Domain)
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

func categoryOf(category, domain string) string {
	switch {
	case category != "":
		return category
	case domain != "":
		return domain
	}
	return DefaultCategory
}

// LoadBuiltinCorpus returns the cuda-synth starter corpus's programs that
// the rule-based translator can translate (expect_translate: true): the
// others use inline PTX, libdevice's __nv_* functions or cuBLAS, which a
// HIP program cannot name and the lane's build does not link.
func LoadBuiltinCorpus() ([]Item, error) {
	all, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		return nil, err
	}
	var items []Item
	for _, it := range all {
		if !it.ExpectTranslate {
			continue
		}
		items = append(items, Item{ID: it.ID, Category: categoryOf(it.Category, it.Domain), Domain: it.Domain,
			Description: it.Description, Program: it.Program, ExpectTranslate: true})
	}
	return items, nil
}
