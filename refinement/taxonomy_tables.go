package refinement

// The generic taxonomy table (lanes bring their own, see LaneRules). Each is a function returning a fresh slice,
// so no package state can be changed through them. Patterns are RE2,
// matched case-insensitively per diagnostic line (see Rule).

// buildStages are the stages where a timeout means a build step ran out
// of time (timeout.build) rather than the program (timeout). A lane whose
// build stages have other names adds its own timeout.build rule for them
// (BuildTimeoutRule).
func buildStages() []string {
	return []string{"extract", "convert", "assemble", "compile", "link"}
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
		{Label: "task.reference_error", Classes: []string{ClassReferenceError},
			Doc: "a task fault: the task's own reference failed (never the answer's; not counted or targeted)"},
		{Label: "compile.other", Classes: []string{ClassCompileError}, Doc: "a compiler error"},
		{Label: "asm.other", Classes: []string{ClassAssembleError}, Doc: "an assembler error"},
	}
}

// BuildTimeoutRule is the timeout.build rule for a lane's own build
// stages: a lane whose build stages are not the generic ones (extract,
// convert, assemble, compile, link) ends its rules with it.
func BuildTimeoutRule(stages ...string) Rule {
	return Rule{Label: "timeout.build", Classes: []string{ClassTimeout}, Stages: stages,
		Doc: "a build step ran out of time"}
}
