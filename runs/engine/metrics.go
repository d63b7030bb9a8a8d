package engine

import (
	"time"

	"github.com/kiln-dev/kiln/tools"
)

// Metrics is told what the engine does, for monitoring; cmd/kiln implements
// it with Prometheus. A Metrics that also implements agent.CallMetrics is
// told about every model call of every attempt as well. Methods must be
// quick and safe for concurrent use. A nil Engine.Metrics does nothing.
type Metrics interface {
	// AttemptStarted reports that a worker claimed a task of lane and
	// starts an attempt on it.
	AttemptStarted(lane string)
	// AttemptEnded reports an attempt that ended, judged or not.
	AttemptEnded(a AttemptStats)
	// ModelFault counts one failed model call of an attempt of lane, with
	// its class (agent.FaultClass); calls that a retry recovered count too.
	ModelFault(lane, class string)
}

// Outcomes of an attempt (AttemptStats.Outcome).
const (
	// OutcomeJudged: the attempt and its verdict were stored.
	OutcomeJudged = "judged"
	// OutcomeRequeued: the task went back to the queue unjudged (a model
	// failure that outlived the retries before any answer was judged, a
	// stop or cancel, a broken verifier or store).
	OutcomeRequeued = "requeued"
	// OutcomeLost: the lease was lost; another worker owns the task.
	OutcomeLost = "lost"
)

// AttemptStats describes an attempt that ended.
type AttemptStats struct {
	Lane string
	// Model and Endpoint are what the attempt's last model reply reported
	// ("" when no call returned one).
	Model, Endpoint string
	// Outcome is OutcomeJudged, OutcomeRequeued or OutcomeLost.
	Outcome string
	// Class is the stored verdict's class (judged attempts only): see
	// VerdictClass.
	Class string
	// Stages are the stages of every verification the attempt ran, those
	// of repair turns included, in order.
	Stages []tools.Stage
	// Duration is the attempt's wall time.
	Duration time.Duration
}

// Verdict classes besides the lanes' failure classes (VerdictClass).
const (
	ClassPass    = "pass"
	ClassPending = "pending"
	ClassFail    = "fail" // a failed verdict without a class
)

// VerdictClass is the class of a verdict for metrics: "pending" when it
// passed with stages left for another host (the store's rule for pending),
// "pass" when it passed, else its failure class (reference_error for a
// task fault).
func VerdictClass(v tools.Verdict) string {
	switch {
	case v.Pass && len(tools.PendingStages(v)) > 0:
		return ClassPending
	case v.Pass:
		return ClassPass
	case v.Class == "":
		return ClassFail
	}
	return string(v.Class)
}

// nopMetrics is the Metrics of an Engine without one.
type nopMetrics struct{}

func (nopMetrics) AttemptStarted(string)     {}
func (nopMetrics) AttemptEnded(AttemptStats) {}
func (nopMetrics) ModelFault(string, string) {}

var _ Metrics = nopMetrics{}

func (e *Engine) metrics() Metrics {
	if e.Metrics == nil {
		return nopMetrics{}
	}
	return e.Metrics
}
