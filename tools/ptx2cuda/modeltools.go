package ptx2cuda

import (
	"context"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

// sourceDescription describes the model tools' "source" argument.
const sourceDescription = "the CUDA source of the kernel (the __global__ function and its helpers; no main)"

// Tools returns the model-facing tools: "compile_kernel" (the check and
// compile stages: does the kernel build into the task's harness) and
// "check_kernel" (the whole verification; on a host without a GPU it
// stops after compiling).
func (l *Lane) Tools(item tools.Item) []tools.Tool {
	return []tools.Tool{
		tools.SourceTool("compile_kernel", "Compile a kernel into the task's test harness with nvcc 11.8 for sm_90 (the same flags as the "+
			"original). Returns \"ok\" or the errors.", sourceDescription, ExtractKernel,
			func(ctx context.Context, src string) (string, error) { return l.compileOnly(ctx, item, src) }),
		tools.SourceTool("check_kernel", "Run the whole check on a kernel: build it into the task's harness and, on a GPU host, run it "+
			"and the original kernel on the same inputs and compare every output. Returns PASS or the failing stage and why.",
			sourceDescription, ExtractKernel, func(ctx context.Context, src string) (string, error) {
				v, err := l.Verify(ctx, item, src)
				if err != nil {
					return "", err
				}
				return describeVerdict(v), nil
			}),
	}
}

// compileOnly is compile_kernel: the check stage, then the answer's build
// (cached like Verify's).
func (l *Lane) compileOnly(ctx context.Context, item tools.Item, src string) (string, error) {
	if isProgramTask(item) {
		return l.compileProgramOnly(ctx, item, src)
	}
	if isTorchTask(item) {
		return l.compileTorchOnly(ctx, item, src)
	}
	h, _, err := taskOf(item)
	if err != nil {
		return "", err
	}
	if class, why := CheckAnswer(src, h.Kernel); class != tools.ClassNone {
		return fmt.Sprintf("FAIL (%s): %s", class, why), nil
	}
	res, err := l.builds.Run(ctx, l.buildJob(h, src))
	if err != nil {
		return "", fmt.Errorf("ptx2cuda compile: %w", err)
	}
	if !res.OK() {
		return "FAIL (" + string(res.Class(tools.ClassCompileError)) + "):\n" +
			res.FailureText(compilerDiagnostics.Of(string(res.Entry.Stderr), l.cfg.DiagnosticLines)), nil
	}
	return "ok: the kernel builds into the harness", nil
}

// describeVerdict is the text check_kernel returns.
func describeVerdict(v tools.Verdict) string {
	if v.Pass {
		if pending := tools.PendingStages(v); len(pending) > 0 {
			return "PASS (compiles; not run here, no GPU: " + strings.Join(pending, ", ") + ")"
		}
		return "PASS: the outputs match the original kernel's."
	}
	return fmt.Sprintf("FAIL (%s at stage %s):\n%s", v.Class, v.Stage, v.Diagnostic)
}
