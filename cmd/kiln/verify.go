package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"strings"

	"github.com/kiln-dev/kiln/runs/report"
	"github.com/kiln-dev/kiln/tools"
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
	k, ok := lanes.Kit(args[0])
	if !ok || k.Verify == nil {
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
	v, err := l.Verify(ctx, item, tools.FencedAnswer(l, answer))
	if err != nil {
		if errors.Is(err, tools.ErrBadItem) {
			return usageError{err}
		}
		return err
	}
	if *asJSON {
		if err := writeJSON(e.stdout, report.JSONOf(v)); err != nil {
			return err
		}
	} else {
		report.Verdict(e.stdout, v)
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
