package cudasynth

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/tools"
)

// ErrNoGPU means a pending run stage cannot be completed on this host.
var ErrNoGPU = errors.New("cuda-synth: no NVIDIA GPU on this host")

var _ tools.Completer = (*Lane)(nil)

// Complete finishes the run stage of prev, a verdict of this lane (of
// Verify or VerifyTranslation: its stage order is kept) whose CPU
// stages passed and whose run was skipped for want of a GPU: it runs the
// executables kept with the verdict (cuda_binary, hip_nvidia_binary) in the
// sandbox, after the kept GPU probe, and compares their outputs exactly as
// Verify would have. No compiler is needed, so a GPU host without nvcc 11.8
// or hipcc can complete records made on a CPU host. The CPU stages, their
// details and artifacts are kept as they were; the new verdict adds the run
// stage, the outputs and the run times. A verdict with nothing pending is
// returned unchanged.
func (l *Lane) Complete(ctx context.Context, item tools.Item, prev tools.Verdict) (tools.Verdict, error) {
	pending := tools.PendingStages(prev)
	if len(pending) == 0 {
		return prev, nil
	}
	if !slices.Equal(pending, []string{StageRun}) {
		return tools.Verdict{}, fmt.Errorf("cuda-synth complete: cannot complete pending stages %s (only %s)", strings.Join(pending, ", "), StageRun)
	}
	if !l.cfg.Toolchains.GPU().Present {
		return tools.Verdict{}, fmt.Errorf("cuda-synth complete: %w; the pending run stages need one", ErrNoGPU)
	}
	cudaBin, hipBin := prev.Artifacts[ArtifactCUDABinary], prev.Artifacts[ArtifactHIPBinary]
	for name, b := range map[string][]byte{ArtifactCUDABinary: cudaBin, ArtifactHIPBinary: hipBin} {
		if len(b) == 0 {
			return tools.Verdict{}, fmt.Errorf("cuda-synth complete: the record keeps no %s artifact; rescore it where nvcc and hipcc are (plain `kiln rescore`)", name)
		}
	}
	order := stageOrder
	if slices.ContainsFunc(prev.Stages, func(s tools.Stage) bool { return s.Name == StageHIPSource }) {
		order = translationOrder // a VerifyTranslation verdict
	}
	p := &pipeline{l: l, src: string(prev.Artifacts[ArtifactCUDASource]), start: time.Now(), order: order,
		stages: map[string]stageResult{}, artifacts: maps.Clone(prev.Artifacts),
		meas: maps.Clone(prev.Measurements), firstFail: len(order),
		cudaBin: cudaBin, hipBin: hipBin, probeBin: prev.Artifacts[ArtifactGPUProbe]}
	if p.meas == nil {
		p.meas = map[string]float64{}
	}
	for _, s := range prev.Stages {
		if s.Skipped {
			continue
		}
		if !s.OK {
			// A failed stage ends a verdict before any skipped one.
			return tools.Verdict{}, fmt.Errorf("cuda-synth complete: stage %s failed and %s is still pending: the record is inconsistent", s.Name, StageRun)
		}
		p.stages[s.Name] = stageResult{ok: true, detail: s.Detail, dur: s.Duration}
	}
	if !l.cfg.KeepBinaries {
		delete(p.artifacts, ArtifactCUDABinary)
		delete(p.artifacts, ArtifactHIPBinary)
	}
	delete(p.artifacts, ArtifactGPUProbe)
	delete(p.meas, "pending_stages")
	verifyMS, hadVerify := prev.Measurements["verify_ms"]
	if err := p.runPrograms(ctx); err != nil {
		return tools.Verdict{}, fmt.Errorf("cuda-synth complete: %w", err)
	}
	v := p.verdict()
	v.Measurements["complete_ms"] = v.Measurements["verify_ms"]
	if hadVerify {
		v.Measurements["verify_ms"] = verifyMS
	}
	return v, nil
}
