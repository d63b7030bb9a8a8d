package ptx2cuda

import (
	"testing"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
)

// TestTaxonomy: diagnostics as the lane writes them (the GPU ones as seen
// on an H100) get their fine labels.
func TestTaxonomy(t *testing.T) {
	t.Parallel()
	lr, err := RefinementRules()
	if err != nil {
		t.Fatal(err)
	}
	lanes, err := refinement.NewLanes(lr)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ class, stage, diag, want string }{
		{"compile_error", StageCheck, "the answer defines no __global__ kernel named saxpy (the harness launches saxpy by that name)", "compile.kernel_name"},
		{"compile_error", StageCompile, `harness.cu(24): error: a value of type "void (*)(int, float, float *, float *)" cannot be used to initialize an entity of type "void (*)(int, float, const float *, float *)"` + "\nthe kernel's parameter types must be exactly: ...", "compile.signature"},
		{"compile_error", StageCompile, `kernel.cu(30): error: this declaration has no storage class or type specifier`, "compile.syntax"},
		{"compile_error", StageCompile, `kernel.cu(31): error: function "main" has already been defined`, "compile.main"},
		{"embedded_ptx", StageCheck, "the answer embeds PTX instead of decompiling it: includes kernel.ptx", "cheat.embedded_ptx"},
		{"crash", StageRun, "the answer's program exit status 1\nstderr: kiln harness: kernel run: operation not supported on global/shared address space (cudaErrorInvalidAddressSpace)", "cuda.illegal_address"},
		{"crash", StageRun, "the answer's program exit status 1\nstderr: kiln harness: kernel run: an illegal memory access was encountered (cudaErrorIllegalAddress)", "cuda.illegal_address"},
		{"crash", StageRun, "the answer's program exit status 1", "crash.exit_status"},
		{"timeout", StageRun, "the answer's program timed out after 20.179s (wall clock)", "timeout"},
		{"timeout", StageCompile, "the compiler timed out after 180s (wall clock)", "timeout.build"},
		{"wrong_output", StageCompare, "outputs differ from the original kernel's: y: NAE 0.572 > 0.001 (1048576 element(s) differ; max |diff| 2 at element 343769)", "wrong.nae"},
		{"wrong_output", StageCompare, "outputs differ from the original kernel's: y: NAE inf > 0.001 (3 element(s) differ; max |diff| +Inf at element 1)", "wrong.non_finite"},
		{"wrong_output", StageCompare, "outputs differ from the original kernel's: hist: 256 element(s) differ (integers must match exactly); max |diff| 900 at element 224", "wrong.integer"},
		{"wrong_output", StageCompare, "the kernel modified its input(s) x (the original only reads them)", "wrong.input_modified"},
		// Program tasks (program.go).
		{"compile_error", StageCheck, "the answer defines the program's device variables again (__constant__ c_scale): use the program's, which its host code fills", "compile.redefines_program"},
		{"compile_error", StageCompile, "tmpxft_00000006_00000000-6_program.cudafe1.cpp:(.text+0xc9): undefined reference to `kiln_answer::scaleAdd(float const*, float*, int)'\nthe kernel's parameter types must be exactly: ...", "compile.signature"},
		{"compile_error", StageCompile, `program.cu(19): error: a value of type "void (*)(float *, float *, int)" cannot be used to initialize an entity of type "void (*)(const float *, float *, int)"`, "compile.signature"},
		{"compile_error", StageCompile, `answer.cu(4): error: expected an expression`, "compile.syntax"},
		{"wrong_output", StageCompare, "the program prints other results with the answer's kernel than with the original's:\nline 1: ...", "wrong.output"},
	}
	for _, c := range cases {
		l := lanes.Taxonomy.ClassifyResult(runs.Result{Task: runs.Task{Lane: LaneName},
			Verdict: runs.Verdict{Class: c.class, Stage: c.stage, Diagnostic: c.diag}})
		if l.Name != c.want {
			t.Errorf("%s at %s %.60q: label %s, want %s", c.class, c.stage, c.diag, l.Name, c.want)
		}
	}
}
