package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/engine"
)

// Plan prints the plan of a campaign's next refinement round (kiln refine
// --plan): the targets, the mix, the synthesis requests and the round's size.
func Plan(w io.Writer, camp runs.Campaign, p engine.RefinePlan) {
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

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
