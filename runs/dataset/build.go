// Package dataset turns a campaign's results into a training dataset:
// the curation of runs/curate (contamination check, near-duplicate
// removal, a selection policy, difficulty tiers) and the trainer formats
// (messages, sharegpt, alpaca, or kiln's raw records), with a
// deterministic train/validation split by task, a LLaMA-Factory
// dataset_info.json and a dataset card. It reads the store twice,
// streaming: the first pass decides what is kept from small per-sample
// facts and signatures, the second writes the kept samples.
package dataset

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
)

// Options configure an export.
type Options struct {
	Format Format
	// Name names the dataset in dataset_info.json and the card; default
	// the campaign's name.
	Name string
	// Pending exports pending samples (passed every stage that ran) with
	// the verified ones.
	Pending bool
	// Round restricts the export to one round; nil means all.
	Round *int
	// Texts and Transcripts are the raw format's runs.ExportOptions.
	Texts, Transcripts bool
	// Think places the reasoning (default ThinkField).
	Think Think
	// Trajectories keeps every turn: tool calls, tool results, repair
	// turns (messages and sharegpt only).
	Trajectories bool

	// Dedup removes near-duplicate answers with Params.
	Dedup  bool
	Params curate.Params
	// Selection is the policy applied after deduplication.
	Selection curate.Selection
	// Tiers label each task's difficulty by its average reasoning length.
	Tiers curate.Tiers
	// Benchmarks are folders of benchmark documents (KernelBench
	// problems, eval sets): samples whose task input or answer duplicates
	// one, exactly or nearly, are contaminated.
	Benchmarks []string
	// BenchSets are embedded benchmark sets (a lane's kiln eval set),
	// checked like Benchmarks.
	BenchSets []BenchSet
	// KeepContaminated exports contaminated samples (flagged in their
	// records) instead of leaving them out.
	KeepContaminated bool
	// Validation is the fraction of tasks (never of samples) in the
	// validation split, in [0, 1).
	Validation float64
	// Normaliser gives the tokeniser of a lane's answers for
	// deduplication and the contamination check; nil, or a nil result,
	// means curate.Normalise (source code).
	Normaliser func(lane string) func(string) []string
	// Progress, when set, is called now and then with the stage
	// ("reading", "writing"), the samples done and the total.
	Progress func(stage string, done, total int)
	// Workers sign documents in parallel (default GOMAXPROCS).
	Workers int
}

// DefaultOptions are the defaults of kiln export.
func DefaultOptions() Options {
	return Options{Format: Raw, Think: ThinkField, Dedup: true, Params: curate.DefaultParams(),
		Selection: curate.Selection{Policy: curate.AllVerified, KeepSpeedup: curate.DefaultKeepSpeedup},
		Tiers:     curate.DefaultTiers(), Texts: true}
}

// Validate checks o.
func (o Options) Validate() error {
	if _, err := ParseFormat(string(o.Format)); err != nil {
		return err
	}
	if _, err := ParseThink(string(o.Think)); err != nil {
		return err
	}
	if o.Trajectories && (o.Format == Alpaca || o.Format == Raw) {
		return fmt.Errorf("trajectories: the %s format has no tool turns (use messages or sharegpt; raw keeps them with transcripts)", o.Format)
	}
	if o.Dedup {
		if err := o.Params.Validate(); err != nil {
			return err
		}
	}
	if err := o.Selection.Validate(); err != nil {
		return err
	}
	if err := o.Tiers.Validate(); err != nil {
		return err
	}
	if o.Validation < 0 || o.Validation >= 1 || math.IsNaN(o.Validation) {
		return fmt.Errorf("validation fraction %g: want [0, 1)", o.Validation)
	}
	return nil
}

// Output is where an export goes: a folder (train.jsonl,
// validation.jsonl, dataset_info.json, README.md, curation.json) or, with
// Dir empty, one stream of records (no split, no card).
type Output struct {
	Dir string
	W   io.Writer
}

// Match is one contamination finding.
type Match struct {
	Sample    string  `json:"sample"`
	Task      string  `json:"task"`
	Field     string  `json:"field"` // "answer" or "input:<file>" or "input:prompt"
	Benchmark string  `json:"benchmark"`
	Score     float64 `json:"similarity"`
}

// MaxListedMatches bounds the contamination matches listed in a Summary.
const MaxListedMatches = 1000

// Summary reports what an export did; it is written as curation.json.
type Summary struct {
	Campaign   string `json:"campaign"`
	CampaignID string `json:"campaign_id"`
	Format     Format `json:"format"`
	// Results is every judged result read; Eligible those verified (and
	// pending, when asked).
	Results  int `json:"results"`
	Eligible int `json:"eligible"`
	// Excluded counts what was left out, by reason: failing, task_fault
	// (the task's own reference failed), pending, contaminated,
	// duplicate, policy, balance.
	Excluded map[string]int `json:"excluded"`
	// Selected counts the kept samples by why they were kept.
	Selected   map[string]int `json:"selected"`
	Written    int            `json:"written"`
	Train      int            `json:"train"`
	Validation int            `json:"validation"`
	// Contaminated is the number of samples matching a benchmark; Flagged
	// those exported anyway (KeepContaminated).
	Contaminated int     `json:"contaminated"`
	Flagged      int     `json:"flagged"`
	Benchmarks   []Bench `json:"benchmarks"`
	// Matches lists contamination findings, at most MaxListedMatches.
	Matches []Match `json:"matches"`

	ByLane       map[string]int      `json:"by_lane"`
	ByCategory   map[string]int      `json:"by_category"`
	ByModel      map[string]int      `json:"by_model"`
	ByRound      map[string]int      `json:"by_round"`
	ByDifficulty map[string]int      `json:"by_difficulty"`
	Toolchains   map[string][]string `json:"toolchains"`
	Settings     Settings            `json:"settings"`
	Seconds      float64             `json:"seconds"`
}

// Bench is one benchmark folder of the contamination check.
type Bench struct {
	Folder string `json:"folder"`
	Files  int    `json:"files"`
}

// BenchSet is an embedded benchmark set: the files under Root in FS,
// reported as Name ("bench:cuda2hip").
type BenchSet struct {
	Name string
	FS   fs.FS
	Root string
}

// Settings are the curation settings an export used.
type Settings struct {
	Dedup            bool          `json:"dedup"`
	Params           curate.Params `json:"dedup_params"`
	Policy           curate.Policy `json:"policy"`
	KeepSpeedup      float64       `json:"keep_speedup"`
	SingleShare      float64       `json:"single_share"`
	MinSpeedup       float64       `json:"min_speedup,omitempty"`
	Stream           string        `json:"stream,omitempty"`
	Tiers            curate.Tiers  `json:"difficulty_tiers"`
	KeepContaminated bool          `json:"keep_contaminated"`
	Validation       float64       `json:"validation"`
	Pending          bool          `json:"pending"`
	Think            Think         `json:"think"`
	Trajectories     bool          `json:"trajectories"`
}

// Curation is the section Build adds to every raw record.
type Curation struct {
	Item       string  `json:"item"`
	Difficulty string  `json:"difficulty"`
	ARL        float64 `json:"arl"`
	Selected   string  `json:"selected"`
	Split      string  `json:"split"`
	// Contamination lists the sample's benchmark matches (only when
	// contaminated samples are kept).
	Contamination []Match `json:"contamination,omitempty"`
}

// streamOf is where a verdict's kernels run, from its "stream_current"
// measurement (curate.StreamCurrent or StreamOther; "" when not measured).
func streamOf(v runs.Verdict) string {
	x, ok := v.Measurements["stream_current"]
	switch {
	case !ok:
		return ""
	case x == 1:
		return curate.StreamCurrent
	}
	return curate.StreamOther
}

// entry is what the first pass keeps of one eligible sample.
type entry struct {
	cand    curate.Candidate
	doc     curate.Doc
	matches []Match
	dupOf   string
	keep    string // selection reason; "" when dropped
}

// job is one eligible sample's texts, for a signing worker.
type job struct {
	e      *entry
	lane   string
	answer string
	files  map[string]string
	prompt string
}

// Build exports the campaign's results into out and returns the summary.
// Nothing is written into out.Dir unless the export succeeds: files are
// written under temporary names and renamed at the end.
func Build(ctx context.Context, st *runs.Store, campaignID string, out Output, opt Options) (*Summary, error) {
	start := time.Now()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	camp, err := st.Campaign(ctx, campaignID)
	if err != nil {
		return nil, err
	}
	if opt.Name == "" {
		opt.Name = camp.Name
	}
	b := &exportRun{st: st, camp: camp, out: out, opt: opt, round: -1, sum: newSummary(camp, opt), arl: curate.NewARL()}
	if opt.Round != nil {
		b.round = *opt.Round
	}
	if err := b.loadReferences(); err != nil {
		return nil, err
	}
	// Pass 1: facts, signatures and contamination of every eligible
	// sample; the average reasoning length of every task.
	entries, err := b.readEligible(ctx)
	if err != nil {
		return nil, err
	}
	// Contamination, then near-duplicates round by round (best first
	// within a round), then the policy.
	clean := b.dropContaminated(entries)
	if opt.Dedup {
		if clean, err = b.dropDuplicates(clean); err != nil {
			return nil, err
		}
	}
	keep, err := b.selectKept(clean)
	if err != nil {
		return nil, err
	}
	// Pass 2: write the kept samples.
	w, err := newWriters(out, opt)
	if err != nil {
		return nil, err
	}
	defer w.abort()
	if err := b.writeKept(ctx, w, keep); err != nil {
		return nil, err
	}
	b.sum.Seconds = math.Round(time.Since(start).Seconds()*1000) / 1000
	if err := w.finish(b.sum, opt); err != nil {
		return nil, err
	}
	return b.sum, nil
}

// exportRun is one export in progress: what Build's steps share.
type exportRun struct {
	st    *runs.Store
	camp  runs.Campaign
	out   Output
	opt   Options
	round int // -1: every round
	sum   *Summary

	hasher *curate.Hasher
	ref    *curate.Reference
	arl    *curate.ARL
}

// newSummary is the summary of an export of camp before it reads anything.
func newSummary(camp runs.Campaign, opt Options) *Summary {
	return &Summary{Campaign: camp.Name, CampaignID: camp.ID, Format: opt.Format,
		Excluded: map[string]int{}, Selected: map[string]int{}, Matches: []Match{}, Benchmarks: []Bench{},
		ByLane: map[string]int{}, ByCategory: map[string]int{}, ByModel: map[string]int{}, ByRound: map[string]int{},
		ByDifficulty: map[string]int{}, Toolchains: map[string][]string{},
		Settings: Settings{Dedup: opt.Dedup, Params: opt.Params, Policy: opt.Selection.Policy, KeepSpeedup: opt.Selection.KeepSpeedup,
			SingleShare: opt.Selection.SingleShare, MinSpeedup: opt.Selection.MinSpeedup, Stream: string(opt.Selection.Stream), Tiers: opt.Tiers, KeepContaminated: opt.KeepContaminated,
			Validation: opt.Validation, Pending: opt.Pending, Think: opt.Think, Trajectories: opt.Trajectories}}
}

// loadReferences makes the hasher and loads the contamination references:
// the benchmark folders, then the lanes' bench sets.
func (b *exportRun) loadReferences() error {
	hasher, err := curate.NewHasher(b.opt.Params)
	if err != nil {
		return err
	}
	b.hasher, b.ref = hasher, curate.NewReference(hasher)
	for _, dir := range b.opt.Benchmarks {
		before := b.ref.Files
		if err := b.ref.LoadDir(dir); err != nil {
			return err
		}
		b.sum.Benchmarks = append(b.sum.Benchmarks, Bench{Folder: dir, Files: b.ref.Files - before})
	}
	for _, bs := range b.opt.BenchSets {
		before := b.ref.Files
		if err := b.ref.LoadFS(bs.FS, bs.Root, bs.Name); err != nil {
			return fmt.Errorf("bench set %s: %w", bs.Name, err)
		}
		b.sum.Benchmarks = append(b.sum.Benchmarks, Bench{Folder: bs.Name, Files: b.ref.Files - before})
	}
	return nil
}

// readEligible is the first pass: every result is counted, its reasoning
// length recorded, and the eligible ones become entries, signed by a pool
// of workers.
func (b *exportRun) readEligible(ctx context.Context) ([]*entry, error) {
	total := -1
	if b.opt.Progress != nil {
		if c, err := b.st.Counts(ctx, b.camp.ID, b.round); err == nil {
			total = c.Done
		}
	}
	var entries []*entry
	workers := b.opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan job, 4*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				sign(j, b.hasher, b.ref, b.opt)
			}
		})
	}
	readErr := b.st.EachResult(ctx, b.camp.ID, b.round, func(r runs.Result) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.sum.Results++
		if b.opt.Progress != nil && b.sum.Results%1000 == 0 {
			b.opt.Progress("reading", b.sum.Results, total)
		}
		if e := b.admit(r, len(entries)); e != nil {
			entries = append(entries, e)
			jobs <- job{e: e, lane: r.Task.Lane, answer: r.Attempt.Answer, files: r.Task.Files, prompt: r.Task.Prompt}
		}
		return nil
	})
	close(jobs)
	wg.Wait()
	if readErr != nil {
		return nil, fmt.Errorf("read results: %w", readErr)
	}
	if b.opt.Progress != nil {
		b.opt.Progress("reading", b.sum.Results, b.sum.Results)
	}
	b.sum.Eligible = len(entries)
	return entries, nil
}

// admit records r's reasoning length and returns its entry (the order-th)
// when it is eligible: judged a pass (or pending, with Options.Pending) and
// admitted by the selection; otherwise it counts why not and returns nil.
func (b *exportRun) admit(r runs.Result, order int) *entry {
	item := curate.ItemKey(r.Task.Key)
	reasoning := reasoningLength(r)
	b.arl.Add(item, reasoning)
	outcome := r.Verdict.Outcome()
	pending := outcome == runs.OutcomePending
	switch {
	case outcome == runs.OutcomeTaskFault:
		b.sum.Excluded["task_fault"]++
		return nil
	case outcome == runs.OutcomeFail:
		b.sum.Excluded["failing"]++
		return nil
	case pending && !b.opt.Pending:
		b.sum.Excluded["pending"]++
		return nil
	}
	e := &entry{cand: curate.Candidate{ID: r.Attempt.ID, Item: item, Round: r.Task.Round, Categories: r.Task.Categories,
		Pending: pending, Speedup: r.Verdict.Measurements["speedup"], Stream: streamOf(r.Verdict),
		Reasoning: reasoning, Answer: len(r.Attempt.Answer), Order: order}}
	if why := b.opt.Selection.Admit(&e.cand); why != "" {
		b.sum.Excluded[why]++
		return nil
	}
	return e
}

// dropContaminated counts the entries that match a benchmark and leaves
// them out, unless Options.KeepContaminated flags and keeps them.
func (b *exportRun) dropContaminated(entries []*entry) []*entry {
	var clean []*entry
	for _, e := range entries {
		if len(e.matches) > 0 {
			b.sum.Contaminated++
			for _, m := range e.matches {
				if len(b.sum.Matches) < MaxListedMatches {
					b.sum.Matches = append(b.sum.Matches, m)
				}
			}
			if !b.opt.KeepContaminated {
				b.sum.Excluded["contaminated"]++
				continue
			}
			b.sum.Flagged++
		}
		clean = append(clean, e)
	}
	return clean
}

// dropDuplicates leaves out the near-duplicates of earlier entries: round
// by round, the better first within a round.
func (b *exportRun) dropDuplicates(clean []*entry) ([]*entry, error) {
	order := append([]*entry(nil), clean...)
	sort.SliceStable(order, func(i, j int) bool {
		x, y := &order[i].cand, &order[j].cand
		if x.Round != y.Round {
			return x.Round < y.Round
		}
		return b.opt.Selection.Better(x, y)
	})
	dd, err := curate.NewDeduper(b.opt.Params)
	if err != nil {
		return nil, err
	}
	for _, e := range order {
		e.dupOf, _ = dd.Offer(e.doc)
	}
	kept := clean[:0]
	for _, e := range clean {
		if e.dupOf != "" {
			b.sum.Excluded["duplicate"]++
			continue
		}
		kept = append(kept, e)
	}
	return kept, nil
}

// selectKept applies the selection policy: the kept entries by attempt id.
func (b *exportRun) selectKept(clean []*entry) (map[string]*entry, error) {
	cands := make([]curate.Candidate, len(clean))
	for i, e := range clean {
		cands[i] = e.cand
	}
	reasons, err := b.opt.Selection.Select(cands)
	if err != nil {
		return nil, err
	}
	keep := map[string]*entry{}
	for i, e := range clean {
		e.keep = reasons[i]
		if e.keep == "" {
			b.sum.Excluded[curate.DropPolicy]++
			continue
		}
		b.sum.Selected[e.keep]++
		keep[e.cand.ID] = e
	}
	return keep, nil
}

// writeKept is the second pass: each kept result is written to its split
// and counted, and the toolchains of the written ones listed.
func (b *exportRun) writeKept(ctx context.Context, w *writers, keep map[string]*entry) error {
	tools := map[string]map[string]bool{}
	err := b.st.EachResult(ctx, b.camp.ID, b.round, func(r runs.Result) error {
		e := keep[r.Attempt.ID]
		if e == nil {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.writeOne(w, r, e); err != nil {
			return err
		}
		for k, v := range r.Verdict.Toolchain {
			if tools[k] == nil {
				tools[k] = map[string]bool{}
			}
			tools[k][v] = true
		}
		if b.opt.Progress != nil && b.sum.Written%1000 == 0 {
			b.opt.Progress("writing", b.sum.Written, len(keep))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if b.opt.Progress != nil {
		b.opt.Progress("writing", b.sum.Written, len(keep))
	}
	for k, vs := range tools {
		for v := range vs {
			b.sum.Toolchains[k] = append(b.sum.Toolchains[k], v)
		}
		sort.Strings(b.sum.Toolchains[k])
	}
	return nil
}

// writeOne writes the kept result r (entry e) to its split with its
// curation section, and counts it.
func (b *exportRun) writeOne(w *writers, r runs.Result, e *entry) error {
	split := "train"
	if inValidation(e.cand.Item, b.opt.Validation) && b.out.Dir != "" {
		split = "validation"
	}
	cur := Curation{Item: e.cand.Item, ARL: math.Round(b.arl.Mean(e.cand.Item)), Selected: e.keep, Split: split, Contamination: e.matches}
	cur.Difficulty = b.opt.Tiers.Label(cur.ARL)
	rec, err := record(b.st, b.camp, r, cur, b.opt)
	if err != nil {
		return fmt.Errorf("task %s: %w", r.Task.Key, err)
	}
	if err := w.write(split, rec); err != nil {
		return err
	}
	sum := b.sum
	sum.Written++
	if split == "train" {
		sum.Train++
	} else {
		sum.Validation++
	}
	sum.ByLane[r.Task.Lane]++
	for _, c := range r.Task.Categories {
		sum.ByCategory[c]++
	}
	sum.ByModel[r.Attempt.Model]++
	sum.ByRound[fmt.Sprint(r.Task.Round)]++
	sum.ByDifficulty[cur.Difficulty]++
	return nil
}

// sign fills a job's entry: the answer's document and the contamination
// matches of the answer and the task's inputs.
func sign(j job, h *curate.Hasher, ref *curate.Reference, opt Options) {
	norm := curate.Normalise
	if opt.Normaliser != nil {
		if f := opt.Normaliser(j.lane); f != nil {
			norm = f
		}
	}
	tokens := norm(j.answer)
	if opt.Dedup {
		j.e.doc = h.Doc(j.e.cand.ID, tokens)
	}
	if ref.Files == 0 {
		return
	}
	match := func(field string, toks []string) {
		if name, sim := ref.Match(toks); name != "" {
			j.e.matches = append(j.e.matches, Match{Sample: j.e.cand.ID, Task: j.e.cand.Item, Field: field, Benchmark: name, Score: sim})
		}
	}
	match("answer", tokens)
	names := make([]string, 0, len(j.files))
	for n := range j.files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		match("input:"+n, curate.NormaliseFile(n, j.files[n]))
	}
	if len(j.files) == 0 && j.prompt != "" {
		match("input:prompt", curate.Normalise(j.prompt))
	}
}

// inValidation puts a task in the validation split by a hash of its item
// key: the same tasks in every export of every campaign, whatever the
// samples.
func inValidation(item string, frac float64) bool {
	if frac <= 0 {
		return false
	}
	h := fnv.New64a()
	h.Write([]byte(item))
	return float64(h.Sum64()%1_000_000) < frac*1_000_000
}

// record builds one output record of r in opt.Format.
func record(st *runs.Store, camp runs.Campaign, r runs.Result, cur Curation, opt Options) (any, error) {
	if opt.Format == Raw {
		s := runs.NewSample(camp, r, opt.Transcripts)
		if opt.Texts {
			texts, err := st.ArtifactTexts(r.Verdict.Artifacts)
			if err != nil {
				return nil, err
			}
			s.ArtifactText = texts
		}
		return struct {
			runs.Sample
			Curation Curation `json:"curation"`
		}{s, cur}, nil
	}
	conv, err := transcript(r, opt.Trajectories)
	if err != nil {
		return nil, err
	}
	m := meta{ID: r.Attempt.ID, Lane: r.Task.Lane, Task: cur.Item, Round: r.Task.Round, Categories: r.Task.Categories,
		Model: r.Attempt.Model, Difficulty: cur.Difficulty}
	if m.Categories == nil {
		m.Categories = []string{}
	}
	if sp, ok := r.Verdict.Measurements["speedup"]; ok {
		m.Speedup = &sp
	}
	switch opt.Format {
	case Messages:
		return messagesOf(conv, opt.Think, m), nil
	case ShareGPT:
		return shareGPTOf(conv, opt.Think, m), nil
	default:
		return alpacaOf(conv, opt.Think, m), nil
	}
}

// writers hold an export's output streams.
type writers struct {
	dir   string
	files map[string]*os.File // split -> temp file (Dir output)
	bufs  map[string]*bufio.Writer
	encs  map[string]*json.Encoder
	one   *json.Encoder // stream output
	oneW  *bufio.Writer
	done  bool
}

func newWriters(out Output, opt Options) (*writers, error) {
	w := &writers{dir: out.Dir, files: map[string]*os.File{}, bufs: map[string]*bufio.Writer{}, encs: map[string]*json.Encoder{}}
	if out.Dir == "" {
		if out.W == nil {
			return nil, errors.New("export: no output")
		}
		w.oneW = bufio.NewWriterSize(out.W, 1<<20)
		w.one = json.NewEncoder(w.oneW)
		w.one.SetEscapeHTML(false)
		return w, nil
	}
	if err := os.MkdirAll(out.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("export folder: %w", err)
	}
	splits := []string{"train"}
	if opt.Validation > 0 {
		splits = append(splits, "validation")
	}
	for _, s := range splits {
		f, err := os.CreateTemp(out.Dir, ".kiln-"+s+"-*")
		if err != nil {
			w.abort()
			return nil, fmt.Errorf("export folder: %w", err)
		}
		w.files[s] = f
		w.bufs[s] = bufio.NewWriterSize(f, 1<<20)
		w.encs[s] = json.NewEncoder(w.bufs[s])
		w.encs[s].SetEscapeHTML(false)
	}
	return w, nil
}

func (w *writers) write(split string, rec any) error {
	if w.one != nil {
		return w.one.Encode(rec)
	}
	return w.encs[split].Encode(rec)
}

// abort removes the temporary files of an export that did not finish.
func (w *writers) abort() {
	if w.done {
		return
	}
	for _, f := range w.files {
		f.Close()
		os.Remove(f.Name())
	}
}

// finish flushes the records and, for a folder, renames the splits into
// place and writes curation.json, dataset_info.json and README.md.
func (w *writers) finish(sum *Summary, opt Options) error {
	if w.one != nil {
		w.done = true
		return w.oneW.Flush()
	}
	for s, f := range w.files {
		if err := w.bufs[s].Flush(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	aux := map[string][]byte{}
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return err
	}
	aux["curation.json"] = append(js, '\n')
	if opt.Format != Raw {
		info, err := datasetInfo(opt, len(w.files) > 1)
		if err != nil {
			return err
		}
		aux["dataset_info.json"] = info
	}
	aux["README.md"] = card(sum, opt, len(w.files) > 1)
	for name, b := range aux {
		if err := writeFileAtomic(filepath.Join(w.dir, name), b); err != nil {
			return err
		}
	}
	for s, f := range w.files {
		if err := os.Rename(f.Name(), filepath.Join(w.dir, s+".jsonl")); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	if len(w.files) == 1 {
		// No validation split asked: an older one must not linger.
		if err := os.Remove(filepath.Join(w.dir, "validation.jsonl")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("export: %w", err)
		}
	}
	w.done = true
	return nil
}

func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".kiln-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if _, err := io.Copy(f, bytes.NewReader(b)); err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("export: %w", err)
	}
	return nil
}
