package cudasynth

import (
	"context"
	"errors"

	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/gpuprobe"
)

// ErrGPUUnusable means programs cannot use the GPU inside the sandbox (the
// probe program failed), so a run stage would blame every answer for the
// host's fault. Verify returns it as an error, not a verdict.
var ErrGPUUnusable = errors.New("cuda-synth: the GPU is not usable in the sandbox")

// newProbe is the lane's GPU probe, built with the same nvcc command as
// answers.
func newProbe(cfg Config, builds *buildjob.Runner) *gpuprobe.Probe {
	args := append(append([]string{}, cfg.NVCCFlags...), gencodes(cfg.SMs)...)
	return gpuprobe.New(builds, args, cfg.Sandbox, cfg.RunLimits, ErrGPUUnusable)
}

// PrepareGPUProbe builds the GPU probe into the compile cache. A host that
// fills a cache for a GPU host to replay (compile here, run there) calls it
// once, since the GPU host cannot build it.
func (l *Lane) PrepareGPUProbe(ctx context.Context) error {
	_, err := l.probe.Binary(ctx)
	return err
}
