// Package rounds configures a campaign's refinement rounds (engine.Refine)
// from its spec's refinement section, and says whether and under which
// name a finished campaign may be forked into a refinement campaign (kiln
// refine, the dashboard's refine button).
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
package rounds

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools/kit"
)

// SolverSpec returns sp with the models that solve tasks: every endpoint
// but a synthesiser reserved for synthesis (see the package comment).
func SolverSpec(sp *spec.Spec) *spec.Spec {
	syn := sp.Refinement.Synthesizer
	if syn == "" || len(sp.Models) < 2 || sp.Models[0].Name == syn {
		return sp
	}
	out := *sp
	out.Models = slices.DeleteFunc(slices.Clone(sp.Models), func(m spec.Model) bool { return m.Name == syn })
	return &out
}

// Config builds the pure part of a spec's refinement rounds (no
// model, no sandbox): the policy from the spec's refinement section, and
// the draw and task rendering of the lane's task set.
func Config(sp *spec.Spec, set *kit.TaskSet, rules *refinement.Lanes) (*engine.Refine, error) {
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

// Name is a refinement campaign's default name.
func Name(src runs.Campaign) string {
	return strings.TrimRight(truncate(src.Name, 57), "-.") + "-refine"
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Forkable says why src cannot be refined now, given its plan for the next
// round: it is still queued or running, or the plan stops; nil when it can.
func Forkable(src runs.Campaign, plan engine.RefinePlan) error {
	switch src.State {
	case runs.CampaignQueued, runs.CampaignRunning:
		return fmt.Errorf("campaign %s is %s: let it finish (or kiln resume it) before refining it", src.ID, src.State)
	}
	if plan.Decision.Stop != "" {
		return fmt.Errorf("nothing to refine in campaign %s: %s", src.ID, plan.Decision.Stop)
	}
	return nil
}
