package buildjob

import (
	"regexp"
	"testing"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
)

func testRegistry() *toolchain.Registry {
	return toolchain.FromReport(toolchain.Report{Tools: []toolchain.Tool{
		{Name: toolchain.NVCC, Path: "/usr/local/cuda/bin/nvcc", Version: "Cuda compilation tools, release 11.8, V11.8.89", Env: []string{"X=1", "Y=2"}},
		{Name: toolchain.LLVMMC, Path: "/usr/bin/llvm-mc-15", Version: "LLVM version 15.0.7", Env: []string{"Z=3"}}}})
}

// TestKeyPinned pins keys computed by the lanes' own key functions before
// they shared this package: a change here invalidates every compile cache.
func TestKeyPinned(t *testing.T) {
	t.Parallel()
	reg := testRegistry()
	nvcc := Command("cuda", toolchain.NVCC, []string{"--keep", "--rocm-device-lib-path=/data/x/lib", "-o", "program"},
		map[string][]byte{"b.cu": []byte("B"), "program.cu": []byte("int main(){}")}, "program", "program.ptx")
	link := Job{Name: "link", Steps: []Step{
		{Tool: toolchain.LLVMMC, Args: []string{"--rocm-device-lib-path=/data/x/lib", "-o", "answer.o", "answer.s"}},
		{Tool: toolchain.LLVMMC, Path: "/usr/lib/llvm-15/bin/ld.lld", Args: []string{"-shared", "-o", "answer.co", "answer.o"}}},
		Inputs: map[string][]byte{"answer.s": []byte("s_endpgm"), "a.txt": []byte("A")}, Outputs: []string{"answer.co"}}
	tests := []struct {
		name string
		cfg  Config
		job  Job
		want string
	}{
		{"cuda-synth", Config{Namespace: "cuda-synth-v1", KeyEnv: true, KeyArgs: DeriveROCmLibPath}, nvcc,
			"cbc7660819dcff4f157f0ce3e6a2208d61ccd95066b0234a508359f36d8558f4"},
		{"ptx2cuda", Config{Namespace: "ptx2cuda-v1", KeyEnv: true}, nvcc,
			"5d8e06bc5fbcde6ebcf6e12e495e0e8d10cae82878be40f31eb99c29446dbea7"},
		{"sass2rdna", Config{Namespace: "sass2rdna-v1", KeyArgs: DeriveROCmLibPath}, link,
			"d361cad3699e02b00c2bdd1e7d429edd80afabfdb4ac7d5a0746d8f52a551e02"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.cfg.Toolchains = reg
			if got := New(tt.cfg).Key(tt.job); got != tt.want {
				t.Errorf("key = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestResult(t *testing.T) {
	t.Parallel()
	entry := func(outcome, describe string, exit int) *Result {
		return &Result{Entry: &toolchain.Entry{ExitCode: exit, Meta: map[string]string{MetaOutcome: outcome, MetaDescribe: describe}},
			actor: "the compiler"}
	}
	ok := entry("exited", "exited 0", 0)
	if !ok.OK() || ok.CachedNote() != "" {
		t.Errorf("ok result: OK %v note %q", ok.OK(), ok.CachedNote())
	}
	ok.Hit = true
	if ok.CachedNote() != " (cached)" {
		t.Errorf("cached note %q", ok.CachedNote())
	}
	failed := entry("exited", "exited 1", 1)
	if failed.OK() || failed.Class(tools.ClassCompileError) != tools.ClassCompileError {
		t.Errorf("failed result: OK %v class %s", failed.OK(), failed.Class(tools.ClassCompileError))
	}
	if got := failed.FailureText(" "); got != "exited 1" {
		t.Errorf("failure text of an empty diagnostic = %q", got)
	}
	timeout := entry("timeout", "timed out after 3m0s", -1)
	if timeout.Class(tools.ClassCompileError) != tools.ClassTimeout {
		t.Errorf("timeout class %s", timeout.Class(tools.ClassCompileError))
	}
	if got := timeout.FailureText("x.cu(1): error"); got != "the compiler timed out after 3m0s\nx.cu(1): error" {
		t.Errorf("failure text = %q", got)
	}
}

func TestDiagnostics(t *testing.T) {
	t.Parallel()
	errRE := regexp.MustCompile(`(?i)\b(error|fatal)\b`)
	excerpt := regexp.MustCompile(`^\s*(\d+\s*)?\|`)
	text := "/tmp/box-0af3/program.cu:3:1: error: one\n    3 | int x\n      | ^\nwarning: w\nprogram.cu:4:1: error: two\nprogram.cu:5:1: error: three\n"
	tests := []struct {
		name string
		d    Diagnostics
		max  int
		want string
	}{
		{"excerpts", Diagnostics{ErrorLine: errRE, Excerpt: excerpt.MatchString}, 2,
			"program.cu:3:1: error: one\n    3 | int x\n      | ^\nprogram.cu:4:1: error: two"},
		{"two per line", Diagnostics{ErrorLine: errRE, ErrorsPerLine: 2}, 1,
			"program.cu:3:1: error: one\nprogram.cu:4:1: error: two"},
		{"count", Diagnostics{ErrorLine: errRE, Count: "error:"}, 1,
			"program.cu:3:1: error: one\n... (3 errors in all)"},
		{"ignore", Diagnostics{ErrorLine: errRE, Ignore: "one"}, 1, "program.cu:4:1: error: two"},
		{"no error lines", Diagnostics{ErrorLine: regexp.MustCompile(`nothing`)}, 2,
			"program.cu:3:1: error: one\n    3 | int x\n... (4 more lines)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.d.Of(text, tt.max); got != tt.want {
				t.Errorf("Of = %q, want %q", got, tt.want)
			}
		})
	}
	if got := Clip("abcdef", 3); got != "abc..." {
		t.Errorf("Clip = %q", got)
	}
}
