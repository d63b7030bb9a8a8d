package prompts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// MetaFile is the name of the per-item metadata file.
const MetaFile = "meta.json"

// maxCorpusFileSize bounds one file of a corpus item.
const maxCorpusFileSize = 1 << 20

// Sentinel errors of LoadCorpus, wrapped in a *CorpusError naming the file.
var (
	ErrMissingFile     = errors.New("missing file")
	ErrBadMeta         = errors.New("bad meta.json")
	ErrUnknownCategory = errors.New("unknown category")
	ErrNoCategories    = errors.New("no categories")
	ErrEmptyCorpus     = errors.New("no items")
)

// CorpusError is a problem with one file or folder of a corpus.
type CorpusError struct {
	Path string // slash-separated path inside the corpus file system
	Err  error
}

func (e *CorpusError) Error() string { return "prompts: corpus: " + e.Path + ": " + e.Err.Error() }
func (e *CorpusError) Unwrap() error { return e.Err }

// CorpusItem is one input item of a lane's corpus.
type CorpusItem struct {
	// ID is the item's folder name, unique within a corpus.
	ID   string
	Lane string
	// Function is the name of the function under test.
	Function    string
	Categories  []string
	Description string
	// Files holds every regular file of the item folder except meta.json,
	// by base name (c2x86: "function.c", "driver.c", optional "*.h").
	Files map[string]string
}

// HasCategory reports whether the item carries category c.
func (it CorpusItem) HasCategory(c string) bool { return slices.Contains(it.Categories, c) }

// CorpusSpec is what a lane's corpus items look like: the lane kit
// (tools/<lane>) says it, LoadCorpus checks it.
type CorpusSpec struct {
	Lane string
	// Files are the files every item needs besides meta.json.
	Files []string
	// SourceFile is the file that must define the item's function.
	SourceFile string
	// Categories are the valid category ids.
	Categories []string
}

var (
	idRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

type metaJSON struct {
	Function    string   `json:"function"`
	Categories  []string `json:"categories"`
	Description string   `json:"description"`
}

// LoadCorpus reads a corpus of lane from fsys: every folder directly under
// root is one item (folders starting with "." or "_" and plain files such
// as a README are skipped). Each item needs meta.json and the lane's
// required files; meta.json must name the function (defined in the lane's
// source file) and at least one known category. Items come back sorted by
// ID. Errors are *CorpusError values naming the offending file and wrapping
// one of the Err* sentinels (or the fs error).
func LoadCorpus(fsys fs.FS, root string, spec CorpusSpec) ([]CorpusItem, error) {
	if spec.Lane == "" || spec.SourceFile == "" || len(spec.Categories) == 0 {
		return nil, fmt.Errorf("prompts: corpus spec needs a lane, a source file and categories")
	}
	lane := spec.Lane
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, &CorpusError{Path: root, Err: err}
	}
	var items []CorpusItem
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		it, err := loadItem(fsys, path.Join(root, name), name, lane, spec)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	if len(items) == 0 {
		return nil, &CorpusError{Path: root, Err: ErrEmptyCorpus}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	return items, nil
}

func loadItem(fsys fs.FS, dir, id, lane string, spec CorpusSpec) (CorpusItem, error) {
	if !idRE.MatchString(id) {
		return CorpusItem{}, &CorpusError{Path: dir, Err: fmt.Errorf("bad item id %q (want letters, digits, '.', '_', '-')", id)}
	}
	it := CorpusItem{ID: id, Lane: lane, Files: map[string]string{}}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return CorpusItem{}, &CorpusError{Path: dir, Err: err}
	}
	var metaRaw []byte
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := path.Join(dir, e.Name())
		b, err := readLimited(fsys, p)
		if err != nil {
			return CorpusItem{}, &CorpusError{Path: p, Err: err}
		}
		if e.Name() == MetaFile {
			metaRaw = b
			continue
		}
		it.Files[e.Name()] = string(b)
	}
	metaPath := path.Join(dir, MetaFile)
	if metaRaw == nil {
		return CorpusItem{}, &CorpusError{Path: metaPath, Err: ErrMissingFile}
	}
	for _, f := range spec.Files {
		if strings.TrimSpace(it.Files[f]) == "" {
			return CorpusItem{}, &CorpusError{Path: path.Join(dir, f), Err: ErrMissingFile}
		}
	}
	var m metaJSON
	dec := json.NewDecoder(bytes.NewReader(metaRaw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return CorpusItem{}, &CorpusError{Path: metaPath, Err: fmt.Errorf("%w: %v", ErrBadMeta, err)}
	}
	if dec.More() {
		return CorpusItem{}, &CorpusError{Path: metaPath, Err: fmt.Errorf("%w: trailing data", ErrBadMeta)}
	}
	if !identRE.MatchString(m.Function) {
		return CorpusItem{}, &CorpusError{Path: metaPath, Err: fmt.Errorf("%w: \"function\" %q is not a C identifier", ErrBadMeta, m.Function)}
	}
	callRE := regexp.MustCompile(`\b` + m.Function + `\s*\(`)
	if !callRE.MatchString(it.Files[spec.SourceFile]) {
		return CorpusItem{}, &CorpusError{Path: metaPath, Err: fmt.Errorf("%w: function %q not found in %s", ErrBadMeta, m.Function, spec.SourceFile)}
	}
	if len(m.Categories) == 0 {
		return CorpusItem{}, &CorpusError{Path: metaPath, Err: ErrNoCategories}
	}
	seen := map[string]bool{}
	for _, c := range m.Categories {
		if !slices.Contains(spec.Categories, c) {
			return CorpusItem{}, &CorpusError{Path: metaPath, Err: fmt.Errorf("%w %q", ErrUnknownCategory, c)}
		}
		if seen[c] {
			return CorpusItem{}, &CorpusError{Path: metaPath, Err: fmt.Errorf("%w: category %q listed twice", ErrBadMeta, c)}
		}
		seen[c] = true
	}
	it.Function = m.Function
	it.Categories = m.Categories
	it.Description = strings.TrimSpace(m.Description)
	return it, nil
}

func readLimited(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCorpusFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxCorpusFileSize {
		return nil, fmt.Errorf("file larger than %d bytes", maxCorpusFileSize)
	}
	return b, nil
}

// CategoryCounts returns how many items carry each category.
func CategoryCounts(items []CorpusItem) map[string]int {
	out := map[string]int{}
	for _, it := range items {
		for _, c := range it.Categories {
			out[c]++
		}
	}
	return out
}
