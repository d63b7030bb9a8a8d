package persona

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Errors that callers can tell apart with errors.Is. [Load] wraps each in a
// [*FileError] naming the offending file and joins all of them.
var (
	ErrNoTemplates         = errors.New("no templates")
	ErrOutsideCategory     = errors.New("template outside a category folder (want templates/<category>/<name>.txt)")
	ErrEmptyTemplate       = errors.New("empty template")
	ErrBadPlaceholder      = errors.New("malformed placeholder (want {name}, name = [a-z][a-z0-9_]*)")
	ErrNoPool              = errors.New("placeholder has no pool")
	ErrEmptyPool           = errors.New("empty pool")
	ErrDuplicateValue      = errors.New("duplicate pool value")
	ErrBadValue            = errors.New("pool value contains a placeholder")
	ErrOrphanPool          = errors.New("local pools without a template")
	ErrUnusedLocalPool     = errors.New("local pool for a placeholder the template does not use")
	ErrBadName             = errors.New("bad name")
	ErrUnexpectedFile      = errors.New("unexpected file")
	ErrEmptySystemPrompt   = errors.New("empty system prompt")
	ErrTooManyCombinations = errors.New("template has more than 2^62 instantiations")
)

// FileError is a problem with one file or folder of a library.
type FileError struct {
	Path string // slash-separated, relative to the library root
	Err  error
}

func (e *FileError) Error() string { return "persona: " + e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

const (
	templatesDir = "templates"
	poolsDir     = "pools"
	systemFile   = "system.txt"
	domainsFile  = "domains.json"
	localSuffix  = ".pools"
	textSuffix   = ".txt"
	maxFileBytes = 1 << 20
	maxSpace     = int64(1) << 62
)

var (
	// placeholderRE matches a well-formed placeholder.
	placeholderRE = regexp.MustCompile(`\{([a-z][a-z0-9_]*)\}`)
	// looseRE matches anything that looks like an attempted placeholder:
	// an identifier in braces, possibly with blanks or capitals.
	looseRE       = regexp.MustCompile(`\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}`)
	categoryRE    = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	templateRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	placeholderNE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// Template is one persona template.
type Template struct {
	ID       string // "<category>/<name>", e.g. "graph_algorithms/03"
	Category string // the folder name
	Name     string // the file name without .txt
	Path     string // the file, relative to the library root
	Text     string // the template text, surrounding blanks trimmed
	// Placeholders are the distinct placeholder names of Text, in order of
	// first appearance.
	Placeholders []string

	pools map[string][]string // effective pool of each placeholder
	local map[string]bool     // which of them are template-local
}

// Pool returns the values that placeholder name takes in this template: its
// local pool when it has one, else the library's pool. Nil when the
// template does not use name.
func (t Template) Pool(name string) []string { return slices.Clone(t.pools[name]) }

// HasLocalPool reports whether placeholder name has a pool local to this
// template (templates/<category>/<name>.pools/<placeholder>.txt).
func (t Template) HasLocalPool(name string) bool { return t.local[name] }

// Combinations returns the number of distinct bindings of the template:
// the product of its placeholders' pool sizes (1 without placeholders).
func (t Template) Combinations() int64 {
	n := int64(1)
	for _, p := range t.Placeholders {
		n *= int64(len(t.pools[p]))
	}
	return n
}

// Render substitutes every placeholder of the template with its value in
// bindings. A missing binding is an error; bindings the template does not
// use are ignored. Values need not come from the pools.
func (t Template) Render(bindings map[string]string) (string, error) {
	for _, p := range t.Placeholders {
		if _, ok := bindings[p]; !ok {
			return "", fmt.Errorf("persona: render %s: no value for {%s}", t.ID, p)
		}
	}
	return render(t.Text, bindings), nil
}

func render(text string, bindings map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(text, func(m string) string {
		return bindings[m[1:len(m)-1]]
	})
}

// Library is a loaded, validated template library. It is immutable and
// safe for concurrent use.
type Library struct {
	templates  []Template // sorted by ID
	byID       map[string]int
	categories []string // sorted
	pools      map[string][]string
	system     string
	classifier *Classifier
}

// Templates returns all templates, sorted by ID.
func (l *Library) Templates() []Template { return slices.Clone(l.templates) }

// Template returns the template with the given ID.
func (l *Library) Template(id string) (Template, bool) {
	i, ok := l.byID[id]
	if !ok {
		return Template{}, false
	}
	return l.templates[i], true
}

// Categories returns the category names, sorted.
func (l *Library) Categories() []string { return slices.Clone(l.categories) }

// CategoryTemplates returns the templates of category, sorted by ID.
func (l *Library) CategoryTemplates(category string) []Template {
	var out []Template
	for _, t := range l.templates {
		if t.Category == category {
			out = append(out, t)
		}
	}
	return out
}

// Pool returns the library-wide pool of placeholder name (pools/<name>.txt),
// nil when there is none.
func (l *Library) Pool(name string) []string { return slices.Clone(l.pools[name]) }

// PoolNames returns the names of the library-wide pools, sorted.
func (l *Library) PoolNames() []string {
	names := make([]string, 0, len(l.pools))
	for n := range l.pools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SystemPrompt returns the lane's system prompt (system.txt), or "" when
// the library has none.
func (l *Library) SystemPrompt() string { return l.system }

// Classifier returns the domain classifier of domains.json, or nil when the
// library has none.
func (l *Library) Classifier() *Classifier { return l.classifier }

// Load reads and validates a library from fsys, laid out as described in
// the package documentation. templates/ must hold at least one template;
// pools/, system.txt and domains.json are optional. Every problem found is
// reported, each as a [*FileError] naming its file, joined with
// errors.Join. Blank lines and lines starting with '#' in pool files are
// skipped; a value is its line with surrounding blanks trimmed.
func Load(fsys fs.FS) (*Library, error) {
	var errs []error
	fail := func(p string, err error) { errs = append(errs, &FileError{Path: p, Err: err}) }

	pools := loadPoolDir(fsys, poolsDir, fail, true)

	l := &Library{pools: pools, byID: map[string]int{}}
	cats, err := fs.ReadDir(fsys, templatesDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fail(templatesDir, ErrNoTemplates)
	case err != nil:
		fail(templatesDir, err)
	}
	for _, c := range cats {
		cp := path.Join(templatesDir, c.Name())
		switch {
		case hidden(c.Name()):
			continue
		case !c.IsDir():
			fail(cp, ErrOutsideCategory)
			continue
		case !categoryRE.MatchString(c.Name()):
			fail(cp, fmt.Errorf("%w: category %q (want [a-z0-9][a-z0-9_-]*)", ErrBadName, c.Name()))
			continue
		}
		ts := loadCategory(fsys, c.Name(), pools, fail)
		if len(ts) > 0 {
			l.categories = append(l.categories, c.Name())
		}
		l.templates = append(l.templates, ts...)
	}
	if err == nil && len(l.templates) == 0 && len(errs) == 0 {
		fail(templatesDir, ErrNoTemplates)
	}
	sort.Slice(l.templates, func(i, j int) bool { return l.templates[i].ID < l.templates[j].ID })
	sort.Strings(l.categories)
	for i, t := range l.templates {
		l.byID[t.ID] = i
	}

	if b, err := readFile(fsys, systemFile); err == nil {
		l.system = strings.TrimSpace(strings.ReplaceAll(string(b), "\r\n", "\n"))
		if l.system == "" {
			fail(systemFile, ErrEmptySystemPrompt)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		fail(systemFile, err)
	}

	if b, err := readFile(fsys, domainsFile); err == nil {
		c, err := parseClassifier(b)
		if err != nil {
			fail(domainsFile, err)
		}
		l.classifier = c
	} else if !errors.Is(err, fs.ErrNotExist) {
		fail(domainsFile, err)
	}

	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return l, nil
}

// loadCategory loads templates/<category>/.
func loadCategory(fsys fs.FS, category string, global map[string][]string, fail func(string, error)) []Template {
	dir := path.Join(templatesDir, category)
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		fail(dir, err)
		return nil
	}
	var out []Template
	stems := map[string]bool{}
	localDirs := map[string]string{} // stem -> dir
	for _, e := range ents {
		p := path.Join(dir, e.Name())
		switch {
		case hidden(e.Name()):
		case e.IsDir() && strings.HasSuffix(e.Name(), localSuffix):
			localDirs[strings.TrimSuffix(e.Name(), localSuffix)] = p
		case !e.IsDir() && strings.HasSuffix(e.Name(), textSuffix):
			stem := strings.TrimSuffix(e.Name(), textSuffix)
			if !templateRE.MatchString(stem) {
				fail(p, fmt.Errorf("%w: template %q (want [A-Za-z0-9][A-Za-z0-9_-]*)", ErrBadName, stem))
				continue
			}
			stems[stem] = true
		default:
			fail(p, fmt.Errorf("%w (want <name>.txt templates and <name>.pools folders)", ErrUnexpectedFile))
		}
	}
	for stem, d := range localDirs {
		if !stems[stem] {
			fail(d, fmt.Errorf("%w %s", ErrOrphanPool, path.Join(dir, stem+textSuffix)))
		}
	}
	names := make([]string, 0, len(stems))
	for s := range stems {
		names = append(names, s)
	}
	sort.Strings(names)
	for _, stem := range names {
		p := path.Join(dir, stem+textSuffix)
		b, err := readFile(fsys, p)
		if err != nil {
			fail(p, err)
			continue
		}
		text := strings.TrimSpace(strings.ReplaceAll(string(b), "\r\n", "\n"))
		if text == "" {
			fail(p, ErrEmptyTemplate)
			continue
		}
		if bad := malformed(text); bad != "" {
			fail(p, fmt.Errorf("%w: %s", ErrBadPlaceholder, bad))
			continue
		}
		t := Template{
			ID: category + "/" + stem, Category: category, Name: stem, Path: p, Text: text,
			Placeholders: placeholders(text),
			pools:        map[string][]string{},
			local:        map[string]bool{},
		}
		var local map[string][]string
		if d, ok := localDirs[stem]; ok {
			local = loadPoolDir(fsys, d, fail, false)
			for name := range local {
				if !slices.Contains(t.Placeholders, name) {
					fail(path.Join(d, name+textSuffix), fmt.Errorf("%w: %s has no {%s}", ErrUnusedLocalPool, p, name))
				}
			}
		}
		ok := true
		space := int64(1)
		for _, ph := range t.Placeholders {
			vals, isLocal := local[ph]
			if !isLocal {
				vals = global[ph]
			}
			if len(vals) == 0 {
				fail(p, fmt.Errorf("%w: {%s} (add %s or %s)", ErrNoPool, ph,
					path.Join(poolsDir, ph+textSuffix), path.Join(dir, stem+localSuffix, ph+textSuffix)))
				ok = false
				continue
			}
			t.pools[ph] = vals
			t.local[ph] = isLocal
			if space > maxSpace/int64(len(vals)) {
				fail(p, ErrTooManyCombinations)
				ok = false
				break
			}
			space *= int64(len(vals))
		}
		if ok {
			out = append(out, t)
		}
	}
	return out
}

// loadPoolDir loads every <name>.txt of dir as the pool of {name}. A missing
// dir is fine when optional.
func loadPoolDir(fsys fs.FS, dir string, fail func(string, error), optional bool) map[string][]string {
	pools := map[string][]string{}
	ents, err := fs.ReadDir(fsys, dir)
	if err != nil {
		if !(optional && errors.Is(err, fs.ErrNotExist)) {
			fail(dir, err)
		}
		return pools
	}
	for _, e := range ents {
		p := path.Join(dir, e.Name())
		if hidden(e.Name()) {
			continue
		}
		if e.IsDir() || !strings.HasSuffix(e.Name(), textSuffix) {
			fail(p, fmt.Errorf("%w (want <placeholder>.txt pool files)", ErrUnexpectedFile))
			continue
		}
		name := strings.TrimSuffix(e.Name(), textSuffix)
		if !placeholderNE.MatchString(name) {
			fail(p, fmt.Errorf("%w: placeholder %q (want [a-z][a-z0-9_]*)", ErrBadName, name))
			continue
		}
		b, err := readFile(fsys, p)
		if err != nil {
			fail(p, err)
			continue
		}
		vals, err := parsePool(string(b))
		if err != nil {
			fail(p, err)
			continue
		}
		pools[name] = vals
	}
	return pools
}

// parsePool parses a pool file: one value a line, blank lines and '#'
// comment lines skipped.
func parsePool(s string) ([]string, error) {
	var vals []string
	seen := map[string]int{}
	for i, line := range strings.Split(s, "\n") {
		v := strings.TrimSpace(line)
		if v == "" || strings.HasPrefix(v, "#") {
			continue
		}
		if looseRE.MatchString(v) {
			return nil, fmt.Errorf("line %d: %w: %q", i+1, ErrBadValue, v)
		}
		if j, dup := seen[v]; dup {
			return nil, fmt.Errorf("line %d: %w %q (also line %d)", i+1, ErrDuplicateValue, v, j)
		}
		seen[v] = i + 1
		vals = append(vals, v)
	}
	if len(vals) == 0 {
		return nil, ErrEmptyPool
	}
	return vals, nil
}

// placeholders returns the distinct placeholder names of text in order of
// first appearance.
func placeholders(text string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	return out
}

// malformed returns the first brace group of text that looks like a
// placeholder but is not a well-formed one ("{ size}", "{Size}"), or "".
func malformed(text string) string {
	for _, m := range looseRE.FindAllString(text, -1) {
		if !placeholderNE.MatchString(m[1 : len(m)-1]) {
			return m
		}
	}
	return ""
}

func hidden(name string) bool { return strings.HasPrefix(name, ".") }

func readFile(fsys fs.FS, p string) ([]byte, error) {
	fi, err := fs.Stat(fsys, p)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("is a directory")
	}
	if fi.Size() > maxFileBytes {
		return nil, fmt.Errorf("file of %d bytes exceeds the %d-byte limit", fi.Size(), maxFileBytes)
	}
	return fs.ReadFile(fsys, p)
}
