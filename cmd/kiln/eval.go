package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/eval"
)

// cmdEval evaluates every model of each spec on the spec's tasks, with no
// refinement: one campaign per model (named <spec name>.eval.<model>), each
// model answering every task samples_per_task times; then a pass@k report
// per lane, category and model. A campaign of the same name and the same
// derived spec is reused: resumed when unfinished, only reported when done,
// so an interrupted evaluation loses nothing and a finished one is not paid
// for twice (--fresh starts over).
func cmdEval(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	samples := fs.Int("samples", 0, "answers per task and model (overrides tasks.samples_per_task; pass@k needs k <= samples)")
	kList := fs.String("k", "1,5,10", "comma-separated ks of pass@k (ks above the samples per task are left out)")
	models := fs.String("models", "", "comma-separated models[].name to evaluate (default: every endpoint of each spec)")
	out := fs.String("o", "", "also write report.md, report.json and passk.svg into this folder")
	fresh := fs.Bool("fresh", false, "start new evaluation campaigns even where finished ones of the same spec exist")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of Markdown")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return badInput("want one or more spec files")
	}
	if *samples < 0 {
		return badInput("--samples: want >= 1")
	}
	ks, err := eval.ParseKs(*kList)
	if err != nil {
		return badInput("--k: %v", err)
	}
	var only []string
	if *models != "" {
		only = strings.Split(*models, ",")
	}
	log, err := c.logger(e)
	if err != nil {
		return err
	}
	st, err := c.open(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	// Read every spec and plan every campaign before running any, so a bad
	// spec is reported before hours of work.
	plan, err := eval.Plan(fs.Args(), only, *samples, specOptions, e.stderr)
	if err != nil {
		return usageError{err}
	}
	for _, p := range plan {
		w := c.wiring(e, log, c.data)
		if _, err := w.plan(ctx, p.Spec); err != nil {
			w.close()
			return usageError{fmt.Errorf("%s, model %s: %w", p.File, p.Model, err)}
		}
		w.close()
	}
	quiet := e
	quiet.stdout = e.stderr // stdout is the report's
	evals, stopped, err := eval.RunAll(ctx, st, plan, *fresh, func(camp runs.Campaign, p eval.Planned) error {
		return runCampaign(ctx, st, c.wiring(e, log, c.data), camp, p.Spec, quiet)
	}, e.soft, e.stderr)
	if err != nil || stopped {
		return err
	}
	return writeEval(ctx, st, evals, ks, *out, *asJSON, e)
}

// writeEval builds the report of the evaluation campaigns and prints it
// (and writes it into dir when given).
func writeEval(ctx context.Context, st *runs.Store, evals []eval.Run, ks []int, dir string, asJSON bool, e env) error {
	rep, err := eval.Collect(ctx, st, evals, ks)
	if err != nil {
		return err
	}
	md, err := eval.Markdown(evals, rep)
	if err != nil {
		return err
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return badInput("-o: %v", err)
		}
		if err := eval.WriteFolder(dir, md, rep); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
		fmt.Fprintf(e.stderr, "kiln eval: report written to %s (%s)\n", dir, strings.Join(eval.FolderFiles(), ", "))
	}
	if asJSON {
		return writeJSON(e.stdout, rep)
	}
	_, err = e.stdout.Write(md)
	return err
}
