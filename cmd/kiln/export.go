package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/runs/dataset"
	"github.com/kiln-dev/kiln/runs/report"
	"github.com/kiln-dev/kiln/runs/spec"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func cmdExport(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	out := fs.String("o", "-", "output: - (stdout), a file, or a folder (train.jsonl, validation.jsonl, dataset_info.json, README.md, curation.json): an existing folder, a name ending in /, or, for a trainer format, a name not ending in .jsonl")
	format := fs.String("format", "raw", "record layout: raw (kiln's records, full provenance), messages (OpenAI chat: TRL, ms-swift, Axolotl), sharegpt (LLaMA-Factory), alpaca")
	all := fs.Bool("all", false, "every judged result, failing and pending ones included, without curation (raw records only)")
	pending := fs.Bool("pending", false, "export pending samples too (passed every stage that ran; stages left for a GPU host)")
	round := fs.Int("round", -1, "export one round only (-1: every round)")
	texts := fs.Bool("texts", true, "raw: put text artifacts (sources, PTX, SASS, RDNA3, host assembly, outputs) in artifact_text; false: blob hashes only")
	transcripts := fs.Bool("transcripts", false, "raw: include each attempt's full transcript")
	think := fs.String("think", "field", "where the reasoning goes: field (reasoning_content, messages format), tags (<think>...</think> before the answer), none")
	traj := fs.Bool("trajectories", false, "keep every turn: tool calls, tool results and repair turns (messages, sharegpt)")
	dedup := fs.Bool("dedup", true, "remove near-duplicate answers (MinHash/LSH; parameters in the spec's curation section)")
	sel := fs.String("select", "", "selection policy: all-verified, best-per-task, concur (default: the spec's curation.select, all-verified)")
	keepSpeedup := fs.Float64("keep-speedup", 0, "concur: keep every sample faster than this (default: the spec's, 5)")
	singleShare := fs.Float64("single-share", 0, "concur: target share of single-operator samples, in [0, 1); 0 leaves the mix (default: the spec's)")
	minSpeedup := fs.Float64("min-speedup", 0, "keep only samples with a measured speedup >= this, any policy; 0: no speed-up required (default: the spec's curation.min_speedup, 0)")
	stream := fs.String("stream", "", "kernels' stream: any, prefer or require the current stream (default: the spec's curation.stream, any)")
	var against listFlag
	fs.Var(&against, "against", "benchmark folder to check for contamination (repeatable; added to the spec's curation.benchmarks)")
	keepCont := fs.Bool("keep-contaminated", false, "export samples that match a benchmark, flagged, instead of leaving them out")
	validation := fs.Float64("validation", 0, "fraction of tasks in the validation split, folder output only (default: the spec's, 0.05)")
	name := fs.String("name", "", "dataset name in dataset_info.json and the card (default: the campaign's)")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return badInput("want one campaign id or name")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	opt := dataset.DefaultOptions()
	f, err := dataset.ParseFormat(*format)
	if err != nil {
		return badInput("--format: %v", err)
	}
	opt.Format = f
	if opt.Think, err = dataset.ParseThink(*think); err != nil {
		return badInput("--think: %v", err)
	}
	if *all && (f != dataset.Raw || set["select"] || set["against"] || set["dedup"]) {
		return badInput("--all is the uncurated dump of every judged result: raw records, no --select, --against or --dedup")
	}
	if *round < -1 {
		return badInput("--round %d: want a round number, or -1 for every round", *round)
	}

	st, camp, log, err := c.openCampaign(ctx, e, fs.Arg(0))
	if err != nil {
		return err
	}
	defer st.Close()

	dest, err := destOf(*out, f)
	if err != nil {
		return err
	}
	if *all {
		return exportAll(ctx, st, camp, dest, *texts, *transcripts, e)
	}

	// The campaign's curation section, then the flags.
	if sp, err := storedSpec(camp, false); err != nil {
		fmt.Fprintf(e.stderr, "kiln: warning: %v; curation defaults used\n", err)
	} else {
		applyCuration(&opt, sp.Curation)
	}
	if set["dedup"] {
		opt.Dedup = *dedup
	}
	if set["select"] {
		p, err := curate.ParsePolicy(*sel)
		if err != nil {
			return badInput("--select: %v", err)
		}
		opt.Selection.Policy = p
	}
	if set["keep-speedup"] {
		opt.Selection.KeepSpeedup = *keepSpeedup
	}
	if set["single-share"] {
		opt.Selection.SingleShare = *singleShare
	}
	if set["min-speedup"] {
		opt.Selection.MinSpeedup = *minSpeedup
	}
	if set["stream"] {
		if opt.Selection.Stream, err = curate.ParseStreamPolicy(*stream); err != nil {
			return badInput("--stream: %v", err)
		}
	}
	if set["validation"] {
		opt.Validation = *validation
	}
	for _, a := range against {
		abs, err := filepath.Abs(a)
		if err != nil {
			return badInput("--against %s: %v", a, err)
		}
		opt.Benchmarks = append(opt.Benchmarks, abs)
	}
	opt.KeepContaminated = *keepCont
	opt.Pending = *pending
	opt.Texts, opt.Transcripts = *texts, *transcripts
	opt.Trajectories = *traj
	opt.Name = *name
	if *round >= 0 {
		opt.Round = round
	}
	if dest.dir == "" {
		opt.Validation = 0 // one stream: no split
	}
	if err := opt.Validate(); err != nil {
		return badInput("%v", err)
	}
	if err := c.wiring(e, log, c.data).laneReferences(&opt); err != nil {
		return err
	}
	pr := newExportProgress(e.stderr, isTerminal(e.stderr))
	opt.Progress = pr.update

	var sum *dataset.Summary
	err = writeDest(dest, e.stdout, func(w io.Writer) error {
		var err error
		sum, err = dataset.Build(ctx, st, camp.ID, dataset.Output{Dir: dest.dir, W: w}, opt)
		return err
	})
	pr.finish()
	if err != nil {
		return err
	}
	printSummary(e.stderr, sum, dest)
	return nil
}

// laneReferences sets what the lanes give an export: their answer
// normalisers, and every lane's benchmark set as a contamination
// reference (a sample of any lane that duplicates a bench task is
// contaminated).
func (w *wiring) laneReferences(opt *dataset.Options) error {
	reg, err := w.lanes()
	if err != nil {
		return err
	}
	opt.Normaliser = func(lane string) func(string) []string {
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
		opt.BenchSets = append(opt.BenchSets, dataset.BenchSet{Name: "bench:" + name, FS: fsys, Root: root})
	}
	return nil
}

// exportDefault writes camp's curated dataset as raw JSONL records with
// the spec's curation section and the defaults of kiln export (what the
// dashboard's export button gives).
func (w *wiring) exportDefault(ctx context.Context, st *runs.Store, camp runs.Campaign, out io.Writer) error {
	opt := dataset.DefaultOptions()
	if sp, err := storedSpec(camp, false); err == nil {
		applyCuration(&opt, sp.Curation)
	}
	opt.Validation = 0 // one stream: no split
	if err := opt.Validate(); err != nil {
		return err
	}
	if err := w.laneReferences(&opt); err != nil {
		return err
	}
	_, err := dataset.Build(ctx, st, camp.ID, dataset.Output{W: out}, opt)
	return err
}

// exportDest is where an export goes: a folder, a file, or stdout (both
// empty).
type exportDest struct{ dir, file string }

// destOf reads -o.
func destOf(out string, f dataset.Format) (exportDest, error) {
	if out == "-" {
		return exportDest{}, nil
	}
	if out == "" {
		return exportDest{}, badInput("-o: empty path")
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return exportDest{dir: out}, nil
	}
	if strings.HasSuffix(out, "/") || (f != dataset.Raw && !strings.HasSuffix(out, ".jsonl")) {
		return exportDest{dir: out}, nil
	}
	return exportDest{file: out}, nil
}

// applyCuration takes the spec's curation section into opt.
func applyCuration(opt *dataset.Options, cu spec.Curation) {
	if cu.Dedup != nil {
		opt.Dedup = *cu.Dedup
	}
	if cu.Shingle > 0 {
		opt.Params = curate.Params{Shingle: cu.Shingle, Perms: cu.Permutations, Bands: cu.Bands, Rows: cu.Rows, Threshold: cu.Threshold, Seed: opt.Params.Seed}
	}
	if cu.Select != "" {
		opt.Selection.Policy = curate.Policy(cu.Select)
	}
	if cu.KeepSpeedup > 0 {
		opt.Selection.KeepSpeedup = cu.KeepSpeedup
	}
	opt.Selection.SingleShare = cu.SingleShare
	opt.Selection.MinSpeedup = cu.MinSpeedup
	if p, err := curate.ParseStreamPolicy(cu.Stream); err == nil {
		opt.Selection.Stream = p
	}
	opt.Benchmarks = append(opt.Benchmarks, cu.Benchmarks...)
	if cu.Validation != nil {
		opt.Validation = *cu.Validation
	}
	if len(cu.Difficulty) == 2 {
		opt.Tiers = curate.Tiers{Easy: cu.Difficulty[0], Hard: cu.Difficulty[1]}
	}
}

// exportAll is export --all: every judged result, uncurated.
func exportAll(ctx context.Context, st *runs.Store, camp runs.Campaign, dest exportDest, texts, transcripts bool, e env) error {
	if dest.dir != "" {
		return badInput("--all writes one stream of records: give -o a file or -")
	}
	var n int
	err := writeDest(dest, e.stdout, func(w io.Writer) error {
		var err error
		n, err = st.Export(ctx, camp.ID, w, runs.ExportOptions{All: true, Texts: texts, Transcripts: transcripts})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "kiln: exported %d results of campaign %s (all, uncurated)\n", n, camp.ID)
	return nil
}

// writeDest runs write on the export's stream: stdout, or for a file a
// temporary file renamed into place once write succeeds, so that a
// half-written export never looks like a whole one. A folder export
// (dest.dir) writes its own files: write gets stdout, unused.
func writeDest(dest exportDest, stdout io.Writer, write func(io.Writer) error) error {
	if dest.file == "" {
		if err := write(stdout); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest.file), ".kiln-export-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("export: %w", err)
	}
	return closeAndRename(tmp, dest.file)
}

func closeAndRename(f *os.File, path string) error {
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

func printSummary(w io.Writer, s *dataset.Summary, dest exportDest) {
	where := "stdout"
	switch {
	case dest.dir != "":
		where = dest.dir
	case dest.file != "":
		where = dest.file
	}
	fmt.Fprintf(w, "kiln: exported %d samples of campaign %s to %s (%s", s.Written, s.CampaignID, where, s.Format)
	if dest.dir != "" {
		fmt.Fprintf(w, "; train %d, validation %d", s.Train, s.Validation)
	}
	fmt.Fprintf(w, ") in %.1fs\n", s.Seconds)
	fmt.Fprintf(w, "kiln: %d results, %d eligible; left out: %s\n", s.Results, s.Eligible, countsLine(s.Excluded))
	if len(s.Benchmarks) > 0 {
		fmt.Fprintf(w, "kiln: contamination: %d samples match a benchmark (%s)\n", s.Contaminated,
			map[bool]string{true: "kept, flagged", false: "left out"}[s.Settings.KeepContaminated])
	}
}

func countsLine(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	return report.TopClasses(m, len(m))
}

// exportProgress shows an export's progress on a terminal, rewritten in
// place at most five times a second; elsewhere it shows nothing.
type exportProgress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	last  time.Time
	shown bool
}

func newExportProgress(w io.Writer, tty bool) *exportProgress {
	return &exportProgress{w: w, tty: tty}
}

func (p *exportProgress) update(stage string, done, total int) {
	if !p.tty {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.last) < 200*time.Millisecond && done != total {
		return
	}
	p.last = time.Now()
	line := fmt.Sprintf("export: %s %d", stage, done)
	if total > 0 {
		const width = 30
		fill := min(width, done*width/total)
		line = fmt.Sprintf("export: %-7s [%s%s] %d/%d", stage, strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total)
	}
	fmt.Fprintf(p.w, "\r%-70s", line)
	p.shown = true
}

func (p *exportProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprintf(p.w, "\r%-70s\r", "")
	}
}
