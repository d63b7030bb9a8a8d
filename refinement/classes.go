package refinement

// Failure classes as the verifiers write them into runs.Verdict.Class. They
// mirror tools.FailureClass (refinement may import only runs and prompts);
// a test keeps the two in step. Lanes add classes of their own in their
// rules (tools/<lane>).
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
	// ClassReferenceError is a task fault (runs.ClassReferenceError): the
	// task's own reference failed. It is never counted as a failure nor
	// targeted (runs.Verdict.Outcome).
	ClassReferenceError = "reference_error"
)
