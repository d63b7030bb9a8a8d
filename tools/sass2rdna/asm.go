package sass2rdna

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// Target is the .amdgcn_target an answer must name.
const Target = "amdgcn-amd-amdhsa--gfx1100"

// asmInfo is what a static scan of AMDGPU assembly finds.
type asmInfo struct {
	target string
	// descriptors are the .amdhsa_kernel blocks by kernel name, with the
	// line each opens on.
	descriptors map[string]int
	// funcs are the non-local labels defined in executable sections, with
	// their instruction and data-directive counts.
	funcs map[string]*asmFunc
	order []string
	// textData are data directives (.byte, .long, ...) inside executable
	// sections: machine code smuggled in as data.
	textData []asmLine
	// codeInData are data directives outside code sections holding the
	// encoding of s_endpgm: a kernel stored as data, to be jumped into.
	codeInData []asmLine
	// reads are directives that read files of the build machine
	// (.incbin, .include) or spell directives through macro parameters.
	reads []asmLine
	// metadata: the answer has an .amdgpu_metadata block.
	metadata bool
	// mnemonics counts the instructions by mnemonic (VOPD pairs count
	// both halves).
	mnemonics map[string]int
	// madOverlaps are v_mad_u64_u32/v_mad_i64_i32 instructions whose
	// destination overlaps a source.
	madOverlaps []asmLine
}

// asmFunc is one code label's body.
type asmFunc struct {
	instructions int
	data         int
	// endpgm: the body has an s_endpgm; last is its last instruction's
	// mnemonic (trailing s_code_end and s_nop padding skipped).
	endpgm bool
	last   string
}

// instruction counts an instruction line of the body.
func (f *asmFunc) instruction(line string) {
	f.instructions++
	switch m := strings.ToLower(strings.Fields(line)[0]); m {
	case "s_code_end", "s_nop":
	case "s_endpgm":
		f.endpgm, f.last = true, m
	default:
		f.last = m
	}
}

// terminators end a code path: control does not run on to the next
// instruction.
var terminators = map[string]bool{"s_endpgm": true, "s_endpgm_saved": true, "s_endpgm_ordered_ps_done": true,
	"s_branch": true, "s_setpc_b64": true}

// asmLine is a line of the answer (1-based) and its text.
type asmLine struct {
	n    int
	text string
}

func (a asmLine) String() string {
	return fmt.Sprintf("line %d: %s", a.n, buildjob.Clip(strings.TrimSpace(a.text), 120))
}

var (
	asmLabelRE   = regexp.MustCompile(`^([A-Za-z_.$][\w.$@]*|\d+)\s*:`)
	amdKernelRE  = regexp.MustCompile(`^\.amdhsa_kernel\s+(\S+)`)
	amdTargetRE  = regexp.MustCompile(`^\.amdgcn_target\s+"([^"]*)"`)
	macroParamRE = regexp.MustCompile(`^\s*\\`)
)

// dataDirectives emit bytes given as data.
var dataDirectives = map[string]bool{
	".byte": true, ".2byte": true, ".4byte": true, ".8byte": true, ".short": true, ".hword": true, ".word": true,
	".long": true, ".int": true, ".quad": true, ".octa": true, ".value": true, ".ascii": true, ".asciz": true,
	".string": true, ".fill": true, ".dc": true, ".dc.b": true, ".dc.w": true, ".dc.l": true, ".dc.a": true,
	".dcb": true, ".sleb128": true, ".uleb128": true, ".float": true, ".single": true, ".double": true,
}

// stripComment drops an AMDGPU line's comments (';' and '//' outside
// string literals); /* */ comments are removed beforehand.
func stripComment(line string) string {
	inStr := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case !inStr && c == ';':
			return line[:i]
		case !inStr && c == '/' && i+1 < len(line) && line[i+1] == '/':
			return line[:i]
		}
	}
	return line
}

// stripBlockComments replaces /* */ comments by a space, keeping the line
// structure (so that line numbers stay those of the answer).
func stripBlockComments(text string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case in && c == '*' && i+1 < len(text) && text[i+1] == '/':
			in = false
			i++
			b.WriteByte(' ')
		case in:
			if c == '\n' {
				b.WriteByte('\n')
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			in = true
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sectionState tracks whether the current section holds code.
type sectionState struct {
	exec, prev bool
	stack      []bool
}

// directive updates the state for a section directive; it reports
// whether d was one.
func (s *sectionState) directive(d string, fields []string, rest string) bool {
	switch d {
	case ".text":
		s.prev, s.exec = s.exec, true
	case ".data", ".bss", ".rodata":
		s.prev, s.exec = s.exec, false
	case ".section", ".pushsection":
		if d == ".pushsection" {
			s.stack = append(s.stack, s.exec)
		}
		name := ""
		if len(fields) > 1 {
			name = strings.Trim(strings.SplitN(fields[1], ",", 2)[0], `"`)
		}
		exec := strings.HasPrefix(name, ".text")
		// Flags: .section name,"ax",@progbits
		if i := strings.IndexByte(rest, '"'); i >= 0 {
			if j := strings.IndexByte(rest[i+1:], '"'); j >= 0 && strings.Contains(rest[i+1:i+1+j], "x") {
				exec = true
			}
		}
		s.prev, s.exec = s.exec, exec
	case ".popsection":
		if n := len(s.stack); n > 0 {
			s.prev, s.exec = s.exec, s.stack[n-1]
			s.stack = s.stack[:n-1]
		}
	case ".previous":
		s.prev, s.exec = s.exec, s.prev
	default:
		return false
	}
	return true
}

// scanAsm reads AMDGPU assembly as llvm-mc would lay it out: sections,
// labels, kernel descriptors, instructions, data in code, directives that
// read files. It does not validate anything itself.
func scanAsm(text string) asmInfo {
	info := asmInfo{descriptors: map[string]int{}, funcs: map[string]*asmFunc{}, mnemonics: map[string]int{}}
	sec := sectionState{exec: true}
	var cur *asmFunc
	inMeta, inDesc, inMacro := false, false, false
	for i, raw := range strings.Split(stripBlockComments(strings.ReplaceAll(text, "\r\n", "\n")), "\n") {
		n := i + 1
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		low := strings.ToLower(line)
		if inMeta {
			if strings.HasPrefix(low, ".end_amdgpu_metadata") {
				inMeta = false
			}
			continue
		}
		if inMacro && (macroParamRE.MatchString(line) || strings.Contains(line, `.\`)) {
			info.reads = append(info.reads, asmLine{n, raw})
		}
		for {
			m := asmLabelRE.FindStringSubmatch(line)
			if m == nil || strings.HasPrefix(line, ".amdhsa_") {
				break
			}
			name := m[1]
			line = strings.TrimSpace(line[len(m[0]):])
			if isLocalLabel(name) || !sec.exec || inDesc {
				continue
			}
			f := info.funcs[name]
			if f == nil {
				f = &asmFunc{}
				info.funcs[name] = f
				info.order = append(info.order, name)
			}
			cur = f
		}
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		d := strings.ToLower(fields[0])
		if strings.HasPrefix(d, ".") {
			switch {
			case sec.directive(d, fields, line):
				if !sec.exec {
					cur = nil
				}
			case d == ".amdgcn_target":
				if m := amdTargetRE.FindStringSubmatch(line); m != nil && info.target == "" {
					info.target = m[1]
				}
			case d == ".amdhsa_kernel":
				if m := amdKernelRE.FindStringSubmatch(line); m != nil {
					info.descriptors[m[1]] = n
				}
				inDesc = true
			case d == ".end_amdhsa_kernel":
				inDesc = false
			case d == ".amdgpu_metadata":
				info.metadata, inMeta = true, true
			case d == ".incbin" || d == ".include":
				info.reads = append(info.reads, asmLine{n, raw})
			case d == ".macro" || d == ".irp" || d == ".irpc" || d == ".rept":
				inMacro = true
			case d == ".endm" || d == ".endr":
				inMacro = false
			case dataDirectives[d] || strings.HasPrefix(d, ".dc."):
				switch {
				case sec.exec && !inDesc && !codeEndPadding(line):
					info.textData = append(info.textData, asmLine{n, raw})
					if cur != nil {
						cur.data++
					}
				case !sec.exec && holdsEndpgm(d, line):
					info.codeInData = append(info.codeInData, asmLine{n, raw})
				}
			}
			continue
		}
		if !sec.exec || inDesc {
			continue
		}
		if cur != nil {
			cur.instruction(line)
		}
		for _, part := range strings.Split(line, "::") {
			if f := strings.Fields(part); len(f) > 0 {
				info.mnemonics[strings.ToLower(f[0])]++
			}
		}
		if madOverlap(line) {
			info.madOverlaps = append(info.madOverlaps, asmLine{n, raw})
		}
	}
	return info
}

// sEndpgm is the encoding of gfx11's s_endpgm, which ends every kernel.
const sEndpgm = 0xbfb00000

// holdsEndpgm reports whether a data directive's values contain the
// s_endpgm word: as a 32-bit value (.long, .int, .4byte), in either half
// of a 64-bit one (.quad, .8byte), or as its four little-endian bytes in
// a .byte list.
func holdsEndpgm(d, line string) bool {
	var vals []uint64
	for _, f := range strings.Split(strings.TrimSpace(line[len(d):]), ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 0, 64)
		if err != nil {
			if iv, err2 := strconv.ParseInt(strings.TrimSpace(f), 0, 64); err2 == nil {
				v, err = uint64(iv), nil
			}
		}
		if err == nil {
			vals = append(vals, v)
		}
	}
	switch d {
	case ".long", ".int", ".4byte", ".dc.l":
		for _, v := range vals {
			if uint32(v) == sEndpgm {
				return true
			}
		}
	case ".quad", ".8byte":
		for _, v := range vals {
			if uint32(v) == sEndpgm || uint32(v>>32) == sEndpgm {
				return true
			}
		}
	case ".byte", ".dc.b":
		for i := 0; i+3 < len(vals); i++ {
			if vals[i]&0xff == 0 && vals[i+1]&0xff == 0 && vals[i+2]&0xff == 0xb0 && vals[i+3]&0xff == 0xbf {
				return true
			}
		}
	}
	return false
}

// sCodeEnd is the encoding of s_code_end, the word LLVM pads the end of
// gfx10+ code with (instruction prefetch must not run into data).
const sCodeEnd = 0xbf9f0000

// codeEndPadding reports LLVM's padding after the code: ".fill N, 4,
// 3214868480" (s_code_end words), which is no smuggled code.
func codeEndPadding(line string) bool {
	f := strings.Fields(strings.ReplaceAll(line, ",", " "))
	if len(f) != 4 || strings.ToLower(f[0]) != ".fill" || f[2] != "4" {
		return false
	}
	v, err := strconv.ParseUint(f[3], 0, 32)
	return err == nil && v == sCodeEnd
}

func isLocalLabel(name string) bool {
	if strings.HasPrefix(name, ".L") {
		return true
	}
	_, err := strconv.Atoi(name)
	return err == nil
}

// Instructions counts the instructions of AMDGPU assembly.
func (a asmInfo) instructions() int {
	n := 0
	for _, c := range a.mnemonics {
		n += c
	}
	return n
}

// embedded says why the answer smuggles code in rather than writing it
// ("" when it does not): data directives in code sections, or directives
// that read files of the build machine.
func (a asmInfo) embedded() string {
	var why []string
	if n := len(a.textData); n > 0 {
		why = append(why, fmt.Sprintf("%d data directive(s) in a code section (machine code as data), first %s", n, a.textData[0]))
	}
	if n := len(a.codeInData); n > 0 {
		why = append(why, fmt.Sprintf("%d data directive(s) holding the s_endpgm encoding (machine code stored as data), first %s", n, a.codeInData[0]))
	}
	if n := len(a.reads); n > 0 {
		why = append(why, fmt.Sprintf("%d directive(s) that read files or build directives from macro parameters, first %s", n, a.reads[0]))
	}
	for _, name := range a.order {
		if f := a.funcs[name]; f.instructions == 0 && f.data > 0 {
			why = append(why, fmt.Sprintf("%s holds only data, no instructions", name))
		}
	}
	return strings.Join(why, "; ")
}

// vRangeRE matches a VGPR operand: v7 or v[2:3].
var vRangeRE = regexp.MustCompile(`^v(?:(\d+)|\[(\d+):(\d+)\])$`)

// vRange returns the VGPRs an operand names.
func vRange(op string) (lo, hi int, ok bool) {
	m := vRangeRE.FindStringSubmatch(strings.TrimSpace(op))
	if m == nil {
		return 0, 0, false
	}
	if m[1] != "" {
		n, _ := strconv.Atoi(m[1])
		return n, n, true
	}
	lo, _ = strconv.Atoi(m[2])
	hi, _ = strconv.Atoi(m[3])
	return lo, hi, true
}

// madOperands splits "v_mad_u64_u32 v[1:2], null, s0, s15, v[0:1]" into
// its mnemonic and operands; ok is false for other instructions.
func madOperands(line string) (mnemonic string, ops []string, ok bool) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return "", nil, false
	}
	mn := strings.ToLower(f[0])
	if mn != "v_mad_u64_u32" && mn != "v_mad_i64_i32" {
		return "", nil, false
	}
	rest := strings.TrimSpace(line[len(f[0]):])
	for _, op := range strings.Split(rest, ",") {
		ops = append(ops, strings.TrimSpace(op))
	}
	return mn, ops, len(ops) == 5
}

// madOverlap reports a v_mad_u64_u32 or v_mad_i64_i32 whose destination
// VGPRs overlap a source's. GFX11.0 (gfx1100) has a hardware bug in these
// instructions' intra-instruction forwarding, so LLVM marks the destination
// early-clobber and llvm-mc rejects the overlap ("destination must be
// different than all sources") even though LLVM 15's own code generator
// (hipcc 5.2) still emits it.
func madOverlap(line string) bool {
	_, ops, ok := madOperands(line)
	if !ok {
		return false
	}
	dlo, dhi, ok := vRange(ops[0])
	if !ok {
		return false
	}
	for _, src := range ops[2:] {
		if lo, hi, ok := vRange(src); ok && lo <= dhi && dlo <= hi {
			return true
		}
	}
	return false
}

// OpcodeSimilarity is the cosine similarity of two assembly texts' opcode
// histograms (instructions counted by mnemonic in code sections): 1 for
// the same mix, 0 for nothing in common. It is a measurement of how close
// an answer's instruction mix is to the compiler's, never a judgement.
func OpcodeSimilarity(a, b string) float64 {
	return cosine(scanAsm(a).mnemonics, scanAsm(b).mnemonics)
}

func cosine(a, b map[string]int) float64 {
	var dot, na, nb float64
	for k, x := range a {
		na += float64(x * x)
		dot += float64(x * b[k])
	}
	for _, y := range b {
		nb += float64(y * y)
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

var (
	nextFreeVGPRRE = regexp.MustCompile(`^(\s*\.amdhsa_next_free_vgpr\s+)(\d+)\s*$`)
	metaNameRE     = regexp.MustCompile(`^\s*(?:-\s+)?\.name:\s+(\S+)\s*$`)
	metaVGPRRE     = regexp.MustCompile(`^(\s*(?:-\s+)?\.vgpr_count:\s+)(\d+)\s*$`)
)

// maxVGPRs is the number of VGPRs a gfx1100 wave can address.
const maxVGPRs = 256

// LegaliseMad64 rewrites every v_mad_u64_u32/v_mad_i64_i32 of compiler
// output whose destination overlaps a source (which llvm-mc 15 rejects for
// gfx1100, see madOverlap) into the same instruction writing a fresh VGPR
// pair above the kernel's registers, followed by two v_mov_b32 that copy
// the pair into the original destination; the kernel's
// .amdhsa_next_free_vgpr and its metadata .vgpr_count grow to cover the
// pair. The result computes the same values (all sources are read before
// the original destination is written). It returns the text and the number
// of instructions rewritten, or an error when an overlap lies outside a
// kernel's body or the VGPRs would run out. Only the lane's prepared
// script answers use it; answers are judged as written.
func LegaliseMad64(asm string) (string, int, error) {
	lines := strings.Split(asm, "\n")
	info := scanAsm(asm)
	if len(info.madOverlaps) == 0 {
		return asm, 0, nil
	}
	// Which kernel's body each line is in, and each kernel's descriptor
	// line for next_free_vgpr.
	owner := make([]string, len(lines))
	sec := sectionState{exec: true}
	cur := ""
	for i, raw := range lines {
		line := strings.TrimSpace(stripComment(raw))
		if m := asmLabelRE.FindStringSubmatch(line); m != nil && !isLocalLabel(m[1]) && sec.exec {
			cur = m[1]
		}
		if f := strings.Fields(line); len(f) > 0 && sec.directive(strings.ToLower(f[0]), f, line) && !sec.exec {
			cur = ""
		}
		owner[i] = cur
	}
	nextFree := map[string]int{} // kernel -> its next free VGPR
	desc := ""
	for _, raw := range lines {
		line := strings.TrimSpace(stripComment(raw))
		if m := amdKernelRE.FindStringSubmatch(line); m != nil {
			desc = m[1]
		}
		if m := nextFreeVGPRRE.FindStringSubmatch(raw); m != nil && desc != "" {
			n, _ := strconv.Atoi(m[2])
			nextFree[desc] = n
		}
		if strings.HasPrefix(line, ".end_amdhsa_kernel") {
			desc = ""
		}
	}
	grown := map[string]int{}
	var out []string
	count := 0
	for i, raw := range lines {
		line := strings.TrimSpace(stripComment(raw))
		if !madOverlap(line) {
			out = append(out, raw)
			continue
		}
		k := owner[i]
		base, ok := nextFree[k]
		if k == "" || !ok {
			return "", 0, fmt.Errorf("line %d: v_mad overlap outside a kernel body with a descriptor: %s", i+1, line)
		}
		if base+2 > maxVGPRs {
			return "", 0, fmt.Errorf("line %d: kernel %s uses %d VGPRs: no free pair for %s", i+1, k, base, line)
		}
		mn, ops, _ := madOperands(line)
		dlo, dhi, _ := vRange(ops[0])
		indent := raw[:len(raw)-len(strings.TrimLeft(raw, " \t"))]
		out = append(out, fmt.Sprintf("%s%s v[%d:%d], %s", indent, mn, base, base+1, strings.Join(ops[1:], ", ")))
		for r := dlo; r <= dhi; r++ {
			out = append(out, fmt.Sprintf("%sv_mov_b32_e32 v%d, v%d", indent, r, base+r-dlo))
		}
		grown[k] = base + 2
		count++
	}
	// Grow the descriptors and the metadata's vgpr counts.
	desc = ""
	for j, l := range out {
		t := strings.TrimSpace(stripComment(l))
		if m := amdKernelRE.FindStringSubmatch(t); m != nil {
			desc = m[1]
		}
		if strings.HasPrefix(t, ".end_amdhsa_kernel") {
			desc = ""
		}
		if m := nextFreeVGPRRE.FindStringSubmatch(l); m != nil && grown[desc] > 0 {
			out[j] = m[1] + strconv.Itoa(grown[desc])
		}
	}
	growMetadataVGPRs(out, grown)
	return strings.Join(out, "\n"), count, nil
}

// growMetadataVGPRs sets the .vgpr_count of the kernels of grown in the
// amdhsa.kernels list of an .amdgpu_metadata block (YAML as LLVM prints
// it: one "- " entry per kernel, its keys one level deeper).
func growMetadataVGPRs(lines []string, grown map[string]int) {
	in, entryIndent := false, -1
	var entry []int // line indexes of the current entry
	flush := func() {
		name, vgpr := "", -1
		for _, j := range entry {
			l := lines[j]
			if indent(l) != entryIndent+2 && j != entry[0] {
				continue // a deeper level: the arguments' keys
			}
			if m := metaNameRE.FindStringSubmatch(l); m != nil {
				name = m[1]
			}
			if metaVGPRRE.MatchString(l) {
				vgpr = j
			}
		}
		if n, ok := grown[name]; ok && vgpr >= 0 {
			m := metaVGPRRE.FindStringSubmatch(lines[vgpr])
			lines[vgpr] = m[1] + strconv.Itoa(n)
		}
		entry = nil
	}
	for j, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "amdhsa.kernels:":
			in = true
			continue
		case !in:
			continue
		case t == "" || strings.HasPrefix(t, ".end_amdgpu_metadata") || (indent(l) == 0 && !strings.HasPrefix(t, "-")):
			flush()
			in = false
			continue
		}
		if strings.HasPrefix(t, "- ") && (entryIndent < 0 || indent(l) == entryIndent) {
			flush()
			entryIndent = indent(l)
		}
		entry = append(entry, j)
	}
	flush()
}

func indent(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// normalise is the form artifacts keep: CASS's normalisation.
func normalise(asm string) string { return cudasynth.NormalizeAsm(cudasynth.DialectAMDGPU, asm) }

// sortedKeys returns m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
