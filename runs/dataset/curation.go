package dataset

import (
	"context"
	"fmt"
	"io"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/runs/spec"
	"github.com/kiln-dev/kiln/tools/kit"
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

// FromLanes sets what the lanes give an export: their answer normalisers,
// and every lane's benchmark set as a contamination reference (a sample of
// any lane that duplicates a bench task is contaminated).
func (o *Options) FromLanes(reg *kit.Registry) error {
	o.Normaliser = func(lane string) func(string) []string {
		if k, ok := reg.Get(lane); ok {
			return k.Normalise
		}
		return nil
	}
	for _, name := range reg.Names() {
		k, _ := reg.Get(name)
		if k.Bench == nil {
			continue
		}
		fsys, root, err := k.Bench()
		if err != nil {
			return fmt.Errorf("bench set of lane %s: %w", name, err)
		}
		o.BenchSets = append(o.BenchSets, BenchSet{Name: "bench:" + name, FS: fsys, Root: root})
	}
	return nil
}

// Default writes a campaign's curated dataset as raw JSONL records to out,
// with the defaults of kiln export, the spec's curation section cu (nil:
// none) and what the lanes give (the dashboard's export button).
func Default(ctx context.Context, st *runs.Store, campaignID string, cu *spec.Curation, lanes func() (*kit.Registry, error), out io.Writer) error {
	opt := DefaultOptions()
	if cu != nil {
		opt.ApplyCuration(*cu)
	}
	opt.Validation = 0 // one stream: no split
	if err := opt.Validate(); err != nil {
		return err
	}
	reg, err := lanes()
	if err != nil {
		return err
	}
	if err := opt.FromLanes(reg); err != nil {
		return err
	}
	_, err = Build(ctx, st, campaignID, Output{W: out}, opt)
	return err
}
