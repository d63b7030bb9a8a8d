package cuda2hip

// The cuda2hip lane's refinement rules: the taxonomy of CUDA leaks, HIP
// build failures and GPU run failures, the construct features of the
// task's CUDA program (cuda-synth's table), the suspicion check (CUDA left
// in the answer, no kernel launched), and the resynthesis format (new CUDA
// programs to translate).

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

//go:embed synth
var synthFS embed.FS

// RefinementRules returns the lane's rules for package refinement.
func RefinementRules() (refinement.LaneRules, error) {
	tmpl, cats, err := refinement.SynthTemplates(synthFS, "synth")
	if err != nil {
		return refinement.LaneRules{}, err
	}
	cs, err := cudasynth.RefinementRules()
	if err != nil {
		return refinement.LaneRules{}, err
	}
	if cs.Features == nil {
		return refinement.LaneRules{}, fmt.Errorf("cuda2hip rules: the cuda-synth lane has no feature table")
	}
	return refinement.LaneRules{
		Lane:    LaneName,
		Rules:   taxonomy(cs.Rules),
		Suspect: suspectHIP,
		// Features are those of the task's CUDA program.
		Features: &refinement.FeatureTable{Files: isProgramFile, Rules: cs.Features.Rules},
		// A task is its CUDA program; the prompt is rendered from it.
		Identity: refinement.Identity{Files: isProgramFile, NoPrompt: true},
		Synth: &refinement.SynthFormat{Templates: tmpl, Categories: cats, Parse: parseSynthBlock,
			ExampleFile: isProgramFile, FilesOnly: true},
	}, nil
}

func isProgramFile(name string) bool { return name == ProgramFile }

// taxonomy is the lane's rules: its own (CUDA leaks, a kernel missing from
// the HIP build), then cuda-synth's rules for HIP builds and GPU runs (the
// CUDA-side and hipify rules do not apply: a CUDA build failure is a bad
// task, and no translator runs), and the build-timeout rule of the
// lane's build stages.
func taxonomy(cudaSynth []refinement.Rule) []refinement.Rule {
	leak := []string{string(ClassCUDAInHIP)}
	hip := []string{string(ClassHIPCompileError)}
	rules := []refinement.Rule{
		{Label: "cuda_in_hip.ptx", Classes: leak, Pattern: `inline PTX assembly`,
			Doc: "the HIP program keeps inline PTX assembly, which only NVIDIA GPUs run"},
		{Label: "cuda_in_hip.header", Classes: leak, Pattern: `#include <[^>]*>: a CUDA header`,
			Doc: "the HIP program includes a CUDA header (cuda_runtime.h, cuda.h, curand_kernel.h, ...)"},
		{Label: "cuda_in_hip.api", Classes: leak, Pattern: `a CUDA API name`,
			Doc: "the HIP program calls or names the CUDA runtime, driver or a CUDA library (cudaMalloc, cudaError_t, ...)"},
		{Label: "cuda_in_hip.macro", Classes: leak, Pattern: `a CUDA compiler macro`,
			Doc: "the HIP program tests a CUDA compiler macro (__CUDACC__, __CUDA_ARCH__, __NVCC__)"},
		{Label: "cuda_in_hip.other", Classes: leak, Doc: "the HIP program depends on CUDA in another way"},
		{Label: "hip.missing_kernel", Classes: hip, Stages: []string{cudasynth.StageRDNA3},
			Pattern: `kernels missing from the RDNA3 assembly|has no kernel`,
			Doc:     "the HIP program lacks a kernel of the CUDA program (dropped, merged or renamed)"},
	}
	for _, r := range cudaSynth {
		if r.Label == "timeout.build" || slices.ContainsFunc(r.Classes, func(c string) bool {
			return c == refinement.ClassCompileError || c == string(cudasynth.ClassTranslateUnsupported)
		}) {
			continue
		}
		rules = append(rules, r)
	}
	return append(rules, refinement.BuildTimeoutRule(buildStages...))
}

// buildStages are the lane's build stages: a timeout there is a build
// step's (timeout.build), not the program's.
var buildStages = []string{cudasynth.StageCUDACompile, cudasynth.StagePTX, cudasynth.StageSASS, cudasynth.StageHostAsm,
	cudasynth.StageHIPSource, cudasynth.StageHIPCompileAMD, cudasynth.StageRDNA3, cudasynth.StageHIPCompileNvidia}

var (
	hipLaunchRE = regexp.MustCompile(`<<<|\bhipLaunchKernelGGL\b|\bhipLaunchKernel\b|\bhipLaunchCooperativeKernel\b|\bhipModuleLaunchKernel\b|\bhipExtLaunchKernelGGL\b`)
	globalRE    = regexp.MustCompile(`\b__global__\b`)
)

// suspectHIP flags a HIP answer that is not HIP (CUDALeaks: it would
// build on NVIDIA through nvcc's implicit CUDA runtime and so sidestep the
// translation) or that launches no kernel (its output cannot come from
// the GPU).
func suspectHIP(answer string, _ runs.Task) string {
	var why []string
	if leaks := CUDALeaks(answer); len(leaks) > 0 {
		why = append(why, "depends on CUDA: "+strings.ReplaceAll(LeakSummary(leaks, 3), "\n", "; "))
	}
	code := refinement.ParseSource(answer).Code()
	if !globalRE.MatchString(code) {
		why = append(why, "defines no __global__ kernel")
	}
	if !hipLaunchRE.MatchString(code) {
		why = append(why, "launches no kernel")
	}
	return strings.Join(why, "; ")
}

// Calls a synthesised program must not make: its output must not depend
// on input, the environment or the machine.
var programDeny = []string{"scanf", "fscanf", "getchar", "fgets", "fread", "read", "fopen", "open", "getenv",
	"system", "popen", "rand", "srand", "time", "clock"}

var localIncRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*"`)

// cudaInfo reports whether a block's info string names CUDA source or the
// program file.
func cudaInfo(info string) bool {
	for _, w := range strings.Fields(info) {
		switch w {
		case "cuda", "cu", "c++", "cpp", "cxx", "cc", ProgramFile:
			return true
		}
	}
	return false
}

// parseSynthBlock reads a synthesised cuda2hip task: one CUDA program (a
// ```cuda block) with a kernel it launches and a main, one file, calling
// nothing that reads input, the environment or the clock, without inline
// PTX (a HIP program could not keep it).
func parseSynthBlock(c *refinement.Candidate, b refinement.Block) string {
	var prog *refinement.Fenced
	for i := range b.Code {
		if cudaInfo(b.Code[i].Info) {
			prog = &b.Code[i]
			break
		}
	}
	if prog == nil {
		return "no ```cuda block with the program"
	}
	src := strings.TrimSpace(prog.Body)
	if len(src) > refinement.MaxSynthFileBytes {
		return fmt.Sprintf("the program has %d bytes (at most %d)", len(src), refinement.MaxSynthFileBytes)
	}
	parsed := refinement.ParseSource(src)
	defined := map[string]bool{}
	for _, f := range parsed.Defs() {
		defined[f.Name] = true
	}
	switch {
	case !globalRE.MatchString(parsed.Code()):
		return "the program defines no __global__ kernel"
	case !strings.Contains(parsed.Code(), "<<<") && !strings.Contains(parsed.Code(), "cudaLaunchKernel"):
		return "the program launches no kernel"
	case !defined["main"]:
		return "the program does not define main"
	case localIncRE.MatchString(src):
		return `the program includes a local header ("..."): it must be one file`
	}
	calls := parsed.Calls()
	var bad []string
	for _, name := range programDeny {
		if calls[name] {
			bad = append(bad, name)
		}
	}
	if len(bad) > 0 {
		return fmt.Sprintf("the program calls %s (its output must not depend on input, the environment or the clock)", strings.Join(bad, ", "))
	}
	for _, l := range CUDALeaks(src) {
		if l.Kind == LeakPTX {
			return "the program uses inline PTX assembly, which a HIP translation cannot keep"
		}
	}
	c.Files = map[string]string{ProgramFile: src + "\n"}
	return ""
}

// validator accepts a synthesised task when its CUDA program builds with
// nvcc for the lane's targets and defines a kernel (cuda-synth's
// compile_cuda tool: the same sandbox, toolchains and compile cache as
// verification). A tool that cannot run wraps refinement.ErrValidatorBroken.
func validator(lane tools.Lane) (refinement.Validator, error) {
	l, ok := lane.(*Lane)
	if !ok {
		return nil, fmt.Errorf("cuda2hip validator: lane is %T", lane)
	}
	var compile tools.Tool
	for _, t := range l.cs.Tools(tools.Item{Lane: cudasynth.LaneName}) {
		if t.Name() == "compile_cuda" {
			compile = t
		}
	}
	if compile == nil {
		return nil, fmt.Errorf("cuda2hip validator: the cuda-synth lane has no compile_cuda tool")
	}
	return refinement.ValidatorFunc(func(ctx context.Context, c refinement.Candidate) error {
		src := c.Files[ProgramFile]
		if strings.TrimSpace(src) == "" {
			return fmt.Errorf("no %s", ProgramFile)
		}
		args, err := json.Marshal(map[string]string{"source": src})
		if err != nil {
			return err
		}
		out, err := compile.Call(ctx, args)
		switch {
		case err != nil && ctx.Err() != nil:
			return err
		case err != nil:
			return fmt.Errorf("%w: %w", refinement.ErrValidatorBroken, err)
		case strings.HasPrefix(out, "ok"):
			return nil
		}
		return fmt.Errorf("the CUDA program does not build: %s", strings.TrimSpace(out))
	}), nil
}
