package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/eval"
	"github.com/kiln-dev/kiln/runs/report"
	"github.com/kiln-dev/kiln/runs/spec"
)

// evalMeasures are the answer-level measurements an evaluation report
// summarises when a lane records them.
var evalMeasures = []string{"latency_ratio", "nae_max", "opcode_similarity", "speedup"}

// evalRun is one model's evaluation campaign of one spec.
type evalRun struct {
	spec  string // spec file
	model string
	camp  runs.Campaign
}

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
	ks, err := parseKs(*kList)
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
	type planned struct {
		file, model string
		derived     []byte
		sp          *spec.Spec
		dir         string
	}
	var plan []planned
	for _, path := range fs.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			return badInput("read spec: %v", err)
		}
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			return badInput("spec folder: %v", err)
		}
		sp, err := spec.Parse(data, path, specOptions(dir))
		if err != nil {
			return usageError{err}
		}
		if sp.Refinement.Rounds > 0 {
			fmt.Fprintf(e.stderr, "kiln eval: %s: refinement.rounds %d ignored: an evaluation runs round 0 only\n", path, sp.Refinement.Rounds)
		}
		names := map[string]string{}
		for _, m := range sp.Models {
			if len(only) > 0 && !slices.Contains(only, m.Name) {
				continue
			}
			name := evalCampaignName(sp.Name, m.Name)
			if prev, dup := names[name]; dup {
				return badInput("%s: models %q and %q give the same campaign name %s", path, prev, m.Name, name)
			}
			names[name] = m.Name
			derived, err := spec.EvalOverrides{Name: name, Model: m.Name, Samples: *samples}.Apply(data)
			if err != nil {
				return badInput("%s: %v", path, err)
			}
			dsp, err := spec.Parse(derived, path, specOptions(dir))
			if err != nil {
				return usageError{err}
			}
			plan = append(plan, planned{file: path, model: m.Name, derived: derived, sp: dsp, dir: dir})
		}
	}
	for _, m := range only {
		if !slices.ContainsFunc(plan, func(p planned) bool { return p.model == m }) {
			return badInput("--models: no spec has an endpoint named %q", m)
		}
	}
	if len(plan) == 0 {
		return badInput("no model to evaluate")
	}
	for _, p := range plan {
		w := c.wiring(e, log, c.data)
		if _, err := w.plan(ctx, p.sp); err != nil {
			w.close()
			return usageError{fmt.Errorf("%s, model %s: %w", p.file, p.model, err)}
		}
		w.close()
	}

	var evals []evalRun
	for _, p := range plan {
		camp, reuse, err := evalCampaign(ctx, st, p.sp.Name, p.derived, *fresh)
		if err != nil {
			return err
		}
		if !reuse {
			if camp, err = st.CreateCampaign(ctx, runs.Campaign{Name: p.sp.Name, Lane: p.sp.Lane, Spec: p.derived, SpecDir: p.dir}); err != nil {
				return fmt.Errorf("create campaign: %w", err)
			}
		}
		evals = append(evals, evalRun{spec: p.file, model: p.model, camp: camp})
		if camp.State == runs.CampaignDone {
			fmt.Fprintf(e.stderr, "kiln eval: model %s: campaign %s (%s) is done; reporting it (--fresh to run again)\n", p.model, camp.ID, camp.Name)
			continue
		}
		if camp.State == runs.CampaignCancelled {
			return fmt.Errorf("model %s: campaign %s (%s) was cancelled; run kiln eval --fresh to start over", p.model, camp.ID, camp.Name)
		}
		if camp.State == runs.CampaignFailed {
			if err := st.SetCampaignState(ctx, camp.ID, runs.CampaignQueued, "resumed by kiln eval"); err != nil {
				return fmt.Errorf("resume: %w", err)
			}
		}
		fmt.Fprintf(e.stderr, "kiln eval: model %s: campaign %s (%s)\n", p.model, camp.ID, camp.Name)
		quiet := e
		quiet.stdout = e.stderr // stdout is the report's
		if err := runCampaign(ctx, st, c.wiring(e, log, c.data), camp, p.sp, quiet); err != nil {
			return fmt.Errorf("model %s: %w", p.model, err)
		}
		select {
		case <-e.soft:
			fmt.Fprintf(e.stderr, "kiln eval: stopped; run the same kiln eval again to continue\n")
			return nil
		default:
		}
	}
	return writeEval(ctx, st, evals, ks, *out, *asJSON, e)
}

// evalCampaign finds the newest campaign named name whose stored spec is
// derived; reuse is false when there is none (or fresh).
func evalCampaign(ctx context.Context, st *runs.Store, name string, derived []byte, fresh bool) (runs.Campaign, bool, error) {
	if fresh {
		return runs.Campaign{}, false, nil
	}
	camp, err := st.Campaign(ctx, name)
	if err != nil {
		return runs.Campaign{}, false, nil //nolint:nilerr // none yet
	}
	if !bytes.Equal(camp.Spec, derived) {
		return runs.Campaign{}, false, nil // the spec changed: a new evaluation
	}
	return camp, true, nil
}

var evalNameBad = regexp.MustCompile(`[^a-z0-9._-]+`)

// evalCampaignName is <spec name>.eval.<model>, lower-cased and cut to the
// 64 bytes a campaign name may have.
func evalCampaignName(specName, model string) string {
	m := evalNameBad.ReplaceAllString(strings.ToLower(model), "-")
	name := specName + ".eval." + m
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

func parseKs(s string) ([]int, error) {
	var ks []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%q: want positive integers", f)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// writeEval builds the report of the evaluation campaigns and prints it
// (and writes it into dir when given).
func writeEval(ctx context.Context, st *runs.Store, evals []evalRun, ks []int, dir string, asJSON bool, e env) error {
	var samples []eval.Sample
	maxN := 0
	for _, ev := range evals {
		perTask := map[string]int{}
		err := st.EachResult(ctx, ev.camp.ID, -1, func(r runs.Result) error {
			s, err := eval.FromResult(ev.model, r)
			if err != nil {
				return err
			}
			perTask[s.Task]++
			samples = append(samples, s)
			return nil
		})
		if err != nil {
			return fmt.Errorf("model %s: %w", ev.model, err)
		}
		for _, n := range perTask {
			maxN = max(maxN, n)
		}
	}
	// ks above every task's samples say nothing: leave them out.
	ks = slices.DeleteFunc(slices.Clone(ks), func(k int) bool { return k > maxN && k != 1 })
	rep, err := eval.Build(samples, eval.Options{K: ks, Measures: evalMeasures})
	if err != nil {
		return err
	}
	var md bytes.Buffer
	fmt.Fprintf(&md, "# kiln eval\n\n")
	for _, ev := range evals {
		fmt.Fprintf(&md, "- model `%s`: campaign %s (%s, %s), spec %s\n", ev.model, ev.camp.ID, ev.camp.Name, ev.camp.Lane, ev.spec)
	}
	md.WriteString("\n")
	if err := rep.WriteMarkdown(&md); err != nil {
		return err
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return badInput("-o: %v", err)
		}
		files := map[string]func(io.Writer) error{
			"report.md":   func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err },
			"report.json": func(w io.Writer) error { return writeJSON(w, rep) },
			"passk.svg":   rep.WriteSVG,
		}
		for _, name := range []string{"report.md", "report.json", "passk.svg"} {
			if err := report.WriteFileAtomic(filepath.Join(dir, name), files[name]); err != nil {
				return fmt.Errorf("-o: %w", err)
			}
		}
		fmt.Fprintf(e.stderr, "kiln eval: report written to %s (report.md, report.json, passk.svg)\n", dir)
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	_, err = e.stdout.Write(md.Bytes())
	return err
}
