package main

// Refinement campaigns: wiring of the engine's rounds (engine.Refine) from
// a spec's refinement section, the kiln refine verb, and the per-round
// report.
//
// Endpoints: refinement.synthesizer names the models[] endpoint that writes
// new tasks. When it is the first model (the default) that endpoint also
// solves tasks; any other endpoint named there is reserved for synthesis
// and left out of the solver pool, so the synthesiser can be a different
// (bigger, slower) model than the solver.
//
// The next round's tasks are the corpus resampled and the accepted
// synthesised tasks. The draw takes as many corpus tasks as round 0 had
// (items x samples_per_task) from the whole corpus (after tasks.categories,
// before tasks.limit), with replacement, by systematic resampling over the
// items' weights (prompts.ItemWeight of refinement.Mix's weights): every
// item appears floor or ceil of n*w/W times, so the targeted categories'
// share grows by the configured factor (in odds) whatever the round size.
// Each synthesised task gets samples_per_task tasks. The synthesiser is
// asked for refinement.factor tasks per targeted category (one call each).
//
// What a lane's tasks are, how its rounds draw them and how a synthesised
// task is checked is the lane kit's (tools/<lane>: kit.TaskSet,
// kit.Kit.Validator); the decisions and the report are the engine's.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/lanes"
)

// solverSpec returns sp with the models that solve tasks: every endpoint
// but a synthesiser reserved for synthesis (see the file comment).
func solverSpec(sp *spec.Spec) *spec.Spec {
	syn := sp.Refinement.Synthesizer
	if syn == "" || len(sp.Models) < 2 || sp.Models[0].Name == syn {
		return sp
	}
	out := *sp
	out.Models = slices.DeleteFunc(slices.Clone(sp.Models), func(m spec.Model) bool { return m.Name == syn })
	return &out
}

// refineConfig builds the pure part of a spec's refinement rounds (no
// model, no sandbox): the policy from the spec's refinement section, and
// the draw and task rendering of the lane's task set.
func refineConfig(sp *spec.Spec, set *kit.TaskSet, rules *refinement.Lanes) (*engine.Refine, error) {
	rf := sp.Refinement
	pol := refinement.DefaultPolicy()
	pol.Threshold, pol.MinEvidence, pol.Forced = rf.Threshold, rf.MinEvidence, rf.Categories
	pol.Known = slices.Clone(set.Known)
	sort.Strings(pol.Known)
	if err := pol.Validate(); err != nil {
		return nil, err
	}
	return &engine.Refine{
		Rounds: rf.Rounds, Policy: pol, Factor: float64(rf.Factor), K: rf.Factor, Plateau: rf.Plateau,
		Corpus: set.Corpus, Draw: set.Draw, FromCandidate: set.FromCandidate, Lanes: rules,
	}, nil
}

// refine builds the full refinement plan: refineConfig plus the
// synthesiser model and the lane's validator.
func (w *wiring) refine(ctx context.Context, sp *spec.Spec, k *kit.Kit, lane tools.Lane, set *kit.TaskSet) (*engine.Refine, error) {
	reg, err := w.lanes()
	if err != nil {
		return nil, err
	}
	rf, err := refineConfig(sp, set, reg.Rules())
	if err != nil {
		return nil, err
	}
	m, ok := sp.Model(sp.Refinement.Synthesizer)
	if !ok {
		return nil, fmt.Errorf("refinement.synthesizer: unknown model %q", sp.Refinement.Synthesizer)
	}
	if rf.Synth, err = buildModel(ctx, *m, sp, w.e.getenv, w.httpClient); err != nil {
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
	rounds := fs.Int("rounds", 1, "refinement rounds to run after the finished run's last round")
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
	if *rounds < 1 {
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
	ov := spec.Overrides{Name: *name, Rounds: src.Round + *rounds, Categories: forced, MaxTasks: *maxTasks, MaxTokens: *maxTokens}
	if ov.Name == "" {
		ov.Name = refineName(src)
	}
	specYAML, sp, err := refineSpec(src, ov)
	if err != nil {
		return err
	}
	w := c.wiring(e, log, c.data)
	plan, err := w.planNext(ctx, st, src, sp)
	if err != nil {
		return err
	}
	if *planOnly {
		if *asJSON {
			return writeJSON(e.stdout, plan)
		}
		printPlan(e.stdout, src, plan)
		return nil
	}
	fork, err := w.forkRefinement(ctx, st, src, specYAML, sp, plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "kiln: refinement campaign %s (%s) from %s (%s) at round %d, %d more round(s); resume with: kiln resume --data %s %s\n",
		fork.ID, fork.Name, src.ID, src.Name, src.Round, *rounds, c.data, fork.ID)
	return runCampaign(ctx, st, w, fork, sp, e)
}

// refineSpec derives a refinement campaign's spec from src's stored spec.
func refineSpec(src runs.Campaign, ov spec.Overrides) ([]byte, *spec.Spec, error) {
	specYAML, err := ov.Apply(src.Spec)
	if err != nil {
		return nil, nil, fmt.Errorf("stored spec of campaign %s: %w", src.ID, err)
	}
	sp, err := spec.Parse(specYAML, ov.Name+".yaml", specOptions(src.SpecDir))
	if err != nil {
		return nil, nil, usageError{err}
	}
	return specYAML, sp, nil
}

// forkRefinement checks that src can be refined under sp (its plan for
// the next round) and forks the refinement campaign, which has yet to run.
func (w *wiring) forkRefinement(ctx context.Context, st *runs.Store, src runs.Campaign, specYAML []byte, sp *spec.Spec,
	plan engine.RefinePlan) (runs.Campaign, error) {
	switch src.State {
	case runs.CampaignQueued, runs.CampaignRunning:
		return runs.Campaign{}, badInput("campaign %s is %s: let it finish (or kiln resume it) before refining it", src.ID, src.State)
	}
	if plan.Decision.Stop != "" {
		return runs.Campaign{}, badInput("nothing to refine in campaign %s: %s", src.ID, plan.Decision.Stop)
	}
	if _, err := w.plan(ctx, sp); err != nil {
		return runs.Campaign{}, usageError{err}
	}
	fork, err := st.ForkCampaign(ctx, src.ID, runs.Campaign{Name: sp.Name, Spec: specYAML, SpecDir: src.SpecDir,
		Note: "refinement of " + src.ID})
	if err != nil {
		return runs.Campaign{}, fmt.Errorf("refine: %w", err)
	}
	return fork, nil
}

// refineName is a refinement campaign's default name.
func refineName(src runs.Campaign) string {
	return strings.TrimRight(truncate(src.Name, 57), "-.") + "-refine"
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// planNext computes the next round's plan of camp under sp (kiln refine
// --plan): the lane's task set and the spec's policy, no model, no sandbox.
func (w *wiring) planNext(ctx context.Context, st *runs.Store, camp runs.Campaign, sp *spec.Spec) (engine.RefinePlan, error) {
	k, err := w.kit(sp.Lane)
	if err != nil {
		return engine.RefinePlan{}, usageError{err}
	}
	reg, err := w.lanes()
	if err != nil {
		return engine.RefinePlan{}, err
	}
	tasks, err := w.tasks(ctx, sp, k)
	if err != nil {
		return engine.RefinePlan{}, usageError{err}
	}
	set, err := k.Source(tasks)
	if err != nil {
		return engine.RefinePlan{}, usageError{err}
	}
	rf, err := refineConfig(sp, set, reg.Rules())
	if err != nil {
		return engine.RefinePlan{}, usageError{err}
	}
	return engine.PlanNext(ctx, st, camp, rf, sp.Tasks.SamplesPerTask)
}

func printPlan(w io.Writer, camp runs.Campaign, p engine.RefinePlan) {
	d := p.Decision
	fmt.Fprintf(w, "campaign %s (%s), round %d: plan for round %d\n\n", camp.ID, camp.Name, p.Round, p.Round+1)
	if d.Stop != "" {
		fmt.Fprintf(w, "no next round: %s\n", d.Stop)
		return
	}
	fmt.Fprintln(w, "targets:")
	for _, ch := range d.Choices {
		fmt.Fprintf(w, "  %-14s %-16s %s\n", ch.Category, ch.Kind, ch.Reason)
	}
	fmt.Fprintf(w, "\nmix (sampling weight, share of the corpus draw, corpus tasks drawn):\n")
	cats := make([]string, 0, len(p.Shares))
	for c := range p.Shares {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range cats {
		wt, ok := d.Weights[c]
		if !ok {
			wt = d.Weights[refinement.DefaultWeightKey]
		}
		fmt.Fprintf(tw, "  %s\t%g\t%.1f%%\t%d\n", c, wt, 100*p.Shares[c], p.Drawn[c])
	}
	tw.Flush()
	fmt.Fprintf(w, "\nsynthesis: %d new tasks asked for, each run %d time(s) if it validates:\n", p.Synthesise, p.SamplesPerTask)
	for _, r := range d.Requests {
		keys := make([]string, len(r.Examples))
		for i, e := range r.Examples {
			keys[i] = e.TaskKey
		}
		fmt.Fprintf(w, "  %-14s k=%d, failing examples: %s (prompt %d characters)\n", r.Category, r.K, orNone(keys),
			len(r.Prompt.System)+len(r.Prompt.User))
	}
	fmt.Fprintf(w, "\nround %d: %d corpus tasks drawn + up to %d synthesised tasks\n", p.Round+1, p.DrawnTasks, p.Synthesise*p.SamplesPerTask)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
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
		if err := writeFileAtomic(svgPath, func(w io.Writer) error { return refinement.WriteSVG(w, rep.Refinement.Series) }); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
		fmt.Fprintf(e.stderr, "kiln: chart written to %s\n", svgPath)
		if len(rep.Speed) > 0 {
			speedPath := strings.TrimSuffix(svgPath, ".svg") + ".speed.svg"
			if err := writeFileAtomic(speedPath, func(w io.Writer) error { return refinement.WriteSpeedSVG(w, rep.Speed) }); err != nil {
				return fmt.Errorf("--svg: %w", err)
			}
			fmt.Fprintf(e.stderr, "kiln: kernel-speed chart written to %s\n", speedPath)
		}
	}
	if asJSON {
		return writeJSON(e.stdout, rep)
	}
	out := e.stdout
	fmt.Fprintf(out, "campaign %s (%s, lane %s, %s)\n", camp.ID, camp.Name, camp.Lane, camp.State)
	if camp.Parent != "" {
		fmt.Fprintf(out, "refinement of campaign %s\n", camp.Parent)
	}
	if camp.Note != "" {
		fmt.Fprintf(out, "note: %s\n", camp.Note)
	}
	fmt.Fprintln(out)
	if err := printCategories(out, rep.Stats); err != nil {
		return err
	}
	if len(rep.Speed) > 0 {
		printSpeed(out, rep.Speed)
	}
	printFaults(out, rep)
	if len(rep.Refinement.Rounds) < 2 && len(rep.Decisions) == 0 {
		return nil
	}
	decided := map[int]engine.RoundRecord{}
	for _, d := range rep.Decisions {
		decided[d.Round] = d
	}
	for _, rr := range rep.Refinement.Rounds {
		printRound(out, rr, decided[rr.Round])
	}
	t := rep.Refinement.Total
	sc := rep.SynthesisCost
	fmt.Fprintf(out, "\ncost: %d attempts, %d prompt + %d completion tokens (%d reasoning), model time %s; synthesis: %d calls, %d prompt + %d completion tokens, %s\n",
		t.Attempts, t.PromptTokens, t.CompletionTokens, t.ReasoningTokens, msString(t.LatencyMS),
		sc.Calls, sc.PromptTokens, sc.CompletionTokens, msString(sc.LatencyMS))
	return nil
}

// printCategories prints kiln report's category table: results by
// outcome, the pass rate over judged ones (PASS + FAIL; "-" when nothing
// is judged) with its interval, tokens and the top failure classes.
func printCategories(out io.Writer, stats []refinement.CategoryStats) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "CATEGORY\tTASKS\tPASS\tFAIL\tPENDING\tTASK FAULTS\tRATE\t95% CI\tTOKENS\tTOP FAILURES\t")
	for _, s := range stats {
		ci := "-"
		if s.Rated() {
			ci = fmt.Sprintf("[%.0f%%, %.0f%%]", 100*s.Low, 100*s.High)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t\n", s.Category, s.Total, s.Pass, s.Fail, s.Pending, s.TaskFaults,
			rateText(s), ci, s.PromptTokens+s.CompletionTokens, topClasses(s.Classes, 3))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	pending := slices.ContainsFunc(stats, func(s refinement.CategoryStats) bool { return s.Pending > 0 })
	faults := slices.ContainsFunc(stats, func(s refinement.CategoryStats) bool { return s.TaskFaults > 0 })
	if pending || faults {
		fmt.Fprintln(out, "RATE = PASS / (PASS + FAIL), over judged results; -: nothing judged.")
	}
	if pending {
		fmt.Fprintln(out, "PENDING: passed every stage that ran, stages left for a GPU host (kiln rescore --pending there); not a pass yet.")
	}
	if faults {
		fmt.Fprintln(out, "TASK FAULTS: the task's own reference failed; not the answer's fault, neither a pass nor a fail.")
	}
	return nil
}

// rateText is a pass rate as kiln report prints it: "-" when nothing is
// judged.
func rateText(s refinement.CategoryStats) string {
	if !s.Rated() {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*s.PassRate)
}

// outcomeText says what a set of results came to: "6 pass of 18 judged
// (33.3%, 95% CI 16-56%)", then the pending ones and task faults apart.
func outcomeText(o refinement.CategoryStats) string {
	text := "nothing judged"
	if o.Rated() {
		text = fmt.Sprintf("%d pass of %d judged (%s, 95%% CI %.0f-%.0f%%)", o.Pass, o.Judged, rateText(o), 100*o.Low, 100*o.High)
	}
	if o.Pending > 0 {
		text += fmt.Sprintf(", %d pending", o.Pending)
	}
	if o.TaskFaults > 0 {
		text += fmt.Sprintf(", %d task faults", o.TaskFaults)
	}
	return text
}

// printFaults prints the task faults (each task with its reason) and the
// model faults: failed calls by class, and the attempts one ended.
func printFaults(out io.Writer, rep engine.CampaignReport) {
	if len(rep.TaskFaults) > 0 {
		fmt.Fprintf(out, "\ntask faults (%d; the task's own reference failed, never targeted by refinement):\n", len(rep.TaskFaults))
		for _, f := range rep.TaskFaults {
			fmt.Fprintf(out, "  %s  %s: %s\n", f.TaskKey, f.Stage, f.Reason)
		}
	}
	if len(rep.ModelFaults) > 0 {
		fmt.Fprintf(out, "\nmodel faults (failed calls, retried ones included): %s\n", topClasses(rep.ModelFaults, len(rep.ModelFaults)))
	}
	if fa := rep.FaultedAttempts; fa.Total > 0 {
		fmt.Fprintf(out, "attempts ended by a failed model call: %d (%d kept the class of the answer judged before it, %d model_error)\n",
			fa.Total, fa.KeptClass, fa.Total-fa.KeptClass)
	}
}

// printSpeed prints the kernel-speed table: exec and fast_p with their
// intervals, the geometric-mean speedup and pass@1.
func printSpeed(out io.Writer, speed []refinement.SpeedStats) {
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "CATEGORY\tJUDGED\tEXEC\t")
	for _, p := range refinement.FastThresholds {
		fmt.Fprintf(tw, "%s\t", strings.ToUpper(refinement.FastKey(p)))
	}
	fmt.Fprintln(tw, "GEOMEAN SPEEDUP\tPASS@1\t")
	rate := func(r refinement.Rate) string {
		return fmt.Sprintf("%.1f%% [%.0f, %.0f]", 100*r.Rate, 100*r.Low, 100*r.High)
	}
	for _, s := range speed {
		fmt.Fprintf(tw, "%s\t%d\t%s\t", s.Category, s.Judged, rate(s.Exec))
		for _, p := range refinement.FastThresholds {
			fmt.Fprintf(tw, "%s\t", rate(s.Fast[refinement.FastKey(p)]))
		}
		geo := "-" // no correct kernel: no speedup to average
		if s.GeoMeanSpeedup > 0 {
			geo = fmt.Sprintf("%.3gx", s.GeoMeanSpeedup)
		}
		fmt.Fprintf(tw, "%s\t%.3f\t\n", geo, s.PassAtK["1"])
	}
	tw.Flush()
}

func msString(ms int64) string {
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

func printRound(out io.Writer, rr refinement.RoundReport, d engine.RoundRecord) {
	fmt.Fprintf(out, "\nround %d: %d tasks, %s, %d prompt + %d completion tokens\n",
		rr.Round, rr.Overall.Total, outcomeText(rr.Overall), rr.Cost.PromptTokens, rr.Cost.CompletionTokens)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  CATEGORY\tTARGETED\tBEFORE\tAFTER\tLIFT\t95% CI OF LIFT")
	for _, c := range rr.Categories {
		before, lift, ci := "-", "-", "-"
		if c.Before != nil {
			before = fmt.Sprintf("r%d %d/%d (%s)", *c.BeforeRound, c.Before.Pass, c.Before.Judged, rateText(*c.Before))
		}
		if c.Lift != nil {
			lift = fmt.Sprintf("%+.1f", 100**c.Lift)
			ci = fmt.Sprintf("[%+.1f, %+.1f]", 100**c.LiftLow, 100**c.LiftHigh)
		}
		tg := ""
		if c.Targeted {
			tg = "yes"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d/%d (%s)\t%s\t%s\n", c.Category, tg, before, c.After.Pass, c.After.Judged,
			rateText(c.After), lift, ci)
	}
	tw.Flush()
	if len(rr.Domains) > 0 {
		var parts []string
		for _, d := range rr.Domains {
			parts = append(parts, fmt.Sprintf("%s %d/%d", d.Category, d.After.Pass, d.After.Judged))
		}
		fmt.Fprintf(out, "  domains: %s\n", strings.Join(parts, ", "))
	}
	if len(rr.Labels) > 0 {
		var parts []string
		for i, l := range rr.Labels {
			if i == 5 {
				break
			}
			parts = append(parts, fmt.Sprintf("%s %d", l.Label, l.Count))
		}
		fmt.Fprintf(out, "  failures: %s\n", strings.Join(parts, ", "))
	}
	switch {
	case d.Stop != "":
		fmt.Fprintf(out, "  stopped after this round: %s\n", d.Stop)
		return
	case d.NextRound == 0:
		return
	}
	fmt.Fprintf(out, "  chosen for round %d:\n", d.NextRound)
	for _, ch := range d.Choices {
		fmt.Fprintf(out, "    %s (%s): %s\n", ch.Category, ch.Kind, ch.Reason)
	}
	for _, s := range d.Synth {
		nInv, nDup, nParse := 0, 0, 0
		for _, r := range s.Rejected {
			switch r.Stage {
			case engine.RejectInvalid:
				nInv++
			case engine.RejectDuplicate:
				nDup++
			default:
				nParse++
			}
		}
		fmt.Fprintf(out, "  synthesis %s: asked %d, accepted %d, rejected %d (%d unparsable, %d duplicate, %d invalid); %d+%d tokens, %s\n",
			s.Category, s.K, len(s.Accepted), len(s.Rejected), nParse, nDup, nInv, s.PromptTokens, s.CompletionTokens, msString(s.LatencyMS))
		if s.Error != "" {
			fmt.Fprintf(out, "    no reply: %s\n", s.Error)
		}
		for _, r := range s.Rejected {
			fn := ""
			if r.Function != "" {
				fn = " " + r.Function
			}
			fmt.Fprintf(out, "    dropped #%d%s (%s): %s\n", r.Index, fn, r.Stage, truncate(r.Reason, 200))
		}
	}
	cats := make([]string, 0, len(d.Drawn))
	for c := range d.Drawn {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	var parts []string
	for _, c := range cats {
		parts = append(parts, fmt.Sprintf("%s %d", c, d.Drawn[c]))
	}
	fmt.Fprintf(out, "  round %d: %d tasks = %d drawn from the corpus (%s) + %d synthesised\n",
		d.NextRound, d.Tasks, d.DrawnTasks, strings.Join(parts, ", "), d.SynthTasks)
}

// writeFileAtomic writes path through a temp file and a rename.
func writeFileAtomic(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".kiln-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
