package engine

import (
	"context"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
)

// RefinePlan is what kiln refine --plan prints: the decision on the finished
// run's current round and the next round's mix.
type RefinePlan struct {
	Campaign string   `json:"campaign"`
	Name     string   `json:"name"`
	Round    int      `json:"round"`
	Decision Decision `json:"decision"`
	// Shares are the weights as shares of the corpus categories.
	Shares map[string]float64 `json:"shares,omitempty"`
	// Drawn counts the next round's corpus tasks per category.
	Drawn      map[string]int `json:"drawn,omitempty"`
	DrawnTasks int            `json:"drawn_tasks"`
	// Synthesise is how many new tasks the synthesiser would be asked for
	// (before validation drops any).
	Synthesise int `json:"synthesise"`
	// SamplesPerTask is how many tasks each accepted one becomes.
	SamplesPerTask int `json:"samples_per_task"`
}

// PlanNext computes the next round's plan of camp under rf without calling
// a model or touching a sandbox (kiln refine --plan). samplesPerTask is
// how many tasks an accepted synthesised task becomes.
func PlanNext(ctx context.Context, st *runs.Store, camp runs.Campaign, rf *Refine, samplesPerTask int) (RefinePlan, error) {
	results, err := st.Results(ctx, camp.ID, camp.Round)
	if err != nil {
		return RefinePlan{}, err
	}
	var prev []runs.Result
	if camp.Round > 0 {
		if prev, err = st.Results(ctx, camp.ID, camp.Round-1); err != nil {
			return RefinePlan{}, err
		}
	}
	tasks, err := st.Tasks(ctx, camp.ID, -1)
	if err != nil {
		return RefinePlan{}, err
	}
	d, err := rf.Decide(camp.Lane, camp.Round, results, prev, tasks)
	if err != nil {
		return RefinePlan{}, err
	}
	p := RefinePlan{Campaign: camp.ID, Name: camp.Name, Round: camp.Round, Decision: d, SamplesPerTask: samplesPerTask}
	if d.Stop != "" {
		return p, nil
	}
	p.Shares = refinement.Shares(d.Weights, rf.Policy.Known)
	drawn, err := rf.Draw(camp.Round+1, d.Weights)
	if err != nil {
		return RefinePlan{}, err
	}
	p.DrawnTasks = len(drawn)
	p.Drawn = map[string]int{}
	for _, t := range drawn {
		for _, c := range t.Categories {
			p.Drawn[c]++
		}
	}
	for _, r := range d.Requests {
		p.Synthesise += r.K
	}
	return p, nil
}
