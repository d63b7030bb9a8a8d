package ptx2cuda

// Program harness mode: the task's kernel is one __global__ function of a
// whole CUDA program (a verified cuda-synth record) rather than a corpus
// kernel with a generated harness. This file holds the source work, all
// of it pure text processing: finding a program's kernels, deciding
// which of them a task can be made of, the translation unit whose PTX is
// the kernel's alone, and the programs verification builds (the answer
// spliced in place of the kernel, and the kernel emptied).

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
)

// HarnessProgram is Meta.Harness of a program item: the task's kernel is
// one __global__ function of program.cu, and the program itself is the
// harness (see the package doc's "Program tasks").
const HarnessProgram = "program"

// Files of a program item folder and of a program task.
const (
	// FileProgram is the whole CUDA program (its main launches the
	// kernel and prints what it computed).
	FileProgram = "program.cu"
	// FileProgramSpec is a program task's ProgramSpec (JSON).
	FileProgramSpec = "program.json"
	// FileExpectedStdout is what the program printed in the run that
	// verified it (the record's GPU run), kept for people: verification
	// compares with the original program run beside the answer.
	FileExpectedStdout = "expected_stdout.txt"
)

// ProgramSpec is a program task's harness: which kernel of program.cu is
// decompiled and the variant's nvcc flags (its PTX was made with them,
// and the original and the answer's program are built with them).
type ProgramSpec struct {
	Kernel string   `json:"kernel"`
	Flags  []string `json:"flags,omitempty"`
}

// ParseProgramSpec reads a program.json.
func ParseProgramSpec(b []byte) (ProgramSpec, error) {
	var p ProgramSpec
	if err := json.Unmarshal(b, &p); err != nil {
		return p, fmt.Errorf("%s: %w", FileProgramSpec, err)
	}
	if !identRE.MatchString(p.Kernel) {
		return p, fmt.Errorf("%s: kernel %q is not a C identifier", FileProgramSpec, p.Kernel)
	}
	if err := FlagsOK(p.Flags); err != nil {
		return p, fmt.Errorf("%s: flags: %w", FileProgramSpec, err)
	}
	return p, nil
}

// Reasons a program's kernel cannot be a task (SkipError.Reason).
const (
	// SkipNoKernel: the program defines no __global__ function kiln can
	// find (a kernel made by a macro is not seen).
	SkipNoKernel = "no_kernel"
	// SkipTemplate: a template kernel has one PTX entry per instantiation,
	// and an answer would have to be the template.
	SkipTemplate = "template"
	// SkipScope: the kernel is defined inside a namespace, class or
	// extern "C" block, or with a qualified name; the answer is put in the
	// kernel's place at file scope.
	SkipScope = "not_file_scope"
	// SkipOverloaded: the program defines more than one kernel of that
	// name.
	SkipOverloaded = "overloaded"
	// SkipUnused: nothing outside the kernel names it (no launch), so its
	// work cannot show in the program's output.
	SkipUnused = "not_launched"
	// SkipInlineAsm: the kernel's body has inline PTX (asm), which an
	// answer may not carry (embedded_ptx).
	SkipInlineAsm = "inline_asm"
	// SkipPTX: the kernel's PTX could not be made alone (the compile
	// failed, or its PTX does not hold exactly the kernel's entry).
	SkipPTX = "ptx"
	// SkipBuild: the original program, or the program with the kernel
	// emptied, does not build with a variant's flags (--check).
	SkipBuild = "build"
	// SkipTooLarge: the task's prompt (Rolled-PTX and the program before
	// the kernel) is over MaxProgramPrompt bytes.
	SkipTooLarge = "too_large"
	// SkipNoOutput: the program printed nothing in the run that verified
	// it: there is no output to compare.
	SkipNoOutput = "no_output"
)

// MaxProgramPrompt bounds a program task's Rolled-PTX and program context
// together, in bytes.
const MaxProgramPrompt = 96 << 10

// SkipError says why a kernel (or a whole program) cannot be a task.
type SkipError struct {
	Reason string // one of the Skip* constants
	Detail string
}

func (e *SkipError) Error() string { return e.Reason + ": " + e.Detail }

// programKernel is one __global__ function declaration or definition in a
// program's source.
type programKernel struct {
	Name string
	// Start is the declaration's first token (template, static, extern,
	// __global__, ...); End is just past its closing brace (a definition)
	// or its semicolon (a prototype).
	Start, End int
	// Open is the body's opening brace, -1 for a prototype.
	Open int
	// Template: declared as a template; Scoped: not at file scope (inside
	// braces, or a qualified name).
	Template, Scoped bool
}

func (k programKernel) isDef() bool { return k.Open >= 0 }

// programSource is a program parsed for its kernels.
type programSource struct {
	src    string
	masked string // src with comments, literals' contents and preprocessor lines blanked; same offsets
	decls  []programKernel
}

var (
	globalRE   = regexp.MustCompile(`\b__global__\b`)
	identEndRE = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*$`)
	templateRE = regexp.MustCompile(`\btemplate\b`)
	// attrWords precede a parenthesis without being the function's name.
	attrWords = map[string]bool{"__launch_bounds__": true, "__attribute__": true, "__declspec": true, "alignas": true,
		"__align__": true, "__maxnreg__": true, "__cluster_dims__": true}
)

// parseProgram finds the __global__ declarations and definitions of src.
func parseProgram(src string) *programSource {
	p := &programSource{src: src, masked: maskSource(src)}
	code := p.masked
	depth := make([]int, len(code)+1)
	d := 0
	for i := 0; i < len(code); i++ {
		depth[i] = d
		switch code[i] {
		case '{':
			d++
		case '}':
			if d > 0 {
				d--
			}
		}
	}
	depth[len(code)] = d
	for _, loc := range globalRE.FindAllStringIndex(code, -1) {
		k, ok := p.declAt(loc[0], loc[1])
		if !ok {
			continue
		}
		k.Scoped = k.Scoped || depth[loc[0]] > 0
		p.decls = append(p.decls, k)
	}
	return p
}

// declAt reads the declaration whose __global__ is at code[at:after].
func (p *programSource) declAt(at, after int) (programKernel, bool) {
	code := p.masked
	start := strings.LastIndexAny(code[:at], ";{}") + 1
	for start < at && isSpace(code[start]) {
		start++
	}
	k := programKernel{Start: start, Open: -1, Template: templateRE.MatchString(code[start:at])}
	j := after
	for {
		rel := strings.IndexByte(code[j:], '(')
		if rel < 0 {
			return k, false
		}
		paren := j + rel
		if strings.ContainsAny(code[j:paren], ";{}") {
			return k, false
		}
		m := identEndRE.FindStringSubmatchIndex(code[j:paren])
		if m == nil {
			return k, false
		}
		name := code[j+m[2] : j+m[3]]
		closeAt := refinement.MatchClose(code, paren)
		if closeAt < 0 {
			return k, false
		}
		if attrWords[name] {
			j = closeAt + 1
			continue
		}
		k.Name = name
		if strings.HasSuffix(strings.TrimRight(code[j:j+m[2]], " \t\r\n"), "::") {
			k.Scoped = true
		}
		n := closeAt + 1
		for n < len(code) && isSpace(code[n]) {
			n++
		}
		switch {
		case n < len(code) && code[n] == '{':
			end := refinement.MatchClose(code, n)
			if end < 0 {
				return k, false
			}
			k.Open, k.End = n, end+1
		case n < len(code) && code[n] == ';':
			k.End = n + 1
		default:
			return k, false
		}
		return k, true
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// maskSource blanks src's comments, the contents of its string and
// character literals (their quotes stay) and its preprocessor lines
// (continuations included), keeping every offset and newline.
func maskSource(src string) string {
	b := []byte(src)
	n := len(b)
	blank := func(from, to int) {
		for i := from; i < to && i < n; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	lineStart := true
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '/' && i+1 < n && src[i+1] == '/':
			j := i
			for j < n && src[j] != '\n' {
				j++
			}
			blank(i, j)
			i = j
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			end := n
			if j >= 0 {
				end = i + 2 + j + 2
			}
			blank(i, end)
			i = end
			continue
		case c == 'R' && i+1 < n && src[i+1] == '"' && (i == 0 || !isIdentByte(src[i-1])):
			// A raw string literal R"delim( ... )delim".
			open := strings.IndexByte(src[i+2:], '(')
			if open >= 0 && open <= 16 {
				delim := src[i+2 : i+2+open]
				endMark := ")" + delim + "\""
				j := strings.Index(src[i+2+open+1:], endMark)
				end := n
				if j >= 0 {
					end = i + 2 + open + 1 + j + len(endMark)
				}
				blank(i+1, end)
				b[i+1], b[end-1] = '"', '"'
				i = end
				lineStart = false
				continue
			}
		case c == '"' || c == '\'':
			j := i + 1
			for j < n && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' && j+1 < n {
					j++
				}
				j++
			}
			if j < n && src[j] == c {
				blank(i+1, j)
				i = j + 1
			} else {
				blank(i+1, j)
				i = j
			}
			lineStart = false
			continue
		case c == '#' && lineStart:
			j := i
			for j < n && src[j] != '\n' {
				if src[j] == '\\' && j+1 < n && src[j+1] == '\n' {
					j += 2
					continue
				}
				j++
			}
			blank(i, j)
			i = j
			continue
		}
		if c == '\n' {
			lineStart = true
		} else if !isSpace(c) {
			lineStart = false
		}
		i++
	}
	return string(b)
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// KernelNames lists the names of the kernels a program defines, in the
// order of their definitions.
func KernelNames(program string) []string {
	var out []string
	for _, k := range parseProgram(program).decls {
		if k.isDef() && !slices.Contains(out, k.Name) {
			out = append(out, k.Name)
		}
	}
	return out
}

// kernel returns the definition of name, or a SkipError saying why a
// task cannot be made of it.
func (p *programSource) kernel(name string) (programKernel, error) {
	var defs []programKernel
	for _, k := range p.decls {
		if k.Name == name && k.isDef() {
			defs = append(defs, k)
		}
	}
	switch {
	case len(defs) == 0:
		return programKernel{}, &SkipError{SkipNoKernel, fmt.Sprintf("the program defines no __global__ function %s", name)}
	case len(defs) > 1:
		return programKernel{}, &SkipError{SkipOverloaded, fmt.Sprintf("the program defines %d kernels named %s", len(defs), name)}
	}
	k := defs[0]
	switch {
	case k.Template:
		return k, &SkipError{SkipTemplate, fmt.Sprintf("%s is a template kernel (its PTX holds one entry per instantiation)", name)}
	case k.Scoped:
		return k, &SkipError{SkipScope, fmt.Sprintf("%s is defined inside a namespace, class or extern \"C\" block, or with a qualified name", name)}
	}
	if n := asmInstructions(p.src[k.Open:k.End]); n > 0 || asmStartRE.MatchString(p.masked[k.Open:k.End]) {
		return k, &SkipError{SkipInlineAsm, fmt.Sprintf("%s holds inline PTX (asm), which an answer may not carry", name)}
	}
	if !p.referenced(k) {
		return k, &SkipError{SkipUnused, fmt.Sprintf("nothing in the program launches or names %s outside its declarations", name)}
	}
	return k, nil
}

// referenced reports whether k's name appears in the code outside k's
// declarations (a launch, a cudaLaunchKernel argument, ...).
func (p *programSource) referenced(k programKernel) bool {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(k.Name) + `\b`)
	for _, loc := range re.FindAllStringIndex(p.masked, -1) {
		inDecl := false
		for _, d := range p.decls {
			if d.Name == k.Name && loc[0] >= d.Start && loc[1] <= d.End {
				inDecl = true
				break
			}
		}
		if !inDecl {
			return true
		}
	}
	return false
}

// ProgramKernels returns, for each kernel the program defines (in order),
// nil when a task can be made of it, else a *SkipError saying why not.
// The kernel's PTX is not checked here (PreparePTX does).
func ProgramKernels(program string) (names []string, why []error) {
	p := parseProgram(program)
	for _, name := range KernelNames(program) {
		_, err := p.kernel(name)
		names, why = append(names, name), append(why, err)
	}
	return names, why
}

// head is a declaration's text before its body (or its semicolon).
func (p *programSource) head(k programKernel) string {
	end := k.Open
	if end < 0 {
		end = k.End - 1
	}
	return strings.TrimSpace(p.src[k.Start:end])
}

// declaration is k's prototype: its head and a semicolon.
func (p *programSource) declaration(k programKernel) string { return p.head(k) + ";" }

// replaceSpans returns src with each span [from, to) replaced, spans
// sorted and disjoint.
type span struct {
	from, to int
	with     string
}

func replaceSpans(src string, spans []span) string {
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	at := 0
	for _, s := range spans {
		b.WriteString(src[at:s.from])
		b.WriteString(s.with)
		at = s.to
	}
	b.WriteString(src[at:])
	return b.String()
}

// kernelUnit is the translation unit whose PTX is k's alone: the whole
// program with every other kernel's definition turned into a declaration
// (nvcc then emits only k's entry, the device functions it calls and the
// program's device variables).
func (p *programSource) kernelUnit(k programKernel) string {
	var spans []span
	for _, d := range p.decls {
		if d.isDef() && d.Start != k.Start {
			spans = append(spans, span{d.Start, d.End, p.declaration(d)})
		}
	}
	return replaceSpans(p.src, spans)
}

// context is what the task's prompt shows of the program: the text before
// k's definition (what k may use: includes, macros, types, device
// variables and helpers), comments removed, other kernels shown as
// declarations, runs of blank lines folded.
func (p *programSource) context(k programKernel) string {
	var spans []span
	for _, d := range p.decls {
		if d.isDef() && d.End <= k.Start {
			spans = append(spans, span{d.Start, d.End, p.declaration(d)})
		}
	}
	// stripComments keeps offsets, so the spans still apply.
	text := replaceSpans(stripComments(p.src[:k.Start]), spans)
	var out []string
	blank := 0
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n")) + "\n"
}

// stripComments blanks src's comments, keeping offsets (newlines inside
// block comments stay).
func stripComments(src string) string {
	b := []byte(src)
	n := len(b)
	inStr := byte(0)
	for i := 0; i < n; i++ {
		c := b[i]
		switch {
		case inStr != 0:
			if c == '\\' {
				i++
			} else if c == inStr || c == '\n' {
				inStr = 0
			}
		case c == '"' || c == '\'':
			inStr = c
		case c == '/' && i+1 < n && b[i+1] == '/':
			for i < n && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case c == '/' && i+1 < n && b[i+1] == '*':
			b[i], b[i+1] = ' ', ' '
			i += 2
			for i < n && !(b[i] == '*' && i+1 < n && b[i+1] == '/') {
				if b[i] != '\n' {
					b[i] = ' '
				}
				i++
			}
			if i < n {
				b[i], b[i+1] = ' ', ' '
				i++
			}
		}
	}
	return string(b)
}

// Names the answer's program uses.
const (
	answerNamespace   = "kiln_answer"
	originalNamespace = "kiln_original"
	// answerFileName is the name compiler diagnostics give the answer's
	// lines (#line), so that a repair turn reads its own line numbers.
	answerFileName = "answer.cu"
)

// spliceAnswer returns the program with k's definition replaced by
// answer: the answer goes into namespace kiln_answer at the kernel's
// place (its #include lines hoisted in front), so that its helpers may
// reuse the program's names without clashing, and `using
// kiln_answer::<kernel>` makes the program's launches call it. Prototypes
// of the kernel elsewhere become prototypes in that namespace. A static
// pointer of the original kernel's type initialised with the answer's
// kernel makes other parameter types a compile error (reported at the
// original kernel's line; where the program declares the kernel before
// its definition, a link error naming kiln_answer::<kernel> instead).
// #line directives make the compiler name the answer's own lines
// (answer.cu) and the program's (program.cu).
func (p *programSource) spliceAnswer(k programKernel, answer string) string {
	var spans []span
	for _, d := range p.decls {
		if d.Name == k.Name && !d.isDef() {
			spans = append(spans, span{d.Start, d.End,
				"namespace " + answerNamespace + " { " + p.declaration(d) + " } using " + answerNamespace + "::" + k.Name + ";"})
		}
	}
	var hoisted []string
	lines := strings.Split(strings.TrimRight(answer, "\n"), "\n")
	for i, line := range lines {
		if includeRE.MatchString(line) {
			hoisted = append(hoisted, strings.TrimSpace(line))
			lines[i] = ""
		}
	}
	kernelLine := strings.Count(p.src[:k.Start], "\n") + 1
	nextLine := strings.Count(p.src[:k.End], "\n") + 1
	var b strings.Builder
	for _, h := range hoisted {
		b.WriteString(h + "\n")
	}
	fmt.Fprintf(&b, "namespace %s { %s }\n", originalNamespace, p.declaration(k))
	fmt.Fprintf(&b, "namespace %s {\n#line 1 %s\n%s\n}\n", answerNamespace, strconv.Quote(answerFileName), strings.Join(lines, "\n"))
	fmt.Fprintf(&b, "#line %d %s\n", kernelLine, strconv.Quote(FileProgram))
	fmt.Fprintf(&b, "using %s::%s;\n", answerNamespace, k.Name)
	fmt.Fprintf(&b, "static __attribute__((unused)) decltype(&%s::%s) kiln_signature_check = &%s::%s;\n",
		originalNamespace, k.Name, answerNamespace, k.Name)
	fmt.Fprintf(&b, "#line %d %s\n", nextLine, strconv.Quote(FileProgram))
	spans = append(spans, span{k.Start, k.End, "\n" + b.String()})
	return replaceSpans(p.src, spans)
}

// blank returns the program with k's body emptied: the build whose output
// must differ from the original's, or the kernel's work does not show in
// what the program prints.
func (p *programSource) blank(k programKernel) string {
	return replaceSpans(p.src, []span{{k.Open, k.End, "{ }"}})
}

// deviceVarRE finds file-scope definitions of device variables:
// __constant__, __device__ and __managed__ objects (not functions).
var deviceVarRE = regexp.MustCompile(`\b(__constant__|__device__|__managed__)\b[^;{}()=]*?\b([A-Za-z_]\w*)\s*(?:\[[^;{}]*\])*\s*(?:=[^;]*)?;`)

// deviceVariables lists the device variables code (masked) defines.
func deviceVariables(code string) map[string]string {
	out := map[string]string{}
	for _, m := range deviceVarRE.FindAllStringSubmatch(code, -1) {
		if strings.Contains(m[0], "extern") {
			continue
		}
		out[m[2]] = m[1]
	}
	return out
}

// redefinedVariables lists, sorted, the program's device variables
// defined before k that answer defines again (its copy would shadow the
// program's, which the host code fills).
func (p *programSource) redefinedVariables(k programKernel, answer string) []string {
	prog := deviceVariables(p.masked[:k.Start])
	var out []string
	for name, space := range deviceVariables(maskSource(answer)) {
		if _, ok := prog[name]; ok {
			out = append(out, space+" "+name)
		}
	}
	slices.Sort(out)
	return out
}

// macroLineRE finds #define and #undef lines (continuations joined first).
var macroLineRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*(define|undef)[ \t]+([A-Za-z_]\w*)(\([^)]*\))?(.*)$`)

// macros returns the macros src defines (the first definition of each)
// and the names it #undefs, bodies with whitespace collapsed.
func macros(src string) (defs map[string]string, undefs []string) {
	src = strings.ReplaceAll(src, "\\\n", " ")
	defs = map[string]string{}
	for _, m := range macroLineRE.FindAllStringSubmatch(src, -1) {
		if m[1] == "undef" {
			undefs = append(undefs, m[2])
			continue
		}
		if _, seen := defs[m[2]]; !seen {
			defs[m[2]] = strings.Join(strings.Fields(m[3]+" "+stripComments(m[4])), " ")
		}
	}
	return defs, undefs
}

// changedMacros lists, sorted, the program's macros that answer defines
// otherwise or #undefs: the answer sits inside the program, so its
// macros reach the program's code after it.
func (p *programSource) changedMacros(answer string) []string {
	prog, _ := macros(p.src)
	ans, undefs := macros(answer)
	var out []string
	for name, body := range ans {
		if pb, ok := prog[name]; ok && pb != body {
			out = append(out, name)
		}
	}
	for _, name := range undefs {
		if _, ok := prog[name]; ok && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
