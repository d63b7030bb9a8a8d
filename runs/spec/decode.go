package spec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Options are what the caller knows that the spec file does not.
type Options struct {
	// Lanes are the known lane names; when empty, any lane name passes.
	Lanes []string
	// Dir is the folder relative paths resolve against; default: the
	// folder of the file name given to Parse.
	Dir string
	// Confine refuses absolute paths and relative paths that leave Dir
	// (for specs submitted over the network).
	Confine bool
	// CheckPaths makes Validate check that tasks.corpus, tasks.templates.dir
	// and models[].script exist (folders, folders and files).
	CheckPaths bool
}

// maxNodes bounds the YAML nodes visited, aliases expanded, so that a small
// file of nested aliases cannot make decoding explode.
const maxNodes = 100_000

// maxErrors bounds the problems Parse lists; the rest are counted.
const maxErrors = 50

// Load reads and parses the spec at path; see Parse.
func Load(path string, opts Options) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load spec: %w", err)
	}
	return Parse(data, path, opts)
}

// Parse decodes a spec, applies defaults to the fields it leaves out,
// resolves relative paths against opts.Dir (default: filename's folder) and
// validates it. filename is used in messages and may be empty. On failure it
// returns a nil spec and an Errors value listing every problem.
func Parse(data []byte, filename string, opts Options) (*Spec, error) {
	s := &Spec{file: filename, lines: map[string]int{}, set: map[string]bool{}}
	d := &decoder{file: filename, lines: s.lines, set: s.set, budget: maxNodes}

	root, err := parseYAML(data, filename)
	if err != nil {
		return nil, err
	}
	if root == nil {
		return nil, Errors{{File: filename, Msg: "spec is empty"}}
	}
	s.lines[""] = root.Line
	d.value(root, reflect.ValueOf(s).Elem(), "")
	if d.budget < 0 {
		return nil, Errors{{File: filename, Line: root.Line, Msg: fmt.Sprintf("spec too large (over %d YAML nodes after expanding aliases)", maxNodes)}}
	}

	s.defaults(func(p string) bool { return s.set[p] })
	s.Dir = opts.Dir
	if s.Dir == "" && filename != "" {
		s.Dir = filepath.Dir(filename)
	}
	pathErrs := s.resolvePaths(opts)

	errs := append(d.errs, pathErrs...)
	if verr := s.Validate(opts); verr != nil {
		var ves Errors
		errors.As(verr, &ves)
		for _, e := range ves {
			if !d.failed(e.Field) && !hasField(pathErrs, e.Field) {
				errs = append(errs, e)
			}
		}
	}
	if len(errs) > 0 {
		errs = sortErrors(errs)
		if n := len(errs) - maxErrors; n > 0 {
			errs = append(errs[:maxErrors], &Error{File: filename, Msg: fmt.Sprintf("and %d more problems", n)})
		}
		return nil, errs
	}
	return s, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseYAML parses exactly one YAML document into its root node (nil when
// the document is empty).
func parseYAML(data []byte, filename string) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, Errors{yamlError(err, filename)}
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, Errors{yamlError(err, filename)}
	default:
		return nil, Errors{{File: filename, Line: extra.Line, Msg: "more than one YAML document"}}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	return root, nil
}

func yamlError(err error, filename string) *Error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: filename, Line: line, Msg: "yaml: " + m[2]}
	}
	return &Error{File: filename, Msg: msg}
}

type decoder struct {
	file   string
	lines  map[string]int
	set    map[string]bool
	errs   Errors
	bad    []string // paths with decode errors
	budget int
}

func (d *decoder) errorf(line int, path, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: line, Field: path, Msg: fmt.Sprintf(format, args...)})
	d.bad = append(d.bad, path)
}

// failed reports whether path, or a field above it, already has a decode
// error (so that validation does not report it twice).
func (d *decoder) failed(path string) bool {
	return slices.ContainsFunc(d.bad, func(b string) bool { return within(path, b) })
}

// within reports whether path is p or lies under p.
func within(path, p string) bool {
	if p == "" || path == p {
		return true
	}
	return strings.HasPrefix(path, p) && (path[len(p)] == '.' || path[len(p)] == '[')
}

func hasField(es Errors, field string) bool {
	return slices.ContainsFunc(es, func(e *Error) bool { return e.Field == field })
}

var durationType = reflect.TypeFor[Duration]()

// value decodes n into v, recording the line of every path it sees and
// reporting (not stopping at) every problem.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if d.budget--; d.budget < 0 {
		return
	}
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return // left out
	}
	d.set[path] = true

	if v.Type() == durationType {
		if n.Kind != yaml.ScalarNode {
			d.errorf(n.Line, path, "must be a duration such as \"90s\" or \"10m\", got %s", describe(n))
			return
		}
		dur, err := time.ParseDuration(n.Value)
		if err != nil {
			d.errorf(n.Line, path, "must be a duration such as \"90s\" or \"10m\", got %q", n.Value)
			return
		}
		v.SetInt(int64(dur))
		return
	}

	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		d.value(n, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		d.structValue(n, v, path)
	case reflect.Map:
		d.mapValue(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n.Line, path, "must be a list, got %s", describe(n))
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			p := path + "[" + itoa(i) + "]"
			d.lines[p] = item.Line
			d.value(item, s.Index(i), p)
		}
		v.Set(s)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.errorf(n.Line, path, "must be a string, got %s", describe(n))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
			d.errorf(n.Line, path, "must be true or false, got %s", describe(n))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64:
		var i int64
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil || v.OverflowInt(i) {
			d.errorf(n.Line, path, "must be an integer, got %s", describe(n))
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		var f float64
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
			d.errorf(n.Line, path, "must be a number, got %s", describe(n))
			return
		}
		v.SetFloat(f)
	default:
		panic("spec: unsupported field type " + v.Type().String())
	}
}

func (d *decoder) structValue(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		if path == "" {
			d.errorf(n.Line, path, "spec must be a mapping, got %s", describe(n))
		} else {
			d.errorf(n.Line, path, "must be a mapping, got %s", describe(n))
		}
		return
	}
	t := v.Type()
	names := make([]string, 0, t.NumField())
	index := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		name := f.Tag.Get("yaml")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		names = append(names, name)
		index[name] = i
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key, ok := d.key(k, path)
		if !ok {
			continue
		}
		p := join(path, key)
		if first, dup := seen[key]; dup {
			d.errorf(k.Line, p, "duplicate field (first at line %d)", first)
			continue
		}
		seen[key] = k.Line
		fi, known := index[key]
		if !known {
			msg := "unknown field"
			if s := suggest(key, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			d.errorf(k.Line, p, "%s", msg)
			continue
		}
		d.lines[p] = k.Line
		d.value(val, v.Field(fi), p)
	}
}

func (d *decoder) mapValue(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, path, "must be a mapping, got %s", describe(n))
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key, ok := d.key(k, path)
		if !ok {
			continue
		}
		p := join(path, key)
		if first, dup := seen[key]; dup {
			d.errorf(k.Line, p, "duplicate key (first at line %d)", first)
			continue
		}
		seen[key] = k.Line
		d.lines[p] = k.Line
		e := reflect.New(v.Type().Elem()).Elem()
		d.value(val, e, p)
		m.SetMapIndex(reflect.ValueOf(key), e)
	}
	v.Set(m)
}

// key returns a mapping key as a string, reporting keys that are not plain
// scalars and merge keys (which this strict decoder does not support).
func (d *decoder) key(k *yaml.Node, path string) (string, bool) {
	if k.Kind != yaml.ScalarNode {
		d.errorf(k.Line, path, "keys must be strings, got %s", describe(k))
		return "", false
	}
	if k.Tag == "!!merge" {
		d.errorf(k.Line, path, "merge keys (<<) are not supported")
		return "", false
	}
	return k.Value, true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describe names what a node holds, for "must be X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return strconv.Quote(n.Value)
	}
	return "nothing"
}

func itoa(i int) string { return strconv.Itoa(i) }

// resolvePaths joins relative paths with s.Dir and, with opts.Confine,
// refuses paths that leave it.
func (s *Spec) resolvePaths(opts Options) Errors {
	var errs Errors
	fix := func(path string, p *string) {
		if *p == "" {
			return
		}
		if opts.Confine && !filepath.IsLocal(*p) {
			errs = append(errs, s.errAt(path, "must be a relative path inside the spec's folder"))
			return
		}
		if !filepath.IsAbs(*p) && s.Dir != "" {
			*p = filepath.Join(s.Dir, *p)
		}
	}
	if s.Tasks.Corpus != CorpusBuiltin && s.Tasks.Corpus != CorpusBench {
		fix("tasks.corpus", &s.Tasks.Corpus)
	}
	if s.Tasks.Templates != nil && s.Tasks.Templates.Dir != "builtin" {
		fix("tasks.templates.dir", &s.Tasks.Templates.Dir)
	}
	for i := range s.Models {
		fix(modelPath(i)+".script", &s.Models[i].Script)
	}
	for i := range s.Curation.Benchmarks {
		fix("curation.benchmarks["+itoa(i)+"]", &s.Curation.Benchmarks[i])
	}
	return errs
}
