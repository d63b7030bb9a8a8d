package ptx2cuda

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

// ErrNoGPU means pending stages cannot be completed on this host.
var ErrNoGPU = errors.New("ptx2cuda: no NVIDIA GPU on this host")

// Complete finishes the run and compare stages of prev, a verdict of this
// lane whose compile passed on a host without a GPU: it runs the kept
// executables (answer_binary, reference_binary) in the sandbox after the
// kept GPU probe, and compares their outputs as Verify would have. No
// compiler is needed, so a GPU host without nvcc 11.8 completes verdicts
// made on a CPU host. The harness spec comes from the verdict
// (harness_spec), else from the item; a program task's verdict keeps
// program_spec and blank_binary instead, and its run and compare are the
// program harness's (programRunStages). The other stages, their details and
// artifacts are kept; the executables and the probe are dropped once
// run. A verdict with nothing pending is returned unchanged.
func (l *Lane) Complete(ctx context.Context, item tools.Item, prev tools.Verdict) (tools.Verdict, error) {
	if isTorchTask(item) {
		return l.completeTorch(ctx, item, prev)
	}
	pending := tools.PendingStages(prev)
	if len(pending) == 0 {
		return prev, nil
	}
	if !slices.Equal(pending, []string{StageRun, StageCompare}) {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: cannot complete pending stages %s (only %s, %s)", strings.Join(pending, ", "), StageRun, StageCompare)
	}
	if !l.cfg.Toolchains.GPU().Present {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: %w; the pending run stages need one", ErrNoGPU)
	}
	ansBin, refBin := prev.Artifacts[ArtifactAnswerBin], prev.Artifacts[ArtifactRefBin]
	if len(ansBin) == 0 || len(refBin) == 0 {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: the record keeps no %s or %s; rescore it where nvcc is (plain `kiln rescore`)", ArtifactAnswerBin, ArtifactRefBin)
	}
	program := len(prev.Artifacts[ArtifactProgramSpec]) > 0 || isProgramTask(item)
	var h HarnessSpec
	if !program {
		spec := prev.Artifacts[ArtifactSpec]
		if len(spec) == 0 {
			spec = []byte(item.Files[FileHarness])
		}
		var err error
		if h, err = ParseHarness(spec); err != nil {
			return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: %w", err)
		}
	}
	b := &verdictBuilder{start: time.Now(), meas: maps.Clone(prev.Measurements), artifacts: maps.Clone(prev.Artifacts),
		suspicion: slices.Clone(prev.Suspicion)}
	if b.meas == nil {
		b.meas = map[string]float64{}
	}
	if b.artifacts == nil {
		b.artifacts = map[string][]byte{}
	}
	for _, s := range prev.Stages {
		if s.Skipped {
			continue
		}
		if !s.OK {
			return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: stage %s failed and %s is still pending: the record is inconsistent", s.Name, StageRun)
		}
		b.add(stageResult{name: s.Name, ok: true, detail: s.Detail, dur: s.Duration})
	}
	probe := prev.Artifacts[ArtifactGPUProbe]
	for _, name := range []string{ArtifactAnswerBin, ArtifactRefBin, ArtifactGPUProbe, ArtifactSpec, ArtifactBlankBin, ArtifactProgramSpec} {
		delete(b.artifacts, name)
	}
	delete(b.meas, "pending_stages")
	verifyMS, hadVerify := prev.Measurements["verify_ms"]
	var err error
	if program {
		err = l.completeProgram(ctx, item, prev, b)
	} else {
		err = l.runStages(ctx, b, h, ansBin, refBin, probe)
	}
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("ptx2cuda complete: %w", err)
	}
	v := b.verdict("complete_ms")
	if hadVerify {
		v.Measurements["verify_ms"] = verifyMS
	}
	return v, nil
}
