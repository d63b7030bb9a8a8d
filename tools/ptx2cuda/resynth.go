package ptx2cuda

// Resynthesis: the synthesiser writes a new kernel (kernel.cu) and its
// harness in the corpus's meta.json format (one variant). The parser
// checks them statically (parseSynthBlock: the item loads as a corpus
// item would, the harness resolves, its parameter types are the kernel's).
// The validator is a refinement.Preparer: in the lane's sandbox it
// compiles the kernel to PTX exactly as a corpus variant's PTX is made
// (ptxJob: nvcc -ptx -arch=compute_90 and the variant's flags) and builds
// it into its generated harness (buildJob, compile only: a harness whose
// signature is not the kernel's does not compile), then hands the PTX and
// the resolved harness on as the candidate's files kernel.ptx and
// harness.json. candidateTasks renders those as a corpus variant's task is
// rendered, so the campaign's store holds the PTX: neither a resumed
// campaign nor a rescore compiles it again.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/ptx2cuda/rollptx"
)

// Limits of a synthesised kernel.
const (
	// MaxSynthMetaBytes bounds a synthesised meta.json.
	MaxSynthMetaBytes = 8 << 10
	// MaxSynthPTX bounds the Rolled-PTX of a synthesised kernel (the
	// prompt's bulk).
	MaxSynthPTX = 64 << 10
)

// CorpusSynthesised is the Set (the task's "corpus" meta) of a
// synthesised kernel's tasks.
const CorpusSynthesised = "synthesised"

// synthFormat is the lane's resynthesis format: templates and category
// descriptions in prompts/synth; a failing example shows the original
// kernel.cu (the prompt, Rolled-PTX, is left out).
func synthFormat() (*refinement.SynthFormat, error) {
	tmpl, cats, err := refinement.SynthTemplates(corpusFS, "prompts/synth")
	if err != nil {
		return nil, err
	}
	return &refinement.SynthFormat{Templates: tmpl, Categories: cats, Parse: parseSynthBlock,
		ExampleFile: func(name string) bool { return name == FileKernel }, FilesOnly: true}, nil
}

// kernelInfo reports whether a code block's info string names the kernel
// source; metaInfo whether it names meta.json.
func kernelInfo(info string) bool {
	for _, w := range strings.Fields(info) {
		switch w {
		case "cuda", "cu", "c++", "cpp", KernelFile:
			return true
		}
	}
	return false
}

func metaInfo(info string) bool {
	for _, w := range strings.Fields(info) {
		if w == "json" || w == MetaFile {
			return true
		}
	}
	return false
}

// parseSynthBlock reads a synthesised task: a ```cuda kernel.cu block and
// a ```json meta.json block, checked as a corpus item (synthItem). The
// candidate's files are the two as written (synthItem fills in the
// category, the description and the default variant whenever it reads
// them).
func parseSynthBlock(c *refinement.Candidate, b refinement.Block) string {
	var kernel, meta *refinement.Fenced
	for i := range b.Code {
		switch f := &b.Code[i]; {
		case kernel == nil && kernelInfo(f.Info):
			kernel = f
		case meta == nil && metaInfo(f.Info):
			meta = f
		}
	}
	switch {
	case kernel == nil:
		return "no ```cuda block with kernel.cu"
	case meta == nil:
		return "no ```json block with meta.json (the kernel's harness)"
	}
	src, metaJSON := strings.TrimSpace(kernel.Body)+"\n", strings.TrimSpace(meta.Body)+"\n"
	it, reason := synthItem(src, []byte(metaJSON), c.Category, c.Description)
	if reason != "" {
		return reason
	}
	c.Files = map[string]string{FileKernel: src, MetaFile: metaJSON}
	c.Function = it.Meta.Kernel
	if c.Description == "" {
		c.Description = it.Meta.Description
	}
	return ""
}

var (
	synthGlobalRE   = regexp.MustCompile(`\b__global__\b`)
	synthTemplateRE = regexp.MustCompile(`\btemplate\s*<`)
	localIncRE      = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*"`)
)

// synthMetaFields are the meta.json fields a synthesised kernel may have:
// those of a kernel the generated harness runs (no program or other
// harness, no provenance).
var synthMetaFields = []string{"category", "kernel", "description", "sizes", "params", "launch", "variants"}

// synthItem checks a synthesised kernel and meta.json as the corpus loader
// checks an item, and more: one __global__ function, not a template, no
// main, no local #include, no inline PTX or module loading, at most one
// variant (none: "base", no flags), and the meta's parameter types equal
// the kernel's where its signature can be read. It returns the item (ID
// from the files' hash, set "synthesised") or why it is refused.
func synthItem(src string, metaJSON []byte, category, description string) (Item, string) {
	switch {
	case len(src) > refinement.MaxSynthFileBytes:
		return Item{}, fmt.Sprintf("kernel.cu has %d bytes (at most %d)", len(src), refinement.MaxSynthFileBytes)
	case strings.Count(src, "\n") > refinement.MaxSynthFuncLines:
		return Item{}, fmt.Sprintf("kernel.cu has %d lines (at most %d)", strings.Count(src, "\n"), refinement.MaxSynthFuncLines)
	case len(metaJSON) > MaxSynthMetaBytes:
		return Item{}, fmt.Sprintf("meta.json has %d bytes (at most %d)", len(metaJSON), MaxSynthMetaBytes)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(metaJSON, &fields); err != nil {
		return Item{}, "meta.json: " + err.Error()
	}
	for k := range fields {
		if !slices.Contains(synthMetaFields, k) {
			return Item{}, fmt.Sprintf("meta.json: %q is not a field of a synthesised kernel's harness (%s)", k, strings.Join(synthMetaFields, ", "))
		}
	}
	var m Meta
	dec := json.NewDecoder(bytes.NewReader(metaJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return Item{}, "meta.json: " + err.Error()
	}
	switch {
	case len(m.Variants) > 1:
		return Item{}, fmt.Sprintf("meta.json: variants: %d (at most one)", len(m.Variants))
	case len(m.Variants) == 0:
		m.Variants = []Variant{{Name: "base"}}
	}
	if category != "" {
		m.Category = category
	}
	if m.Description == "" {
		m.Description = description
	}
	code := refinement.ParseSource(src)
	defs := code.Defs()
	for _, f := range defs {
		if f.Name == "main" {
			return Item{}, "kernel.cu defines main (the harness provides it)"
		}
	}
	switch n := len(synthGlobalRE.FindAllString(code.Code(), -1)); {
	case n == 0:
		return Item{}, "kernel.cu defines no __global__ kernel"
	case n > 1:
		return Item{}, fmt.Sprintf("kernel.cu has %d __global__ functions (one kernel per task)", n)
	case synthTemplateRE.MatchString(code.Code()):
		return Item{}, "kernel.cu uses a template (its PTX would hold one entry per instantiation; write the kernel for one type)"
	case localIncRE.MatchString(src):
		return Item{}, `kernel.cu includes a local header ("..."): it must be one file`
	}
	if why := EmbeddedPTX(src); why != "" {
		return Item{}, "kernel.cu carries PTX (" + why + "): write plain CUDA, the PTX is compiled from it"
	}
	sum := sha256.Sum256([]byte(src + "\x00" + string(metaJSON)))
	it := Item{ID: "synth_" + hex.EncodeToString(sum[:5]), Set: CorpusSynthesised, Meta: m, Kernel: src}
	if err := it.check(); err != nil {
		return Item{}, "meta.json: " + err.Error()
	}
	h, err := it.Harness(m.Variants[0].Name)
	if err != nil {
		return Item{}, "meta.json: " + err.Error()
	}
	for _, f := range defs {
		if f.Name != m.Kernel || !synthGlobalRE.MatchString(f.Prefix) {
			continue
		}
		if got, ok := paramTypes(f.Params); ok && !equalTypes(got, h.Params) {
			var want []string
			for _, p := range h.Params {
				want = append(want, p.Type)
			}
			return Item{}, fmt.Sprintf("meta.json's params (%s) are not the kernel's parameter types (%s)",
				strings.Join(want, ", "), strings.Join(got, ", "))
		}
	}
	return it, ""
}

// typeWords are the words of the element types: a parameter whose last
// word is one of them has no name.
var typeWords = map[string]bool{"float": true, "double": true, "int": true, "unsigned": true, "long": true, "char": true,
	"short": true, "size_t": true, "float2": true, "float4": true, "int2": true, "int4": true, "const": true}

var paramWordRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// paramTypes reads the parameter types of a kernel's parameter list,
// names and restrict qualifiers dropped, spaced as the harness spaces
// them ("const float*"); ok is false where it cannot (macros, typedefs,
// arrays, function pointers, defaults): the harness build decides those.
func paramTypes(params string) ([]string, bool) {
	var out []string
	if strings.TrimSpace(params) == "" || strings.TrimSpace(params) == "void" {
		return nil, true
	}
	for _, p := range strings.Split(params, ",") {
		if strings.ContainsAny(p, "[]()=<>&") {
			return nil, false
		}
		var words []string
		for _, w := range strings.Fields(strings.ReplaceAll(p, "*", " * ")) {
			switch w {
			case "__restrict__", "__restrict", "restrict":
				continue
			}
			words = append(words, w)
		}
		if n := len(words); n > 1 && words[n-1] != "*" && !typeWords[words[n-1]] {
			if !paramWordRE.MatchString(words[n-1]) {
				return nil, false
			}
			words = words[:n-1]
		}
		if len(words) == 0 {
			return nil, false
		}
		for _, w := range words {
			if w != "*" && !typeWords[w] {
				return nil, false // a typedef or a macro: the build decides
			}
		}
		out = append(out, strings.ReplaceAll(strings.Join(words, " "), " *", "*"))
	}
	return out, true
}

func equalTypes(got []string, ps []HarnessParam) bool {
	if len(got) != len(ps) {
		return false
	}
	for i, p := range ps {
		if canonType(got[i]) != canonType(p.Type) {
			return false
		}
	}
	return true
}

// canonType spells "unsigned" alone "unsigned int".
func canonType(t string) string {
	w := strings.Fields(strings.ReplaceAll(t, "*", " * "))
	for i := range w {
		if w[i] == "unsigned" && (i+1 == len(w) || w[i+1] == "*" || w[i+1] == "const") {
			w[i] = "unsigned int"
		}
	}
	return strings.ReplaceAll(strings.Join(w, " "), " *", "*")
}

// candidateItem reads a candidate's kernel.cu and meta.json into its item
// (the parser's checks again: the validator trusts no candidate).
func candidateItem(c refinement.Candidate) (Item, error) {
	src, meta := c.Files[FileKernel], c.Files[MetaFile]
	if strings.TrimSpace(src) == "" || strings.TrimSpace(meta) == "" {
		return Item{}, fmt.Errorf("the candidate has no %s or no %s", FileKernel, MetaFile)
	}
	it, reason := synthItem(src, []byte(meta), c.Category, c.Description)
	if reason != "" {
		return Item{}, errors.New(reason)
	}
	return it, nil
}

// validator is the lane's check of a synthesised kernel, a
// refinement.Preparer: see prepareCandidate.
func validator(lane tools.Lane) (refinement.Validator, error) {
	l, ok := lane.(*Lane)
	if !ok {
		return nil, fmt.Errorf("ptx2cuda validator: lane is %T", lane)
	}
	return refinement.PrepareFunc(l.prepareCandidate), nil
}

var entryRE = regexp.MustCompile(`(?m)^\s*\.(?:visible\s+)?\.entry\s`)

// prepareCandidate compiles a synthesised kernel in the sandbox, as a
// corpus variant's PTX is made, and builds it into its harness (compile
// only), both with the variant's flags and through the lane's compile
// cache. It returns the candidate with kernel.ptx (normalised, one .entry,
// Rolled-PTX at most MaxSynthPTX bytes) and harness.json (the resolved
// HarnessSpec) added. A kernel that does not compile, a harness that does
// not build with it (its parameter types are not the kernel's) and a
// compile the sandbox ended (timeout, limits) reject the candidate; a
// missing nvcc or a sandbox that cannot run wraps
// refinement.ErrValidatorBroken.
func (l *Lane) prepareCandidate(ctx context.Context, c refinement.Candidate) (refinement.Candidate, error) {
	it, err := candidateItem(c)
	if err != nil {
		return c, err
	}
	v := it.Meta.Variants[0]
	h, err := it.Harness(v.Name)
	if err != nil {
		return c, err
	}
	if err := l.cfg.Toolchains.Require(toolchain.NVCC); err != nil {
		return c, fmt.Errorf("%w: %w", refinement.ErrValidatorBroken, err)
	}
	var ptxRes, build *buildjob.Result
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) { ptxRes, err = l.builds.Run(gctx, l.ptxJob(it.Kernel, v.Flags)); return err })
	g.Go(func() (err error) { build, err = l.builds.Run(gctx, l.buildJob(h, it.Kernel)); return err })
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return c, context.Cause(ctx)
		}
		return c, fmt.Errorf("%w: %w", refinement.ErrValidatorBroken, err)
	}
	diag := func(r *buildjob.Result) string {
		return r.FailureText(compilerDiagnostics.Of(string(r.Entry.Stderr), l.cfg.DiagnosticLines))
	}
	flags := strings.Join(append([]string{"-arch=" + strings.Replace(l.cfg.SM, "sm_", "compute_", 1)}, v.Flags...), " ")
	ptx, ok := ptxRes.Entry.Files[FilePTX]
	if !ptxRes.OK() || !ok {
		return c, fmt.Errorf("kernel.cu does not compile to PTX (nvcc -ptx %s): %s", flags, diag(ptxRes))
	}
	if !build.OK() {
		if strings.Contains(string(build.Entry.Stderr), `cannot be used to initialize an entity of type "void (*)`) {
			return c, fmt.Errorf("meta.json's params do not match the kernel: the harness calls %s: %s", h.Signature(), diag(build))
		}
		return c, fmt.Errorf("the kernel does not build into its harness (nvcc %s): %s", flags, diag(build))
	}
	if n := len(entryRE.FindAllString(string(ptx), -1)); n != 1 {
		return c, fmt.Errorf("the PTX has %d .entry directives (want the kernel's one)", n)
	}
	norm := NormalizePTX(string(ptx))
	if n := len(rollptx.Roll(norm)); n > MaxSynthPTX {
		return c, fmt.Errorf("the kernel's Rolled-PTX has %d bytes (at most %d): make it smaller", n, MaxSynthPTX)
	}
	spec, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return c, err
	}
	out := c
	out.Files = map[string]string{FileKernel: it.Kernel, MetaFile: c.Files[MetaFile], FilePTX: norm, FileHarness: string(spec) + "\n"}
	out.Function = h.Kernel
	return out, nil
}

// candidateTasks renders a prepared candidate (kernel.cu, meta.json,
// kernel.ptx, harness.json) as spt tasks of round, each as a corpus
// variant's task (the same prompt, files and meta) plus the candidate's
// origin, category, description and source hash. A candidate without the
// PTX was not prepared (no validator ran): an error.
func candidateTasks(lib *prompts.Library, round, spt int, c refinement.Candidate) ([]runs.Task, error) {
	ptx, spec := c.Files[FilePTX], c.Files[FileHarness]
	if strings.TrimSpace(ptx) == "" || strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("synthesised %s %d: no %s or %s: the lane's validator prepares them", c.Category, c.Index, FilePTX, FileHarness)
	}
	h, err := ParseHarness([]byte(spec))
	if err != nil {
		return nil, err
	}
	it, err := candidateItem(c)
	if err != nil {
		return nil, err
	}
	if len(c.Hash) < 10 {
		return nil, errors.New("synthesised candidate without a hash")
	}
	variant := it.Meta.Variants[0].Name
	it.ID, it.Meta.Category = "synth_"+c.Hash[:10], c.Category
	var out []runs.Task
	for k := 0; k < max(spt, 1); k++ {
		key := fmt.Sprintf("r%d/synth/%s/%02d-%s#%d", round, c.Category, c.Index, c.Hash[:10], k)
		meta := c.Task(round, key).Meta // origin, source hash, function, description
		meta["synth_category"] = c.Category
		task, err := harnessTask(lib, round, key, it, variant, h, ptx, meta)
		if err != nil {
			return nil, err
		}
		task.Files[FileHarness] = spec // as validated, byte for byte
		out = append(out, task)
	}
	return out, nil
}
