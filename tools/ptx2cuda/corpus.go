package ptx2cuda

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed corpus prompts
var corpusFS embed.FS

// Corpus names of tasks.corpus.
const (
	// CorpusBuiltin is the starter (training) corpus, corpus/builtin.
	CorpusBuiltin = "builtin"
	// CorpusBench is the held-out benchmark set, corpus/bench: kernels
	// that are not in the builtin corpus.
	CorpusBench = "bench"
)

// Files of a corpus item folder.
const (
	KernelFile = "kernel.cu" // the reference kernel
	MetaFile   = "meta.json" // category, signature, shapes, launch, variants
)

// Files of a task.
const (
	// FileKernel is the reference kernel source (never shown to the model).
	FileKernel = "kernel.cu"
	// FilePTX is the variant's raw PTX (the prompt shows its Rolled-PTX).
	FilePTX = "kernel.ptx"
	// FileHarness is the task's resolved HarnessSpec (JSON).
	FileHarness = "harness.json"
)

// Categories are the categories of the builtin and bench corpora.
func Categories() []string {
	return []string{"elementwise", "reduction", "stencil", "matmul", "scan", "normalization", "convolution", "data_movement"}
}

// Meta is an item's meta.json. Expressions (sizes, counts, launch
// dimensions, integer values) are integer expressions over the item's
// names: a variant's -D flags, then the variant's sizes, then the item's
// sizes, then the object-like macros of kernel.cu (the first definition of
// each, so the default of an #ifndef guard) — see KernelDefines.
type Meta struct {
	// Category is one of Categories() (a user corpus may use its own).
	Category string `json:"category"`
	// Kernel is the name of the one __global__ function of kernel.cu.
	Kernel string `json:"kernel"`
	// Description says in a line what the kernel computes (for people and
	// reports; never shown to the model).
	Description string `json:"description"`
	// AdaptedFrom names the program the kernel was adapted from, if any.
	AdaptedFrom string `json:"adapted_from,omitempty"`
	// Sizes are names for the expressions (problem sizes).
	Sizes map[string]string `json:"sizes,omitempty"`
	// Params are the kernel's parameters, in order.
	Params []Param `json:"params"`
	// Launch is the launch configuration.
	Launch Launch `json:"launch"`
	// Variants are the compiler-made variants: each is a task.
	Variants []Variant `json:"variants"`
	// Harness is "" for a kernel the generated harness runs (Params and
	// Launch required), or HarnessProgram: the kernel is one of the item's
	// program.cu, whose own main is the harness (no Params, Sizes or
	// Launch; see the package doc's "Program tasks").
	Harness string `json:"harness,omitempty"`
	// Source is the verified record a program item was prepared from
	// (kiln ptx prepare --from-campaign).
	Source *ItemSource `json:"source,omitempty"`
	// Torch is a torch item's (Harness HarnessTorch): the flags its PTX
	// is made with and the reference speedup.
	Torch *TorchMeta `json:"torch,omitempty"`
	// PTXExtraParams is the number of parameters a Triton item's PTX entry
	// has after the kernel's own (Triton's scratch pointers): the
	// reference launch passes null for them.
	PTXExtraParams int `json:"ptx_extra_params,omitempty"`
	// Triton is a Triton item's provenance (kiln ptx harvest-triton).
	Triton *TritonSource `json:"triton,omitempty"`
}

// ItemSource is the provenance of an item prepared from a verified record:
// the source campaign, its lane, the task (id and key), the attempt and
// the verdict whose answer the program is, and the task's categories.
type ItemSource struct {
	Campaign   string   `json:"campaign"`
	CampaignID string   `json:"campaign_id"`
	Lane       string   `json:"lane"`
	Task       string   `json:"task"`
	TaskKey    string   `json:"task_key"`
	Attempt    string   `json:"attempt"`
	Verdict    string   `json:"verdict"`
	Categories []string `json:"categories,omitempty"`
}

// Param is one kernel parameter.
type Param struct {
	Name string `json:"name"`
	// Type is the C type as the kernel declares it, without restrict:
	// "int", "float", "const float*", "unsigned int*", "float4*", ...
	// (element types: ElemTypes).
	Type string `json:"type"`
	// Role is in, out or inout for a pointer: in is filled before the
	// launch and must not change, out is filled with Init (default
	// const(0)) and read back, inout is filled with Init and read back.
	Role string `json:"role,omitempty"`
	// Count is a pointer's number of elements (of Type's element type: a
	// float4* counts float4s).
	Count string `json:"count,omitempty"`
	// Init fills a pointer's buffer: uniform(lo,hi) (floating types),
	// int(lo,hi) (inclusive; any type), const(v), iota, iota(m) (i mod m)
	// or perm (a random permutation of 0..count-1). lo, hi, v and m are
	// numbers or integer expressions. Default: uniform(-1,1) for floating
	// inputs, int(0,100) for integer inputs, const(0) for outputs.
	Init string `json:"init,omitempty"`
	// Value is a scalar's value: an integer expression, or a float literal
	// for float and double.
	Value string `json:"value,omitempty"`
}

// Launch is a launch configuration: grid and block dimensions (one to
// three expressions each, missing ones 1) and dynamic shared memory bytes.
type Launch struct {
	Grid   []string `json:"grid"`
	Block  []string `json:"block"`
	Shared string   `json:"shared,omitempty"`
}

// Variant is one compiler-made variant of a kernel: nvcc flags (-D knobs,
// -Xcicc -O0..-O3, --use_fast_math, ...; see FlagsOK), sizes replacing the
// item's, and a launch replacing the item's where set. A -D flag also
// changes the value of its name in the item's expressions, so a block size
// knob moves the grid and block dimensions with it.
type Variant struct {
	Name   string            `json:"name"`
	Flags  []string          `json:"flags,omitempty"`
	Sizes  map[string]string `json:"sizes,omitempty"`
	Launch *Launch           `json:"launch,omitempty"`
}

// Item is one corpus kernel with its variants' PTX.
type Item struct {
	// ID is the item's folder name.
	ID string
	// Set is the corpus it comes from ("builtin", "bench", or a folder).
	Set  string
	Meta Meta
	// Kernel is the reference kernel's source: kernel.cu, or for a
	// program item the kernel's definition as it stands in Program.
	Kernel string
	// Program is a program item's program.cu, or a torch item's CUDA
	// source (the string literal of answer.py); "" otherwise.
	Program string
	// TorchAnswer and TorchReference are a torch item's answer.py (the
	// record's module: the harness) and reference.py (the problem).
	TorchAnswer, TorchReference string
	// PTX holds each variant's PTX by variant name (absent when the item
	// was loaded without it).
	PTX map[string]string
}

// TaskID names a task of an item: "<item>/<variant>".
func TaskID(item, variant string) string { return item + "/" + variant }

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_]*$`)

// CorpusError is an error in a corpus file.
type CorpusError struct {
	Path string
	Err  error
}

func (e *CorpusError) Error() string { return "ptx2cuda corpus: " + e.Path + ": " + e.Err.Error() }
func (e *CorpusError) Unwrap() error { return e.Err }

// ErrNoPTX means a variant's PTX file is missing: the corpus was not
// prepared (kiln ptx prepare --dir DIR).
var ErrNoPTX = errors.New("no PTX: run `kiln ptx prepare --dir` on the corpus folder")

// LoadCorpus reads the items in fsys under root: one folder per item
// holding kernel.cu, meta.json and, when withPTX, one <variant>.ptx per
// variant. Items come sorted by ID; errors name the file and the field.
func LoadCorpus(fsys fs.FS, root, set string, withPTX bool) ([]Item, error) {
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		return nil, &CorpusError{Path: root, Err: err}
	}
	var items []Item
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") {
			continue
		}
		it, err := loadItem(fsys, path.Join(root, e.Name()), e.Name(), set, withPTX)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		items = append(items, it)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, &CorpusError{Path: root, Err: errors.New("no item folders (each holds kernel.cu and meta.json)")}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ID < items[j].ID })
	return items, nil
}

func loadItem(fsys fs.FS, dir, id, set string, withPTX bool) (Item, error) {
	if !nameRE.MatchString(id) {
		return Item{}, &CorpusError{Path: dir, Err: errors.New("item folder names are [a-z0-9_]+")}
	}
	metaPath := path.Join(dir, MetaFile)
	b, err := fs.ReadFile(fsys, metaPath)
	if err != nil {
		return Item{}, &CorpusError{Path: metaPath, Err: err}
	}
	var m Meta
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Item{}, &CorpusError{Path: metaPath, Err: err}
	}
	var src []byte
	var prog, torchAnswer, torchRef string
	switch m.Harness {
	case "":
		if src, err = fs.ReadFile(fsys, path.Join(dir, KernelFile)); err != nil {
			return Item{}, &CorpusError{Path: path.Join(dir, KernelFile), Err: err}
		}
	case HarnessTriton:
		// The reference is the PTX (triton.ptx), read below.
		withPTX = true
	case HarnessProgram:
		progPath := path.Join(dir, FileProgram)
		b, err := fs.ReadFile(fsys, progPath)
		if err != nil {
			return Item{}, &CorpusError{Path: progPath, Err: err}
		}
		prog = string(b)
		def, err := programKernelSource(prog, m.Kernel)
		if err != nil {
			return Item{}, &CorpusError{Path: progPath, Err: err}
		}
		src = []byte(def)
	case HarnessTorch:
		files := map[string]string{}
		for _, name := range []string{FileTorchAnswer, FileTorchReference} {
			b, err := fs.ReadFile(fsys, path.Join(dir, name))
			if err != nil {
				return Item{}, &CorpusError{Path: path.Join(dir, name), Err: err}
			}
			files[name] = string(b)
		}
		ts, err := parseTorchAnswer(files[FileTorchAnswer])
		if err != nil {
			return Item{}, &CorpusError{Path: path.Join(dir, FileTorchAnswer), Err: err}
		}
		def, err := programKernelSource(ts.cuda, m.Kernel)
		if err != nil {
			return Item{}, &CorpusError{Path: path.Join(dir, FileTorchAnswer), Err: err}
		}
		src, prog = []byte(def), ts.cuda
		torchAnswer, torchRef = files[FileTorchAnswer], files[FileTorchReference]
	default:
		return Item{}, &CorpusError{Path: metaPath, Err: fmt.Errorf("harness: %q: want \"\" (the generated harness), %q or %q", m.Harness, HarnessProgram, HarnessTorch)}
	}
	it := Item{ID: id, Set: set, Meta: m, Kernel: string(src), Program: prog, TorchAnswer: torchAnswer, TorchReference: torchRef}
	if err := it.check(); err != nil {
		return Item{}, &CorpusError{Path: metaPath, Err: err}
	}
	if withPTX {
		it.PTX = map[string]string{}
		for _, v := range m.Variants {
			p := path.Join(dir, v.Name+".ptx")
			b, err := fs.ReadFile(fsys, p)
			if errors.Is(err, fs.ErrNotExist) {
				return Item{}, &CorpusError{Path: p, Err: ErrNoPTX}
			}
			if err != nil {
				return Item{}, &CorpusError{Path: p, Err: err}
			}
			it.PTX[v.Name] = string(b)
		}
		if m.Harness == HarnessTriton {
			if err := it.checkTriton(); err != nil {
				return Item{}, &CorpusError{Path: path.Join(dir, TritonVariant+".ptx"), Err: err}
			}
		}
	}
	return it, nil
}

// check validates the meta against the kernel and resolves every
// variant once, so that a bad expression is found when the corpus loads.
func (it Item) check() error {
	m := it.Meta
	switch {
	case strings.TrimSpace(m.Category) == "":
		return errors.New("category: required")
	case !identRE.MatchString(m.Kernel):
		return fmt.Errorf("kernel: %q is not a C identifier", m.Kernel)
	case m.Harness == HarnessProgram:
		return it.checkProgram()
	case m.Harness == HarnessTorch:
		return it.checkTorch()
	case len(m.Params) == 0:
		return errors.New("params: the kernel takes no parameter: nothing to check")
	case len(m.Variants) == 0:
		return errors.New("variants: at least one is required")
	case m.Harness == HarnessTriton:
		return it.checkTriton()
	}
	if !regexp.MustCompile(`__global__[^;{]*\b` + regexp.QuoteMeta(m.Kernel) + `\s*\(`).MatchString(it.Kernel) {
		return fmt.Errorf("kernel: %s defines no __global__ function %s", KernelFile, m.Kernel)
	}
	seen := map[string]bool{}
	for i, v := range m.Variants {
		if !nameRE.MatchString(v.Name) {
			return fmt.Errorf("variants[%d].name: %q: want [a-z0-9_]+", i, v.Name)
		}
		if seen[v.Name] {
			return fmt.Errorf("variants[%d].name: %q twice", i, v.Name)
		}
		seen[v.Name] = true
		if err := FlagsOK(v.Flags); err != nil {
			return fmt.Errorf("variants[%d].flags: %w", i, err)
		}
		if _, err := it.Harness(v.Name); err != nil {
			return err
		}
	}
	return nil
}

var (
	defineFlagRE = regexp.MustCompile(`^-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.+-]*)?$`)
	plainFlagRE  = regexp.MustCompile(`^(--?use_fast_math|-(ftz|prec-div|prec-sqrt|fmad)=(true|false)|-maxrregcount=[0-9]+|--?extra-device-vectorization|-restrict)$`)
	optLevelRE   = regexp.MustCompile(`^-O[0-3]$`)
)

// FlagsOK checks a variant's nvcc flags: -DNAME[=VALUE]; -Xcicc or
// -Xptxas followed by -O0..-O3; --use_fast_math; -ftz, -prec-div,
// -prec-sqrt, -fmad =true|false; -maxrregcount=N;
// --extra-device-vectorization; -restrict. Nothing that names a file or
// changes the target.
func FlagsOK(flags []string) error {
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		switch {
		case defineFlagRE.MatchString(f), plainFlagRE.MatchString(f):
		case f == "-Xcicc" || f == "-Xptxas":
			if i+1 >= len(flags) || !optLevelRE.MatchString(flags[i+1]) {
				return fmt.Errorf("%s must be followed by -O0..-O3", f)
			}
			i++
		default:
			return fmt.Errorf("flag %q is not allowed (see FlagsOK)", f)
		}
	}
	return nil
}

// variant returns the named variant.
func (it Item) variant(name string) (Variant, bool) {
	for _, v := range it.Meta.Variants {
		if v.Name == name {
			return v, true
		}
	}
	return Variant{}, false
}

// env is the item's expression names under variant v.
func (it Item) env(v Variant) env {
	return env{layers: []map[string]string{flagDefines(v.Flags), v.Sizes, it.Meta.Sizes, KernelDefines(it.Kernel)}}
}

// Bounds of a harness.
const (
	maxElements    = 1 << 26 // per buffer
	maxTotalBytes  = 1 << 30 // all buffers
	maxSharedBytes = 227 << 10
)

// Harness resolves the variant's harness: every expression evaluated,
// defaults filled in, limits checked. Errors name the field.
func (it Item) Harness(variant string) (HarnessSpec, error) {
	v, ok := it.variant(variant)
	if !ok {
		return HarnessSpec{}, fmt.Errorf("variant %q: no such variant", variant)
	}
	e := it.env(v)
	m := it.Meta
	h := HarnessSpec{Kernel: m.Kernel, Flags: append([]string{}, v.Flags...), Seed: seedOf(it.ID)}
	if m.Harness == HarnessTriton {
		h.Reference, h.ExtraParams = ReferencePTX, m.PTXExtraParams
	}
	where := "variants[" + v.Name + "]: "
	var total int64
	names := map[string]bool{}
	for i, p := range m.Params {
		field := fmt.Sprintf("%sparams[%d] (%s)", where, i, p.Name)
		if !identRE.MatchString(p.Name) || names[p.Name] {
			return HarnessSpec{}, fmt.Errorf("%s: name %q: want a distinct C identifier", field, p.Name)
		}
		names[p.Name] = true
		hp, err := resolveParam(e, p)
		if err != nil {
			return HarnessSpec{}, fmt.Errorf("%s: %w", field, err)
		}
		if hp.Pointer {
			total += hp.Count * int64(hp.elem().size*hp.elem().lanes)
		}
		h.Params = append(h.Params, hp)
	}
	if total > maxTotalBytes {
		return HarnessSpec{}, fmt.Errorf("%sparams: %d bytes of buffers (at most %d)", where, total, maxTotalBytes)
	}
	if !h.hasOutput() {
		return HarnessSpec{}, fmt.Errorf("%sparams: no out or inout pointer: nothing to compare", where)
	}
	l := m.Launch
	if v.Launch != nil {
		l = *v.Launch
	}
	var err error
	if h.Grid, err = dims(e, l.Grid); err != nil {
		return HarnessSpec{}, fmt.Errorf("%slaunch.grid: %w", where, err)
	}
	if h.Block, err = dims(e, l.Block); err != nil {
		return HarnessSpec{}, fmt.Errorf("%slaunch.block: %w", where, err)
	}
	if threads := h.Block[0] * h.Block[1] * h.Block[2]; threads > 1024 {
		return HarnessSpec{}, fmt.Errorf("%slaunch.block: %d threads per block (at most 1024)", where, threads)
	}
	if l.Shared != "" {
		if h.Shared, err = e.evalInt(l.Shared); err != nil {
			return HarnessSpec{}, fmt.Errorf("%slaunch.shared: %w", where, err)
		}
		if h.Shared < 0 || h.Shared > maxSharedBytes {
			return HarnessSpec{}, fmt.Errorf("%slaunch.shared: %d bytes (0..%d)", where, h.Shared, maxSharedBytes)
		}
	}
	return h, nil
}

func dims(e env, exprs []string) ([3]int64, error) {
	out := [3]int64{1, 1, 1}
	if len(exprs) == 0 || len(exprs) > 3 {
		return out, fmt.Errorf("want 1 to 3 dimensions, got %d", len(exprs))
	}
	for i, x := range exprs {
		v, err := e.evalInt(x)
		if err != nil {
			return out, fmt.Errorf("%q: %w", x, err)
		}
		if v < 1 || (i == 0 && v > 1<<31-1) || (i > 0 && v > 65535) {
			return out, fmt.Errorf("%q = %d: out of range", x, v)
		}
		out[i] = v
	}
	return out, nil
}

// seedOf is an item's input seed: every variant of a kernel gets the same
// inputs.
func seedOf(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte("ptx2cuda/" + id))
	return h.Sum64()
}

// resolveParam evaluates one parameter.
func resolveParam(e env, p Param) (HarnessParam, error) {
	typ := strings.Join(strings.Fields(strings.ReplaceAll(p.Type, "*", " * ")), " ")
	typ = strings.ReplaceAll(typ, " *", "*")
	hp := HarnessParam{Name: p.Name, Type: typ}
	base := typ
	if strings.HasSuffix(base, "*") {
		hp.Pointer = true
		base = strings.TrimSpace(strings.TrimSuffix(base, "*"))
		if b, ok := strings.CutPrefix(base, "const "); ok {
			hp.Const, base = true, b
		}
	}
	if strings.Contains(base, "*") {
		return hp, fmt.Errorf("type %q: pointers to pointers are not supported", p.Type)
	}
	et, ok := elemTypes[base]
	if !ok {
		return hp, fmt.Errorf("type %q: element type %q is not one of %s", p.Type, base, strings.Join(ElemTypes(), ", "))
	}
	hp.Elem = et.c
	if !hp.Pointer {
		if p.Role != "" || p.Count != "" || p.Init != "" {
			return hp, errors.New("a scalar has a value, not a role, count or init")
		}
		if p.Value == "" {
			return hp, errors.New("value: required for a scalar")
		}
		if et.lanes != 1 {
			return hp, fmt.Errorf("type %q: vector scalars are not supported", p.Type)
		}
		lit, err := scalarLiteral(e, et, p.Value)
		if err != nil {
			return hp, fmt.Errorf("value: %w", err)
		}
		hp.Value = lit
		return hp, nil
	}
	if p.Value != "" {
		return hp, errors.New("a pointer has a count and an init, not a value")
	}
	switch p.Role {
	case RoleIn, RoleOut, RoleInOut:
	default:
		return hp, fmt.Errorf("role %q: want in, out or inout", p.Role)
	}
	if hp.Const && p.Role != RoleIn {
		return hp, fmt.Errorf("role %s: a const pointer is an input", p.Role)
	}
	hp.Role = p.Role
	n, err := e.evalInt(p.Count)
	if err != nil {
		return hp, fmt.Errorf("count %q: %w", p.Count, err)
	}
	if n < 1 || n > maxElements {
		return hp, fmt.Errorf("count %q = %d: want 1..%d", p.Count, n, maxElements)
	}
	hp.Count = n
	init := p.Init
	if init == "" {
		switch {
		case p.Role == RoleOut:
			init = "const(0)"
		case et.float:
			init = "uniform(-1,1)"
		default:
			init = "int(0,100)"
		}
	}
	if hp.Init, err = resolveInit(e, et, init, n); err != nil {
		return hp, fmt.Errorf("init %q: %w", init, err)
	}
	return hp, nil
}

var initRE = regexp.MustCompile(`^\s*([a-z]+)\s*(?:\((.*)\))?\s*$`)

// resolveInit evaluates an init spec into its canonical form
// (kind(args) with numbers).
func resolveInit(e env, et elemType, spec string, count int64) (string, error) {
	m := initRE.FindStringSubmatch(spec)
	if m == nil {
		return "", errors.New("want uniform(lo,hi), int(lo,hi), const(v), iota, iota(m) or perm")
	}
	kind := m[1]
	var args []string
	if strings.TrimSpace(m[2]) != "" {
		args = strings.Split(m[2], ",")
	}
	num := func(s string) (float64, error) {
		if et.float {
			return parseFloatValue(e, s)
		}
		v, err := e.evalInt(s)
		return float64(v), err
	}
	intArg := func(s string) (int64, error) { return e.evalInt(s) }
	switch kind {
	case "uniform":
		if !et.float {
			return "", errors.New("uniform is for floating types (use int(lo,hi))")
		}
		if len(args) != 2 {
			return "", errors.New("uniform takes lo and hi")
		}
		lo, err := parseFloatValue(e, args[0])
		if err != nil {
			return "", err
		}
		hi, err := parseFloatValue(e, args[1])
		if err != nil {
			return "", err
		}
		if !(lo < hi) {
			return "", errors.New("want lo < hi")
		}
		return fmt.Sprintf("uniform(%s,%s)", fmtFloat(lo), fmtFloat(hi)), nil
	case "int":
		if len(args) != 2 {
			return "", errors.New("int takes lo and hi")
		}
		lo, err := intArg(args[0])
		if err != nil {
			return "", err
		}
		hi, err := intArg(args[1])
		if err != nil {
			return "", err
		}
		if lo > hi || hi-lo >= 1<<32 {
			return "", errors.New("want lo <= hi and a span below 2^32")
		}
		return fmt.Sprintf("int(%d,%d)", lo, hi), nil
	case "const":
		if len(args) != 1 {
			return "", errors.New("const takes one value")
		}
		v, err := num(args[0])
		if err != nil {
			return "", err
		}
		return "const(" + fmtFloat(v) + ")", nil
	case "iota":
		switch len(args) {
		case 0:
			return "iota", nil
		case 1:
			mod, err := intArg(args[0])
			if err != nil {
				return "", err
			}
			if mod < 1 {
				return "", errors.New("iota(m) wants m >= 1")
			}
			return fmt.Sprintf("iota(%d)", mod), nil
		}
		return "", errors.New("iota takes at most one argument")
	case "perm":
		if len(args) != 0 {
			return "", errors.New("perm takes no argument")
		}
		if count >= 1<<31 {
			return "", errors.New("perm of more than 2^31 elements")
		}
		return "perm", nil
	}
	return "", fmt.Errorf("unknown init %q", kind)
}

// scalarLiteral renders a scalar's value as a C literal of its type.
func scalarLiteral(e env, et elemType, text string) (string, error) {
	if et.float {
		v, err := parseFloatValue(e, text)
		if err != nil {
			return "", err
		}
		s := fmtFloat(v)
		if et.c == "float" {
			if !strings.ContainsAny(s, ".e") {
				s += ".0"
			}
			s += "f"
		}
		return s, nil
	}
	v, err := e.evalInt(text)
	if err != nil {
		return "", err
	}
	if v < et.min || v > et.max {
		return "", fmt.Errorf("%d does not fit in %s", v, et.c)
	}
	return strconv.FormatInt(v, 10) + et.suffix, nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
