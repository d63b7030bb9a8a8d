package cudasynth

// The cuda-synth lane's refinement rules: the taxonomy of nvcc, hipify,
// hipcc and CUDA runtime failures, the construct features of CUDA
// programs, the suspicion check (no kernel launched), and the resynthesis
// format (a task statement and a reference program).

import (
	"embed"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
)

//go:embed synth
var synthFS embed.FS

// RefinementRules returns the lane's rules for package refinement.
func RefinementRules() (refinement.LaneRules, error) {
	tmpl, cats, err := refinement.SynthTemplates(synthFS, "synth")
	if err != nil {
		return refinement.LaneRules{}, err
	}
	return refinement.LaneRules{
		Lane:     LaneName,
		Rules:    cudaRules(),
		Suspect:  suspectCUDA,
		Features: &refinement.FeatureTable{Files: taskFile, AnswerAs: "answer.cu", Rules: cudaFeatureRules()},
		// The task is its statement: the same statement with another
		// reference program, or a corpus prompt with its "(task id)" tag,
		// is the same task.
		Identity: refinement.Identity{Files: func(string) bool { return false },
			Prompt: func(p string) string { return taskTagRE.ReplaceAllString(p, "") }},
		Synth: &refinement.SynthFormat{Templates: tmpl, Categories: cats, Parse: parseSynthBlock, ExampleFile: taskFile},
	}, nil
}

// taskTagRE is the "(task <id>)" line a corpus task's prompt ends with
// (so that a replay script can tell them apart).
var taskTagRE = regexp.MustCompile(`\s*\(task [^()\s]+\)\s*$`)

// taskFile: every CUDA, C and C++ source of the task but a synthesised
// task's reference program (the model's answer is what a cuda-synth
// task's features are read from, in every round alike).
func taskFile(name string) bool { return name != ReferenceFile && sourceFile(name) }

// sourceFile: every CUDA, C and C++ source.
func sourceFile(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".cu", ".cuh", ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp":
		return true
	}
	return false
}

// cudaRules are the cuda-synth lane's rules (tools/cudasynth): nvcc front
// end (EDG) and host compiler diagnostics at stage cuda-compile, the
// lane's own checks (ptx: no kernel; host-asm: no main; sass), hipify's
// unsupported constructs, hipcc (clang) and the RDNA3 check, and CUDA
// runtime errors as programs and compute-sanitizer print them.
func cudaRules() []refinement.Rule {
	cc := []string{refinement.ClassCompileError}
	hip := []string{string(ClassHIPCompileError)}
	runtime := []string{refinement.ClassCrash, refinement.ClassWrongOutput, refinement.ClassTimeout, refinement.ClassResourceLimit}
	return []refinement.Rule{
		{Label: "compile.no_kernel", Classes: cc, Stages: []string{"ptx"}, Pattern: `defines no kernel|no \.entry`,
			Doc: "the program defines no __global__ kernel"},
		{Label: "compile.no_main", Classes: cc, Stages: []string{"host-asm"}, Pattern: `defines no main`,
			Doc: "the program has no main"},
		{Label: "compile.sass", Classes: cc, Stages: []string{"sass"},
			Doc: "the SASS of a target architecture is missing or lacks a kernel"},
		{Label: "compile.include", Classes: cc, Pattern: `cannot open source file|fatal error: .*: No such file or directory`,
			Doc: "a header that does not exist"},
		{Label: "compile.host_device", Classes: cc, Pattern: `calling a __(host|device|global)__ function.* from a __(host|device|global)__ function.* is not allowed|is undefined in device code|cannot be directly read in a device function|not allowed in (device|host) code|a __global__ function call must be configured|__global__ function .* must have a void return type`,
			Doc: "host code called from the device, or a kernel called like a function"},
		{Label: "compile.memory_space", Classes: cc, Pattern: `memory space specifier|initializer not allowed for __shared__|__shared__ variable|__constant__ variable|dynamic initialization is not supported for a __(device|constant|shared)__`,
			Doc: "a __shared__/__constant__/__device__ variable used against its rules"},
		{Label: "compile.undefined_identifier", Classes: cc, Pattern: `identifier ".*" is undefined|was not declared in this scope|has no member|is not a member of|undeclared identifier|use of undeclared`,
			Doc: "a name (function, variable, intrinsic, header member) that is not declared"},
		{Label: "compile.overload", Classes: cc, Pattern: `no instance of (overloaded )?function .* matches the argument list|no matching function for call|more than one instance of overloaded function`,
			Doc: "no overload of a function (often atomic* or math) fits the argument types"},
		{Label: "compile.arguments", Classes: cc, Pattern: `too (few|many) arguments in function call|too (few|many) arguments to function`,
			Doc: "a call with the wrong number of arguments"},
		{Label: "compile.type", Classes: cc, Pattern: `a value of type .* cannot be (used to initialize|assigned to)|argument of type .* is incompatible with parameter of type|no suitable conversion function|expression must have (pointer|arithmetic|integral|class|pointer-to-object|bool)[- ].*type|operand types are incompatible|invalid type conversion|cannot convert|invalid conversion from|incompatible types|expression must be a modifiable lvalue|return value type does not match`,
			Doc: "an expression of the wrong type"},
		{Label: "compile.redefinition", Classes: cc, Pattern: `has already been (defined|declared)|redefinition of|conflicting declaration|previous declaration`,
			Doc: "a name defined twice"},
		{Label: "compile.syntax", Classes: cc, Pattern: `expected an? |expected '.'|expected .* before|syntax error|unrecognized token|missing closing quote|expected a declaration|unexpected end of file|this declaration has no storage class or type specifier|explicit type is missing`,
			Doc: "code the compiler cannot parse"},
		{Label: "compile.ptxas", Classes: cc, Pattern: `ptxas (error|fatal)|uses too much (shared|local) data|too many resources|Entry function .* uses too much`,
			Doc: "the kernel needs more registers, shared or local memory than the target allows, or PTX assembly failed"},
		{Label: "compile.other", Classes: cc, Doc: "another CUDA compile error"},

		{Label: "hipify.unsupported", Classes: []string{string(ClassTranslateUnsupported)},
			Doc: "a CUDA construct hipify cannot translate to HIP"},
		{Label: "hip.rdna3", Classes: hip, Stages: []string{"rdna3"},
			Doc: "the RDNA3 assembly has the wrong target or lacks a kernel"},
		{Label: "hip.undefined_identifier", Classes: hip, Pattern: `use of undeclared identifier|identifier ".*" is undefined|was not declared|no member named`,
			Doc: "the HIP source uses a name HIP does not declare"},
		{Label: "hip.type", Classes: hip, Pattern: `no matching function for call|cannot initialize|incompatible|no viable conversion|invalid operands`,
			Doc: "a type error in the HIP build"},
		{Label: "hip.other", Classes: hip, Doc: "another HIP compile error"},

		{Label: "cuda.illegal_address", Classes: runtime, Pattern: `illegal memory access|Invalid __(global|shared|local)__ (read|write)|out of bounds|cudaErrorIllegalAddress|address .* is out of bounds`,
			Doc: "a kernel touched memory outside its allocations"},
		{Label: "cuda.misaligned", Classes: runtime, Pattern: `misaligned address|cudaErrorMisalignedAddress`,
			Doc: "a kernel accessed memory at a misaligned address"},
		{Label: "cuda.race", Classes: runtime, Pattern: `race reported|racecheck|data race|hazard detected`,
			Doc: "compute-sanitizer found a shared-memory race"},
		{Label: "cuda.sync", Classes: runtime, Pattern: `synccheck|barrier error|divergent thread\(s\) in (warp|block)`,
			Doc: "a barrier (__syncthreads) not reached by every thread"},
		{Label: "launch.resources", Classes: runtime, Pattern: `too many resources requested for launch|cudaErrorLaunchOutOfResources`,
			Doc: "a launch asked for more registers or shared memory than a block may have"},
		{Label: "launch.config", Classes: runtime, Pattern: `invalid configuration argument|cudaErrorInvalidConfiguration|invalid argument|cudaErrorInvalidValue`,
			Doc: "an invalid grid/block size or API argument"},
		{Label: "launch.arch", Classes: runtime, Pattern: `no kernel image is available|invalid device function|cudaErrorNoKernelImageForDevice`,
			Doc: "the binary has no code for the GPU it runs on"},
		{Label: "cuda.assert", Classes: runtime, Pattern: `device-side assert|Assertion .* failed`,
			Doc: "a device-side assert fired"},
		{Label: "cuda.oom", Classes: runtime, Pattern: `out of memory|cudaErrorMemoryAllocation`,
			Doc: "a device allocation failed"},
		{Label: "cuda.launch_failure", Classes: runtime, Pattern: `unspecified launch failure|launch failed|cudaErrorLaunchFailure|launch timed out`,
			Doc: "a kernel failed for a reason the runtime does not name"},
		// A Match rule, so that a runtime error named in stderr (the rules
		// above, scanned as one group) wins over the status line before it.
		{Label: "crash.exit_status", Classes: []string{refinement.ClassCrash}, Match: refinement.MatchExitStatus,
			Doc: "the program exited with a non-zero status (a failed CUDA error check)"},
		refinement.BuildTimeoutRule(buildStages...),
	}
}

// cudaFeatureRules are the cuda-synth features (the operation types of
// the CASS failure analysis, appendix A.6, and a few more).
func cudaFeatureRules() []refinement.FeatureRule {
	return []refinement.FeatureRule{
		{Name: "atomics", Pattern: `\batomic[A-Z]\w*\s*(?:<[^>]*>)?\s*\(|\bcuda::atomic|\bstd::atomic`, Doc: "atomic operations (atomicAdd, atomicCAS, ...)"},
		{Name: "syncthreads", Pattern: `\b__syncthreads(?:_count|_and|_or)?\s*\(|\.sync\s*\(\s*\)|\bthis_thread_block\b`, Doc: "block barriers (__syncthreads)"},
		{Name: "syncwarp", Pattern: `\b__syncwarp\s*\(`, Doc: "warp barriers (__syncwarp)"},
		{Name: "shared_memory", Pattern: `\b__shared__\b`, Doc: "__shared__ memory"},
		{Name: "dynamic_shared_memory", Pattern: `\bextern\s+__shared__\b`, Doc: "dynamically sized shared memory"},
		{Name: "local_array", Detect: hasLocalArray, Doc: "arrays local to a kernel or device function"},
		{Name: "global_memory", Detect: hasGlobalMemory, Doc: "kernels reading or writing global memory through pointer parameters"},
		{Name: "warp_intrinsics", Pattern: `\b__(?:shfl(?:_up|_down|_xor)?_sync|ballot_sync|any_sync|all_sync|uni_sync|activemask|match_(?:any|all)_sync|reduce_\w+_sync|popc|ffs|clz)\s*\(`,
			Doc: "warp-level intrinsics (__shfl*_sync, __ballot_sync, ...)"},
		{Name: "streams", Pattern: `\bcudaStream_t\b|\bcudaStreamCreate\w*\s*\(`, Doc: "CUDA streams"},
		{Name: "events", Pattern: `\bcudaEvent_t\b|\bcudaEventCreate\w*\s*\(|\bcudaEventRecord\s*\(`, Doc: "CUDA events"},
		{Name: "constant_memory", Pattern: `\b__constant__\b|\bcudaMemcpyToSymbol\s*\(`, Doc: "__constant__ memory"},
		{Name: "managed_memory", Pattern: `\bcudaMallocManaged\s*\(|\b__managed__\b`, Doc: "unified (managed) memory"},
		{Name: "control_flow", Detect: hasKernelControlFlow, Doc: "loops or branches inside kernels and device functions"},
		{Name: "device_function", Pattern: `\b__device__\b[^;{(]*\w\s*\(`, Doc: "__device__ helper functions"},
		{Name: "texture", Pattern: `\bcudaTextureObject_t\b|\btex[123]D\w*\s*[<(]|\bsurf[123]D\w*\s*[<(]`, Doc: "texture or surface memory"},
		{Name: "cooperative_groups", Pattern: `\bcooperative_groups\b|\bcg::`, Doc: "cooperative groups"},
		{Name: "half_precision", Pattern: `\b__half2?\b|\b__nv_bfloat162?\b|\bhalf2\b|\b__float2half\w*\s*\(`, Doc: "half or bfloat16 types"},
		{Name: "fast_math_intrinsics", Pattern: `\b__(?:expf|logf|sinf|cosf|powf|fdividef|fmaf_r[nzud]|fadd_r[nzud]|fmul_r[nzud]|saturatef)\s*\(|\brsqrtf?\s*\(`, Doc: "fast math intrinsics"},
		{Name: "double_precision", Pattern: `\bdouble\b`, Doc: "double-precision arithmetic"},
		{Name: "recursion", Detect: func(s *refinement.Source) bool { return s.Recursive() }, Doc: "recursive functions"},
		{Name: "templates", Pattern: `\btemplate\s*<`, Doc: "C++ templates"},
	}
}

var (
	deviceQualRE   = regexp.MustCompile(`\b__(?:global|device)__\b`)
	globalQualRE   = regexp.MustCompile(`\b__global__\b`)
	localArrayRE   = regexp.MustCompile(`(?:^|[;{}\s])(?:const\s+)?(?:unsigned\s+|signed\s+)?(?:int|float|double|char|short|long|bool|half|__half|size_t|u?int(?:8|16|32|64)_t|float[234]|int[234]|uint[234]|double2)\s+[A-Za-z_]\w*\s*\[[^\]]+\]`)
	sharedStmtRE   = regexp.MustCompile(`__shared__[^;]*$`)
	controlFlowRE  = regexp.MustCompile(`\b(?:if|for|while|switch)\s*\(|\bdo\b`)
	pointerParamRE = regexp.MustCompile(`\*`)
)

func deviceFuncs(s *refinement.Source) []refinement.CFunc {
	var out []refinement.CFunc
	for _, f := range s.Defs() {
		if deviceQualRE.MatchString(f.Prefix) {
			out = append(out, f)
		}
	}
	return out
}

// hasLocalArray: a fixed-size array declared inside a kernel or device
// function that is not __shared__.
func hasLocalArray(s *refinement.Source) bool {
	for _, f := range deviceFuncs(s) {
		for _, m := range localArrayRE.FindAllStringIndex(f.Body, -1) {
			// Is this declaration part of a __shared__ statement?
			stmtStart := strings.LastIndexAny(f.Body[:m[0]+1], ";{}")
			if !sharedStmtRE.MatchString(f.Body[stmtStart+1 : m[1]]) {
				return true
			}
		}
	}
	return false
}

// hasGlobalMemory: a __global__ kernel with a pointer parameter.
func hasGlobalMemory(s *refinement.Source) bool {
	for _, f := range s.Defs() {
		if globalQualRE.MatchString(f.Prefix) && pointerParamRE.MatchString(f.Params) {
			return true
		}
	}
	return false
}

// hasKernelControlFlow: loops or branches in a kernel or device function.
func hasKernelControlFlow(s *refinement.Source) bool {
	for _, f := range deviceFuncs(s) {
		if controlFlowRE.MatchString(f.Body) {
			return true
		}
	}
	return false
}

var (
	kernelLaunchRE = regexp.MustCompile(`<<<|cudaLaunchKernel|cudaLaunchCooperativeKernel|cuLaunchKernel`)
	globalFnRE     = regexp.MustCompile(`\b__global__\b`)
)

// suspectCUDA flags a CUDA program that launches no kernel (its output then
// cannot come from the GPU).
func suspectCUDA(answer string, _ runs.Task) string {
	code := refinement.ParseSource(answer).Code()
	var why []string
	if !globalFnRE.MatchString(code) {
		why = append(why, "defines no __global__ kernel")
	}
	if !kernelLaunchRE.MatchString(code) {
		why = append(why, "launches no kernel")
	}
	return strings.Join(why, "; ")
}

// ReferenceFile names a synthesised cuda-synth task's reference program
// in the task's files: the synthesiser's own solution, compiled to show
// the task can be done. It is not the program.cu the lane judges when an
// answer is blank, and it is not read for construct features (those come
// from the answer, as for every cuda-synth task) nor shown in examples.
const ReferenceFile = "reference.cu"

// Calls a synthesised reference program must not make: its output must
// not depend on input, the environment or the machine.
var referenceDeny = map[string]bool{
	"scanf": true, "fscanf": true, "getchar": true, "fgets": true, "fread": true, "read": true, "fopen": true,
	"open": true, "getenv": true, "system": true, "popen": true,
}

// cudaProgramInfo reports whether a block's info string names CUDA (or
// C++) source or the reference file.
func cudaProgramInfo(info string) bool {
	for _, w := range strings.Fields(info) {
		switch w {
		case "cuda", "cu", "c++", "cpp", "cxx", "cc", ReferenceFile, "reference":
			return true
		}
	}
	return false
}

// parseCUDABlock reads a cuda-synth task: the statement (a ```text
// block) and the reference program (a ```cuda block).
var localIncRE = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*"`)

// parseSynthBlock reads a synthesised cuda-synth task: the statement (a
// ```text block) and the reference program (a ```cuda block).
func parseSynthBlock(c *refinement.Candidate, b refinement.Block) string {
	blocks := b.Code
	var text, prog *refinement.Fenced
	for i := range blocks {
		b := &blocks[i]
		switch {
		case cudaProgramInfo(b.Info):
			if prog == nil {
				prog = b
			}
		case b.Info == "" || b.Info == "text" || b.Info == "txt" || b.Info == "markdown" || b.Info == "md":
			if text == nil {
				text = b
			}
		}
	}
	if text == nil {
		return "no ```text block with the task statement"
	}
	p := strings.TrimSpace(text.Body)
	switch {
	case len(p) < refinement.MinSynthPromptBytes:
		return fmt.Sprintf("the task statement has %d bytes (at least %d)", len(p), refinement.MinSynthPromptBytes)
	case len(p) > refinement.MaxSynthPromptBytes:
		return fmt.Sprintf("the task statement has %d bytes (at most %d)", len(p), refinement.MaxSynthPromptBytes)
	}
	c.Prompt = p
	if prog == nil {
		return "no ```cuda block with the reference program"
	}
	ref := strings.TrimSpace(prog.Body)
	if len(ref) > refinement.MaxSynthFileBytes {
		return fmt.Sprintf("the reference program has %d bytes (at most %d)", len(ref), refinement.MaxSynthFileBytes)
	}
	src := refinement.ParseSource(ref)
	defined := map[string]bool{}
	for _, f := range src.Defs() {
		defined[f.Name] = true
	}
	switch {
	case !globalFnRE.MatchString(src.Code()):
		return "the reference program defines no __global__ kernel"
	case !kernelLaunchRE.MatchString(src.Code()):
		return "the reference program launches no kernel"
	case !defined["main"]:
		return "the reference program does not define main"
	}
	if bad := denied(src.Calls(), referenceDeny); bad != "" {
		return fmt.Sprintf("the reference program calls %s (its output must not depend on input or the environment)", bad)
	}
	if localIncRE.MatchString(ref) {
		return `the reference program includes a local header ("..."): it must be one file`
	}
	c.Files = map[string]string{ReferenceFile: ref + "\n"}
	return ""
}

func denied(calls, deny map[string]bool) string {
	var bad []string
	for name := range calls {
		if deny[name] {
			bad = append(bad, name)
		}
	}
	sort.Strings(bad)
	return strings.Join(bad, ", ")
}

// buildStages are the lane's build stages: a timeout there is a build
// step's (timeout.build), not the program's.
var buildStages = []string{StageCUDACompile, StagePTX, StageSASS, StageHostAsm, StageHipify,
	StageHIPCompileAMD, StageRDNA3, StageHIPCompileNvidia}
