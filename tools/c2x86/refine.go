package c2x86

// The c2x86 lane's refinement rules: the taxonomy of its assembler and
// linker failures, the construct features of C functions, the suspicion
// check on assembly answers, and the resynthesis format (a function.c and
// a driver.c per task).

import (
	"embed"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
)

//go:embed synth
var synthFS embed.FS

// RefinementRules returns the lane's rules for package refinement.
func RefinementRules() (refinement.LaneRules, error) {
	tmpl, cats, err := refinement.SynthTemplates(synthFS, "synth")
	if err != nil {
		return refinement.LaneRules{}, err
	}
	return refinement.LaneRules{
		Lane:     LaneName,
		Rules:    c2x86Rules(),
		Suspect:  suspectC2X86,
		Features: &refinement.FeatureTable{Files: featureFile, Rules: cFeatureRules()},
		// The same function with another driver is the same task; the
		// prompt is rendered from function.c.
		Identity: refinement.Identity{Files: func(n string) bool { return n == "function.c" }, NoPrompt: true},
		Synth: &refinement.SynthFormat{Templates: tmpl, Categories: cats, Parse: parseSynthBlock,
			ExampleFile: func(n string) bool { return n == "function.c" || n == "driver.c" || strings.HasSuffix(n, ".h") },
			FilesOnly:   true},
	}, nil
}

// featureFile: the function under test and its headers, not the driver
// (whose printf loops would make every task a loop task).
func featureFile(name string) bool {
	return name == "function.c" || strings.HasSuffix(name, ".h")
}

// c2x86Rules are the C -> x86-64 lane's rules: GNU as and ld diagnostics
// (as the lane quotes them: "answer.s:12: Error: ...", "ld: ...") and the
// float converter's errors.
func c2x86Rules() []refinement.Rule {
	asm := []string{refinement.ClassAssembleError}
	return []refinement.Rule{
		{Label: "asm.forbidden", Classes: asm, Pattern: `\.(incbin|include) is not allowed`,
			Doc: "the answer uses a directive that reads files of the build machine"},
		{Label: "asm.float_const", Classes: asm, Pattern: `Error: \.(float|single|double)\b`,
			Doc: "a symbolic floating constant (.float/.double) the converter rejects"},
		{Label: "asm.float_const", Classes: asm, Stages: []string{"convert"},
			Doc: "a symbolic floating constant (.float/.double) the converter rejects"},
		{Label: "asm.suffix", Classes: asm,
			Pattern: "invalid instruction suffix|incorrect register .* used with .* suffix|not allowed with `|operand size mismatch|ambiguous operand size|invalid register for .* suffix",
			Doc:     "the instruction suffix (b/w/l/q) or operand size does not match the operands"},
		{Label: "asm.mnemonic", Classes: asm, Pattern: `no such instruction`,
			Doc: "an instruction the assembler does not know (typo, wrong syntax mode, pseudo-instruction)"},
		{Label: "asm.register", Classes: asm, Pattern: `bad register name|invalid register|register type mismatch|invalid use of register|is not a valid base/index expression|base register expected`,
			Doc: "a register name that does not exist or cannot be used there"},
		{Label: "asm.operand", Classes: asm, Pattern: `operand type mismatch|number of operands mismatch|invalid operands|expecting scale factor|too many memory references|invalid (?:segment|displacement)|missing or invalid immediate|only supported in 64-bit mode|not supported in 64-bit mode`,
			Doc: "operands of the wrong kind or number for the instruction"},
		{Label: "asm.symbol", Classes: asm, Pattern: `is already defined|can't resolve|symbol .* is undefined|local label .* is not defined|redefined|invalid attempt to declare`,
			Doc: "a label defined twice or a symbol that cannot be resolved"},
		{Label: "asm.directive", Classes: asm, Pattern: `unknown pseudo-op|unknown section|CFI instruction used without|\.cfi_\S+ without|unknown \.\w+ directive|\.size expression .* does not evaluate`,
			Doc: "an unknown or misused assembler directive"},
		{Label: "asm.syntax", Classes: asm, Pattern: `junk .*after|junk at end of line|bad expression|unbalanced parenthesis|expecting operand after|missing '\)'|missing '\]'|invalid character|expected comma|missing operand|bad or irreducible|bad memory operand|invalid constant|unexpected end of file|expecting .* got`,
			Doc: "a line the assembler cannot parse (stray text, broken expression, wrong syntax mode)"},
		{Label: "asm.other", Classes: asm, Doc: "another assembler error"},
	}
}

// Shared pieces of the feature patterns.
const (
	// floatLitPattern matches C floating literals: 1.5, 1., .5, 1e-3, 2.0f,
	// 0x1.8p3, not member accesses or integers.
	floatLitPattern = `(?:^|[^\w.])(?:(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|0[xX][0-9a-fA-F]*\.?[0-9a-fA-F]*[pP][-+]?\d+)[fFlL]?`
	mathFuncs       = `sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|asinh|acosh|atanh|exp|exp2|expm1|log|log2|log10|log1p|pow|sqrt|cbrt|hypot|floor|ceil|round|trunc|fabs|fmod|remainder|fmin|fmax|fdim|fma|lround|llround|lrint|rint|nearbyint|copysign|ldexp|frexp|modf|erf|erfc|tgamma|lgamma|scalbn|ilogb|logb|nextafter`
)

// cFeatureRules are the c2x86 features, named like the corpus categories
// where they coincide (loop, switch_few, switch_many, float_const, struct,
// recursion, array_pointer, string, bitops, math_call).
func cFeatureRules() []refinement.FeatureRule {
	return []refinement.FeatureRule{
		{Name: "if", Pattern: `\bif\s*\(`, Doc: "if statements"},
		{Name: "ternary", Pattern: `\?`, Doc: "conditional expressions (a ? b : c)"},
		{Name: "loop", Pattern: `\b(?:for|while)\s*\(|\bdo\b`, Doc: "any loop"},
		{Name: "loop_for", Pattern: `\bfor\s*\(`, Doc: "for loops"},
		{Name: "loop_while", Detect: hasWhileLoop, Doc: "while loops (not the while of a do loop)"},
		{Name: "loop_do", Pattern: `\bdo\b`, Doc: "do ... while loops"},
		{Name: "goto", Pattern: `\bgoto\b`, Doc: "goto statements"},
		{Name: "switch", Pattern: `\bswitch\s*\(`, Doc: "any switch"},
		{Name: "switch_few", Detect: func(s *refinement.Source) bool {
			return anyCount(s.SwitchCaseCounts(), func(n int) bool { return n <= 4 })
		},
			Doc: "a switch with at most 4 case labels (a compare chain even with jump tables allowed)"},
		{Name: "switch_many", Detect: func(s *refinement.Source) bool {
			return anyCount(s.SwitchCaseCounts(), func(n int) bool { return n >= 5 })
		},
			Doc: "a switch with 5 or more case labels (a jump table unless -fno-jump-tables)"},
		{Name: "float_const", Pattern: floatLitPattern, Doc: "floating-point literals (6.0, 0.125f, 1e-3, 0x1p3)"},
		{Name: "float_type", Pattern: `\b(?:float|double)\b`, Doc: "float or double values"},
		{Name: "struct", Pattern: `\b(?:struct|union)\b|->`, Doc: "structs and unions"},
		{Name: "bitfield", Detect: hasBitfield, Doc: "struct bit-fields"},
		{Name: "recursion", Detect: func(s *refinement.Source) bool { return s.Recursive() },
			Doc: "a function that calls itself, directly or through others"},
		{Name: "pointer", Pattern: `->|\b(?:char|short|int|long|float|double|void|unsigned|signed|struct\s+\w+|union\s+\w+|\w+_t)\s*\*+\s*(?:const\s+|restrict\s+)*\w|(?:[(,=]|\breturn)\s*&\s*[A-Za-z_]`,
			Doc: "pointer declarations, address-of, ->"},
		{Name: "array", Pattern: `\w\s*\[`, Doc: "array declarations or indexing"},
		{Name: "array_pointer", Pattern: `->|\w\s*\[|\b(?:char|short|int|long|float|double|void|unsigned|signed|struct\s+\w+|union\s+\w+|\w+_t)\s*\*+\s*(?:const\s+|restrict\s+)*\w`,
			Doc: "arrays or pointers (the corpus category)"},
		{Name: "function_pointer", Pattern: `\(\s*\*\s*\w*\s*\)\s*\(`, Doc: "function pointers"},
		{Name: "string", Detect: hasStrings, Doc: "string literals, char pointers or string.h/ctype.h calls"},
		{Name: "bitops", Pattern: `<<|>>|~|\^|[\w)\]]\s*&(?:[^&]|$)|(?:^|[^|])\|(?:[^|]|$)`,
			Doc: "shifts, masks and other bitwise operators"},
		{Name: "divmod", Pattern: `[\w)\]]\s*[/%]=?\s*[\w(.-]`, Doc: "division or remainder"},
		{Name: "unsigned", Pattern: `\bunsigned\b|\buint(?:8|16|32|64|ptr|max)_t\b|\bsize_t\b`, Doc: "unsigned integer types"},
		{Name: "math_call", Pattern: `\b(?:` + mathFuncs + `)[fl]?\s*\(`, Doc: "libm calls (sin, sqrt, pow, floor, ...)"},
		{Name: "variadic", Pattern: `\bva_start\b|\.\.\.\s*\)`, Doc: "variadic functions"},
		{Name: "static_data", Pattern: `\bstatic\s+(?:const\s+)?[\w\s]+\[`, Doc: "static tables"},
	}
}

func anyCount(ns []int, f func(int) bool) bool {
	for _, n := range ns {
		if f(n) {
			return true
		}
	}
	return false
}

var (
	whileRE = regexp.MustCompile(`\bwhile\s*\(`)
	doRE    = regexp.MustCompile(`\bdo\b`)
)

// hasWhileLoop: more while keywords than do keywords (each do has one).
func hasWhileLoop(s *refinement.Source) bool {
	return len(whileRE.FindAllStringIndex(s.Code(), -1)) > len(doRE.FindAllStringIndex(s.Code(), -1))
}

var (
	structBodyRE = regexp.MustCompile(`\b(?:struct|union)\s*\w*\s*\{`)
	bitfieldRE   = regexp.MustCompile(`\w\s*:\s*\d+\s*[;,]`)
)

// hasBitfield: a "name : width;" member inside a struct or union body.
func hasBitfield(s *refinement.Source) bool {
	code := s.Code()
	for _, m := range structBodyRE.FindAllStringIndex(code, -1) {
		open := m[1] - 1
		end := refinement.MatchClose(code, open)
		if end < 0 {
			continue
		}
		if bitfieldRE.MatchString(code[open+1 : end]) {
			return true
		}
	}
	return false
}

var (
	stringCallRE = regexp.MustCompile(`\b(?:str(?:len|nlen|cpy|ncpy|cat|ncat|cmp|ncmp|chr|rchr|str|tok|dup|spn|cspn|pbrk|casecmp)|to(?:upper|lower)|is(?:alpha|digit|space|upper|lower|alnum|punct|xdigit)|ato[il]|strto\w+)\s*\(`)
	charPtrRE    = regexp.MustCompile(`(\w+)?\s*\bchar\s*(?:const\s*)?\*`)
)

// hasStrings: string literals, (signed-agnostic) char pointers, or
// string.h/ctype.h calls. unsigned char pointers are byte buffers, and
// mem* calls work on any memory: neither counts.
func hasStrings(s *refinement.Source) bool {
	if s.StringLiterals() > 0 || stringCallRE.MatchString(s.Code()) {
		return true
	}
	for _, m := range charPtrRE.FindAllStringSubmatch(s.Code(), -1) {
		if m[1] != "unsigned" && m[1] != "signed" {
			return true
		}
	}
	return false
}

// asmOutputCalls are library functions whose call from a translated
// function means it produces output (or ends the program) itself rather
// than computing what the driver prints.
var asmOutputCalls = map[string]bool{
	"printf": true, "puts": true, "putchar": true, "putc": true, "fputc": true, "fputs": true,
	"fprintf": true, "fwrite": true, "write": true, "dprintf": true, "vprintf": true, "vfprintf": true,
	"__printf_chk": true, "__fprintf_chk": true, "putchar_unlocked": true, "fflush": true,
	"exit": true, "_exit": true, "_Exit": true, "quick_exit": true,
	"system": true, "popen": true, "execve": true, "execl": true, "execvp": true, "fork": true,
	"fopen": true, "open": true, "read": true,
}

var (
	asmLabelRE = regexp.MustCompile(`^\s*([A-Za-z_.$][\w.$@]*|\d+)\s*:`)
	asmCallRE  = regexp.MustCompile(`(?i)^(?:call|jmp)[a-z]*\s+\*?([A-Za-z_.$][\w.$]*)(?:@PLT|@plt)?\s*$`)
	asmSysRE   = regexp.MustCompile(`(?i)^(?:syscall|sysenter|int\s+\$?0x80)\b`)
)

// asmFunc is what the suspicion check learns about one code label.
type asmFunc struct {
	instructions int
	data         int // data directives (.byte, .long, ...) in a text section
}

// scanAsm splits assembly into labels with their instruction counts,
// calls, and system-call instructions. Comments (#, //, /* */ on one line)
// are dropped; ';' separates statements.
func scanAsm(asm string) (funcs map[string]*asmFunc, calls []string, syscalls int, defines []string) {
	funcs = map[string]*asmFunc{}
	var cur *asmFunc
	inText := true
	for _, raw := range strings.Split(asm, "\n") {
		line := raw
		if i := strings.Index(line, "/*"); i >= 0 {
			if j := strings.Index(line[i:], "*/"); j >= 0 {
				line = line[:i] + " " + line[i+j+2:]
			} else {
				line = line[:i]
			}
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		for _, st := range strings.Split(line, ";") {
			st = strings.TrimSpace(st)
			for {
				m := asmLabelRE.FindStringSubmatch(st)
				if m == nil {
					break
				}
				name := m[1]
				st = strings.TrimSpace(st[len(m[0]):])
				if isLocalAsmLabel(name) || !inText {
					continue
				}
				f := funcs[name]
				if f == nil {
					f = &asmFunc{}
					funcs[name] = f
					defines = append(defines, name)
				}
				cur = f
			}
			if st == "" {
				continue
			}
			if st[0] == '.' {
				dir := strings.ToLower(strings.Fields(st)[0])
				switch {
				case dir == ".text":
					inText = true
				case dir == ".data" || dir == ".bss" || dir == ".rodata":
					inText, cur = false, nil
				case dir == ".section":
					f := strings.Fields(st)
					inText = len(f) > 1 && strings.HasPrefix(strings.Trim(f[1], `",`), ".text")
					if !inText {
						cur = nil
					}
				case dataDirective(dir):
					if cur != nil && inText {
						cur.data++
					}
				}
				continue
			}
			if cur != nil {
				cur.instructions++
			}
			if m := asmCallRE.FindStringSubmatch(st); m != nil {
				calls = append(calls, m[1])
			}
			if asmSysRE.MatchString(st) {
				syscalls++
			}
		}
	}
	return funcs, calls, syscalls, defines
}

func isLocalAsmLabel(name string) bool {
	if strings.HasPrefix(name, ".L") {
		return true
	}
	for _, c := range name {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func dataDirective(dir string) bool {
	switch dir {
	case ".byte", ".short", ".value", ".word", ".hword", ".2byte", ".long", ".int", ".4byte",
		".quad", ".8byte", ".octa", ".float", ".single", ".double", ".ascii", ".asciz", ".string", ".fill":
		return true
	}
	return false
}

// suspectC2X86 flags assembly that does not translate the function:
// the function's label is missing or holds no instructions (machine code
// smuggled in as .byte data), the code calls output or process functions
// the C source does not call (printing the expected output itself), or it
// issues system calls, or it defines main.
func suspectC2X86(answer string, task runs.Task) string {
	funcs, calls, syscalls, defines := scanAsm(answer)
	var why []string
	if fn := task.Meta["function"]; fn != "" {
		f, ok := funcs[fn]
		switch {
		case !ok:
			why = append(why, fmt.Sprintf("no code label for %s", fn))
		case f.instructions == 0 && f.data > 0:
			why = append(why, fmt.Sprintf("%s holds only data directives, no instructions", fn))
		}
	} else {
		for _, name := range defines {
			if f := funcs[name]; f.instructions == 0 && f.data > 0 {
				why = append(why, fmt.Sprintf("%s holds only data directives, no instructions", name))
			}
		}
	}
	if _, ok := funcs["main"]; ok {
		why = append(why, "defines main (the driver's entry point)")
	}
	var srcCalls map[string]bool
	if src := task.Files["function.c"]; src != "" {
		srcCalls = refinement.ParseSource(src).Calls()
	}
	seen := map[string]bool{}
	for _, c := range calls {
		if asmOutputCalls[c] && !srcCalls[c] && !seen[c] {
			seen[c] = true
			why = append(why, fmt.Sprintf("calls %s, which the C source does not", c))
		}
	}
	if syscalls > 0 {
		why = append(why, fmt.Sprintf("issues %d system call instruction(s)", syscalls))
	}
	return strings.Join(why, "; ")
}

// Calls a synthesised function.c must not make: output, input, clocks,
// hidden state, leaving the program.
var functionDeny = map[string]bool{
	"printf": true, "fprintf": true, "puts": true, "putchar": true, "fputs": true, "fwrite": true, "write": true,
	"scanf": true, "fscanf": true, "getchar": true, "fgets": true, "read": true, "fopen": true, "open": true,
	"rand": true, "srand": true, "random": true, "time": true, "clock": true, "gettimeofday": true,
	"clock_gettime": true, "getenv": true, "system": true, "exit": true, "abort": true, "_exit": true,
}

// Calls a synthesised driver.c must not make: input, clocks, environment.
var driverDeny = map[string]bool{
	"scanf": true, "fscanf": true, "getchar": true, "fgets": true, "read": true, "fopen": true, "open": true,
	"time": true, "clock": true, "gettimeofday": true, "clock_gettime": true, "getenv": true, "system": true,
}

var (
	identRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	localIncRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*"`)
	staticRE   = regexp.MustCompile(`\bstatic\b`)
)

// parseSynthBlock reads a synthesised c2x86 task: a function.c and a
// driver.c block, and the function: field.
func parseSynthBlock(c *refinement.Candidate, b refinement.Block) string {
	fields, blocks := b.Fields, b.Code
	var fn, drv *refinement.Fenced
	var untagged []*refinement.Fenced
	for i := range blocks {
		b := &blocks[i]
		switch {
		case strings.Contains(b.Info, "function"):
			if fn == nil {
				fn = b
			}
		case strings.Contains(b.Info, "driver") || strings.Contains(b.Info, "main"):
			if drv == nil {
				drv = b
			}
		case b.Info == "" || b.Info == "c":
			untagged = append(untagged, b)
		}
	}
	for _, b := range untagged {
		if fn == nil {
			fn = b
		} else if drv == nil {
			drv = b
		}
	}
	if fn == nil {
		return "no function.c code block"
	}
	if drv == nil {
		return "no driver.c code block"
	}
	if len(fn.Body) > refinement.MaxSynthFileBytes || len(drv.Body) > refinement.MaxSynthFileBytes {
		return fmt.Sprintf("a file is over %d bytes", refinement.MaxSynthFileBytes)
	}
	if n := strings.Count(fn.Body, "\n") + 1; n > refinement.MaxSynthFuncLines {
		return fmt.Sprintf("function.c has %d lines (at most %d)", n, refinement.MaxSynthFuncLines)
	}
	fsrc, dsrc := refinement.ParseSource(fn.Body), refinement.ParseSource(drv.Body)
	defined := map[string]bool{}
	var nonStatic []string
	for _, f := range fsrc.Defs() {
		defined[f.Name] = true
		if !staticRE.MatchString(f.Prefix) {
			nonStatic = append(nonStatic, f.Name)
		}
	}
	name := fields["function"]
	if i := strings.IndexAny(name, "( "); i > 0 {
		name = name[:i] // "foo(int x)" or "foo (...)"
	}
	if name == "" && len(nonStatic) == 1 {
		name = nonStatic[0]
	}
	switch {
	case name == "":
		return "no function: line and no single function to infer it from"
	case !identRE.MatchString(name):
		return fmt.Sprintf("function %q is not a C identifier", name)
	case name == "main":
		return "the function under test cannot be main"
	case !defined[name]:
		return fmt.Sprintf("function.c does not define %s", name)
	case defined["main"]:
		return "function.c defines main"
	}
	c.Function = name
	for _, f := range dsrc.Defs() {
		if f.Name == name {
			return fmt.Sprintf("driver.c defines %s itself (it must only declare it)", name)
		}
	}
	dfuncs := map[string]bool{}
	for _, f := range dsrc.Defs() {
		dfuncs[f.Name] = true
	}
	if !dfuncs["main"] {
		return "driver.c does not define main"
	}
	if !dsrc.Calls()[name] {
		return fmt.Sprintf("driver.c never calls %s", name)
	}
	if bad := denied(fsrc.Calls(), functionDeny); bad != "" {
		return fmt.Sprintf("function.c calls %s (no I/O, randomness, clocks or exits in the function)", bad)
	}
	if bad := denied(dsrc.Calls(), driverDeny); bad != "" {
		return fmt.Sprintf("driver.c calls %s (its output must not depend on input, time or environment)", bad)
	}
	if localIncRE.MatchString(fn.Body) || localIncRE.MatchString(drv.Body) {
		return `a file includes a local header ("..."): only standard headers exist`
	}
	c.Files = map[string]string{"function.c": strings.TrimSpace(fn.Body) + "\n", "driver.c": strings.TrimSpace(drv.Body) + "\n"}
	return ""
}

func denied(calls, deny map[string]bool) string {
	var bad []string
	for name := range calls {
		if deny[name] {
			bad = append(bad, name)
		}
	}
	sort.Strings(bad)
	return strings.Join(bad, ", ")
}
