package refinement

import (
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/runs"
)

// Diagnostics below are real GNU as 2.40 / ld / gcc 12 messages (captured
// on the build host) in the shape the c2x86 lane writes them, and nvcc
// 11.8 front-end, ptxas and CUDA runtime messages.
func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, lane, class, stage, diag string
		want                           string
		evidence                       string // substring of the evidence
	}{
		// c2x86: assembler.
		{"suffix register", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:11: Error: incorrect register `%rbp' used with `l' suffix\n    | \tmovl\t%rsp, %rbp", "asm.suffix", "answer.s:11"},
		{"suffix push", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:8: Error: invalid instruction suffix for `push'\n    | \tpushl\t%rbp", "asm.suffix", "push"},
		{"suffix movb", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:1: Error: `%ebx' not allowed with `movb'", "asm.suffix", ""},
		{"operand size intel", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:3: Error: operand size mismatch for `movzb'", "asm.suffix", ""},
		{"mnemonic", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:3: Error: no such instruction: `foo %eax'\n    | \tfoo %eax", "asm.mnemonic", "foo"},
		{"junk after register", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:4: Error: junk `junk' after register", "asm.syntax", ""},
		{"junk end of line", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:7: Error: junk at end of line, first unrecognized character is `.'", "asm.syntax", ""},
		{"bad expression", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:2: Error: bad expression\nanswer.s:2: Error: junk `rbp-4' after expression", "asm.syntax", "bad expression"},
		{"intel in att first line wins", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:2: Error: junk `PTR [rbp-4]' after expression\n    | \tmov eax, DWORD PTR [rbp-4]\nanswer.s:2: Error: operand size mismatch for `mov'", "asm.syntax", "PTR"},
		{"unbalanced", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:13: Error: unbalanced parenthesis in operand 1.", "asm.syntax", ""},
		{"register name", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:5: Error: bad register name `%eaz'", "asm.register", ""},
		{"operand type", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:15: Error: operand type mismatch for `movss'", "asm.operand", ""},
		{"operand count", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:5: Error: number of operands mismatch for `lea'", "asm.operand", ""},
		{"scale", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:6: Error: expecting scale factor of 1, 2, 4, or 8: got `3'", "asm.operand", ""},
		{"duplicate label", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:6: Warning: no instruction mnemonic suffix given and no register operands; using default for `mov'\nanswer.s:8: Error: symbol `x' is already defined", "asm.symbol", "already defined"},
		{"warning does not decide", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:14: Warning: missing operand; zero assumed\nanswer.s:20: Error: no such instruction: `ud3'", "asm.mnemonic", "ud3"},
		{"unknown directive", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:3: Error: unknown pseudo-op: `.sectoin'", "asm.directive", ""},
		{"converter float", LaneC2X86, ClassAssembleError, "convert",
			"answer.s:7: Error: .float 6.0 +: missing value", "asm.float_const", ".float"},
		{"converter other", LaneC2X86, ClassAssembleError, "convert",
			"answer.s:9: Error: something new", "asm.float_const", ""},
		{"incbin", LaneC2X86, ClassAssembleError, "convert",
			"answer.s:9: Error: .incbin is not allowed (it reads files of the build machine)", "asm.forbidden", ""},
		{"asm other", LaneC2X86, ClassAssembleError, "assemble",
			"answer.s:2: Error: something nobody has seen", "asm.other", "nobody"},
		{"assembler timeout", LaneC2X86, ClassTimeout, "assemble",
			"timed out after 30s (wall clock)\n", "timeout.build", ""},

		// Linker.
		{"undefined reference", LaneC2X86, ClassLinkError, "link",
			"ld: answer.o: in function `cost_split':\n(.text+0x1): undefined reference to `helper'", "link.undefined_symbol", "helper"},
		{"undefined local label", LaneC2X86, ClassLinkError, "link",
			"ld: answer.o: in function `f':\n(.text+0x1): undefined reference to `.Lnowhere'", "link.undefined_symbol", ".Lnowhere"},
		{"multiple definition", LaneC2X86, ClassLinkError, "link",
			"ld: answer.o: in function `main':\n(.text+0x0): multiple definition of `main'; driver.o:(.text+0x0): first defined here", "link.multiple_definition", ""},
		{"relocation", LaneC2X86, ClassLinkError, "link",
			"ld: answer.o: relocation R_X86_64_32S against `.rodata' can not be used when making a PIE object; recompile with -fPIE", "link.relocation", ""},
		{"link other", LaneC2X86, ClassLinkError, "link", "exit status 1", "link.other", ""},

		// Running.
		{"segv", LaneC2X86, ClassCrash, "run",
			"the program killed by signal SIGSEGV (segmentation fault). Before that it printed 0 of the 9 expected output lines correctly.", "crash.segv", "SIGSEGV"},
		{"fpe", LaneC2X86, ClassCrash, "run",
			"the program killed by signal SIGFPE (floating point exception). Before that it printed 3 of the 9 expected output lines correctly.", "crash.fpe", ""},
		{"abort stack smash", LaneC2X86, ClassCrash, "run",
			"the program killed by signal SIGABRT (aborted). Before that it printed 1 of the 4 expected output lines correctly.\nstderr: *** stack smashing detected ***: terminated", "crash.abort", ""},
		{"bus", LaneC2X86, ClassCrash, "run", "the program killed by signal SIGBUS (bus error).", "crash.bus", ""},
		{"ill", LaneC2X86, ClassCrash, "run", "the program killed by signal SIGILL (illegal instruction).", "crash.illegal", ""},
		{"other signal", LaneC2X86, ClassCrash, "run", "the program killed by signal SIGUSR1 (user defined signal 1).", "crash.other", ""},
		{"run timeout", LaneC2X86, ClassTimeout, "run",
			"the program timed out after 1s (wall clock). Before that it printed 2 of the 9 expected output lines correctly.", "timeout", ""},
		{"output cap", LaneC2X86, ClassResourceLimit, "run",
			"the program output size limit exceeded. Before that it printed 0 of the 9 expected output lines correctly.", "resource.output", ""},
		{"cpu cap", LaneC2X86, ClassResourceLimit, "run", "the program CPU time limit exceeded (10s CPU).", "resource.cpu", ""},
		{"file cap", LaneC2X86, ClassResourceLimit, "run", "the program file size limit exceeded (SIGXFSZ).", "resource.file_size", ""},

		// Output comparison (tools.DiffLines format).
		{"numeric cost_split", LaneC2X86, ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 2: expected \"0x1.ap+7\"\n        got      \"0x1.9ffffep+7\"\nline 3: expected \"208\"\n        got      \"207\"\n(expected 3 lines, got 3)",
			"wrong.numeric", "line 2"},
		{"numeric decimals", LaneC2X86, ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 1: expected \"area=3.141593 r=1\"\n        got      \"area=3.141592 r=1\"\n(expected 4 lines, got 4)",
			"wrong.numeric", "3.141593"},
		{"negative zero", LaneC2X86, ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 5: expected \"-0.000000\"\n        got      \"0.000000\"\n(expected 6 lines, got 6)", "wrong.numeric", ""},
		{"integer off by one is a value error", LaneC2X86, ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 3: expected \"0xff -> 8\"\n        got      \"0xff -> 7\"\n(expected 9 lines, got 9)", "wrong.value", "expected 8, got 7"},
		{"far float", LaneC2X86, ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 1: expected \"208\"\n        got      \"2.5e+08\"\n(expected 3 lines, got 3)", "wrong.value", ""},
		{"text differs", LaneC2X86, ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 1: expected \"hello world\"\n        got      \"hello, world\"\n(expected 1 lines, got 1)", "wrong.output", ""},
		{"missing lines", LaneC2X86, ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 4: expected \"x\"\n        got      (no line)\n(expected 4 lines, got 3)", "wrong.line_count", "(expected 4 lines, got 3)"},
		{"exit status only", LaneC2X86, ClassWrongOutput, "compare",
			"the output differs from the reference\nexit status 7, expected 0", "wrong.exit_status", "exit status 7"},

		// Other classes.
		{"no answer", LaneC2X86, ClassNoAnswer, "extract", "no assembly found", "no_answer", ""},
		{"model rate limit", LaneC2X86, ClassModelError, "", "model m at http://x: retryable (HTTP 429): slow down", "model.rate_limit", ""},
		{"model context", LaneC2X86, ClassModelError, "", "model m at http://x: bad_request (HTTP 400): maximum context length is 32768 tokens", "model.context_length", ""},
		{"model other", LaneC2X86, ClassModelError, "", "gave up", "model_error", ""},
		{"internal", LaneC2X86, ClassInternal, "", "disk full", "internal_error", ""},
		{"no class", LaneC2X86, "", "", "", LabelUnknown, ""},
		{"lane's own class", LaneC2X86, "weird_class", "", "x", "weird_class", ""},

		// cuda-synth: nvcc, ptxas, runtime.
		{"nvcc undefined", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu(12): error: identifier \"sharedMem\" is undefined\n\n1 error detected in the compilation of \"main.cu\".", "compile.undefined_identifier", "sharedMem"},
		{"nvcc type init", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu(30): error: a value of type \"float *\" cannot be used to initialize an entity of type \"int *\"", "compile.type", ""},
		{"nvcc incompatible arg", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu(20): error: argument of type \"int *\" is incompatible with parameter of type \"float *\"", "compile.type", ""},
		{"nvcc atomic overload", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu(41): error: no instance of overloaded function \"atomicAdd\" matches the argument list\n            argument types are: (double *, float)", "compile.overload", "atomicAdd"},
		{"nvcc host from device", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu(18): error: calling a __host__ function(\"rand\") from a __global__ function(\"fill\") is not allowed", "compile.host_device", ""},
		{"nvcc shared init", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu(7): error: initializer not allowed for __shared__ variable", "compile.memory_space", ""},
		{"nvcc args", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu(55): error: too few arguments in function call", "compile.arguments", ""},
		{"nvcc syntax", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu(9): error: expected a \";\"", "compile.syntax", ""},
		{"nvcc include", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu(3): catastrophic error: cannot open source file \"helper_cuda.h\"", "compile.include", ""},
		{"ptxas shared", LaneCUDASynth, ClassCompileError, "compile",
			"ptxas error   : Entry function '_Z6kernelPf' uses too much shared data (0x18000 bytes, 0xc000 max)", "compile.ptxas", ""},
		{"gcc host", LaneCUDASynth, ClassCompileError, "compile",
			"main.cu: In function 'int main()':\nmain.cu:40:5: error: 'cudaMallocHostt' was not declared in this scope", "compile.undefined_identifier", ""},
		{"cuda no kernel", LaneCUDASynth, ClassCompileError, "ptx",
			"the program defines no kernel: the PTX has no .entry (write at least one __global__ function and launch it)", "compile.no_kernel", ""},
		{"cuda no main", LaneCUDASynth, ClassCompileError, "host-asm", "the host assembly defines no main", "compile.no_main", ""},
		{"cuda sass", LaneCUDASynth, ClassCompileError, "sass", "SASS for sm_90 lacks _Z6kernelPf", "compile.sass", ""},
		{"hipify", LaneCUDASynth, ClassTranslateUnsupported, "hipify",
			"CUDA constructs without a HIP translation:\nline 12:5: cudaGraphInstantiate: no HIP equivalent in hipify's table", "hipify.unsupported", "CUDA constructs"},
		{"hipcc undeclared", LaneCUDASynth, ClassHIPCompileError, "hip-compile-amd",
			"program.hip:14:9: error: use of undeclared identifier '__shfl_down_sync'", "hip.undefined_identifier", ""},
		{"rdna3 check", LaneCUDASynth, ClassHIPCompileError, "rdna3", "the device assembly has no kernel (.amdhsa_kernel)", "hip.rdna3", ""},
		{"cuda vs hip numeric", LaneCUDASynth, ClassWrongOutput, "run",
			"the CUDA and HIP builds print different results:\nline 2 (0.333333 vs 0.333334 beyond tolerance): CUDA \"mean 0.333333\"\n    HIP  \"mean 0.333334\"\n(CUDA printed 2 lines, HIP 2)",
			"wrong.numeric", "line 2"},
		{"cuda vs hip value", LaneCUDASynth, ClassWrongOutput, "run",
			"the CUDA and HIP builds print different results:\nline 1 (523776 vs 523775 beyond tolerance): CUDA \"sum = 523776\"\n    HIP  \"sum = 523775\"\n(CUDA printed 1 lines, HIP 1)",
			"wrong.value", ""},
		{"cuda vs hip missing line", LaneCUDASynth, ClassWrongOutput, "run",
			"the CUDA and HIP builds print different results:\nline 3 (missing line): CUDA \"done\"\n    HIP  \"\"\n(CUDA printed 3 lines, HIP 2)",
			"wrong.line_count", "(CUDA printed 3 lines, HIP 2)"},
		{"cuda vs hip text", LaneCUDASynth, ClassWrongOutput, "run",
			"the CUDA and HIP builds print different results:\nline 1 (text differs): CUDA \"ok\"\n    HIP  \"fail\"\n(CUDA printed 1 lines, HIP 1)",
			"wrong.output", ""},
		{"runtime error beats exit status", LaneCUDASynth, ClassCrash, "run",
			"the CUDA program exit status 1\nstderr: CUDA error at program.cu:88: an illegal memory access was encountered", "cuda.illegal_address", "illegal memory access"},
		{"sanitizer", LaneCUDASynth, ClassCrash, "run",
			"the CUDA program exit status 1\nstderr: ========= Invalid __global__ write of size 4 bytes", "cuda.illegal_address", ""},
		{"launch resources", LaneCUDASynth, ClassCrash, "run",
			"the HIP program (on NVIDIA) exit status 1\nstderr: kernel launch failed: too many resources requested for launch", "launch.resources", ""},
		{"plain non-zero exit", LaneCUDASynth, ClassCrash, "run", "the CUDA program exit status 3\nstderr: check failed", "crash.exit_status", "exit status 3"},
		{"cuda segv", LaneCUDASynth, ClassCrash, "run", "the CUDA program killed by signal SIGSEGV (segmentation fault)", "crash.segv", ""},
		{"cuda timeout", LaneCUDASynth, ClassTimeout, "cuda-compile", "timed out after 2m0s (wall clock)", "timeout.build", ""},
		{"cuda numeric (DiffLines)", LaneCUDASynth, ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 2: expected \"mean 0.333333\"\n        got      \"mean 0.333334\"\n(expected 2 lines, got 2)", "wrong.numeric", ""},

		// Unknown lane: the generic table.
		{"unknown lane segv", "sass2rdna", ClassCrash, "run", "killed by signal SIGSEGV", "crash.segv", ""},
		{"unknown lane asm", "sass2rdna", ClassAssembleError, "assemble", "error: invalid instruction", "asm.other", ""},
	}
	tax := DefaultTaxonomy()
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
	l := Classify(LaneC2X86, runs.Verdict{Pass: true}, "\t.globl f\nf:\n\tmovl $1, %eax\n\tret\n")
	if l.Name != LabelPass || l.Key() != LabelPass || l.Suspicion != "" {
		t.Fatalf("label %+v", l)
	}
}

func TestSuspicion(t *testing.T) {
	t.Parallel()
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
		{"honest", LaneC2X86, honest, runs.Task{Meta: map[string]string{"function": "cost_split"}}, true, nil},
		{"prints the output itself", LaneC2X86, printsItself, runs.Task{Meta: map[string]string{"function": "cost_split"},
			Files: map[string]string{"function.c": "float cost_split(void) { return 208.0f; }"}}, true, []string{"calls puts", "calls exit"}},
		{"machine code as data", LaneC2X86, bytesOnly, runs.Task{Meta: map[string]string{"function": "cost_split"}}, true,
			[]string{"cost_split holds only data directives"}},
		{"machine code as data without meta", LaneC2X86, bytesOnly, runs.Task{}, false, []string{"cost_split holds only data"}},
		{"missing function", LaneC2X86, "\t.text\n\t.globl other\nother:\n\tret\n", runs.Task{Meta: map[string]string{"function": "cost_split"}}, false,
			[]string{"no code label for cost_split"}},
		{"syscall", LaneC2X86, rawSyscall, runs.Task{}, false, []string{"system call"}},
		{"defines main", LaneC2X86, "\t.globl main\nmain:\n\txorl %eax, %eax\n\tret\n", runs.Task{}, false, []string{"defines main"}},
		{"printf allowed when the source prints", LaneC2X86, printfAsm, runs.Task{Meta: map[string]string{"function": "show"},
			Files: map[string]string{"function.c": printfSrc}}, true, nil},
		{"printf flagged without the source", LaneC2X86, printfAsm, runs.Task{Meta: map[string]string{"function": "show"}}, true,
			[]string{"calls printf"}},
		{"cuda without kernel", LaneCUDASynth, "#include <cstdio>\nint main() { printf(\"sum = 523776\\n\"); }\n", runs.Task{}, true,
			[]string{"no __global__ kernel", "launches no kernel"}},
		{"cuda honest", LaneCUDASynth, "__global__ void k(int *a) { a[threadIdx.x] = 1; }\nint main() { int *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); }\n",
			runs.Task{}, true, nil},
		{"cuda launch in a comment only", LaneCUDASynth, "__global__ void k(int *a) {}\n// k<<<1,1>>>(d);\nint main() { return 0; }\n", runs.Task{}, true,
			[]string{"launches no kernel"}},
	}
	tax := DefaultTaxonomy()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.task.Lane = tt.lane
			v := runs.Verdict{Pass: tt.pass}
			if !tt.pass {
				v.Class = ClassLinkError
			}
			l := tax.ClassifyResult(runs.Result{Task: tt.task, Attempt: runs.Attempt{Answer: tt.answer}, Verdict: v})
			if tt.want == nil {
				if l.Suspicion != "" {
					t.Fatalf("suspicion %q, want none", l.Suspicion)
				}
				return
			}
			if l.Key() != LabelSuspectedCheating {
				t.Fatalf("key %q, want %s (label %+v)", l.Key(), LabelSuspectedCheating, l)
			}
			for _, w := range tt.want {
				if !strings.Contains(l.Suspicion, w) {
					t.Errorf("suspicion %q lacks %q", l.Suspicion, w)
				}
			}
			if tt.pass && l.Name != LabelPass {
				t.Errorf("name %q, want pass (the underlying label stays)", l.Name)
			}
		})
	}
}

func TestNewTaxonomyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tables []LaneTable
		want   string
	}{
		{"no label", []LaneTable{{Lane: "x", Rules: []Rule{{Pattern: "a"}}}}, "no label"},
		{"bad regexp", []LaneTable{{Lane: "x", Rules: []Rule{{Label: "l", Pattern: "("}}}}, "missing closing )"},
		{"duplicate lane", []LaneTable{{Lane: "x"}, {Lane: "x"}}, "given twice"},
		{"pattern and match", []LaneTable{{Lane: "x", Rules: []Rule{{Label: "l", Pattern: "a", Match: matchNumeric}}}}, "both a pattern and a match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewTaxonomy(tt.tables...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCustomTaxonomy(t *testing.T) {
	t.Parallel()
	tax, err := NewTaxonomy(LaneTable{Lane: "toy", Rules: []Rule{
		{Label: "toy.first", Pattern: `alpha`},
		{Label: "toy.second", Pattern: `beta`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Line order decides between rules of one group.
	l := tax.Classify("toy", runs.Verdict{Class: "x", Diagnostic: "beta here\nalpha there"}, "")
	if l.Name != "toy.second" {
		t.Fatalf("got %q, want toy.second (first matching line)", l.Name)
	}
	// The generic table still applies after the lane's.
	l = tax.Classify("toy", runs.Verdict{Class: ClassCrash, Diagnostic: "killed by signal SIGFPE"}, "")
	if l.Name != "crash.fpe" {
		t.Fatalf("got %q, want crash.fpe", l.Name)
	}
	if got := tax.Lanes(); len(got) != 1 || got[0] != "toy" {
		t.Fatalf("lanes %v", got)
	}
}

func TestLabelsDocumented(t *testing.T) {
	t.Parallel()
	tax := DefaultTaxonomy()
	for _, lane := range []string{LaneC2X86, LaneCUDASynth, "other"} {
		for name, doc := range tax.Labels(lane) {
			if doc == "" {
				t.Errorf("%s: label %q has no doc", lane, name)
			}
		}
	}
	if _, ok := tax.Labels(LaneC2X86)["asm.suffix"]; !ok {
		t.Error("c2x86 labels lack asm.suffix")
	}
	if _, ok := tax.Labels("other")["asm.suffix"]; ok {
		t.Error("generic labels include the c2x86 asm.suffix")
	}
}
