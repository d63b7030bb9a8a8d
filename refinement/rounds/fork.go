package rounds

import (
	"context"
	"errors"
	"fmt"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/api"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools/kit"
)

// Forker forks refinement campaigns from finished ones: kiln refine in
// the foreground, the dashboard's refine button in the daemon. Errors that
// are the user's (a spec, a campaign that cannot be refined) are
// kit.UsageError.
type Forker struct {
	Store *runs.Store
	// Options are the spec options of a spec submitted from folder dir.
	Options func(dir string) spec.Options
	// Source is sp's task set, as its lane's kit draws it.
	Source func(ctx context.Context, sp *spec.Spec) (*kit.TaskSet, error)
	// Lanes is the lanes' registry (their rules).
	Lanes func() (*kit.Registry, error)
	// Check builds a campaign's whole plan under sp (models, sandbox), so
	// that a fork that cannot run is not recorded.
	Check func(ctx context.Context, sp *spec.Spec) error
}

// Spec derives a refinement campaign's spec from src's stored spec.
func (f *Forker) Spec(src runs.Campaign, ov spec.Overrides) ([]byte, *spec.Spec, error) {
	specYAML, err := ov.Apply(src.Spec)
	if err != nil {
		return nil, nil, fmt.Errorf("stored spec of campaign %s: %w", src.ID, err)
	}
	sp, err := spec.Parse(specYAML, ov.Name+".yaml", f.Options(src.SpecDir))
	if err != nil {
		return nil, nil, kit.UsageError{Err: err}
	}
	return specYAML, sp, nil
}

// Next computes the next round's plan of camp under sp (kiln refine
// --plan): the lane's task set and the spec's policy, no model, no sandbox.
func (f *Forker) Next(ctx context.Context, camp runs.Campaign, sp *spec.Spec) (engine.RefinePlan, error) {
	set, err := f.Source(ctx, sp)
	if err != nil {
		return engine.RefinePlan{}, kit.UsageError{Err: err}
	}
	reg, err := f.Lanes()
	if err != nil {
		return engine.RefinePlan{}, err
	}
	rf, err := Config(sp, set, reg.Rules())
	if err != nil {
		return engine.RefinePlan{}, kit.UsageError{Err: err}
	}
	return engine.PlanNext(ctx, f.Store, camp, rf, sp.Tasks.SamplesPerTask)
}

// Fork checks that src can be refined under sp (its plan for the next
// round) and forks the refinement campaign, which has yet to run.
func (f *Forker) Fork(ctx context.Context, src runs.Campaign, specYAML []byte, sp *spec.Spec, plan engine.RefinePlan) (runs.Campaign, error) {
	if err := Forkable(src, plan); err != nil {
		return runs.Campaign{}, kit.UsageError{Err: err}
	}
	if err := f.Check(ctx, sp); err != nil {
		return runs.Campaign{}, kit.UsageError{Err: err}
	}
	fork, err := f.Store.ForkCampaign(ctx, src.ID, runs.Campaign{Name: sp.Name, Spec: specYAML, SpecDir: src.SpecDir,
		Note: "refinement of " + src.ID})
	if err != nil {
		return runs.Campaign{}, fmt.Errorf("refine: %w", err)
	}
	return fork, nil
}

// More forks a refinement campaign of more rounds from the finished
// campaign id, under its default name (categories are targeted besides
// the policy's picks, as kiln refine --categories does): the dashboard's
// refine button. A campaign that cannot be refined is an api.ErrConflict.
func (f *Forker) More(ctx context.Context, id string, more int, categories []string) (runs.Campaign, error) {
	src, err := f.Store.Campaign(ctx, id)
	if err != nil {
		return runs.Campaign{}, err
	}
	specYAML, sp, err := f.Spec(src, spec.Overrides{Name: Name(src), Rounds: src.Round + more, Categories: categories, MaxTasks: -1, MaxTokens: -1})
	if err != nil {
		return runs.Campaign{}, conflict(err)
	}
	plan, err := f.Next(ctx, src, sp)
	if err != nil {
		return runs.Campaign{}, conflict(err)
	}
	fork, err := f.Fork(ctx, src, specYAML, sp, plan)
	if err != nil {
		return runs.Campaign{}, conflict(err)
	}
	return fork, nil
}

// conflict marks the user's errors as conflicts with the campaign's state
// for the API and dashboard.
func conflict(err error) error {
	var u kit.UsageError
	if errors.As(err, &u) {
		return fmt.Errorf("%w: %v", api.ErrConflict, err)
	}
	return err
}
