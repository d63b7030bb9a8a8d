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
// pass (every stage that can run here passed; stages that need another
// host, such as a GPU, are reported as skipped), 1 fail, 2 bad input, and
// for lanes that ask for it (kit.VerifyCommand.ExitPending) 3 when stages
// are pending. The lane's kit says its flags.
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
	if !v.Pass {
		return verdictFailed{}
	}
	if k.Verify.ExitPending && len(tools.PendingStages(v)) > 0 {
		return verdictPending{}
	}
	return nil
}

// verdictPending is returned by kiln verify when stages could not run on
// this host (the lane's VerifyCommand.ExitPending): exit 3.
type verdictPending struct{}

func (verdictPending) Error() string { return "pending" }

// verifyDataDir keeps kiln verify's caches out of the way when no data
// folder exists: it never creates a run database.
func verifyDataDir(data string) string {
	if _, err := os.Stat(data); err == nil {
		return data
	}
	return os.TempDir() + "/kiln-verify"
}

type verdictOut struct {
	Pass         bool               `json:"pass"`
	Class        string             `json:"class"`
	Stage        string             `json:"stage"`
	Stages       []tools.Stage      `json:"stages"`
	Diagnostic   string             `json:"diagnostic,omitempty"`
	Measurements map[string]float64 `json:"measurements,omitempty"`
	// Pending lists the stages this host could not run.
	Pending []string `json:"pending,omitempty"`
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
	class := string(v.Class)
	if v.Pass {
		class = "pass"
	}
	out := verdictOut{Pass: v.Pass, Class: class, Stage: v.Stage, Stages: v.Stages,
		Diagnostic: v.Diagnostic, Measurements: v.Measurements, Pending: tools.PendingStages(v), Suspicion: v.Suspicion}
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
		fmt.Fprintf(e.stdout, "PASS so far; PENDING %s (this host cannot run it)\n", strings.Join(pending, ", "))
		return
	}
	if v.Pass {
		fmt.Fprintln(e.stdout, "PASS")
		return
	}
	fmt.Fprintf(e.stdout, "FAIL %s at %s\n", v.Class, v.Stage)
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
