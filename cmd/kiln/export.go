package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/runs/dataset"
	"github.com/kiln-dev/kiln/runs/spec"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// exportFlags are kiln export's flags; set holds the names given on the
// command line (the spec's curation section fills the others).
type exportFlags struct {
	out, format, think, sel, stream, name                   *string
	all, pending, texts, transcripts, traj, dedup, keepCont *bool
	round                                                   *int
	keepSpeedup, singleShare, minSpeedup, validation        *float64
	against                                                 listFlag
	set                                                     map[string]bool
}

func (x *exportFlags) register(fs *flag.FlagSet) {
	x.out = fs.String("o", "-", "output: - (stdout), a file, or a folder (train.jsonl, validation.jsonl, dataset_info.json, README.md, curation.json): an existing folder, a name ending in /, or, for a trainer format, a name not ending in .jsonl")
	x.format = fs.String("format", "raw", "record layout: raw (kiln's records, full provenance), messages (OpenAI chat: TRL, ms-swift, Axolotl), sharegpt (LLaMA-Factory), alpaca")
	x.all = fs.Bool("all", false, "every judged result, failing and pending ones included, without curation (raw records only)")
	x.pending = fs.Bool("pending", false, "export pending samples too (passed every stage that ran; stages left for a GPU host)")
	x.round = fs.Int("round", -1, "export one round only (-1: every round)")
	x.texts = fs.Bool("texts", true, "raw: put text artifacts (sources, PTX, SASS, RDNA3, host assembly, outputs) in artifact_text; false: blob hashes only")
	x.transcripts = fs.Bool("transcripts", false, "raw: include each attempt's full transcript")
	x.think = fs.String("think", "field", "where the reasoning goes: field (reasoning_content, messages format), tags (<think>...</think> before the answer), none")
	x.traj = fs.Bool("trajectories", false, "keep every turn: tool calls, tool results and repair turns (messages, sharegpt)")
	x.dedup = fs.Bool("dedup", true, "remove near-duplicate answers (MinHash/LSH; parameters in the spec's curation section)")
	x.sel = fs.String("select", "", "selection policy: all-verified, best-per-task, concur (default: the spec's curation.select, all-verified)")
	x.keepSpeedup = fs.Float64("keep-speedup", 0, "concur: keep every sample faster than this (default: the spec's, 5)")
	x.singleShare = fs.Float64("single-share", 0, "concur: target share of single-operator samples, in [0, 1); 0 leaves the mix (default: the spec's)")
	x.minSpeedup = fs.Float64("min-speedup", 0, "keep only samples with a measured speedup >= this, any policy; 0: no speed-up required (default: the spec's curation.min_speedup, 0)")
	x.stream = fs.String("stream", "", "kernels' stream: any, prefer or require the current stream (default: the spec's curation.stream, any)")
	fs.Var(&x.against, "against", "benchmark folder to check for contamination (repeatable; added to the spec's curation.benchmarks)")
	x.keepCont = fs.Bool("keep-contaminated", false, "export samples that match a benchmark, flagged, instead of leaving them out")
	x.validation = fs.Float64("validation", 0, "fraction of tasks in the validation split, folder output only (default: the spec's, 0.05)")
	x.name = fs.String("name", "", "dataset name in dataset_info.json and the card (default: the campaign's)")
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
	x.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { x.set[f.Name] = true })
	opt, err := x.layout()
	if err != nil {
		return err
	}
	st, camp, log, err := c.openCampaign(ctx, e, fs.Arg(0))
	if err != nil {
		return err
	}
	defer st.Close()
	dest, err := dataset.ParseDest(*x.out, opt.Format)
	if err != nil {
		return badInput("-o: %v", err)
	}
	if *x.all {
		return exportAll(ctx, st, camp, dest, *x.texts, *x.transcripts, e)
	}
	// The campaign's curation section, then the flags.
	if sp, err := storedSpec(camp, false); err != nil {
		fmt.Fprintf(e.stderr, "kiln: warning: %v; curation defaults used\n", err)
	} else {
		opt.ApplyCuration(sp.Curation)
	}
	if err := x.curation(&opt, dest); err != nil {
		return err
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

// layout reads the record layout flags (--format, --think, --all,
// --round) into the default options.
func (x *exportFlags) layout() (dataset.Options, error) {
	opt := dataset.DefaultOptions()
	f, err := dataset.ParseFormat(*x.format)
	if err != nil {
		return opt, badInput("--format: %v", err)
	}
	opt.Format = f
	if opt.Think, err = dataset.ParseThink(*x.think); err != nil {
		return opt, badInput("--think: %v", err)
	}
	if *x.all && (f != dataset.Raw || x.set["select"] || x.set["against"] || x.set["dedup"]) {
		return opt, badInput("--all is the uncurated dump of every judged result: raw records, no --select, --against or --dedup")
	}
	if *x.round < -1 {
		return opt, badInput("--round %d: want a round number, or -1 for every round", *x.round)
	}
	return opt, nil
}

// curation applies the curation flags given on the command line over the
// spec's section, then the output flags, and validates the result.
func (x *exportFlags) curation(opt *dataset.Options, dest dataset.Dest) error {
	if x.set["dedup"] {
		opt.Dedup = *x.dedup
	}
	if x.set["select"] {
		p, err := curate.ParsePolicy(*x.sel)
		if err != nil {
			return badInput("--select: %v", err)
		}
		opt.Selection.Policy = p
	}
	if x.set["keep-speedup"] {
		opt.Selection.KeepSpeedup = *x.keepSpeedup
	}
	if x.set["single-share"] {
		opt.Selection.SingleShare = *x.singleShare
	}
	if x.set["min-speedup"] {
		opt.Selection.MinSpeedup = *x.minSpeedup
	}
	if x.set["stream"] {
		var err error
		if opt.Selection.Stream, err = curate.ParseStreamPolicy(*x.stream); err != nil {
			return badInput("--stream: %v", err)
		}
	}
	if x.set["validation"] {
		opt.Validation = *x.validation
	}
	for _, a := range x.against {
		abs, err := filepath.Abs(a)
		if err != nil {
			return badInput("--against %s: %v", a, err)
		}
		opt.Benchmarks = append(opt.Benchmarks, abs)
	}
	opt.KeepContaminated = *x.keepCont
	opt.Pending = *x.pending
	opt.Texts, opt.Transcripts = *x.texts, *x.transcripts
	opt.Trajectories = *x.traj
	opt.Name = *x.name
	if *x.round >= 0 {
		opt.Round = x.round
	}
	if dest.Dir == "" {
		opt.Validation = 0 // one stream: no split
	}
	if err := opt.Validate(); err != nil {
		return badInput("%v", err)
	}
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
