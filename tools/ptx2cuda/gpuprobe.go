package ptx2cuda

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/gpuprobe"
)

// ErrGPUUnusable means programs cannot use the GPU inside the sandbox (the
// probe program failed), so a run stage would blame every answer for the
// host's fault. Verify and Complete return it as an error, not a verdict.
var ErrGPUUnusable = errors.New("ptx2cuda: the GPU is not usable in the sandbox")

// newProbe is the lane's GPU probe, built for the lane's target.
func newProbe(cfg Config, builds *buildjob.Runner) *gpuprobe.Probe {
	args := []string{"-gencode", fmt.Sprintf("arch=%s,code=%s", strings.Replace(cfg.SM, "sm_", "compute_", 1), cfg.SM)}
	return gpuprobe.New(builds, args, cfg.Sandbox, cfg.RunLimits, ErrGPUUnusable)
}
