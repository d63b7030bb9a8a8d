package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// CampaignState is where a campaign is in its life; see the package doc for
// the allowed transitions.
type CampaignState string

// Campaign states.
const (
	CampaignQueued    CampaignState = "queued"
	CampaignRunning   CampaignState = "running"
	CampaignCancelled CampaignState = "cancelled"
	CampaignDone      CampaignState = "done"
	CampaignFailed    CampaignState = "failed"
)

// TaskState is where a task is in its life; see the package doc.
type TaskState string

// Task states.
const (
	TaskQueued TaskState = "queued"
	TaskLeased TaskState = "leased"
	TaskDone   TaskState = "done"
)

// campaignFrom returns the states a campaign may move from into to. Setting
// the state a campaign is already in is allowed (to update the note) except
// for the terminal states done and cancelled. A nil result means to is not a
// campaign state.
func campaignFrom(to CampaignState) []CampaignState {
	switch to {
	case CampaignQueued:
		return []CampaignState{CampaignQueued, CampaignRunning, CampaignFailed}
	case CampaignRunning:
		return []CampaignState{CampaignQueued, CampaignRunning}
	case CampaignCancelled:
		return []CampaignState{CampaignQueued, CampaignRunning}
	case CampaignDone:
		return []CampaignState{CampaignRunning}
	case CampaignFailed:
		return []CampaignState{CampaignQueued, CampaignRunning, CampaignFailed}
	}
	return nil
}

// CanTransition reports whether a campaign may move from one state to another.
func CanTransition(from, to CampaignState) bool {
	for _, f := range campaignFrom(to) {
		if f == from {
			return true
		}
	}
	return false
}

// Valid reports whether st is a known campaign state.
func (st CampaignState) Valid() bool { return campaignFrom(st) != nil }

// Campaign is one submitted campaign.
type Campaign struct {
	ID, Name, Lane string
	Spec           []byte // YAML as submitted
	// SpecDir is the folder the spec's relative paths (corpus, script)
	// resolve against: the spec file's folder when it was submitted.
	SpecDir string
	// Parent is the id of the campaign this one was forked from
	// (ForkCampaign), "" for a campaign created from a spec.
	Parent    string
	State     CampaignState
	Round     int
	Note      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Task is one unit of work: one item of one round, to be attempted once per
// lease until judged.
type Task struct {
	ID, CampaignID string
	Round          int
	Key            string // unique per campaign, e.g. "r0/itemid#0"
	Lane           string
	Files          map[string]string
	Meta           map[string]string
	Categories     []string
	Prompt         string // optional rendered user prompt
	State          TaskState
	Leases         int
	CreatedAt      time.Time
}

// Lease is a worker's claim on a task. Number is the attempt number: the
// task's lease count after the claim. A lease is current while the task is
// leased and its lease count still equals Number.
type Lease struct {
	Task    Task
	Number  int
	Worker  string
	Expires time.Time
}

// Usage is what an attempt cost.
type Usage struct {
	PromptTokens, CompletionTokens, ReasoningTokens int
	PromptSource, CompletionSource, ReasoningSource string
	LatencyMS, TTFTMS                               int64
	Calls                                           int
}

// Attempt is one model answer to a task.
type Attempt struct {
	ID, TaskID                    string
	Number                        int
	Endpoint, Model               string
	Answer                        string
	Transcript                    []byte // JSON
	Usage                         Usage
	Turns, ToolCalls, RepairTurns int
	Error                         string
	StartedAt, FinishedAt         time.Time
}

// Verdict is a judgement of an attempt. Revision 0 is the original verdict
// written by Finish; revision n is the nth rescore.
type Verdict struct {
	ID, AttemptID, TaskID string
	Revision              int
	Pass                  bool
	Class, Stage          string
	Stages                []byte // JSON
	Diagnostic            string
	Measurements          map[string]float64
	Artifacts             map[string]string // name -> blob hash
	Toolchain             map[string]string
	Policy                string
	// Labels are what refinement reads from the verdict (failure label,
	// construct features, categories, domain), computed when the verdict
	// was written and stored with it; nil for verdicts written before
	// labels were stored (readers compute them then).
	Labels    *VerdictLabels
	CreatedAt time.Time
}

// ClassReferenceError is the verdict class of a task-side fault (the
// task's own reference failed); it is the same string as
// tools.ClassReferenceError. Such a verdict is neither a pass nor a fail.
const ClassReferenceError = "reference_error"

// TaskFault reports whether v blames the task, not the answer.
func (v Verdict) TaskFault() bool { return !v.Pass && v.Class == ClassReferenceError }

// Pending reports whether v passed every stage that ran but has stages left
// for another host (skipped stages): not yet a pass, not a failure.
func (v Verdict) Pending() bool {
	return v.Pass && StagesPending(v.Stages)
}

// Outcome is what a verdict says of its answer as every count, rate and
// export reads it. Only OutcomePass and OutcomeFail are judged: rates are
// over those two; a pending verdict and a task fault are shown apart and
// never counted as a pass or a fail.
type Outcome string

// Outcomes.
const (
	// OutcomePass: the verdict passed and no stage is pending.
	OutcomePass Outcome = "pass"
	// OutcomeFail: the answer failed (any class but reference_error).
	OutcomeFail Outcome = "fail"
	// OutcomePending: every stage that ran passed and stages are left for
	// another host (the stored pass flag is true).
	OutcomePending Outcome = "pending"
	// OutcomeTaskFault: the task's own reference failed
	// (ClassReferenceError); the answer was not judged.
	OutcomeTaskFault Outcome = "task_fault"
)

// Outcome classifies v (it parses the stages of a passing verdict).
func (v Verdict) Outcome() Outcome {
	switch {
	case v.TaskFault():
		return OutcomeTaskFault
	case !v.Pass:
		return OutcomeFail
	case StagesPending(v.Stages):
		return OutcomePending
	}
	return OutcomePass
}

// Judged reports whether the outcome counts in rates (a pass or a fail).
func (o Outcome) Judged() bool { return o == OutcomePass || o == OutcomeFail }

// StagesPending reports whether a verdict's stages JSON has a skipped
// stage.
func StagesPending(stages []byte) bool {
	if len(stages) == 0 {
		return false
	}
	var ss []struct {
		Skipped bool `json:"skipped"`
	}
	if json.Unmarshal(stages, &ss) != nil {
		return false
	}
	for _, s := range ss {
		if s.Skipped {
			return true
		}
	}
	return false
}

// VerdictLabels describe a verdict for analysis: how it failed and what
// the task is made of. runs stores them as given (the labelling rules are
// package refinement's); they are stored as JSON in the verdict's row.
type VerdictLabels struct {
	// Class is the verdict's failure class ("" for a pass) and
	// DiagnosticKind the fine label its diagnostic gave ("pass",
	// "asm.suffix", "compile.undefined_identifier", "wrong.numeric", ...).
	Class          string `json:"class"`
	DiagnosticKind string `json:"diagnostic_kind"`
	// Evidence is the diagnostic line that decided DiagnosticKind.
	Evidence string `json:"evidence,omitempty"`
	// Suspicion says why the answer seems to sidestep the task ("" when
	// it does not).
	Suspicion string `json:"suspicion,omitempty"`
	// Features are the construct features found in the task's source
	// (for prompt-only lanes, the answer's), sorted; [] when none.
	Features []string `json:"features"`
	// Categories are the task's categories at the time of the verdict.
	Categories []string `json:"categories"`
	// Domain is the application domain of the program (CASS appendix A.4
	// keywords) where the lane has a classifier; "" otherwise.
	Domain string `json:"domain,omitempty"`
}

// Result is a done task with its judged attempt and that attempt's latest
// verdict revision.
type Result struct {
	Task    Task
	Attempt Attempt
	Verdict Verdict
}

// Counts summarises a campaign (or one round of it). Pass, Fail, Pending
// and TaskFaults count done tasks by the Outcome of the latest verdict
// revision of their judged attempt: Pass complete passes only, Pending
// passed every stage that ran with stages left for another host (a GPU run
// skipped on a CPU host), TaskFaults the task's reference failed, Fail
// every other failure. Token sums cover every saved attempt, judged or
// not (they were paid for).
type Counts struct {
	Tasks, Queued, Leased, Done, Pass, Fail, Pending, TaskFaults int
	PromptTokens, CompletionTokens, ReasoningTokens              int64
}

// Judged is the denominator of a pass rate: passes and fails.
func (c Counts) Judged() int { return c.Pass + c.Fail }

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrNoTask: nothing is claimable right now.
	ErrNoTask = errors.New("runs: no claimable task")
	// ErrLeaseLost: the lease is no longer current (expired and taken by
	// another worker, released, or the task is already done).
	ErrLeaseLost = errors.New("runs: lease lost")
	// ErrNotFound: no such campaign, task, attempt or blob (or, for
	// AddRescore, no original verdict to revise).
	ErrNotFound = errors.New("runs: not found")
	// ErrAmbiguous: a campaign id prefix matches more than one campaign.
	ErrAmbiguous = errors.New("runs: ambiguous campaign id prefix")
	// ErrBadTransition: the campaign state change is not allowed.
	ErrBadTransition = errors.New("runs: state transition not allowed")
	// ErrBadHash: a blob hash is not 64 lowercase hex digits.
	ErrBadHash = errors.New("runs: bad blob hash")
	// ErrCorrupt: a stored blob no longer matches its hash.
	ErrCorrupt = errors.New("runs: blob corrupt")
)

// TransitionError says which campaign state change was refused. It matches
// ErrBadTransition with errors.Is.
type TransitionError struct {
	ID       string
	From, To CampaignState
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("runs: campaign %s: %s -> %s not allowed", e.ID, e.From, e.To)
}

// Is makes errors.Is(err, ErrBadTransition) true.
func (e *TransitionError) Is(target error) bool { return target == ErrBadTransition }
