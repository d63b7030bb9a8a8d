// Package tools holds the tool contract (a name, a JSON schema and
// Call(ctx, args)) that models call during an attempt, the lane verifiers that
// judge a final answer, and the verdict they return. Lane verifiers are
// compositions of tools running in sandboxes; see the sub-packages per lane
// (tools/c2x86, ...).
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Tool is one capability a model may call during an attempt.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON schema of the arguments object.
	Schema() json.RawMessage
	// Call runs the tool. The returned text goes back to the model. An error
	// means the tool itself broke (not that the model's code failed to
	// compile: that is a normal result text).
	Call(ctx context.Context, args json.RawMessage) (string, error)
}

// Registry is a set of tools by name.
type Registry struct {
	byName map[string]Tool
}

// NewRegistry returns a registry holding ts. Duplicate names are an error.
func NewRegistry(ts ...Tool) (*Registry, error) {
	r := &Registry{byName: map[string]Tool{}}
	for _, t := range ts {
		if _, dup := r.byName[t.Name()]; dup {
			return nil, fmt.Errorf("tools: duplicate tool name %q", t.Name())
		}
		r.byName[t.Name()] = t
	}
	return r, nil
}

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	if r == nil {
		return nil, false
	}
	t, ok := r.byName[name]
	return t, ok
}

// List returns the tools sorted by name.
func (r *Registry) List() []Tool {
	if r == nil {
		return nil
	}
	out := make([]Tool, 0, len(r.byName))
	for _, t := range r.byName {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// FailureClass is why an answer failed. Lanes may add their own.
type FailureClass string

const (
	ClassNone          FailureClass = ""          // passed
	ClassNoAnswer      FailureClass = "no_answer" // nothing could be extracted
	ClassAssembleError FailureClass = "assemble_error"
	ClassCompileError  FailureClass = "compile_error"
	ClassLinkError     FailureClass = "link_error"
	ClassCrash         FailureClass = "crash" // killed by a signal
	ClassTimeout       FailureClass = "timeout"
	ClassWrongOutput   FailureClass = "wrong_output"
	ClassResourceLimit FailureClass = "resource_limit" // memory, processes, output or file size cap
	ClassModelError    FailureClass = "model_error"    // the model call failed for good
	ClassInternal      FailureClass = "internal_error" // our own fault (toolchain missing, disk full)
	// ClassReferenceError is a task-side fault: the task's own reference
	// (a KernelBench problem's Model, a Triton reference kernel) timed out,
	// crashed, ran out of memory or was non-deterministic before or while
	// the answer was judged. It is never the answer's failure: not counted
	// as a pass or a fail, never targeted by refinement, listed in reports
	// as a task fault.
	ClassReferenceError FailureClass = "reference_error"
)

// TaskFault reports whether a verdict blames the task, not the answer.
func (v Verdict) TaskFault() bool { return v.Class == ClassReferenceError }

// ArtifactDomain is the verdict artifact in which a lane records the
// domain of the answer's program (a label for reports).
const ArtifactDomain = "domain"

// ErrBadItem marks an item a lane cannot verify against (a missing or
// malformed input file): the caller's input is wrong, not the answer.
var ErrBadItem = errors.New("bad item")

// Stage is one step a verifier went through.
type Stage struct {
	Name     string        `json:"name"`
	OK       bool          `json:"ok"`
	Skipped  bool          `json:"skipped,omitempty"`
	Detail   string        `json:"detail,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Verdict is a verifier's judgement of one answer.
type Verdict struct {
	Pass  bool         `json:"pass"`
	Class FailureClass `json:"class,omitempty"`
	// Stage is the name of the last stage reached.
	Stage  string  `json:"stage"`
	Stages []Stage `json:"stages"`
	// Diagnostic is a short text for a repair turn: assembler errors, the
	// first differing output lines, the crash signal.
	Diagnostic   string             `json:"diagnostic,omitempty"`
	Measurements map[string]float64 `json:"measurements,omitempty"`
	// Suspicion lists why the answer seems to sidestep the task (found
	// while verifying it: no custom kernel launched, results cached...).
	// A suspected answer never passes.
	Suspicion []string `json:"suspicion,omitempty"`
	// Artifacts are named outputs worth keeping (the converted assembly,
	// the program's output, ...). Stored in the blob store by the caller.
	Artifacts map[string][]byte `json:"-"`
}

// Item is what a lane verifies an answer against: the task's input files
// (for c2x86: "function.c", "driver.c") and metadata.
type Item struct {
	Lane  string            `json:"lane"`
	Files map[string]string `json:"files"`
	Meta  map[string]string `json:"meta,omitempty"`
}

// Lane is a kind of task with its answer extractor, its model-facing tools
// and its verifier.
type Lane interface {
	Name() string
	// Extract pulls the answer (code) out of a model's final message.
	// ok is false when there is none.
	Extract(text string) (answer string, ok bool)
	// Tools returns the tools a model may call while solving item.
	Tools(item Item) []Tool
	// Verify judges answer against item. An error means the verifier could
	// not run (internal fault), not that the answer is wrong.
	Verify(ctx context.Context, item Item, answer string) (Verdict, error)
}

// Completer is a lane whose verdicts may leave stages pending (Skipped:
// the host lacked what they need, such as a GPU) and that can finish them
// later from the verdict's own record, without redoing the other stages
// or needing the toolchains that made them (`kiln rescore --pending` on a
// GPU host).
type Completer interface {
	// Complete returns prev with its pending stages run. prev carries the
	// stored artifacts. An error means they could not be run here (no GPU,
	// an artifact missing), not that the answer is wrong.
	Complete(ctx context.Context, item Item, prev Verdict) (Verdict, error)
}

// TaskChecker is a lane that can check a task's own input (a problem's
// reference) before any model is asked to solve it. The engine calls
// CheckTask before an attempt's first model call; a verdict whose
// TaskFault() is true ends the attempt with it, and no model is called.
// Any other verdict (the zero one included) lets the attempt go on: a
// check that cannot run on this host (no GPU) is no fault. An error means
// the check itself broke, as a verifier's error does. Implementations
// cache their checks: the engine asks once per attempt.
type TaskChecker interface {
	CheckTask(ctx context.Context, item Item) (Verdict, error)
}

// PendingStages lists the stages of v that were skipped.
func PendingStages(v Verdict) []string {
	var out []string
	for _, s := range v.Stages {
		if s.Skipped {
			out = append(out, s.Name)
		}
	}
	return out
}
