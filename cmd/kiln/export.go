package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/dataset"
	"github.com/kiln-dev/kiln/runs/spec"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// exportFlags are kiln export's flags (dataset.Overrides); Set holds the
// names given on the command line (the spec's curation section fills the
// others).
type exportFlags struct {
	dataset.Overrides
	out string
}

func (x *exportFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&x.out, "o", "-", "output: - (stdout), a file, or a folder (train.jsonl, validation.jsonl, dataset_info.json, README.md, curation.json): an existing folder, a name ending in /, or, for a trainer format, a name not ending in .jsonl")
	fs.StringVar(&x.Format, "format", "raw", "record layout: raw (kiln's records, full provenance), messages (OpenAI chat: TRL, ms-swift, Axolotl), sharegpt (LLaMA-Factory), alpaca")
	fs.BoolVar(&x.All, "all", false, "every judged result, failing and pending ones included, without curation (raw records only)")
	fs.BoolVar(&x.Pending, "pending", false, "export pending samples too (passed every stage that ran; stages left for a GPU host)")
	fs.IntVar(&x.Round, "round", -1, "export one round only (-1: every round)")
	fs.BoolVar(&x.Texts, "texts", true, "raw: put text artifacts (sources, PTX, SASS, RDNA3, host assembly, outputs) in artifact_text; false: blob hashes only")
	fs.BoolVar(&x.Transcripts, "transcripts", false, "raw: include each attempt's full transcript")
	fs.StringVar(&x.Think, "think", "field", "where the reasoning goes: field (reasoning_content, messages format), tags (<think>...</think> before the answer), none")
	fs.BoolVar(&x.Trajectories, "trajectories", false, "keep every turn: tool calls, tool results and repair turns (messages, sharegpt)")
	fs.BoolVar(&x.Dedup, "dedup", true, "remove near-duplicate answers (MinHash/LSH; parameters in the spec's curation section)")
	fs.StringVar(&x.Select, "select", "", "selection policy: all-verified, best-per-task, concur (default: the spec's curation.select, all-verified)")
	fs.Float64Var(&x.KeepSpeedup, "keep-speedup", 0, "concur: keep every sample faster than this (default: the spec's, 5)")
	fs.Float64Var(&x.SingleShare, "single-share", 0, "concur: target share of single-operator samples, in [0, 1); 0 leaves the mix (default: the spec's)")
	fs.Float64Var(&x.MinSpeedup, "min-speedup", 0, "keep only samples with a measured speedup >= this, any policy; 0: no speed-up required (default: the spec's curation.min_speedup, 0)")
	fs.StringVar(&x.Stream, "stream", "", "kernels' stream: any, prefer or require the current stream (default: the spec's curation.stream, any)")
	fs.Var((*listFlag)(&x.Against), "against", "benchmark folder to check for contamination (repeatable; added to the spec's curation.benchmarks)")
	fs.BoolVar(&x.KeepContaminated, "keep-contaminated", false, "export samples that match a benchmark, flagged, instead of leaving them out")
	fs.Float64Var(&x.Validation, "validation", 0, "fraction of tasks in the validation split, folder output only (default: the spec's, 0.05)")
	fs.StringVar(&x.Name, "name", "", "dataset name in dataset_info.json and the card (default: the campaign's)")
}

// cmdExport writes a campaign's curated dataset (or, with --all, every
// judged result) to -o.
func cmdExport(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	var x exportFlags
	x.register(fs)
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return badInput("want one campaign id or name")
	}
	x.Set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { x.Set[f.Name] = true })
	opt, err := x.Layout()
	if err != nil {
		return badInput("%v", err)
	}
	st, camp, log, err := c.openCampaign(ctx, e, fs.Arg(0))
	if err != nil {
		return err
	}
	defer st.Close()
	dest, err := dataset.ParseDest(x.out, opt.Format)
	if err != nil {
		return badInput("-o: %v", err)
	}
	if x.All {
		return exportAll(ctx, st, camp, dest, x.Texts, x.Transcripts, e)
	}
	// The campaign's curation section, then the flags.
	if sp, err := storedSpec(camp, false); err != nil {
		fmt.Fprintf(e.stderr, "kiln: warning: %v; curation defaults used\n", err)
	} else {
		opt.ApplyCuration(sp.Curation)
	}
	if err := x.Apply(&opt, dest); err != nil {
		return badInput("%v", err)
	}
	if err := c.wiring(e, log, c.data).laneReferences(&opt); err != nil {
		return err
	}
	pr := dataset.NewProgress(e.stderr, isTerminal(e.stderr))
	opt.Progress = pr.Update
	var sum *dataset.Summary
	err = dest.Write(e.stdout, func(w io.Writer) error {
		var err error
		sum, err = dataset.Build(ctx, st, camp.ID, dataset.Output{Dir: dest.Dir, W: w}, opt)
		return err
	})
	pr.Finish()
	if err != nil {
		return err
	}
	dataset.WriteSummary(e.stderr, sum, dest)
	return nil
}

// laneReferences sets what the lanes give an export (dataset.Options.FromLanes).
func (w *wiring) laneReferences(opt *dataset.Options) error {
	reg, err := w.lanes()
	if err != nil {
		return err
	}
	return opt.FromLanes(reg)
}

// exportDefault writes camp's curated dataset as the dashboard's export
// button gives it (dataset.Default).
func (w *wiring) exportDefault(ctx context.Context, st *runs.Store, camp runs.Campaign, out io.Writer) error {
	var cu *spec.Curation
	if sp, err := storedSpec(camp, false); err == nil {
		cu = &sp.Curation
	}
	return dataset.Default(ctx, st, camp.ID, cu, w.lanes, out)
}

// exportAll is export --all: every judged result, uncurated.
func exportAll(ctx context.Context, st *runs.Store, camp runs.Campaign, dest dataset.Dest, texts, transcripts bool, e env) error {
	if dest.Dir != "" {
		return badInput("--all writes one stream of records: give -o a file or -")
	}
	n, err := dataset.WriteAll(ctx, st, camp.ID, dest, e.stdout, runs.ExportOptions{All: true, Texts: texts, Transcripts: transcripts})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "kiln: exported %d results of campaign %s (all, uncurated)\n", n, camp.ID)
	return nil
}
