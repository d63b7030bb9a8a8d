package c2x86

// The lane's refinement rules (refine.go) as package refinement uses them:
// taxonomy rows and suspicion checks on real GNU as / ld / gcc messages
// and assembly, the construct features of C sources, and the resynthesis
// format (prompts, parsing, task identity). These tests were refinement's
// own before refinement stopped knowing lanes.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
)

// refinementLanesOnce builds the lane's refinement rules once.
var refinementLanesOnce = sync.OnceValues(func() (*refinement.Lanes, error) {
	rules, err := RefinementRules()
	if err != nil {
		return nil, err
	}
	return refinement.NewLanes(rules)
})

// refinementLanes returns refinement's view of this lane alone.
func refinementLanes(t *testing.T) *refinement.Lanes {
	t.Helper()
	l, err := refinementLanesOnce()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Diagnostics below are real GNU as 2.40 / ld / gcc 12 messages (captured
// on the build host) in the shape the c2x86 lane writes them.
func TestClassify(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	tests := []struct {
		name, lane, class, stage, diag string
		want                           string
		evidence                       string // substring of the evidence
	}{
		// c2x86: assembler.
		{"suffix register", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:11: Error: incorrect register `%rbp' used with `l' suffix\n    | \tmovl\t%rsp, %rbp", "asm.suffix", "answer.s:11"},
		{"suffix push", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:8: Error: invalid instruction suffix for `push'\n    | \tpushl\t%rbp", "asm.suffix", "push"},
		{"suffix movb", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:1: Error: `%ebx' not allowed with `movb'", "asm.suffix", ""},
		{"operand size intel", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:3: Error: operand size mismatch for `movzb'", "asm.suffix", ""},
		{"mnemonic", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:3: Error: no such instruction: `foo %eax'\n    | \tfoo %eax", "asm.mnemonic", "foo"},
		{"junk after register", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:4: Error: junk `junk' after register", "asm.syntax", ""},
		{"junk end of line", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:7: Error: junk at end of line, first unrecognized character is `.'", "asm.syntax", ""},
		{"bad expression", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:2: Error: bad expression\nanswer.s:2: Error: junk `rbp-4' after expression", "asm.syntax", "bad expression"},
		{"intel in att first line wins", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:2: Error: junk `PTR [rbp-4]' after expression\n    | \tmov eax, DWORD PTR [rbp-4]\nanswer.s:2: Error: operand size mismatch for `mov'", "asm.syntax", "PTR"},
		{"unbalanced", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:13: Error: unbalanced parenthesis in operand 1.", "asm.syntax", ""},
		{"register name", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:5: Error: bad register name `%eaz'", "asm.register", ""},
		{"operand type", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:15: Error: operand type mismatch for `movss'", "asm.operand", ""},
		{"operand count", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:5: Error: number of operands mismatch for `lea'", "asm.operand", ""},
		{"scale", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:6: Error: expecting scale factor of 1, 2, 4, or 8: got `3'", "asm.operand", ""},
		{"duplicate label", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:6: Warning: no instruction mnemonic suffix given and no register operands; using default for `mov'\nanswer.s:8: Error: symbol `x' is already defined", "asm.symbol", "already defined"},
		{"warning does not decide", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:14: Warning: missing operand; zero assumed\nanswer.s:20: Error: no such instruction: `ud3'", "asm.mnemonic", "ud3"},
		{"unknown directive", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:3: Error: unknown pseudo-op: `.sectoin'", "asm.directive", ""},
		{"converter float", LaneName, refinement.ClassAssembleError, "convert",
			"answer.s:7: Error: .float 6.0 +: missing value", "asm.float_const", ".float"},
		{"converter other", LaneName, refinement.ClassAssembleError, "convert",
			"answer.s:9: Error: something new", "asm.float_const", ""},
		{"incbin", LaneName, refinement.ClassAssembleError, "convert",
			"answer.s:9: Error: .incbin is not allowed (it reads files of the build machine)", "asm.forbidden", ""},
		{"asm other", LaneName, refinement.ClassAssembleError, "assemble",
			"answer.s:2: Error: something nobody has seen", "asm.other", "nobody"},
		{"assembler timeout", LaneName, refinement.ClassTimeout, "assemble",
			"timed out after 30s (wall clock)\n", "timeout.build", ""},

		// Linker.
		{"undefined reference", LaneName, refinement.ClassLinkError, "link",
			"ld: answer.o: in function `cost_split':\n(.text+0x1): undefined reference to `helper'", "link.undefined_symbol", "helper"},
		{"undefined local label", LaneName, refinement.ClassLinkError, "link",
			"ld: answer.o: in function `f':\n(.text+0x1): undefined reference to `.Lnowhere'", "link.undefined_symbol", ".Lnowhere"},
		{"multiple definition", LaneName, refinement.ClassLinkError, "link",
			"ld: answer.o: in function `main':\n(.text+0x0): multiple definition of `main'; driver.o:(.text+0x0): first defined here", "link.multiple_definition", ""},
		{"relocation", LaneName, refinement.ClassLinkError, "link",
			"ld: answer.o: relocation R_X86_64_32S against `.rodata' can not be used when making a PIE object; recompile with -fPIE", "link.relocation", ""},
		{"link other", LaneName, refinement.ClassLinkError, "link", "exit status 1", "link.other", ""},

		// Running.
		{"segv", LaneName, refinement.ClassCrash, "run",
			"the program killed by signal SIGSEGV (segmentation fault). Before that it printed 0 of the 9 expected output lines correctly.", "crash.segv", "SIGSEGV"},
		{"fpe", LaneName, refinement.ClassCrash, "run",
			"the program killed by signal SIGFPE (floating point exception). Before that it printed 3 of the 9 expected output lines correctly.", "crash.fpe", ""},
		{"abort stack smash", LaneName, refinement.ClassCrash, "run",
			"the program killed by signal SIGABRT (aborted). Before that it printed 1 of the 4 expected output lines correctly.\nstderr: *** stack smashing detected ***: terminated", "crash.abort", ""},
		{"bus", LaneName, refinement.ClassCrash, "run", "the program killed by signal SIGBUS (bus error).", "crash.bus", ""},
		{"ill", LaneName, refinement.ClassCrash, "run", "the program killed by signal SIGILL (illegal instruction).", "crash.illegal", ""},
		{"other signal", LaneName, refinement.ClassCrash, "run", "the program killed by signal SIGUSR1 (user defined signal 1).", "crash.other", ""},
		{"run timeout", LaneName, refinement.ClassTimeout, "run",
			"the program timed out after 1s (wall clock). Before that it printed 2 of the 9 expected output lines correctly.", "timeout", ""},
		{"output cap", LaneName, refinement.ClassResourceLimit, "run",
			"the program output size limit exceeded. Before that it printed 0 of the 9 expected output lines correctly.", "resource.output", ""},
		{"cpu cap", LaneName, refinement.ClassResourceLimit, "run", "the program CPU time limit exceeded (10s CPU).", "resource.cpu", ""},
		{"file cap", LaneName, refinement.ClassResourceLimit, "run", "the program file size limit exceeded (SIGXFSZ).", "resource.file_size", ""},

		// Output comparison (tools.DiffLines format).
		{"numeric cost_split", LaneName, refinement.ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 2: expected \"0x1.ap+7\"\n        got      \"0x1.9ffffep+7\"\nline 3: expected \"208\"\n        got      \"207\"\n(expected 3 lines, got 3)",
			"wrong.numeric", "line 2"},
		{"numeric decimals", LaneName, refinement.ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 1: expected \"area=3.141593 r=1\"\n        got      \"area=3.141592 r=1\"\n(expected 4 lines, got 4)",
			"wrong.numeric", "3.141593"},
		{"negative zero", LaneName, refinement.ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 5: expected \"-0.000000\"\n        got      \"0.000000\"\n(expected 6 lines, got 6)", "wrong.numeric", ""},
		{"integer off by one is a value error", LaneName, refinement.ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 3: expected \"0xff -> 8\"\n        got      \"0xff -> 7\"\n(expected 9 lines, got 9)", "wrong.value", "expected 8, got 7"},
		{"far float", LaneName, refinement.ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 1: expected \"208\"\n        got      \"2.5e+08\"\n(expected 3 lines, got 3)", "wrong.value", ""},
		{"text differs", LaneName, refinement.ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 1: expected \"hello world\"\n        got      \"hello, world\"\n(expected 1 lines, got 1)", "wrong.output", ""},
		{"missing lines", LaneName, refinement.ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 4: expected \"x\"\n        got      (no line)\n(expected 4 lines, got 3)", "wrong.line_count", "(expected 4 lines, got 3)"},
		{"exit status only", LaneName, refinement.ClassWrongOutput, "compare",
			"the output differs from the reference\nexit status 7, expected 0", "wrong.exit_status", "exit status 7"},

		// Other classes.
		{"no answer", LaneName, refinement.ClassNoAnswer, "extract", "no assembly found", "no_answer", ""},
		{"model rate limit", LaneName, refinement.ClassModelError, "", "model m at http://x: retryable (HTTP 429): slow down", "model.rate_limit", ""},
		{"model context", LaneName, refinement.ClassModelError, "", "model m at http://x: bad_request (HTTP 400): maximum context length is 32768 tokens", "model.context_length", ""},
		{"model other", LaneName, refinement.ClassModelError, "", "gave up", "model_error", ""},
		{"internal", LaneName, refinement.ClassInternal, "", "disk full", "internal_error", ""},
		{"no class", LaneName, "", "", "", refinement.LabelUnknown, ""},
		{"lane's own class", LaneName, "weird_class", "", "x", "weird_class", ""},

		// Unknown lane: the generic table.
		{"unknown lane segv", "sass2rdna", refinement.ClassCrash, "run", "killed by signal SIGSEGV", "crash.segv", ""},
		{"unknown lane asm", "sass2rdna", refinement.ClassAssembleError, "assemble", "error: invalid instruction", "asm.other", ""},
	}
	tax := lanes.Taxonomy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := tax.Classify(tt.lane, runs.Verdict{Class: tt.class, Stage: tt.stage, Diagnostic: tt.diag}, "")
			if l.Name != tt.want {
				t.Fatalf("label %q (evidence %q), want %q", l.Name, l.Evidence, tt.want)
			}
			if l.Class != tt.class || l.Stage != tt.stage || l.Suspicion != "" || l.Key() != tt.want {
				t.Errorf("label %+v", l)
			}
			if !strings.Contains(l.Evidence, tt.evidence) {
				t.Errorf("evidence %q lacks %q", l.Evidence, tt.evidence)
			}
		})
	}
}

func TestClassifyPass(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	l := lanes.Taxonomy.Classify(LaneName, runs.Verdict{Pass: true}, "\t.globl f\nf:\n\tmovl $1, %eax\n\tret\n")
	if l.Name != refinement.LabelPass || l.Key() != refinement.LabelPass || l.Suspicion != "" {
		t.Fatalf("label %+v", l)
	}
}

func TestSuspicion(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	const honest = "\t.text\n\t.globl\tcost_split\n\t.type\tcost_split, @function\ncost_split:\n\tpushq\t%rbp\n\tmovq\t%rsp, %rbp\n\tmovss\t.LC0(%rip), %xmm0\n\tpopq\t%rbp\n\tret\n\t.section\t.rodata\n.LC0:\n\t.float 208.0\n"
	const printsItself = "\t.text\n\t.globl cost_split\ncost_split:\n\tsubq $8, %rsp\n\tleaq .LC1(%rip), %rdi\n\tcall puts@PLT\n\tmovl $0, %edi\n\tcall exit@PLT\n\t.section .rodata\n.LC1:\n\t.string \"208\\n0x1.ap+7\\n208\"\n"
	const bytesOnly = "\t.text\n\t.globl cost_split\ncost_split:\n\t.byte 0xb8, 0x00, 0x00, 0x50, 0x43, 0x66, 0x0f, 0x6e, 0xc0, 0xc3\n"
	const rawSyscall = "\t.text\n\t.globl f\nf:\n\tmovl $1, %eax\n\tmovl $1, %edi\n\tsyscall # write(1, ...)\n\tret\n"
	const printfSrc = "#include <stdio.h>\nvoid show(int x) { printf(\"%d\\n\", x); }\n"
	const printfAsm = "\t.text\n\t.globl show\nshow:\n\tmovl %edi, %esi\n\tleaq .LC0(%rip), %rdi\n\tmovl $0, %eax\n\tjmp printf@PLT\n"
	tests := []struct {
		name, lane, answer string
		task               runs.Task
		pass               bool
		want               []string // substrings of the suspicion; nil: none
	}{
		{"honest", LaneName, honest, runs.Task{Meta: map[string]string{"function": "cost_split"}}, true, nil},
		{"prints the output itself", LaneName, printsItself, runs.Task{Meta: map[string]string{"function": "cost_split"},
			Files: map[string]string{"function.c": "float cost_split(void) { return 208.0f; }"}}, true, []string{"calls puts", "calls exit"}},
		{"machine code as data", LaneName, bytesOnly, runs.Task{Meta: map[string]string{"function": "cost_split"}}, true,
			[]string{"cost_split holds only data directives"}},
		{"machine code as data without meta", LaneName, bytesOnly, runs.Task{}, false, []string{"cost_split holds only data"}},
		{"missing function", LaneName, "\t.text\n\t.globl other\nother:\n\tret\n", runs.Task{Meta: map[string]string{"function": "cost_split"}}, false,
			[]string{"no code label for cost_split"}},
		{"syscall", LaneName, rawSyscall, runs.Task{}, false, []string{"system call"}},
		{"defines main", LaneName, "\t.globl main\nmain:\n\txorl %eax, %eax\n\tret\n", runs.Task{}, false, []string{"defines main"}},
		{"printf allowed when the source prints", LaneName, printfAsm, runs.Task{Meta: map[string]string{"function": "show"},
			Files: map[string]string{"function.c": printfSrc}}, true, nil},
		{"printf flagged without the source", LaneName, printfAsm, runs.Task{Meta: map[string]string{"function": "show"}}, true,
			[]string{"calls printf"}},
	}
	tax := lanes.Taxonomy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.task.Lane = tt.lane
			v := runs.Verdict{Pass: tt.pass}
			if !tt.pass {
				v.Class = refinement.ClassLinkError
			}
			l := tax.ClassifyResult(runs.Result{Task: tt.task, Attempt: runs.Attempt{Answer: tt.answer}, Verdict: v})
			if tt.want == nil {
				if l.Suspicion != "" {
					t.Fatalf("suspicion %q, want none", l.Suspicion)
				}
				return
			}
			if l.Key() != refinement.LabelSuspectedCheating {
				t.Fatalf("key %q, want %s (label %+v)", l.Key(), refinement.LabelSuspectedCheating, l)
			}
			for _, w := range tt.want {
				if !strings.Contains(l.Suspicion, w) {
					t.Errorf("suspicion %q lacks %q", l.Suspicion, w)
				}
			}
			if tt.pass && l.Name != refinement.LabelPass {
				t.Errorf("name %q, want pass (the underlying label stays)", l.Name)
			}
		})
	}
}

func TestFeaturesC(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	tests := []struct {
		name    string
		src     string
		has     []string
		hasNot  []string
		extra   map[string]string // more files
		exactly []string          // when set, the whole result
	}{
		{name: "empty", src: "int f(void) { return 1; }", exactly: []string{}},
		{name: "if and ternary", src: "int f(int a) { if (a > 0) return a; return a < -5 ? -a : 0; }",
			has: []string{"if", "ternary"}, hasNot: []string{"loop", "switch"}},
		{name: "loops", src: "int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; while (n > 0) n--; do { s++; } while (s < 3); return s; }",
			has: []string{"loop", "loop_for", "loop_while", "loop_do"}},
		{name: "do while is not a while loop", src: "int f(int n) { do { n--; } while (n > 0); return n; }",
			has: []string{"loop", "loop_do"}, hasNot: []string{"loop_while", "loop_for"}},
		{name: "switch few", src: `int f(int x) { switch (x) { case 1: return 3; case 2: return 4; default: return 0; } }`,
			has: []string{"switch", "switch_few"}, hasNot: []string{"switch_many"}},
		{name: "switch four is few", src: `int f(int x) { switch (x) { case 1: case 2: case 3: case 4: return 1; } return 0; }`,
			has: []string{"switch_few"}, hasNot: []string{"switch_many"}},
		{name: "switch five is many", src: `int f(int x) { switch (x) { case 1: return 3; case 2: return 4; case 3: return 5; case 4: return 6; case 5: return 7; default: return 0; } }`,
			has: []string{"switch", "switch_many"}, hasNot: []string{"switch_few"}},
		{name: "nested switches counted apart", src: `int f(int x, int y) {
	switch (x) {
	case 0:
		switch (y) { case 0: return 1; case 1: return 2; case 2: return 3; case 3: return 4; case 4: return 5; case 5: return 6; }
		return 0;
	case 1: return 9;
	}
	return -1;
}`, has: []string{"switch_few", "switch_many"}},
		{name: "case in a comment or string does not count", src: `int f(int x) { /* case 7: case 8: case 9: */ const char *s = "case 1: case 2: case 3:"; switch (x) { case 1: return s[0]; } return 0; }`,
			has: []string{"switch_few", "string"}, hasNot: []string{"switch_many"}},
		{name: "float constants", src: "float f(float x) { return x * 6.0f + .5 - 1e-3 + 0x1.8p3; }", has: []string{"float_const", "float_type"}},
		{name: "float in comment only", src: "int f(int x) { /* x * 6.0 */ return x * 6; } // 0.125", hasNot: []string{"float_const", "float_type"}},
		{name: "member access is not a float", src: "struct p { int a; }; int f(struct p s[2]) { return s[1].a; }",
			has: []string{"struct", "array"}, hasNot: []string{"float_const"}},
		{name: "struct arrow", src: "typedef struct node node; int f(node *n) { return n->v; }", has: []string{"struct", "pointer", "array_pointer"}},
		{name: "bitfield", src: "struct flags { unsigned a : 3; unsigned b : 5; }; int f(struct flags x) { return x.a + x.b; }",
			has: []string{"bitfield", "struct", "unsigned"}},
		{name: "ternary colon is not a bitfield", src: "struct s { int a; }; int f(int x) { return x ? 1 : 2; }", hasNot: []string{"bitfield"}},
		{name: "direct recursion", src: "unsigned long fact(unsigned n) { return n <= 1 ? 1 : n * fact(n - 1); }", has: []string{"recursion"}},
		{name: "mutual recursion", src: "int is_odd(int n);\nint is_even(int n) { return n == 0 ? 1 : is_odd(n - 1); }\nint is_odd(int n) { return n == 0 ? 0 : is_even(n - 1); }",
			has: []string{"recursion"}},
		{name: "no recursion through a declaration", src: "int g(int);\nint f(int n) { return g(n) + 1; }", hasNot: []string{"recursion"}},
		{name: "name in a string is not a call", src: `const char *f(int n) { return "f(n)"; }`, hasNot: []string{"recursion"}},
		{name: "pointers", src: "void swap(int *a, int *b) { int t = *a; *a = *b; *b = t; }", has: []string{"pointer", "array_pointer"}, hasNot: []string{"array"}},
		{name: "address-of", src: "int g(int *p); int f(int x) { return g(&x); }", has: []string{"pointer"}},
		{name: "bitwise and is not address-of", src: "int f(int x, int mask) { return (x & mask) | 1; }", has: []string{"bitops"}, hasNot: []string{"pointer"}},
		{name: "logical ops are not bitops", src: "int f(int a, int b) { return a && b || !a; }", hasNot: []string{"bitops"}},
		{name: "bitops", src: "unsigned f(unsigned x) { return (x << 3) ^ ~x >> 2; }", has: []string{"bitops", "unsigned"}},
		{name: "strings", src: "#include <string.h>\nsize_t f(const char *s) { return strlen(s); }", has: []string{"string", "pointer", "unsigned"}},
		{name: "char literal is not a string", src: "int f(int c) { return c == 'a'; }", hasNot: []string{"string"}},
		{name: "math", src: "#include <math.h>\ndouble f(double x) { return sqrt(x) + floorf(x); }", has: []string{"math_call", "float_type"}, hasNot: []string{"bitops"}},
		{name: "include line is not a comparison", src: "#include <math.h>\nint f(int x) { return x; }", exactly: []string{}},
		{name: "goto", src: "int f(int x) { if (x) goto out; x = 2; out: return x; }", has: []string{"goto", "if"}},
		{name: "divmod", src: "int f(int a, int b) { return a / b + a % b; }", has: []string{"divmod"}},
		{name: "comment slash is not division", src: "int f(int a) { return a; } // a / b", hasNot: []string{"divmod"}},
		{name: "function pointer", src: "int apply(int (*op)(int), int x) { return op(x); }", has: []string{"function_pointer"}},
		{name: "variadic", src: "#include <stdarg.h>\nint sum(int n, ...) { va_list ap; va_start(ap, n); int s = va_arg(ap, int); va_end(ap); return s; }", has: []string{"variadic"}},
		{name: "static table", src: "static const int tab[4] = {1, 2, 3, 4};\nint f(int i) { return tab[i & 3]; }", has: []string{"static_data", "array", "bitops"}},
		{name: "header counted, driver not", src: "#include \"shape.h\"\nint area(struct rect r) { return r.w * r.h; }",
			extra: map[string]string{"shape.h": "struct rect { int w, h; };", "driver.c": "#include <stdio.h>\nint main(void) { for (int i = 0; i < 3; i++) printf(\"%d\\n\", i); switch (1) { case 1: break; } return 0; }"},
			has:   []string{"struct"}, hasNot: []string{"loop", "string", "switch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			files := map[string]string{"function.c": tt.src}
			for k, v := range tt.extra {
				files[k] = v
			}
			got := lanes.Features.Features(LaneName, files)
			if !slices.IsSorted(got) {
				t.Errorf("not sorted: %v", got)
			}
			if tt.exactly != nil && !slices.Equal(got, tt.exactly) && !(len(got) == 0 && len(tt.exactly) == 0) {
				t.Fatalf("features %v, want exactly %v", got, tt.exactly)
			}
			for _, h := range tt.has {
				if !slices.Contains(got, h) {
					t.Errorf("features %v lack %q", got, h)
				}
			}
			for _, h := range tt.hasNot {
				if slices.Contains(got, h) {
					t.Errorf("features %v have %q", got, h)
				}
			}
		})
	}
}

func TestFeaturesUnknownLane(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	if got := lanes.Features.Features("sass2rdna", map[string]string{"function.c": "int f(void) { for (;;) {} }"}); got != nil {
		t.Fatalf("got %v, want nil", got)
	}
	if got := lanes.Features.Features(LaneName, map[string]string{"driver.c": "int main(void) { for (;;) {} }"}); got != nil {
		t.Fatalf("driver only: got %v, want nil", got)
	}
}

// The corpus categories were assigned by hand; every category that has a
// feature of the same name must be detected in the item's source, or a
// feature the category is broader than: the corpus's float_const also
// covers float arithmetic without literals (det3, complex multiply), and
// its bitops covers bit-fields.
func TestFeaturesAgreeWithCorpus(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	broader := map[string][]string{
		"float_const": {"float_type"},
		"bitops":      {"bitfield"},
	}
	// Known disagreements, by design of the feature.
	skip := map[string]string{
		// Bit manipulation through memcpy and integer +-1: no bitwise
		// operator in the source.
		"bit_017_double_bits/bitops": "",
		// Byte buffers (const unsigned char *) without text handling; the
		// feature counts them as strings only when signedness is plain
		// (other byte-buffer items, hamming and prefix, are not labelled
		// string either).
		"bit_011_crc32/string":   "",
		"bit_018_adler32/string": "",
	}
	names := lanes.Features.FeatureNames(LaneName)
	checked := 0
	for _, it := range items {
		got := lanes.Features.Features(LaneName, it.Files)
		for _, c := range it.Categories {
			if _, isFeature := names[c]; !isFeature {
				continue
			}
			if _, ok := skip[it.ID+"/"+c]; ok {
				continue
			}
			checked++
			ok := slices.Contains(got, c)
			for _, b := range broader[c] {
				ok = ok || slices.Contains(got, b)
			}
			if !ok {
				t.Errorf("%s: category %s not detected; features %v", it.ID, c, got)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("only %d category checks: corpus changed?", checked)
	}
}

func TestLabelsComputed(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	// c2x86: the fine label of the diagnostic, features of function.c.
	r := synthResult(0, 1, srcSwitch, false, refinement.ClassAssembleError, diagMnemonic, "switch_many")
	got := lanes.Labeler().Labels(r, "")
	want := runs.VerdictLabels{Class: refinement.ClassAssembleError, DiagnosticKind: "asm.mnemonic",
		Evidence: "answer.s:3: Error: no such instruction: `mulsss -16(%rbp),%xmm0'",
		Features: lanes.Features.Features(LaneName, r.Task.Files), Categories: []string{"switch_many"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("c2x86 labels:\n got %+v\nwant %+v", got, want)
	}
	if !slices.Contains(got.Features, "switch_many") {
		t.Errorf("features %v lack switch_many", got.Features)
	}

	// A pass, no categories, no features: empty lists, not nil.
	p := synthResult(0, 2, "int f(void) { return 1; }", true, "", "")
	got = lanes.Labeler().Labels(p, "")
	if got.DiagnosticKind != refinement.LabelPass || got.Features == nil || got.Categories == nil || len(got.Features)+len(got.Categories) != 0 {
		t.Errorf("pass labels %+v", got)
	}
}

// A synthesiser reply as a model might write it: analysis first, then
// blocks, some of them broken.
const c2x86Reply = "The failing functions all use switch statements with five or more cases; the model emits a jump table.\n\n" +
	"### TASK 1\ncategory: switch_many\nfunction: weekday_code\ndescription: maps 0-6 to letter codes with a 7-case switch\n" +
	"```c function.c\nint weekday_code(int d)\n{\n    switch (d) {\n    case 0: return 'S';\n    case 1: return 'M';\n    case 2: return 'T';\n    case 3: return 'W';\n    case 4: return 'R';\n    case 5: return 'F';\n    case 6: return 'A';\n    default: return '?';\n    }\n}\n```\n" +
	"```c driver.c\n#include <stdio.h>\nint weekday_code(int d);\nint main(void)\n{\n    for (int d = -1; d <= 7; d++)\n        printf(\"%d -> %c\\n\", d, weekday_code(d));\n    return 0;\n}\n```\n\n" +
	"### TASK 2\ncategory: switch_many\nfunction: dup_def\ndescription: driver defines the function\n" +
	"```c function.c\nint dup_def(int x) { switch (x) { case 1: return 1; default: return 0; } }\n```\n" +
	"```c driver.c\n#include <stdio.h>\nint dup_def(int x) { return x; }\nint main(void) { printf(\"%d\\n\", dup_def(1)); return 0; }\n```\n\n" +
	"### TASK 3\ncategory: switch_many\nfunction: lonely\n```c function.c\nint lonely(int x) { return x; }\n```\n\n" +
	"### TASK 4\ncategory: switch_many\nfunction: noisy\n" +
	"```c function.c\n#include <stdio.h>\nint noisy(int x) { printf(\"%d\", x); return x; }\n```\n" +
	"```c driver.c\nint noisy(int x);\nint main(void) { return noisy(0); }\n```\n\n" +
	"### TASK 5\n**Category:** switch_many\n**Function:** `sat_class(int v)`\n**Description:** classifies saturation levels\n" +
	"```c\nint sat_class(int v)\n{\n    switch (v / 10) {\n    case 0: return 0;\n    case 1: case 2: return 1;\n    case 3: case 4: case 5: return 2;\n    case 6: return 3;\n    default: return 4;\n    }\n}\n```\n" +
	"```c\n#include <stdio.h>\nint sat_class(int v);\nint main(void)\n{\n    int v[] = {0, 9, 10, 25, 31, 55, 60, 69, 70, 100};\n    for (int i = 0; i < 10; i++)\n        printf(\"%d: %d\\n\", v[i], sat_class(v[i]));\n    return 0;\n}\n```\n\n" +
	"### TASK 6\ncategory: switch_many\ndescription: no function line, one function to infer\n" +
	"```c function.c\nstatic int helper(int x) { return x * 2; }\nlong grade(long s)\n{\n    switch (s) { case 1: return helper(1); case 2: return 7; case 3: return 9; case 4: return 11; case 5: return 13; }\n    return -1;\n}\n```\n" +
	"```c driver.c\n#include <stdio.h>\nlong grade(long s);\nint main(void) { for (long s = 0; s < 7; s++) printf(\"%ld\\n\", grade(s)); return 0; }\n```\n\n" +
	"### TASK 7\ncategory: switch_many\nfunction: has_main\n" +
	"```c function.c\nint has_main(int x) { return x; }\nint main(void) { return 0; }\n```\n" +
	"```c driver.c\nint has_main(int x);\nint main(void) { return has_main(0); }\n```\n\n" +
	"### TASK 8\ncategory: switch_many\nfunction: local_inc\n" +
	"```c function.c\n#include \"tables.h\"\nint local_inc(int x) { return x; }\n```\n" +
	"```c driver.c\n#include <stdio.h>\nint local_inc(int x);\nint main(void) { printf(\"%d\\n\", local_inc(2)); return 0; }\n```\n\n" +
	"### TASK 9\ncategory: Switch Many\nfunction: bad_cat\n" +
	"```c function.c\nint bad_cat(int x) { return x; }\n```\n```c driver.c\nint bad_cat(int x);\nint main(void) { return bad_cat(0); }\n```\n\n" +
	"### TASK 10\ncategory: switch_many\nfunction: never_called\n" +
	"```c function.c\nint never_called(int x) { return x; }\n```\n```c driver.c\n#include <stdio.h>\nint main(void) { printf(\"hi\\n\"); return 0; }\n```\n\n" +
	"### TASK 11\ncategory: switch_many\nfunction: cut_off\n```c function.c\nint cut_off(int x) {\n    switch (x) {\n"

func TestParseSynthesizedC2X86(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	cands, errs := lanes.ParseSynthesized(LaneName, c2x86Reply)
	var got []string
	for _, c := range cands {
		got = append(got, fmt.Sprintf("%d:%s", c.Index, c.Function))
		if c.Lane != LaneName || c.Category != "switch_many" || len(c.Hash) != 64 || len(c.Files) != 2 {
			t.Errorf("candidate %+v", c)
		}
		if !strings.HasSuffix(c.Files["function.c"], "}\n") || strings.Contains(c.Files["function.c"], "```") {
			t.Errorf("candidate %d function.c %q", c.Index, c.Files["function.c"])
		}
	}
	if want := []string{"1:weekday_code", "5:sat_class", "6:grade"}; !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v; errors %v", got, want, errs)
	}
	if cands[1].Description != "classifies saturation levels" {
		t.Errorf("description %q", cands[1].Description)
	}
	wantErrs := map[int]string{
		2:  "driver.c defines dup_def itself",
		3:  "no driver.c code block",
		4:  "function.c calls printf",
		7:  "function.c defines main",
		8:  "local header",
		9:  `category "switch many" is not a label`,
		10: "driver.c never calls never_called",
		11: "not closed",
	}
	if len(errs) != len(wantErrs) {
		t.Fatalf("errors %v, want %d", errs, len(wantErrs))
	}
	for _, err := range errs {
		var be *refinement.BlockError
		if !errors.As(err, &be) || !errors.Is(err, refinement.ErrRejected) {
			t.Fatalf("error %v is not a *refinement.BlockError matching refinement.ErrRejected", err)
		}
		if !strings.Contains(be.Reason, wantErrs[be.Index]) {
			t.Errorf("block %d: reason %q, want %q", be.Index, be.Reason, wantErrs[be.Index])
		}
	}
	// A candidate becomes a task.
	task := cands[0].Task(2, "r2/synth-1", "switch_many", "switch")
	if task.Round != 2 || task.Key != "r2/synth-1" || task.Lane != LaneName || !slices.Equal(task.Categories, []string{"switch", "switch_many"}) ||
		task.Meta["function"] != "weekday_code" || task.Meta["origin"] != "resynthesis" || task.Meta["source_hash"] != cands[0].Hash ||
		task.Files["driver.c"] != cands[0].Files["driver.c"] {
		t.Errorf("task %+v", task)
	}
}

func TestParseSynthesizedEdgeCases(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	tests := []struct {
		name, lane, reply string
		cands             int
		errs              []string
	}{
		{"no blocks", LaneName, "Sorry, I cannot help with that.", 0, []string{"no \"### TASK n\" blocks"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cands, errs := lanes.ParseSynthesized(tt.lane, tt.reply)
			if len(cands) != tt.cands || len(errs) != len(tt.errs) {
				t.Fatalf("%d candidates, errors %v; want %d and %v", len(cands), errs, tt.cands, tt.errs)
			}
			for i, w := range tt.errs {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %q lacks %q", errs[i], w)
				}
			}
		})
	}
}

func TestBuildSynthPrompt(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	answer := "\t.text\n\t.globl f\nf:\n\tjmp *.L4(,%rax,8)\n# a stray ``` fence inside the answer\n"
	ex := refinement.Example{TaskKey: "r0/sw#0", Files: map[string]string{"function.c": srcSwitch, "driver.c": "int main(void) { return 0; }"},
		Answer: answer, Class: refinement.ClassWrongOutput, Label: "wrong.value", LabelDoc: "numbers differ", Diagnostic: diagNumeric}
	p, err := lanes.BuildSynthPrompt(refinement.SynthRequest{Lane: LaneName, Category: "switch_many", Examples: []refinement.Example{ex},
		Avoid: []string{"popcount64", "f"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`category "switch_many": switch statements with 5 or more`,
		"Here is a failing example",
		"## Example 1 (failure: wrong.value, numbers differ)",
		"```c\n" + srcSwitch + "\n```",
		"````asm\n" + strings.TrimRight(answer, "\n") + "\n````",
		"```text\n" + diagNumeric + "\n```",
		"write 10 NEW test items",
		"### TASK 1\ncategory: switch_many\nfunction: <",
		"```c function.c",
		"```c driver.c",
		"up to ### TASK 10.",
		"Do not use these function names, they exist already: popcount64, f.",
	} {
		if !strings.Contains(p.User, w) {
			t.Errorf("user prompt lacks %q", w)
		}
	}
	if !strings.Contains(p.System, "C to x86-64 assembly") {
		t.Errorf("system prompt %q", p.System)
	}
	if strings.Contains(p.User, "<no value>") {
		t.Error("user prompt has <no value>")
	}

	// K, a feature category's description, two examples, no avoid list.
	p, err = lanes.BuildSynthPrompt(refinement.SynthRequest{Lane: LaneName, Category: "goto", K: 3, Examples: []refinement.Example{ex, ex}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`category "goto": goto statements`, "Here are 2 failing examples", "## Example 2", "write 3 NEW", "up to ### TASK 3."} {
		if !strings.Contains(p.User, w) {
			t.Errorf("user prompt lacks %q", w)
		}
	}
	if strings.Contains(p.User, "Do not use these function names") {
		t.Error("avoid line without names")
	}

	if _, err := lanes.BuildSynthPrompt(refinement.SynthRequest{Lane: "nope", Category: "x"}); !errors.Is(err, refinement.ErrNoSynthLane) {
		t.Errorf("unknown lane: %v", err)
	}
	if _, err := lanes.BuildSynthPrompt(refinement.SynthRequest{Lane: LaneName}); err == nil {
		t.Error("no category: no error")
	}
}

// The prompt's format example parses as a reply (with the placeholders
// filled in), so the two stay in step.
func TestPromptFormatParses(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	p, err := lanes.BuildSynthPrompt(refinement.SynthRequest{Lane: LaneName, Category: "loop", K: 1})
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(p.User, "### TASK 1")
	j := strings.Index(p.User, "### TASK 2")
	block := p.User[i:j]
	block = strings.Replace(block, "<the C name of the function under test>", "sum_to", 1)
	block = strings.Replace(block, "<the complete function.c>", "int sum_to(int n) { int s = 0; for (int i = 1; i <= n; i++) s += i; return s; }", 1)
	block = strings.Replace(block, "<the complete driver.c>", "#include <stdio.h>\nint sum_to(int n);\nint main(void) { printf(\"%d\\n\", sum_to(4)); return 0; }", 1)
	cands, errs := lanes.ParseSynthesized(LaneName, block)
	if len(cands) != 1 || len(errs) != 0 || cands[0].Function != "sum_to" || cands[0].Category != "loop" {
		t.Fatalf("candidates %+v, errors %v\nblock:\n%s", cands, errs, block)
	}
}

func TestScreen(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	cands, _ := lanes.ParseSynthesized(LaneName, c2x86Reply)
	// A layout variant of candidate 1 (same function, new comments and
	// spacing, another driver) and an existing task equal to candidate 5.
	variant := cands[0]
	variant.Index = 12
	variant.Files = map[string]string{"function.c": "/* weekdays */\nint weekday_code(int d) {\n  switch (d) { case 0: return 'S'; case 1: return 'M'; case 2: return 'T';\n case 3: return 'W'; case 4: return 'R'; case 5: return 'F'; case 6: return 'A'; default: return '?'; }\n}\n",
		"driver.c": "int weekday_code(int);\nint main(void) { return weekday_code(1) != 'M'; }\n"}
	variant.Hash = ""
	existing := []runs.Task{{Key: "r0/sat", Lane: LaneName, Files: map[string]string{"function.c": "// old\n" + cands[1].Files["function.c"]}}}
	all := append(slices.Clone(cands), variant)

	var mu sync.Mutex
	var validated []int
	v := refinement.ValidatorFunc(func(ctx context.Context, c refinement.Candidate) error {
		mu.Lock()
		validated = append(validated, c.Index)
		mu.Unlock()
		if c.Function == "grade" {
			return errors.New("driver.c:3: error: conflicting types for 'grade'")
		}
		return nil
	})
	acc, rej, err := refinement.Screen(context.Background(), all, refinement.ScreenOptions{Existing: existing, Validator: v, Parallel: 2, Lanes: lanes})
	if err != nil {
		t.Fatal(err)
	}
	if len(acc) != 1 || acc[0].Function != "weekday_code" {
		t.Fatalf("accepted %+v", acc)
	}
	why := map[int]error{}
	for _, r := range rej {
		why[r.Candidate.Index] = r.Err
	}
	if !errors.Is(why[5], refinement.ErrDuplicate) || !strings.Contains(why[5].Error(), "existing task r0/sat") {
		t.Errorf("candidate 5: %v", why[5])
	}
	if !errors.Is(why[12], refinement.ErrDuplicate) || !strings.Contains(why[12].Error(), "candidate 1") {
		t.Errorf("variant: %v", why[12])
	}
	if !errors.Is(why[6], refinement.ErrInvalid) || !strings.Contains(why[6].Error(), "conflicting types") {
		t.Errorf("candidate 6: %v", why[6])
	}
	slices.Sort(validated)
	if !slices.Equal(validated, []int{1, 6}) {
		t.Errorf("validated %v: duplicates must not be validated", validated)
	}
}

// gccValidator is a small real validator: both files compile, link and
// run with gcc. (The engine's validator does this in a sandbox and also
// checks determinism.)
type gccValidator struct{ dir string }

func (g gccValidator) Validate(ctx context.Context, c refinement.Candidate) error {
	dir, err := os.MkdirTemp(g.dir, "cand")
	if err != nil {
		return err
	}
	for name, src := range c.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			return err
		}
	}
	out, err := exec.CommandContext(ctx, "gcc", "-O0", "-Wall", "-Werror=implicit-function-declaration", "-o", filepath.Join(dir, "prog"),
		filepath.Join(dir, "function.c"), filepath.Join(dir, "driver.c"), "-lm").CombinedOutput()
	if err != nil {
		return fmt.Errorf("build: %v: %s", err, out)
	}
	if out, err := exec.CommandContext(ctx, filepath.Join(dir, "prog")).CombinedOutput(); err != nil {
		return fmt.Errorf("run: %v: %s", err, out)
	}
	return nil
}

func TestScreenWithGCC(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	cands, _ := lanes.ParseSynthesized(LaneName, c2x86Reply)
	broken := cands[0]
	broken.Index = 20
	broken.Function = "broken"
	broken.Files = map[string]string{"function.c": "int broken(int x) { return x +; }\n", "driver.c": "int broken(int);\nint main(void) { return broken(0); }\n"}
	broken.Hash = ""
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	acc, rej, err := refinement.Screen(ctx, append(cands, broken), refinement.ScreenOptions{Validator: gccValidator{t.TempDir()}, Parallel: 2, Lanes: lanes})
	if err != nil {
		t.Fatal(err)
	}
	if len(acc) != 3 || len(rej) != 1 || rej[0].Candidate.Index != 20 || !errors.Is(rej[0].Err, refinement.ErrInvalid) ||
		!strings.Contains(rej[0].Err.Error(), "expected expression") {
		t.Fatalf("accepted %d, rejected %+v", len(acc), rej)
	}
}

// The example data of the refinement tests: a task's function, two
// diagnostics and a result (round n, task n) with them.
const srcSwitch = "int f(int x) { switch (x) { case 1: return 10; case 2: return 20; case 3: return 30; case 4: return 40; case 5: return 50; default: return 0; } }"

const (
	diagNumeric  = "the output differs from the reference:\nline 1: expected \"2.500000\"\n        got      \"2.500001\"\n(expected 1 lines, got 1)"
	diagMnemonic = "answer.s:3: Error: no such instruction: `mulsss -16(%rbp),%xmm0'"
)

var synthStart = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func synthResult(round, n int, src string, pass bool, class, diag string, cats ...string) runs.Result {
	return runs.Result{
		Task: runs.Task{ID: fmt.Sprintf("t%d-%d", round, n), Key: fmt.Sprintf("r%d/item%02d", round, n), Round: round, Lane: LaneName,
			Files: map[string]string{"function.c": src, "driver.c": "int main(void) { return 0; }"}, Meta: map[string]string{"function": "f"},
			Categories: cats},
		Attempt: runs.Attempt{
			Answer:     "\t.globl f\nf:\n\tret\n",
			Usage:      runs.Usage{PromptTokens: 100, CompletionTokens: 50, ReasoningTokens: 20, LatencyMS: 1000},
			StartedAt:  synthStart,
			FinishedAt: synthStart.Add(2 * time.Second),
		},
		Verdict: runs.Verdict{Pass: pass, Class: class, Diagnostic: diag},
	}
}
