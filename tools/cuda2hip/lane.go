// Package cuda2hip is the cuda2hip lane: a model is given one complete
// CUDA program and answers with a complete HIP program; the lane checks
// that the answer is HIP (no CUDA left in it), builds it for AMD RDNA3
// and as HIP on NVIDIA, and on a host with an NVIDIA GPU runs it and
// compares its output with the CUDA program's own run (pending on a CPU
// host, completed later by `kiln rescore --pending` on a GPU host).
//
// Tasks come from the cuda-synth starter corpus (tasks.corpus: builtin,
// the programs the rule-based translator can handle), from a folder in
// the same layout (<id>/program.cu, optional meta.json), or from the
// CASS-Bench-style set of package tools/cassbench (tasks.corpus: bench).
// The rule-based translator (tools/hipify) is the baseline model of this
// lane: agent/hipify answers every task with its translation, so that a
// report can put an LLM and the rule-based baseline side by side.
//
// # Stages
//
// In this order (refinement keys on the names):
//
//	extract             recorded only for a blank answer (no_answer)
//	hip-check           the answer must not depend on CUDA (CUDALeaks: CUDA
//	                      headers, CUDA API names and macros, inline PTX):
//	                      cuda_in_hip. Checked before any compile, because
//	                      nvcc, which builds HIP for NVIDIA, includes
//	                      cuda_runtime.h itself and would accept CUDA calls.
//	cuda-compile, ptx,  the task's CUDA program, built and checked as the
//	sass, host-asm        cuda-synth lane does; a failure there is the
//	                      task's, not the answer's: Verify returns an error
//	                      wrapping tools.ErrBadItem
//	hip-source          the answer, recorded (cuda-synth's hipify slot)
//	hip-compile-amd     hipcc for gfx1100 (device and host assembly)
//	rdna3               the RDNA3 text targets gfx1100 and holds every kernel
//	                      of the CUDA program's PTX, by name (a dropped or
//	                      renamed kernel fails here)
//	hip-compile-nvidia  nvcc -x cu -D__HIP_PLATFORM_NVIDIA__
//	run                 GPU hosts: the CUDA and HIP executables run in the
//	                      sandbox and their outputs are compared
//	                      (cudasynth.CompareOutputs); pending elsewhere
//
// Everything after hip-check is cudasynth.Lane.VerifyTranslation: the
// same builds, compile cache, artifacts (cuda_source, hip_source, ptx,
// sass_sm86, sass_sm90, host_asm_cuda, rdna3, host_asm_hip, and for a
// pending run the executables and the GPU probe) and measurements.
//
// # Failure classes
//
// no_answer, cuda_in_hip, hip_compile_error, and on a GPU host crash,
// timeout, resource_limit and wrong_output (the HIP program prints other
// results than the CUDA program). Wrong results are only seen on a GPU
// host: on a CPU host such an answer passes its CPU stages and stays
// pending.
package cuda2hip

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// LaneName is the lane's name in specs and records.
const LaneName = "cuda2hip"

// Stage names of the lane's own; the others are cudasynth's.
const (
	StageExtract  = cudasynth.StageExtract
	StageHIPCheck = "hip-check"
)

// Failure classes of this lane beyond the shared ones.
const (
	// ClassCUDAInHIP: the HIP answer depends on CUDA (CUDALeaks).
	ClassCUDAInHIP tools.FailureClass = "cuda_in_hip"
	// ClassHIPCompileError: hipcc, the RDNA3 check or the NVIDIA build of
	// the HIP answer failed.
	ClassHIPCompileError = cudasynth.ClassHIPCompileError
)

// ProgramFile is the task file holding the CUDA program.
const ProgramFile = cudasynth.SourceFile

// cudaStages are the stages that build the task's CUDA program: a failure
// there makes the task bad, not the answer.
var cudaStages = []string{cudasynth.StageCUDACompile, cudasynth.StagePTX, cudasynth.StageSASS, cudasynth.StageHostAsm}

// Lane is the cuda2hip lane. It is safe for concurrent use.
type Lane struct {
	cs *cudasynth.Lane
	// diagLines bounds the hip-check diagnostic.
	diagLines int
}

var (
	_ tools.Lane      = (*Lane)(nil)
	_ tools.Completer = (*Lane)(nil)
)

// New returns the lane over cs, the cuda-synth lane whose builds, cache,
// sandbox and GPU run it uses.
func New(cs *cudasynth.Lane) (*Lane, error) {
	if cs == nil {
		return nil, errors.New("cuda2hip: a cuda-synth lane is required")
	}
	return &Lane{cs: cs, diagLines: 12}, nil
}

// Name is "cuda2hip".
func (l *Lane) Name() string { return LaneName }

// Extract returns the HIP program in a model's final message
// (ExtractProgram).
func (l *Lane) Extract(text string) (string, bool) { return ExtractProgram(text) }

// Verify judges answer, a HIP program, against item's CUDA program
// (Files["program.cu"]).
func (l *Lane) Verify(ctx context.Context, item tools.Item, answer string) (tools.Verdict, error) {
	cuda := item.Files[ProgramFile]
	if strings.TrimSpace(cuda) == "" {
		return tools.Verdict{}, fmt.Errorf("cuda2hip: %w: the task has no %s", tools.ErrBadItem, ProgramFile)
	}
	if strings.TrimSpace(answer) == "" {
		return tools.Verdict{Class: tools.ClassNoAnswer, Stage: StageExtract,
			Stages:     []tools.Stage{{Name: StageExtract, Detail: "no HIP program in the answer"}},
			Diagnostic: "no HIP program found: put the complete HIP program (kernels and main) in one ```hip fenced block"}, nil
	}
	start := time.Now()
	check := tools.Stage{Name: StageHIPCheck, OK: true, Detail: "no CUDA header, API name, macro or PTX"}
	if leaks := CUDALeaks(answer); len(leaks) > 0 {
		check.OK, check.Detail = false, "the HIP program depends on CUDA:\n"+LeakSummary(leaks, l.diagLines)
		check.Duration = time.Since(start)
		return tools.Verdict{Class: ClassCUDAInHIP, Stage: StageHIPCheck, Stages: []tools.Stage{check},
			Diagnostic: check.Detail, Measurements: map[string]float64{"cuda_leaks": float64(len(leaks))},
			Artifacts: map[string][]byte{cudasynth.ArtifactCUDASource: []byte(cuda), cudasynth.ArtifactHIPSource: []byte(answer)}}, nil
	}
	check.Duration = time.Since(start)
	v, err := l.cs.VerifyTranslation(ctx, cuda, answer)
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("cuda2hip: %w", err)
	}
	if !v.Pass && slices.Contains(cudaStages, v.Stage) {
		if v.Class == tools.ClassCompileError {
			return tools.Verdict{}, fmt.Errorf("cuda2hip: %w: the task's CUDA program fails at %s: %s", tools.ErrBadItem, v.Stage, firstLines(v.Diagnostic, 5))
		}
		return tools.Verdict{}, fmt.Errorf("cuda2hip: building the task's CUDA program: %s at %s: %s", v.Class, v.Stage, firstLines(v.Diagnostic, 5))
	}
	v.Stages = append([]tools.Stage{check}, v.Stages...)
	return v, nil
}

// Complete finishes the pending run stage of prev on a GPU host, from the
// executables kept with it (cudasynth.Lane.Complete); hip-check is kept
// as it was.
func (l *Lane) Complete(ctx context.Context, item tools.Item, prev tools.Verdict) (tools.Verdict, error) {
	if len(tools.PendingStages(prev)) == 0 {
		return prev, nil
	}
	var own, rest []tools.Stage
	for _, s := range prev.Stages {
		if s.Name == StageHIPCheck {
			own = append(own, s)
		} else {
			rest = append(rest, s)
		}
	}
	inner := prev
	inner.Stages = rest
	v, err := l.cs.Complete(ctx, item, inner)
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("cuda2hip: %w", err)
	}
	v.Stages = append(own, v.Stages...)
	return v, nil
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}
