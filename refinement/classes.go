package refinement

// Failure classes as the verifiers write them into runs.Verdict.Class. They
// mirror tools.FailureClass (refinement may import only runs and prompts);
// a test keeps the two in step.
const (
	ClassNoAnswer      = "no_answer"
	ClassAssembleError = "assemble_error"
	ClassCompileError  = "compile_error"
	ClassLinkError     = "link_error"
	ClassCrash         = "crash"
	ClassTimeout       = "timeout"
	ClassWrongOutput   = "wrong_output"
	ClassResourceLimit = "resource_limit"
	ClassModelError    = "model_error"
	ClassInternal      = "internal_error"

	// cuda-synth's own classes (tools/cudasynth).
	ClassTranslateUnsupported = "translate_unsupported"
	ClassHIPCompileError      = "hip_compile_error"
)

// Lane names refinement has tables for. Other lanes get the generic
// taxonomy and no features.
const (
	LaneC2X86     = "c2x86"
	LaneCUDASynth = "cuda-synth"
)
