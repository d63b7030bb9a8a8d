package main

// kiln refine and kiln report: the wiring of a spec's refinement rounds
// (refinement/rounds) and the printing of reports (runs/report).

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/kiln-dev/kiln/refinement/rounds"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/models"
	"github.com/kiln-dev/kiln/runs/report"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// refine builds the full refinement plan: refineConfig plus the
// synthesiser model and the lane's validator.
func (w *wiring) refine(ctx context.Context, sp *spec.Spec, k *kit.Kit, lane tools.Lane, set *kit.TaskSet) (*engine.Refine, error) {
	reg, err := w.lanes()
	if err != nil {
		return nil, err
	}
	rf, err := rounds.Config(sp, set, reg.Rules())
	if err != nil {
		return nil, err
	}
	m, ok := sp.Model(sp.Refinement.Synthesizer)
	if !ok {
		return nil, fmt.Errorf("refinement.synthesizer: unknown model %q", sp.Refinement.Synthesizer)
	}
	if rf.Synth, err = models.Build(ctx, *m, sp, w.e.getenv, w.httpClient); err != nil {
		return nil, fmt.Errorf("refinement.synthesizer: %w", err)
	}
	rf.SynthName = m.Name
	rf.SynthSampling = sp.Sampling.Agent()
	rf.SynthSampling.MaxTokens = max(rf.SynthSampling.MaxTokens, min(1200*rf.K, 32768))
	if k.Validator != nil {
		if rf.Validator, err = k.Validator(lane); err != nil {
			return nil, err
		}
	}
	rf.ValidateParallel = min(max(sp.Concurrency, 1), 4)
	return rf, nil
}

// ---- kiln refine ----

func cmdRefine(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("refine", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	more := fs.Int("rounds", 1, "refinement rounds to run after the finished run's last round")
	cats := fs.String("categories", "", "comma-separated categories to target in every round, besides those the policy picks")
	name := fs.String("name", "", "name of the new campaign (default: RUN's name + \"-refine\")")
	maxTasks := fs.Int("max-tasks", -1, "budget of tasks for the new campaign, copied work included (default: RUN's; 0: none)")
	maxTokens := fs.Int64("max-tokens", -1, "budget of tokens for the new campaign, copied work included (default: RUN's; 0: none)")
	planOnly := fs.Bool("plan", false, "print the next round's plan and exit: nothing runs, no model is called")
	asJSON := fs.Bool("json", false, "with --plan: print JSON")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return badInput("want one campaign id or name")
	}
	if *more < 1 {
		return badInput("--rounds: must be >= 1")
	}
	st, src, log, err := c.openCampaign(ctx, e, fs.Arg(0))
	if err != nil {
		return err
	}
	defer st.Close()
	var forced []string
	for _, s := range strings.Split(*cats, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(forced, s) {
			forced = append(forced, s)
		}
	}
	ov := spec.Overrides{Name: *name, Rounds: src.Round + *more, Categories: forced, MaxTasks: *maxTasks, MaxTokens: *maxTokens}
	if ov.Name == "" {
		ov.Name = rounds.Name(src)
	}
	w := c.wiring(e, log, c.data)
	fk := w.forker(st)
	specYAML, sp, err := fk.Spec(src, ov)
	if err != nil {
		return err
	}
	plan, err := fk.Next(ctx, src, sp)
	if err != nil {
		return err
	}
	if *planOnly {
		if *asJSON {
			return writeJSON(e.stdout, plan)
		}
		report.Plan(e.stdout, src, plan)
		return nil
	}
	fork, err := fk.Fork(ctx, src, specYAML, sp, plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "kiln: refinement campaign %s (%s) from %s (%s) at round %d, %d more round(s); resume with: kiln resume --data %s %s\n",
		fork.ID, fork.Name, src.ID, src.Name, src.Round, *more, c.data, fork.ID)
	return runCampaign(ctx, st, w, fork, sp, e)
}

// forker forks refinement campaigns of st (rounds.Forker) with w's lanes
// and plans.
func (w *wiring) forker(st *runs.Store) *rounds.Forker {
	return &rounds.Forker{Store: st, Options: specOptions, Lanes: w.lanes,
		Source: func(ctx context.Context, sp *spec.Spec) (*kit.TaskSet, error) {
			k, err := w.kit(sp.Lane)
			if err != nil {
				return nil, err
			}
			tasks, err := w.tasks(ctx, sp, k)
			if err != nil {
				return nil, err
			}
			return k.Source(tasks)
		},
		Check: func(ctx context.Context, sp *spec.Spec) error {
			_, err := w.plan(ctx, sp)
			return err
		},
	}
}

// ---- kiln report ----

// writeReport prints kiln report: the per-category table of the selected
// round(s), then, for a campaign with rounds, every round against the one
// before, the choices and their reasons, the synthesis and the cost.
func writeReport(ctx context.Context, st *runs.Store, camp runs.Campaign, round int, asJSON bool, svgPath string, e env) error {
	reg, err := lanes.Registry()
	if err != nil {
		return err
	}
	rep, err := engine.BuildCampaignReport(ctx, st, camp, round, reg.Rules())
	if err != nil {
		return err
	}
	if svgPath != "" {
		err := report.WriteCharts(svgPath, rep, func(chart, path string) {
			fmt.Fprintf(e.stderr, "kiln: %s written to %s\n", chart, path)
		})
		if err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	if asJSON {
		return writeJSON(e.stdout, rep)
	}
	return report.Write(e.stdout, camp, rep)
}
