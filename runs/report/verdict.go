package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kiln-dev/kiln/tools"
)

// VerdictJSON is kiln verify's JSON of a verdict. Pass is a complete pass: false while
// stages are pending (Pending true, PendingStages naming them) and for a
// task fault (TaskFault true: the task's reference failed).
type VerdictJSON struct {
	Pass         bool               `json:"pass"`
	Pending      bool               `json:"pending"`
	TaskFault    bool               `json:"task_fault"`
	Class        string             `json:"class"`
	Stage        string             `json:"stage"`
	Stages       []tools.Stage      `json:"stages"`
	Diagnostic   string             `json:"diagnostic,omitempty"`
	Measurements map[string]float64 `json:"measurements,omitempty"`
	// PendingStages lists the stages this host could not run.
	PendingStages []string `json:"pending_stages,omitempty"`
	// Suspicion lists why the answer seems to sidestep the task.
	Suspicion []string `json:"suspicion,omitempty"`
	// The kernel lanes' headline figures, copied from Measurements.
	Speedup *float64 `json:"speedup,omitempty"`
	// Fast: speedup > 1 (1 or 0), beside a pass or a fail alike.
	Fast      *float64 `json:"fast,omitempty"`
	MaxAbsErr *float64 `json:"max_abs_err,omitempty"`
	MaxRelErr *float64 `json:"max_rel_err,omitempty"`
}

// JSONOf is v as kiln verify prints it with --json.
func JSONOf(v tools.Verdict) VerdictJSON {
	pending := tools.PendingStages(v)
	out := VerdictJSON{Pass: v.Pass, Class: string(v.Class), Stage: v.Stage, Stages: v.Stages, TaskFault: v.TaskFault(),
		Diagnostic: v.Diagnostic, Measurements: v.Measurements, Suspicion: v.Suspicion}
	switch {
	case v.Pass && len(pending) > 0:
		out.Pass, out.Pending, out.PendingStages, out.Class = false, true, pending, "pending"
	case v.Pass:
		out.Class = "pass"
	}
	for name, dst := range map[string]**float64{"speedup": &out.Speedup, "fast": &out.Fast, "max_abs_err": &out.MaxAbsErr, "max_rel_err": &out.MaxRelErr} {
		if x, ok := v.Measurements[name]; ok {
			*dst = &x
		}
	}
	return out
}

// Verdict prints v's stages and its outcome as kiln verify does.
func Verdict(out io.Writer, v tools.Verdict) {
	for _, s := range v.Stages {
		mark := "ok"
		switch {
		case s.Skipped:
			mark = "skipped"
		case !s.OK:
			mark = "FAIL"
		}
		fmt.Fprintf(out, "  %-18s %-7s %s\n", s.Name, mark, firstLine(s.Detail))
	}
	if pending := tools.PendingStages(v); v.Pass && len(pending) > 0 {
		fmt.Fprintf(out, "PENDING %s (this host cannot run it; every stage that ran passed, not a pass yet)\n", strings.Join(pending, ", "))
		return
	}
	if v.Pass {
		fmt.Fprintln(out, "PASS")
		return
	}
	if v.TaskFault() {
		fmt.Fprintf(out, "TASK FAULT at %s: the task's own reference failed, the answer was not judged\n", v.Stage)
	} else {
		fmt.Fprintf(out, "FAIL %s at %s\n", v.Class, v.Stage)
	}
	if v.Diagnostic != "" {
		fmt.Fprintln(out, v.Diagnostic)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
