package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// cmdVerify judges one answer by hand with a lane's verifier: exit 0
// pass (every stage ran and passed), 1 fail, 2 bad input, 3 pending (every
// stage that ran passed, stages that need another host, such as a GPU,
// were skipped: not a pass yet), 4 task fault (the task's own reference
// failed: the answer was not judged). The lane's kit says its flags.
func cmdVerify(ctx context.Context, args []string, e env) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return badInput("usage: kiln verify LANE [flags]; lanes: %s", strings.Join(laneNames(), ", "))
	}
	var k *kit.Kit
	for _, kk := range lanes.Kits() {
		if kk.Name == args[0] {
			k = &kk
		}
	}
	if k == nil || k.Verify == nil {
		return badInput("unknown lane %q (have %s)", args[0], strings.Join(laneNames(), ", "))
	}
	fs := flag.NewFlagSet("verify "+k.Name, flag.ContinueOnError)
	var c common
	c.register(fs, e)
	read := k.Verify.Flags(fs)
	asJSON := fs.Bool("json", false, "print the verdict as JSON")
	if err := parseFlags(fs, args[1:], e); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badInput("unexpected arguments: %v", fs.Args())
	}
	item, answer, err := read()
	if err != nil {
		return err
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	w := c.wiring(e, log, verifyDataDir(c.data))
	defer w.close()
	l, err := w.lane(ctx, specForLane(k.Name))
	if err != nil {
		return err
	}
	if strings.Contains(answer, "```") {
		if a, ok := l.Extract(answer); ok {
			answer = a
		} else {
			answer = ""
		}
	}
	v, err := l.Verify(ctx, item, answer)
	if err != nil {
		if errors.Is(err, tools.ErrBadItem) {
			return usageError{err}
		}
		return err
	}
	if *asJSON {
		if err := writeJSON(e.stdout, verdictJSON(v)); err != nil {
			return err
		}
	} else {
		printVerdict(e, v)
	}
	switch {
	case v.TaskFault():
		return verdictTaskFault{}
	case !v.Pass:
		return verdictFailed{}
	case len(tools.PendingStages(v)) > 0:
		return verdictPending{}
	}
	return nil
}

// verdictPending is returned by kiln verify when stages could not run on
// this host (every lane): exit 3.
type verdictPending struct{}

func (verdictPending) Error() string { return "pending" }

// verdictTaskFault is returned by kiln verify when the task's own
// reference failed: exit 4.
type verdictTaskFault struct{}

func (verdictTaskFault) Error() string { return "task fault" }

// verifyDataDir keeps kiln verify's caches out of the way when no data
// folder exists: it never creates a run database.
func verifyDataDir(data string) string {
	if _, err := os.Stat(data); err == nil {
		return data
	}
	return os.TempDir() + "/kiln-verify"
}

// verdictOut is kiln verify's JSON. Pass is a complete pass: false while
// stages are pending (Pending true, PendingStages naming them) and for a
// task fault (TaskFault true: the task's reference failed).
type verdictOut struct {
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

func verdictJSON(v tools.Verdict) verdictOut {
	pending := tools.PendingStages(v)
	out := verdictOut{Pass: v.Pass, Class: string(v.Class), Stage: v.Stage, Stages: v.Stages, TaskFault: v.TaskFault(),
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

func printVerdict(e env, v tools.Verdict) {
	for _, s := range v.Stages {
		mark := "ok"
		switch {
		case s.Skipped:
			mark = "skipped"
		case !s.OK:
			mark = "FAIL"
		}
		fmt.Fprintf(e.stdout, "  %-18s %-7s %s\n", s.Name, mark, firstLine(s.Detail))
	}
	if pending := tools.PendingStages(v); v.Pass && len(pending) > 0 {
		fmt.Fprintf(e.stdout, "PENDING %s (this host cannot run it; every stage that ran passed, not a pass yet)\n", strings.Join(pending, ", "))
		return
	}
	if v.Pass {
		fmt.Fprintln(e.stdout, "PASS")
		return
	}
	if v.TaskFault() {
		fmt.Fprintf(e.stdout, "TASK FAULT at %s: the task's own reference failed, the answer was not judged\n", v.Stage)
	} else {
		fmt.Fprintf(e.stdout, "FAIL %s at %s\n", v.Class, v.Stage)
	}
	if v.Diagnostic != "" {
		fmt.Fprintln(e.stdout, v.Diagnostic)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
