package cudasynth

import (
	"context"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

// sourceDescription describes both model tools' "source" argument.
const sourceDescription = "the complete CUDA program (.cu): kernels and a main that runs them and prints the results"

// Tools returns the model-facing tools: "compile_cuda" (nvcc only) and
// "check_program" (every stage, the full verification).
func (l *Lane) Tools(item tools.Item) []tools.Tool {
	return []tools.Tool{
		tools.SourceTool("compile_cuda", "Compile a CUDA program with nvcc 11.8 for sm_86 and sm_90. Returns \"ok\" with the kernels "+
			"found, or nvcc's errors.", sourceDescription, ExtractProgram, l.compileOnly),
		tools.SourceTool("check_program", "Run the whole check on a CUDA program: nvcc build, PTX, SASS, host assembly, "+
			"translation to HIP, hipcc build for AMD RDNA3 and HIP build for NVIDIA (and, on a GPU host, "+
			"running both builds and comparing their output). Returns PASS or the failing stage and its errors.",
			sourceDescription, ExtractProgram, func(ctx context.Context, src string) (string, error) {
				v, err := l.Verify(ctx, item, src)
				if err != nil {
					return "", err
				}
				return describeVerdict(v), nil
			}),
	}
}

// compileOnly runs the cuda-compile job (cached like Verify's).
func (l *Lane) compileOnly(ctx context.Context, src string) (string, error) {
	p := newPipeline(l, src)
	if err := p.cudaChain(ctx); err != nil {
		return "", fmt.Errorf("cuda-synth compile: %w", err)
	}
	for _, name := range []string{StageCUDACompile, StagePTX} {
		r, ok := p.stages[name]
		if ok && !r.ok {
			return fmt.Sprintf("FAIL (%s at %s):\n%s", r.class, name, r.detail), nil
		}
	}
	return "ok: " + p.stages[StagePTX].detail, nil
}

// describeVerdict is the text check_program returns.
func describeVerdict(v tools.Verdict) string {
	if v.Pass {
		if pending := Pending(v); len(pending) > 0 {
			return "PASS (compile stages; not run here: " + strings.Join(pending, ", ") + ")"
		}
		return "PASS: every stage passed and the CUDA and HIP builds print the same results."
	}
	return fmt.Sprintf("FAIL (%s at stage %s):\n%s", v.Class, v.Stage, v.Diagnostic)
}
