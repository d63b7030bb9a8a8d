package ptx2cuda

// Torch program tasks: the kernel is one __global__ function of the CUDA
// source of a verified torch2cuda record (a Python module that builds its
// kernels with torch.utils.cpp_extension.load_inline), and the record's
// module is the harness: the answer's kernel is spliced into the CUDA
// source in the original's place (the namespace trick of program tasks),
// the module rewritten with that source, and torch2cuda's judge compares
// the module's outputs with the problem's reference Model. This file
// holds the pure text work (finding the CUDA source in the Python module,
// splicing it back, making items of records); torchverify.go the
// compiling and judging.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// HarnessTorch is Meta.Harness of a torch item: the task's kernel is one
// __global__ function of the CUDA source of answer.py, a verified
// torch2cuda answer, and that module, judged against reference.py, is
// the harness (see the package doc's "Torch program tasks").
const HarnessTorch = "torch"

// Files of a torch item folder and of a torch task.
const (
	// FileTorchAnswer is the record's Python module (ModelNew, with the
	// CUDA source in a string literal built by load_inline).
	FileTorchAnswer = "answer.py"
	// FileTorchReference is the problem (Model, get_inputs,
	// get_init_inputs): torch2cuda's reference.py.
	FileTorchReference = torch2cuda.ReferenceFile
	// FileTorchSpec is a torch task's TorchSpec (JSON).
	FileTorchSpec = "torch.json"
)

// Reasons a torch record or kernel is no task, besides the program ones
// (SkipError.Reason).
const (
	// SkipNoCUDASource: no string literal of the module holds a __global__
	// function definition (kernels in files loaded with load(), built
	// with f-strings, ...).
	SkipNoCUDASource = "no_cuda_source"
	// SkipCUDASources: several string literals hold kernels; kiln takes
	// one CUDA source per module.
	SkipCUDASources = "several_cuda_sources"
	// SkipNoReference: the record keeps no reference.py, and its problem
	// is not a builtin one.
	SkipNoReference = "no_reference"
	// SkipNoTorch: this host cannot prepare torch tasks (no python3 with
	// a CUDA build of torch, or no NVIDIA GPU).
	SkipNoTorch = "no_torch"
	// SkipJudge: the module with the kernel's own definition spliced back
	// in fails the judge, or the one with the kernel emptied does not
	// build.
	SkipJudge = "judge"
	// SkipUnobserved: the module with the kernel's body emptied still
	// passes the judge: its outputs do not show the kernel's work.
	SkipUnobserved = "not_observed"
)

// TorchMeta is meta.json's "torch" of a torch item.
type TorchMeta struct {
	// CUDAFlags are the record's extra_cuda_cflags that FlagsOK accepts:
	// its PTX is made with them (before the variant's flags).
	CUDAFlags []string `json:"cuda_flags,omitempty"`
	// ReferenceSpeedup is the judge's speedup (the reference Model's time
	// over ModelNew's) of the module with the kernel's own definition
	// spliced back in, measured when the item was prepared: the latency
	// ratio's reference (0: unknown).
	ReferenceSpeedup float64 `json:"reference_speedup,omitempty"`
}

// TorchSpec is a torch task's torch.json: the kernel, the flags its PTX
// was made with (the record's, then the variant's; the judge builds the
// module with the record's own load_inline flags), and the reference
// speedup (TorchMeta).
type TorchSpec struct {
	Kernel           string   `json:"kernel"`
	Flags            []string `json:"flags,omitempty"`
	ReferenceSpeedup float64  `json:"reference_speedup,omitempty"`
}

// ParseTorchSpec reads a torch.json.
func ParseTorchSpec(b []byte) (TorchSpec, error) {
	var s TorchSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("%s: %w", FileTorchSpec, err)
	}
	if !identRE.MatchString(s.Kernel) {
		return s, fmt.Errorf("%s: kernel %q is not a C identifier", FileTorchSpec, s.Kernel)
	}
	return s, nil
}

// isTorch reports whether it is a torch item.
func (it Item) isTorch() bool { return it.Meta.Harness == HarnessTorch }

// checkTorch validates a torch item: a program item's rules, the module
// and the problem present, and the CUDA source the module holds.
func (it Item) checkTorch() error {
	if err := it.checkProgram(); err != nil {
		return err
	}
	switch {
	case strings.TrimSpace(it.TorchReference) == "":
		return fmt.Errorf("%s: empty problem", FileTorchReference)
	case !strings.Contains(it.TorchReference, "class Model"):
		return fmt.Errorf("%s: no class Model", FileTorchReference)
	}
	ts, err := parseTorchAnswer(it.TorchAnswer)
	if err != nil {
		return fmt.Errorf("%s: %w", FileTorchAnswer, err)
	}
	if ts.cuda != it.Program {
		return fmt.Errorf("%s: the CUDA source differs from the item's", FileTorchAnswer)
	}
	for i, f := range it.Meta.Torch.flags() {
		if err := FlagsOK([]string{f}); err != nil {
			return fmt.Errorf("torch.cuda_flags[%d]: %w", i, err)
		}
	}
	return nil
}

func (m *TorchMeta) flags() []string {
	if m == nil {
		return nil
	}
	return m.CUDAFlags
}

func (m *TorchMeta) speedup() float64 {
	if m == nil {
		return 0
	}
	return m.ReferenceSpeedup
}

// TorchSpec is the variant's torch.json.
func (it Item) TorchSpec(variant string) (TorchSpec, error) {
	v, ok := it.variant(variant)
	if !ok {
		return TorchSpec{}, fmt.Errorf("variant %q: no such variant", variant)
	}
	return TorchSpec{Kernel: it.Meta.Kernel, Flags: append(slices.Clone(it.Meta.Torch.flags()), v.Flags...),
		ReferenceSpeedup: it.Meta.Torch.speedup()}, nil
}

// pyLiteral is a Python string literal.
type pyLiteral struct {
	start, end int    // the literal's span, prefix and quotes included
	prefix     string // lower case: "", "r", "u", "b", "f", "rb", "fr", ...
	quote      string // `"`, `'`, `"""` or `'''`
	body       string // between the quotes, as written
}

// pyLiterals lists the string literals of Python source src, in order
// (comments skipped; an unterminated one-line literal is left out).
func pyLiterals(src string) []pyLiteral {
	var out []pyLiteral
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '#':
			for i < n && src[i] != '\n' {
				i++
			}
			continue
		case c == '"' || c == '\'':
			start := i
			for start > 0 && i-start < 2 && strings.IndexByte("rRbBuUfF", src[start-1]) >= 0 {
				start--
			}
			if start > 0 && isIdentByte(src[start-1]) {
				start = i // the letters end a name: no prefix
			}
			q := string(c)
			if i+2 < n && src[i+1] == c && src[i+2] == c {
				q = strings.Repeat(q, 3)
			}
			j, end := i+len(q), -1
			for j < n {
				if src[j] == '\\' {
					j += 2
					continue
				}
				if len(q) == 1 && src[j] == '\n' {
					break
				}
				if strings.HasPrefix(src[j:], q) {
					end = j
					break
				}
				j++
			}
			if end < 0 {
				i = j
				continue
			}
			out = append(out, pyLiteral{start: start, end: end + len(q), prefix: strings.ToLower(src[start:i]), quote: q, body: src[i+len(q) : end]})
			i = end + len(q)
			continue
		case isIdentByte(c):
			for i < n && isIdentByte(src[i]) {
				i++
			}
			continue
		}
		i++
	}
	return out
}

// value is the literal's string value; false for bytes and f-strings.
func (l pyLiteral) value() (string, bool) {
	if strings.ContainsAny(l.prefix, "bf") {
		return "", false
	}
	if strings.Contains(l.prefix, "r") {
		return l.body, true
	}
	return pyUnescape(l.body), true
}

// pyUnescape decodes the escapes of a Python str literal's body.
func pyUnescape(s string) string {
	var b strings.Builder
	hex := func(i, n int) (rune, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v, err := strconv.ParseUint(s[i:i+n], 16, 32)
		return rune(v), err == nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch d := s[i]; d {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(d)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, j := 0, i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				v = v*8 + int(s[j]-'0')
				j++
			}
			b.WriteRune(rune(v))
			i = j - 1
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[d]
			if r, ok := hex(i+1, n); ok {
				b.WriteRune(r)
				i += n
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(d)
		default:
			b.WriteByte('\\')
			b.WriteByte(d)
		}
	}
	return b.String()
}

// pyQuote writes s as a Python str literal: raw and triple-quoted where
// s allows it (C source with macros' line continuations stays readable),
// else with escapes.
func pyQuote(s string) string {
	if !strings.Contains(s, `"""`) && !strings.HasSuffix(s, `\`) && !strings.HasSuffix(s, `"`) && utf8.ValidString(s) {
		return `r"""` + s + `"""`
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// torchSource is a torch2cuda answer read for its CUDA source: the one
// string literal holding __global__ function definitions, and the
// extra_cuda_cflags of its build.
type torchSource struct {
	answer string
	lit    pyLiteral
	cuda   string
	flags  []string
}

var (
	cudaFlagsRE = regexp.MustCompile(`\bextra_cuda_cflags\s*=\s*\[([^\]]*)\]`)
	globalDefRE = regexp.MustCompile(`\b__global__\b`)
)

// parseTorchAnswer finds the CUDA source of a torch2cuda answer, or a
// *SkipError saying why there is none kiln can use.
func parseTorchAnswer(answer string) (*torchSource, error) {
	var found []*torchSource
	unusable := 0
	for _, l := range pyLiterals(answer) {
		v, ok := l.value()
		if !ok {
			if globalDefRE.MatchString(l.body) {
				unusable++
			}
			continue
		}
		if len(KernelNames(v)) > 0 {
			found = append(found, &torchSource{answer: answer, lit: l, cuda: v})
		}
	}
	switch {
	case len(found) == 0 && unusable > 0:
		return nil, &SkipError{SkipNoCUDASource, "the module's kernels are in an f-string or bytes literal: kiln splices plain string literals only"}
	case len(found) == 0:
		return nil, &SkipError{SkipNoCUDASource, "no string literal of the module defines a __global__ function (kernels loaded from files, or put together at run time)"}
	case len(found) > 1:
		return nil, &SkipError{SkipCUDASources, fmt.Sprintf("%d string literals of the module define __global__ functions; kiln takes one CUDA source", len(found))}
	}
	ts := found[0]
	for _, m := range cudaFlagsRE.FindAllStringSubmatch(answer, -1) {
		for _, l := range pyLiterals(m[1]) {
			if v, ok := l.value(); ok && FlagsOK([]string{v}) == nil && !slices.Contains(ts.flags, v) {
				ts.flags = append(ts.flags, v)
			}
		}
	}
	return ts, nil
}

// with returns the module with its CUDA source replaced by cuda.
func (t *torchSource) with(cuda string) string {
	return t.answer[:t.lit.start] + pyQuote(cuda) + t.answer[t.lit.end:]
}

// torchReference is the problem of record r: its task's reference.py, else
// the builtin problem its task names (meta "problem").
func torchReference(r kit.Record, builtin func() ([]torch2cuda.Problem, error)) (string, error) {
	if ref := r.Files[FileTorchReference]; strings.TrimSpace(ref) != "" {
		return ref, nil
	}
	id := r.Meta["problem"]
	if id != "" && builtin != nil {
		probs, err := builtin()
		if err != nil {
			return "", err
		}
		for _, p := range probs {
			if p.ID == id {
				return p.Source, nil
			}
		}
	}
	return "", &SkipError{SkipNoReference, fmt.Sprintf("the record keeps no %s and its problem %q is not a builtin one", FileTorchReference, id)}
}

// TorchItems makes torch items of the verified torch2cuda records of set:
// one per kernel of each record's CUDA source that a task can be made of
// (ProgramKernels: no templates, kernels at file scope, launched, no
// inline PTX), with the variants named, category the record's first, the
// record's provenance in Meta.Source. The kernels' PTX is not made here,
// nor the judge's checks (PreparePTX, Lane.checkTorch: both need torch).
func TorchItems(set kit.RecordSet, variants []string) ([]RecordItem, []Skip, error) {
	vs, err := recordVariants(variants)
	if err != nil {
		return nil, nil, err
	}
	var items []RecordItem
	var skips []Skip
	for _, r := range set.Records {
		if r.Lane != torch2cuda.LaneName {
			return nil, nil, fmt.Errorf("record %s is of lane %s; torch items are made of records of %s", r.Key, r.Lane, torch2cuda.LaneName)
		}
		skip := func(kernel string, err error) bool {
			var se *SkipError
			if errors.As(err, &se) {
				skips = append(skips, Skip{Record: r.Key, Kernel: kernel, Reason: se.Reason, Detail: se.Detail})
				return true
			}
			return false
		}
		ts, err := parseTorchAnswer(r.Answer)
		if skip("", err) {
			continue
		}
		ref, err := torchReference(r, torch2cuda.LoadBuiltinProblems)
		if skip("", err) {
			continue
		} else if err != nil {
			return nil, nil, fmt.Errorf("record %s: %w", r.Key, err)
		}
		category := "torch"
		if len(r.Categories) > 0 {
			category = r.Categories[0]
		}
		names, why := ProgramKernels(ts.cuda)
		for i, name := range names {
			if skip(name, why[i]) {
				continue
			}
			def, err := programKernelSource(ts.cuda, name)
			if err != nil {
				return nil, nil, err
			}
			m := Meta{Category: category, Kernel: name, Harness: HarnessTorch, Variants: slices.Clone(vs),
				Description: fmt.Sprintf("kernel %s of the verified %s module %s of campaign %s", name, r.Lane, r.Key, r.Campaign),
				Source: &ItemSource{Campaign: r.Campaign, CampaignID: r.CampaignID, Lane: r.Lane, Task: r.TaskID, TaskKey: r.Key,
					Attempt: r.AttemptID, Verdict: r.VerdictID, Categories: slices.Clone(r.Categories)},
				Torch: &TorchMeta{CUDAFlags: slices.Clone(ts.flags), ReferenceSpeedup: r.Measurements["speedup"]}}
			it := Item{ID: RecordItemID(r, name), Set: "from-campaign " + r.Campaign, Meta: m, Kernel: def, Program: ts.cuda,
				TorchAnswer: r.Answer, TorchReference: ref}
			if err := it.check(); err != nil {
				return nil, nil, fmt.Errorf("record %s kernel %s: %w", r.Key, name, err)
			}
			items = append(items, RecordItem{Item: it})
		}
	}
	return items, skips, nil
}

// torchHeaderRE finds the #include lines of PyTorch's (and pybind11's)
// headers.
var torchHeaderRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*[<"](torch/|ATen/|c10/|caffe2/|pybind11/|THC/)[^\n]*$`)

// standaloneUnits are the translation units a host without torch builds
// of a torch task: the CUDA source up to and including the kernel, with
// PyTorch's #include lines removed and the other kernels' definitions
// made declarations; ref with the kernel's own definition, ans with the
// answer spliced in its place (as the judge's build has it). When ref does
// not build, the source needs torch's headers before the kernel, and only
// the judge's build tells.
func standaloneUnits(p *programSource, k programKernel, answer string) (ref, ans string) {
	t := torchHeaderRE.ReplaceAllString(p.src[:k.End], "// (a PyTorch header: not here)")
	q := parseProgram(t)
	find := func(s *programSource) (programKernel, bool) {
		for _, d := range s.decls {
			if d.Name == k.Name && d.isDef() {
				return d, true
			}
		}
		return programKernel{}, false
	}
	qk, ok := find(q)
	if !ok {
		return t, t
	}
	ref = q.kernelUnit(qk)
	r := parseProgram(ref)
	rk, ok := find(r)
	if !ok {
		return ref, ref
	}
	return ref, r.spliceAnswer(rk, answer)
}
