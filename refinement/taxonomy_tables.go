package refinement

// The built-in taxonomy tables. Each is a function returning a fresh slice,
// so no package state can be changed through them. Patterns are RE2,
// matched case-insensitively per diagnostic line (see Rule).

// buildStages are the stages where a timeout means a build step ran out
// of time (timeout.build) rather than the program (timeout).
func buildStages() []string {
	return []string{"extract", "convert", "assemble", "compile", "link",
		// tools/cudasynth's build stages.
		"cuda-compile", "ptx", "sass", "host-asm", "hipify", "hip-compile-amd", "rdna3", "hip-compile-nvidia"}
}

// c2x86Rules are the C -> x86-64 lane's rules: GNU as and ld diagnostics
// (as the lane quotes them: "answer.s:12: Error: ...", "ld: ...") and the
// float converter's errors.
func c2x86Rules() []Rule {
	asm := []string{ClassAssembleError}
	return []Rule{
		{Label: "asm.forbidden", Classes: asm, Pattern: `\.(incbin|include) is not allowed`,
			Doc: "the answer uses a directive that reads files of the build machine"},
		{Label: "asm.float_const", Classes: asm, Pattern: `Error: \.(float|single|double)\b`,
			Doc: "a symbolic floating constant (.float/.double) the converter rejects"},
		{Label: "asm.float_const", Classes: asm, Stages: []string{"convert"},
			Doc: "a symbolic floating constant (.float/.double) the converter rejects"},
		{Label: "asm.suffix", Classes: asm,
			Pattern: "invalid instruction suffix|incorrect register .* used with .* suffix|not allowed with `|operand size mismatch|ambiguous operand size|invalid register for .* suffix",
			Doc:     "the instruction suffix (b/w/l/q) or operand size does not match the operands"},
		{Label: "asm.mnemonic", Classes: asm, Pattern: `no such instruction`,
			Doc: "an instruction the assembler does not know (typo, wrong syntax mode, pseudo-instruction)"},
		{Label: "asm.register", Classes: asm, Pattern: `bad register name|invalid register|register type mismatch|invalid use of register|is not a valid base/index expression|base register expected`,
			Doc: "a register name that does not exist or cannot be used there"},
		{Label: "asm.operand", Classes: asm, Pattern: `operand type mismatch|number of operands mismatch|invalid operands|expecting scale factor|too many memory references|invalid (?:segment|displacement)|missing or invalid immediate|only supported in 64-bit mode|not supported in 64-bit mode`,
			Doc: "operands of the wrong kind or number for the instruction"},
		{Label: "asm.symbol", Classes: asm, Pattern: `is already defined|can't resolve|symbol .* is undefined|local label .* is not defined|redefined|invalid attempt to declare`,
			Doc: "a label defined twice or a symbol that cannot be resolved"},
		{Label: "asm.directive", Classes: asm, Pattern: `unknown pseudo-op|unknown section|CFI instruction used without|\.cfi_\S+ without|unknown \.\w+ directive|\.size expression .* does not evaluate`,
			Doc: "an unknown or misused assembler directive"},
		{Label: "asm.syntax", Classes: asm, Pattern: `junk .*after|junk at end of line|bad expression|unbalanced parenthesis|expecting operand after|missing '\)'|missing '\]'|invalid character|expected comma|missing operand|bad or irreducible|bad memory operand|invalid constant|unexpected end of file|expecting .* got`,
			Doc: "a line the assembler cannot parse (stray text, broken expression, wrong syntax mode)"},
		{Label: "asm.other", Classes: asm, Doc: "another assembler error"},
	}
}

// cudaRules are the cuda-synth lane's rules (tools/cudasynth): nvcc front
// end (EDG) and host compiler diagnostics at stage cuda-compile, the
// lane's own checks (ptx: no kernel; host-asm: no main; sass), hipify's
// unsupported constructs, hipcc (clang) and the RDNA3 check, and CUDA
// runtime errors as programs and compute-sanitizer print them.
func cudaRules() []Rule {
	cc := []string{ClassCompileError}
	hip := []string{ClassHIPCompileError}
	runtime := []string{ClassCrash, ClassWrongOutput, ClassTimeout, ClassResourceLimit}
	return []Rule{
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

		{Label: "hipify.unsupported", Classes: []string{ClassTranslateUnsupported},
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
		{Label: "crash.exit_status", Classes: []string{ClassCrash}, Match: matchExitStatus,
			Doc: "the program exited with a non-zero status (a failed CUDA error check)"},
	}
}

// genericRules are the class-level rules every lane falls back to: link
// errors, crash signals, limits, timeouts, output comparisons, model
// errors.
func genericRules() []Rule {
	link := []string{ClassLinkError}
	crash := []string{ClassCrash}
	limit := []string{ClassResourceLimit}
	wrong := []string{ClassWrongOutput}
	model := []string{ClassModelError}
	return []Rule{
		{Label: "link.undefined_symbol", Classes: link, Pattern: "undefined reference to|undefined symbol|unresolved external",
			Doc: "a function or object the program needs is not defined (misspelt name, missing .globl, static helper)"},
		{Label: "link.multiple_definition", Classes: link, Pattern: "multiple definition of|duplicate symbol",
			Doc: "a symbol defined twice (the answer defines main, or a name the driver defines)"},
		{Label: "link.relocation", Classes: link, Pattern: "relocation .* (against|truncated|out of range)|can not be used when making|recompile with -fPIC",
			Doc: "an address form the linker cannot relocate"},
		{Label: "link.other", Classes: link, Doc: "another linker error"},

		{Label: "crash.segv", Classes: crash, Pattern: `SIGSEGV|segmentation fault`,
			Doc: "a segmentation fault (bad address, broken stack frame, misaligned stack for SSE)"},
		{Label: "crash.bus", Classes: crash, Pattern: `SIGBUS|bus error`, Doc: "a bus error"},
		{Label: "crash.fpe", Classes: crash, Pattern: `SIGFPE|floating point exception`,
			Doc: "an arithmetic trap: integer division by zero or overflow (idiv)"},
		{Label: "crash.illegal", Classes: crash, Pattern: `SIGILL|illegal instruction`,
			Doc: "an illegal instruction (execution ran into data, ud2)"},
		{Label: "crash.abort", Classes: crash, Pattern: `SIGABRT|stack smashing detected|double free|free\(\): invalid|malloc\(\): |aborted`,
			Doc: "the program aborted (libc detected corruption, assert)"},
		{Label: "crash.trap", Classes: crash, Pattern: `SIGTRAP`, Doc: "a breakpoint trap (int3)"},
		{Label: "crash.other", Classes: crash, Doc: "killed by another signal"},

		{Label: "timeout.build", Classes: []string{ClassTimeout}, Stages: buildStages(),
			Doc: "a build step ran out of time"},
		{Label: "timeout", Classes: []string{ClassTimeout}, Doc: "the program did not finish in time (endless loop, wrong branch)"},

		{Label: "resource.output", Classes: limit, Pattern: `output size limit|output limit`,
			Doc: "the program printed more than the output cap (runaway print loop)"},
		{Label: "resource.file_size", Classes: limit, Pattern: `file size limit|SIGXFSZ`, Doc: "a file grew past the size limit"},
		{Label: "resource.cpu", Classes: limit, Pattern: `CPU time limit|SIGXCPU`, Doc: "the CPU time limit was reached"},
		{Label: "resource.memory", Classes: limit, Pattern: `memory|cannot allocate|bad_alloc`, Doc: "the memory limit was reached"},
		{Label: "resource_limit", Classes: limit, Doc: "another resource limit"},

		{Label: "wrong.numeric", Classes: wrong, Match: matchNumeric,
			Doc: "same output layout; only floating-point values differ, and by little (a constant or precision slightly off)"},
		{Label: "wrong.value", Classes: wrong, Match: matchValue,
			Doc: "same output layout; numbers differ by more (wrong arithmetic, sign, width, branch)"},
		{Label: "wrong.line_count", Classes: wrong, Match: matchLineCount,
			Doc: "the program printed fewer or more lines than the reference"},
		{Label: "wrong.exit_status", Classes: wrong, Match: matchExitOnly,
			Doc: "the output matches but the exit status differs"},
		{Label: "wrong.output", Classes: wrong, Doc: "the program printed different output"},

		{Label: "no_answer", Classes: []string{ClassNoAnswer}, Doc: "no code could be extracted from the answer"},

		{Label: "model.context_length", Classes: model, Pattern: `context length|maximum context|context window|too many tokens|prompt is too long`,
			Doc: "the conversation outgrew the model's context"},
		{Label: "model.rate_limit", Classes: model, Pattern: `\b429\b|rate limit`, Doc: "the server kept refusing for rate limits"},
		{Label: "model.truncated", Classes: model, Pattern: `: truncated`, Doc: "the stream ended early"},
		{Label: "model.not_found", Classes: model, Pattern: `model_not_found|model .* not found`, Doc: "the model is not served"},
		{Label: "model.auth", Classes: model, Pattern: `: auth|\b40[13]\b|unauthori[sz]ed|forbidden`, Doc: "the server refused the credentials"},
		{Label: "model.bad_request", Classes: model, Pattern: `bad_request|\b400\b`, Doc: "the server rejected the request"},
		{Label: "model.bad_response", Classes: model, Pattern: `bad_response|cannot parse|invalid json`, Doc: "the server's answer could not be read"},
		{Label: "model.retryable", Classes: model, Pattern: `retryable|\b5\d\d\b|connection (refused|reset)|timeout`, Doc: "the server kept failing transiently"},
		{Label: "model_error", Classes: model, Doc: "the model call failed for good"},

		{Label: "internal_error", Classes: []string{ClassInternal}, Doc: "kiln's own fault (toolchain missing, disk full)"},
		{Label: "compile.other", Classes: []string{ClassCompileError}, Doc: "a compiler error"},
		{Label: "asm.other", Classes: []string{ClassAssembleError}, Doc: "an assembler error"},
	}
}
