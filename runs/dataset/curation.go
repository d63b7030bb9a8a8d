package dataset

import (
	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/runs/spec"
)

// ApplyCuration takes a campaign spec's curation section into o: what
// kiln export uses before its flags, and the dashboard's export button
// alone.
func (o *Options) ApplyCuration(cu spec.Curation) {
	if cu.Dedup != nil {
		o.Dedup = *cu.Dedup
	}
	if cu.Shingle > 0 {
		o.Params = curate.Params{Shingle: cu.Shingle, Perms: cu.Permutations, Bands: cu.Bands, Rows: cu.Rows, Threshold: cu.Threshold, Seed: o.Params.Seed}
	}
	if cu.Select != "" {
		o.Selection.Policy = curate.Policy(cu.Select)
	}
	if cu.KeepSpeedup > 0 {
		o.Selection.KeepSpeedup = cu.KeepSpeedup
	}
	o.Selection.SingleShare = cu.SingleShare
	o.Selection.MinSpeedup = cu.MinSpeedup
	if p, err := curate.ParseStreamPolicy(cu.Stream); err == nil {
		o.Selection.Stream = p
	}
	o.Benchmarks = append(o.Benchmarks, cu.Benchmarks...)
	if cu.Validation != nil {
		o.Validation = *cu.Validation
	}
	if len(cu.Difficulty) == 2 {
		o.Tiers = curate.Tiers{Easy: cu.Difficulty[0], Hard: cu.Difficulty[1]}
	}
}
