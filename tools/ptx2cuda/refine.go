package ptx2cuda

// The lane's refinement rules: the taxonomy of check, nvcc, CUDA runtime
// and comparison failures, construct features of the reference kernels,
// the suspicion check (embedded PTX), and the resynthesis format (new
// kernels with their harness, resynth.go).

import (
	"encoding/json"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
)

// RefinementRules returns the lane's rules for package refinement.
// Resynthesis (resynth.go): the synthesiser writes kernels with their
// harness (kernel.cu and meta.json); the lane's validator compiles each to
// PTX in the sandbox and hands the PTX on (a refinement.Preparer), and
// the task set renders it as a corpus variant's task.
func RefinementRules() (refinement.LaneRules, error) {
	synth, err := synthFormat()
	if err != nil {
		return refinement.LaneRules{}, err
	}
	return refinement.LaneRules{
		Lane:    LaneName,
		Rules:   taxonomy(),
		Suspect: suspect,
		Features: &refinement.FeatureTable{Files: func(name string) bool { return name == FileKernel },
			Rules: featureRules()},
		// A task is its PTX and its launch configuration (the harness, or
		// a program task's program.json).
		// The input seed does not make two tasks differ (the model never
		// sees it): a synthesised copy of a corpus kernel is a duplicate.
		Identity: refinement.Identity{Files: func(name string) bool {
			return name == FilePTX || name == FileHarness || name == FileProgramSpec
		}, NoPrompt: true, File: withoutSeed},
		Synth: synth,
	}, nil
}

// withoutSeed is a task file as its identity sees it: harness.json without
// its seed.
func withoutSeed(name, body string) string {
	if name != FileHarness {
		return body
	}
	var h HarnessSpec
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		return body
	}
	h.Seed = 0
	b, err := json.Marshal(h)
	if err != nil {
		return body
	}
	return string(b)
}

// suspect flags an answer that carries the PTX over (EmbeddedPTX).
func suspect(answer string, _ runs.Task) string { return EmbeddedPTX(answer) }

// taxonomy is the lane's table: its own checks, nvcc's diagnostics of the
// answer built into the harness, CUDA runtime failures the harness
// reports, and the comparison's findings.
func taxonomy() []refinement.Rule {
	cc := []string{refinement.ClassCompileError}
	runtime := []string{refinement.ClassCrash, refinement.ClassTimeout, refinement.ClassResourceLimit}
	wrong := []string{refinement.ClassWrongOutput}
	return []refinement.Rule{
		{Label: "cheat.embedded_ptx", Classes: []string{string(ClassEmbeddedPTX)},
			Doc: "the answer carries the PTX over (inline asm, PTX text, module loading) instead of decompiling it"},
		{Label: "compile.redefines_program", Classes: cc, Stages: []string{StageCheck}, Pattern: `defines the program's (device variables again|macros otherwise)`,
			Doc: "a program task's answer defines a __constant__ or __device__ variable of the program again (its copy would shadow the one the host code fills), or one of its macros otherwise"},
		{Label: "compile.kernel_name", Classes: cc, Stages: []string{StageCheck},
			Doc: "the answer defines no __global__ function with the task's kernel name"},
		{Label: "compile.signature", Classes: cc, Pattern: `cannot be used to initialize an entity of type "void \(\*\)|undefined reference to .kiln_answer::`,
			Doc: "the kernel's parameter types differ from the original's (in a program task whose program declares the kernel first, a link error names kiln_answer::<kernel>)"},
		{Label: "compile.main", Classes: cc, Pattern: `function "main" has already been defined|redefinition of .*main|multiple definition of .main`,
			Doc: "the answer defines main (the harness provides it)"},
		{Label: "compile.include", Classes: cc, Pattern: `cannot open source file|No such file or directory`,
			Doc: "a header that does not exist"},
		{Label: "compile.host_device", Classes: cc, Pattern: `calling a __(host|device|global)__ function.* from a __(host|device|global)__ function.* is not allowed|is undefined in device code|not allowed in (device|host) code`,
			Doc: "host code called from the device, or the reverse"},
		{Label: "compile.memory_space", Classes: cc, Pattern: `memory space specifier|initializer not allowed for __shared__|__shared__ variable|__constant__ variable`,
			Doc: "a __shared__ or __constant__ variable used against its rules"},
		{Label: "compile.undefined_identifier", Classes: cc, Pattern: `identifier ".*" is undefined|was not declared in this scope|has no member|undeclared identifier`,
			Doc: "a name (function, variable, intrinsic, macro) that is not declared"},
		{Label: "compile.overload", Classes: cc, Pattern: `no instance of (overloaded )?function .* matches the argument list|more than one instance of overloaded function`,
			Doc: "no overload of a function (often atomic*, __shfl*_sync or math) fits the argument types"},
		{Label: "compile.type", Classes: cc, Pattern: `a value of type .* cannot be (used to initialize|assigned to)|argument of type .* is incompatible with parameter of type|expression must have .*type|operand types are incompatible|invalid type conversion|expression must be a modifiable lvalue`,
			Doc: "an expression of the wrong type"},
		{Label: "compile.redefinition", Classes: cc, Pattern: `has already been (defined|declared)|redefinition of`,
			Doc: "a name defined twice"},
		{Label: "compile.syntax", Classes: cc, Pattern: `expected an? |expected a declaration|syntax error|unexpected end of file|unrecognized token|this declaration has no storage class or type specifier`,
			Doc: "code the compiler cannot parse"},
		{Label: "compile.ptxas", Classes: cc, Pattern: `ptxas (error|fatal)|uses too much (shared|local) data|too many resources`,
			Doc: "the kernel needs more registers or shared memory than the target allows, or PTX assembly failed"},
		{Label: "compile.other", Classes: cc, Doc: "another CUDA compile error"},

		{Label: "cuda.illegal_address", Classes: runtime, Pattern: `illegal memory access|cudaErrorIllegalAddress|out of bounds|cudaErrorInvalidAddressSpace|not supported on global/shared address space`,
			Doc: "the kernel touched memory outside its buffers"},
		{Label: "cuda.misaligned", Classes: runtime, Pattern: `misaligned address|cudaErrorMisalignedAddress`,
			Doc: "the kernel accessed memory at a misaligned address"},
		{Label: "launch.resources", Classes: runtime, Pattern: `too many resources requested for launch|cudaErrorLaunchOutOfResources`,
			Doc: "the launch needs more registers or shared memory than a block may have (launch bounds dropped?)"},
		{Label: "launch.config", Classes: runtime, Pattern: `invalid configuration argument|cudaErrorInvalidConfiguration|invalid argument|cudaErrorInvalidValue`,
			Doc: "the launch configuration or an API argument was refused"},
		{Label: "cuda.assert", Classes: runtime, Pattern: `device-side assert|Assertion .* failed`,
			Doc: "a device-side assert fired"},
		{Label: "cuda.launch_failure", Classes: runtime, Pattern: `unspecified launch failure|launch failed|cudaErrorLaunchFailure`,
			Doc: "the kernel failed for a reason the runtime does not name"},
		{Label: "crash.exit_status", Classes: []string{refinement.ClassCrash}, Match: refinement.MatchExitStatus,
			Doc: "the harness exited with a non-zero status (a CUDA error it caught)"},

		{Label: "wrong.input_modified", Classes: wrong, Pattern: `modified its input`,
			Doc: "the kernel wrote a buffer the original only reads"},
		{Label: "wrong.output_size", Classes: wrong, Pattern: `output size`,
			Doc: "the harness's output file had the wrong size"},
		{Label: "wrong.integer", Classes: wrong, Pattern: `integers must match exactly`,
			Doc: "an integer output differs from the original's"},
		{Label: "wrong.non_finite", Classes: wrong, Pattern: `NAE inf`,
			Doc: "an output holds NaN or infinity where the original's does not (or the reverse)"},
		{Label: "wrong.nae", Classes: wrong, Pattern: `NAE .* > `,
			Doc: "a floating output's normalised absolute error is over the threshold (1e-3)"},
		{Label: "wrong.output", Classes: wrong, Doc: "the outputs differ from the original kernel's"},
		refinement.BuildTimeoutRule(StageCheck, StageCompile),
	}
}

// featureRules are construct features of the reference kernels (what a
// decompiler must recover from the PTX).
func featureRules() []refinement.FeatureRule {
	return []refinement.FeatureRule{
		{Name: "shared_memory", Pattern: `\b__shared__\b`, Doc: "__shared__ memory"},
		{Name: "dynamic_shared_memory", Pattern: `\bextern\s+__shared__\b`, Doc: "dynamically sized shared memory"},
		{Name: "syncthreads", Pattern: `\b__syncthreads\s*\(`, Doc: "block barriers (bar.sync)"},
		{Name: "warp_shuffle", Pattern: `\b__shfl(?:_up|_down|_xor)?_sync\s*\(`, Doc: "warp shuffles (shfl.sync)"},
		{Name: "atomics", Pattern: `\batomic[A-Z]\w*\s*\(`, Doc: "atomic operations (atom, red)"},
		{Name: "unroll_pragma", Pattern: `#\s*pragma\s+unroll`, Doc: "loops unrolled by #pragma unroll (rolled back in the prompt)"},
		{Name: "launch_bounds", Pattern: `\b__launch_bounds__\s*\(`, Doc: "__launch_bounds__ (.maxntid)"},
		{Name: "grid_stride_loop", Pattern: `\bgridDim\.x\b`, Doc: "grid-stride loops"},
		{Name: "vector_types", Pattern: `\b(?:float|int)[24]\b`, Doc: "vector loads and stores (float4, ...)"},
		{Name: "transcendental", Pattern: `\b(?:expf|tanhf|logf|sinf|cosf|powf|rsqrtf|sqrtf)\s*\(`, Doc: "math library calls (ex2.approx, rsqrt, sqrt, ...)"},
		{Name: "device_function", Pattern: `\b__device__\b[^;{(]*\w\s*\(`, Doc: "__device__ helper functions (inlined in the PTX)"},
		{Name: "2d_indexing", Pattern: `\b(?:blockIdx|threadIdx)\.y\b`, Doc: "2D thread and block indexing"},
	}
}
