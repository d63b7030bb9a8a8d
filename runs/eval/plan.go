package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/spec"
)

// Planned is one model's evaluation campaign of one spec, before it runs:
// the spec derived for it (spec.EvalOverrides), parsed, and its folder.
type Planned struct {
	File, Model string
	Derived     []byte
	Spec        *spec.Spec
	Dir         string
}

// Plan reads the spec files and derives one evaluation spec per model
// (only those named in only, when given), parsed with the options opts
// gives for the spec's folder; warn gets what the evaluation ignores. Every
// error is the user's input's.
func Plan(paths, only []string, samples int, opts func(dir string) spec.Options, warn io.Writer) ([]Planned, error) {
	var plan []Planned
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read spec: %w", err)
		}
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			return nil, fmt.Errorf("spec folder: %w", err)
		}
		sp, err := spec.Parse(data, path, opts(dir))
		if err != nil {
			return nil, err
		}
		if sp.Refinement.Rounds > 0 {
			fmt.Fprintf(warn, "kiln eval: %s: refinement.rounds %d ignored: an evaluation runs round 0 only\n", path, sp.Refinement.Rounds)
		}
		names := map[string]string{}
		for _, m := range sp.Models {
			if len(only) > 0 && !slices.Contains(only, m.Name) {
				continue
			}
			name := CampaignName(sp.Name, m.Name)
			if prev, dup := names[name]; dup {
				return nil, fmt.Errorf("%s: models %q and %q give the same campaign name %s", path, prev, m.Name, name)
			}
			names[name] = m.Name
			derived, err := spec.EvalOverrides{Name: name, Model: m.Name, Samples: samples}.Apply(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			dsp, err := spec.Parse(derived, path, opts(dir))
			if err != nil {
				return nil, err
			}
			plan = append(plan, Planned{File: path, Model: m.Name, Derived: derived, Spec: dsp, Dir: dir})
		}
	}
	for _, m := range only {
		if !slices.ContainsFunc(plan, func(p Planned) bool { return p.Model == m }) {
			return nil, fmt.Errorf("--models: no spec has an endpoint named %q", m)
		}
	}
	if len(plan) == 0 {
		return nil, errors.New("no model to evaluate")
	}
	return plan, nil
}

// Open creates p's evaluation campaign, or reuses the campaign of the same
// name and derived spec (unless fresh); run says whether it has work left:
// false for a done campaign, whose results are reported as they are. A
// cancelled campaign is an error (fresh starts over); a failed one is
// queued again.
func Open(ctx context.Context, st *runs.Store, p Planned, fresh bool) (camp runs.Campaign, run bool, err error) {
	camp, reuse, err := Reusable(ctx, st, p.Spec.Name, p.Derived, fresh)
	if err != nil {
		return runs.Campaign{}, false, err
	}
	if !reuse {
		if camp, err = st.CreateCampaign(ctx, runs.Campaign{Name: p.Spec.Name, Lane: p.Spec.Lane, Spec: p.Derived, SpecDir: p.Dir}); err != nil {
			return runs.Campaign{}, false, fmt.Errorf("create campaign: %w", err)
		}
	}
	switch camp.State {
	case runs.CampaignDone:
		return camp, false, nil
	case runs.CampaignCancelled:
		return runs.Campaign{}, false, fmt.Errorf("model %s: campaign %s (%s) was cancelled; run kiln eval --fresh to start over", p.Model, camp.ID, camp.Name)
	case runs.CampaignFailed:
		if err := st.SetCampaignState(ctx, camp.ID, runs.CampaignQueued, "resumed by kiln eval"); err != nil {
			return runs.Campaign{}, false, fmt.Errorf("resume: %w", err)
		}
	}
	return camp, true, nil
}

// RunAll creates (or reuses, unless fresh) each planned campaign and runs
// those not done with run, saying on log which it runs or reports;
// stopped is true when soft closed during a run (the evaluation ended
// early: running it again continues).
func RunAll(ctx context.Context, st *runs.Store, plan []Planned, fresh bool, run func(runs.Campaign, Planned) error,
	soft <-chan struct{}, log io.Writer) (evals []Run, stopped bool, err error) {
	for _, p := range plan {
		camp, todo, err := Open(ctx, st, p, fresh)
		if err != nil {
			return nil, false, err
		}
		evals = append(evals, Run{Spec: p.File, Model: p.Model, Camp: camp})
		if !todo {
			fmt.Fprintf(log, "kiln eval: model %s: campaign %s (%s) is done; reporting it (--fresh to run again)\n", p.Model, camp.ID, camp.Name)
			continue
		}
		fmt.Fprintf(log, "kiln eval: model %s: campaign %s (%s)\n", p.Model, camp.ID, camp.Name)
		if err := run(camp, p); err != nil {
			return nil, false, fmt.Errorf("model %s: %w", p.Model, err)
		}
		select {
		case <-soft:
			fmt.Fprintf(log, "kiln eval: stopped; run the same kiln eval again to continue\n")
			return nil, true, nil
		default:
		}
	}
	return evals, false, nil
}
