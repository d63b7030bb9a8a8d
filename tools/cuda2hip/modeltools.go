package cuda2hip

import (
	"context"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// checkTool is the lane's model tool.
const checkTool = "check_hip"

// Tools returns the model tool "check_hip": the whole verification of a
// draft against the task (the CUDA check, hipcc for gfx1100, the HIP
// build for NVIDIA and, on a GPU host, the run and comparison).
func (l *Lane) Tools(item tools.Item) []tools.Tool {
	return []tools.Tool{tools.SourceTool(checkTool,
		"Check a HIP translation of the task's CUDA program: no CUDA left in it, hipcc build for AMD RDNA3 "+
			"(gfx1100), HIP build for NVIDIA and, on a GPU host, running it and comparing its output with the CUDA "+
			"program's. Returns PASS or the failing stage and its errors.",
		"the complete HIP program: kernels and a main that runs them and prints the results", ExtractProgram,
		func(ctx context.Context, src string) (string, error) {
			v, err := l.Verify(ctx, item, src)
			if err != nil {
				return "", err
			}
			if v.Pass {
				if pending := cudasynth.Pending(v); len(pending) > 0 {
					return "PASS (builds; not run here: " + strings.Join(pending, ", ") + ")", nil
				}
				return "PASS: the HIP program builds and prints the same results as the CUDA program.", nil
			}
			return fmt.Sprintf("FAIL (%s at stage %s):\n%s", v.Class, v.Stage, v.Diagnostic), nil
		})}
}
