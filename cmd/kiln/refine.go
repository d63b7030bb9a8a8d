package main

// Refinement campaigns: wiring of the engine's rounds (engine.Refine) from
// a spec's refinement section, the kiln refine verb, and the per-round
// report.
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
// The cuda-synth lane (cudaRefineConfig): a campaign from persona
// templates draws tasks.limit fresh prompts per round (seed tasks.seed +
// round) with the categories re-weighted; one from the CUDA corpus
// resamples its items like c2x86. A synthesised task is a statement plus a
// reference program that must build with the lane's compile_cuda tool
// (cudaValidator); the statement is the task's prompt and the reference
// stays in its files (refinement.ReferenceFile).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"go.yaml.in/yaml/v3"

	"github.com/kiln-dev/kiln/cmd/kiln/internal/engine"
	"github.com/kiln-dev/kiln/cmd/kiln/internal/spec"
	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/prompts/persona"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/c2x86"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// solverSpec returns sp with the models that solve tasks: every endpoint
// but a synthesiser reserved for synthesis (see the file comment).
func solverSpec(sp *spec.Spec) *spec.Spec {
	syn := sp.Refinement.Synthesizer
	if syn == "" || len(sp.Models) < 2 || sp.Models[0].Name == syn {
		return sp
	}
	out := *sp
	out.Models = slices.DeleteFunc(slices.Clone(sp.Models), func(m spec.Model) bool { return m.Name == syn })
	return &out
}

// refineConfig builds the pure part of a spec's refinement rounds (no
// model, no sandbox): policy, draw and task rendering. items are round 0's
// corpus items (after tasks.limit; c2x86 only, the cuda-synth lane reads
// its own source).
func refineConfig(sp *spec.Spec, items []prompts.CorpusItem) (*engine.Refine, error) {
	if sp.Lane == cudasynth.LaneName {
		return cudaRefineConfig(sp)
	}
	whole := *sp
	whole.Tasks.Limit = 0
	pool, err := corpusItems(&whole)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	corpus := make([]runs.Task, 0, len(pool))
	for _, it := range pool {
		for _, c := range it.Categories {
			known[c] = true
		}
		corpus = append(corpus, runs.Task{Key: "corpus/" + it.ID, Lane: sp.Lane, Files: it.Files,
			Meta: map[string]string{"function": it.Function, "item": it.ID}, Categories: it.Categories})
	}
	rf := sp.Refinement
	pol := refinement.DefaultPolicy()
	pol.Threshold, pol.MinEvidence, pol.Forced = rf.Threshold, rf.MinEvidence, rf.Categories
	for c := range known {
		pol.Known = append(pol.Known, c)
	}
	sort.Strings(pol.Known)
	if err := pol.Validate(); err != nil {
		return nil, err
	}
	size := len(items) * sp.Tasks.SamplesPerTask
	lane, spt, seed := sp.Lane, sp.Tasks.SamplesPerTask, sp.Tasks.Seed
	return &engine.Refine{
		Rounds: rf.Rounds, Policy: pol, Factor: float64(rf.Factor), K: rf.Factor, Plateau: rf.Plateau,
		Corpus: corpus,
		Draw: func(round int, weights map[string]float64) ([]runs.Task, error) {
			picks := drawWeighted(pool, size, seed+int64(round), weights)
			seen := map[string]int{}
			out := make([]runs.Task, 0, len(picks))
			for _, it := range picks {
				user, err := prompts.Render(lane, "user", prompts.UserData{Function: it.Function, Source: it.Files["function.c"]})
				if err != nil {
					return nil, fmt.Errorf("render task %s: %w", it.ID, err)
				}
				k := seen[it.ID]
				seen[it.ID]++
				out = append(out, runs.Task{
					Round: round, Key: fmt.Sprintf("r%d/%s#%d", round, it.ID, k), Lane: lane, Files: it.Files,
					Meta:       map[string]string{"function": it.Function, "item": it.ID, "origin": "resample"},
					Categories: it.Categories, Prompt: user,
				})
			}
			return out, nil
		},
		FromCandidate: func(round int, c refinement.Candidate) ([]runs.Task, error) {
			user, err := prompts.Render(lane, "user", prompts.UserData{Function: c.Function, Source: c.Files["function.c"]})
			if err != nil {
				return nil, err
			}
			var out []runs.Task
			for k := 0; k < spt; k++ {
				t := c.Task(round, fmt.Sprintf("r%d/synth/%s/%02d-%s#%d", round, c.Category, c.Index, c.Hash[:10], k))
				t.Prompt = user
				t.Meta["synth_category"] = c.Category
				out = append(out, t)
			}
			return out, nil
		},
	}, nil
}

// drawWeighted draws n items with replacement by systematic resampling
// over the items' weights (prompts.ItemWeight): each item appears floor or
// ceil of n*w/W times; the result is shuffled. Deterministic for a seed.
func drawWeighted(items []prompts.CorpusItem, n int, seed int64, weights map[string]float64) []prompts.CorpusItem {
	sorted := slices.Clone(items)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	ws := make([]float64, len(sorted))
	total := 0.0
	for i, it := range sorted {
		w := prompts.ItemWeight(it, weights)
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			w = 0
		}
		ws[i] = w
		total += w
	}
	if n <= 0 || total <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b696c6e2d726566)) // "kiln-ref"
	step := total / float64(n)
	pos := rng.Float64() * step
	out := make([]prompts.CorpusItem, 0, n)
	cum, i := 0.0, 0
	for k := 0; k < n; k++ {
		target := pos + float64(k)*step
		for i < len(sorted)-1 && (ws[i] == 0 || cum+ws[i] <= target) {
			cum += ws[i]
			i++
		}
		out = append(out, sorted[i])
	}
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}

// refine builds the full refinement plan: refineConfig plus the
// synthesiser model and the validator.
func (w *wiring) refine(ctx context.Context, sp *spec.Spec, lane tools.Lane, items []prompts.CorpusItem) (*engine.Refine, error) {
	rf, err := refineConfig(sp, items)
	if err != nil {
		return nil, err
	}
	m, ok := sp.Model(sp.Refinement.Synthesizer)
	if !ok {
		return nil, fmt.Errorf("refinement.synthesizer: unknown model %q", sp.Refinement.Synthesizer)
	}
	if rf.Synth, err = buildModel(ctx, *m, sp, w.e.getenv, w.httpClient); err != nil {
		return nil, fmt.Errorf("refinement.synthesizer: %w", err)
	}
	rf.SynthName = m.Name
	rf.SynthSampling = sp.Sampling.Agent()
	rf.SynthSampling.MaxTokens = max(rf.SynthSampling.MaxTokens, min(1200*rf.K, 32768))
	switch l := lane.(type) {
	case *c2x86.Lane:
		rf.Validator = c2x86Validator(l)
	default:
		if lane.Name() != cudasynth.LaneName {
			return nil, fmt.Errorf("refinement.rounds: refinement rounds are wired for lanes c2x86 and cuda-synth, not %s", sp.Lane)
		}
		if rf.Validator, err = cudaValidator(lane); err != nil {
			return nil, err
		}
	}
	rf.ValidateParallel = min(max(sp.Concurrency, 1), 4)
	return rf, nil
}

// c2x86Validator accepts a synthesised task when its function and driver
// compile, the reference program runs, prints something and prints the
// same twice. A sandbox or toolchain failure is not the task's fault: it
// wraps engine.ErrValidatorBroken.
func c2x86Validator(l *c2x86.Lane) refinement.Validator {
	return refinement.ValidatorFunc(func(ctx context.Context, c refinement.Candidate) error {
		item := tools.Item{Lane: c.Lane, Files: c.Files, Meta: map[string]string{"function": c.Function}}
		ref, err := l.Reference(ctx, item)
		switch {
		case errors.Is(err, c2x86.ErrBadItem):
			return err
		case err != nil && ctx.Err() != nil:
			return err
		case err != nil:
			return fmt.Errorf("%w: %w", engine.ErrValidatorBroken, err)
		case len(strings.TrimSpace(string(ref.Output))) == 0:
			return errors.New("the driver prints nothing: the task would test nothing")
		}
		return nil
	})
}

// cudaCompileTool is the cuda-synth lane's nvcc-only model tool, which
// the validator of synthesised tasks uses on their reference programs.
const cudaCompileTool = "compile_cuda"

// cudaValidator accepts a synthesised cuda-synth task when its reference
// program compiles with nvcc for the lane's targets and defines a kernel
// (the lane's compile_cuda tool: the same sandbox, toolchain registry and
// compile cache as verification). A tool that cannot run (sandbox,
// missing nvcc) wraps engine.ErrValidatorBroken.
func cudaValidator(lane tools.Lane) (refinement.Validator, error) {
	var compile tools.Tool
	for _, t := range lane.Tools(tools.Item{Lane: cudasynth.LaneName}) {
		if t.Name() == cudaCompileTool {
			compile = t
		}
	}
	if compile == nil {
		return nil, fmt.Errorf("refinement: lane %s has no %s tool to validate synthesised tasks", lane.Name(), cudaCompileTool)
	}
	return refinement.ValidatorFunc(func(ctx context.Context, c refinement.Candidate) error {
		ref := c.Files[refinement.ReferenceFile]
		if strings.TrimSpace(ref) == "" {
			return errors.New("no reference program")
		}
		args, err := json.Marshal(map[string]string{"source": ref})
		if err != nil {
			return err
		}
		out, err := compile.Call(ctx, args)
		switch {
		case err != nil && ctx.Err() != nil:
			return err
		case err != nil:
			return fmt.Errorf("%w: %w", engine.ErrValidatorBroken, err)
		case strings.HasPrefix(out, "ok"):
			return nil
		}
		return fmt.Errorf("the reference program does not build: %s", strings.TrimSpace(out))
	}), nil
}

// cudaRefineConfig is refineConfig for the cuda-synth lane. The next
// round's drawn tasks come from round 0's source: fresh persona prompts
// sampled from the templates with the category weights (tasks.limit of
// them, seed tasks.seed+round), or the corpus items resampled like
// c2x86's. A synthesised task is its statement as the prompt, with its
// reference program kept in the task's files (refinement.ReferenceFile).
// Known categories (for the policy's few-samples rule) are those round 0
// could draw: tasks.categories, else every template or corpus category.
func cudaRefineConfig(sp *spec.Spec) (*engine.Refine, error) {
	lane, spt := sp.Lane, sp.Tasks.SamplesPerTask
	var (
		known  []string
		corpus []runs.Task
		draw   func(round int, weights map[string]float64) ([]runs.Task, error)
	)
	if sp.Tasks.Templates != nil {
		lib, err := personaLibrary(sp)
		if err != nil {
			return nil, err
		}
		known = sp.Tasks.Categories
		if len(known) == 0 {
			known = lib.Categories()
		}
		libCats := lib.Categories()
		n, seed, cats := sp.Tasks.Limit, sp.Tasks.Seed, sp.Tasks.Categories
		draw = func(round int, weights map[string]float64) ([]runs.Task, error) {
			// Weights of targets that are not template categories (a
			// feature such as atomics) do not steer the draw.
			w := map[string]float64{}
			for c, x := range weights {
				if c == refinement.DefaultWeightKey || slices.Contains(libCats, c) {
					w[c] = x
				}
			}
			ts, err := lib.Sample(n, seed+int64(round), persona.Options{Categories: cats, Weights: w, AllowFewer: true})
			if err != nil {
				return nil, fmt.Errorf("tasks: %w", err)
			}
			var out []runs.Task
			for _, t := range ts {
				b, _ := json.Marshal(t.Bindings)
				for k := 0; k < spt; k++ {
					out = append(out, runs.Task{Round: round, Key: fmt.Sprintf("r%d/%s/%s#%d", round, t.TemplateID, t.Key[:16], k),
						Lane: lane, Files: map[string]string{}, Categories: []string{t.Category}, Prompt: t.Prompt,
						Meta: map[string]string{"template": t.TemplateID, "bindings": string(b), "origin": "resample"}})
				}
			}
			return out, nil
		}
	} else {
		items, err := cudaCorpusItems(sp)
		if err != nil {
			return nil, err
		}
		byID := map[string]prompts.CUDAItem{}
		pool := make([]prompts.CorpusItem, 0, len(items))
		for _, it := range items {
			byID[it.ID] = it
			pool = append(pool, prompts.CorpusItem{ID: it.ID, Categories: []string{it.Category}})
			if !slices.Contains(known, it.Category) {
				known = append(known, it.Category)
			}
			corpus = append(corpus, runs.Task{Key: "corpus/" + it.ID, Lane: lane, Files: map[string]string{},
				Meta: map[string]string{"item": it.ID}, Categories: []string{it.Category}, Prompt: cudaCorpusPrompt(it)})
		}
		size := len(items) * spt
		if n := sp.Tasks.Limit; n > 0 && n < len(items) {
			size = n * spt
		}
		seed := sp.Tasks.Seed
		draw = func(round int, weights map[string]float64) ([]runs.Task, error) {
			seen := map[string]int{}
			var out []runs.Task
			for _, p := range drawWeighted(pool, size, seed+int64(round), weights) {
				it := byID[p.ID]
				k := seen[it.ID]
				seen[it.ID]++
				out = append(out, runs.Task{Round: round, Key: fmt.Sprintf("r%d/%s#%d", round, it.ID, k), Lane: lane,
					Files: map[string]string{}, Categories: []string{it.Category}, Prompt: cudaCorpusPrompt(it),
					Meta: map[string]string{"item": it.ID, "domain": it.Domain, "origin": "resample"}})
			}
			return out, nil
		}
	}
	rf := sp.Refinement
	pol := refinement.DefaultPolicy()
	pol.Threshold, pol.MinEvidence, pol.Forced = rf.Threshold, rf.MinEvidence, rf.Categories
	pol.Known = slices.Clone(known)
	sort.Strings(pol.Known)
	if err := pol.Validate(); err != nil {
		return nil, err
	}
	return &engine.Refine{
		Rounds: rf.Rounds, Policy: pol, Factor: float64(rf.Factor), K: rf.Factor, Plateau: rf.Plateau,
		Corpus: corpus, Draw: draw,
		FromCandidate: func(round int, c refinement.Candidate) ([]runs.Task, error) {
			if strings.TrimSpace(c.Prompt) == "" {
				return nil, errors.New("no task statement")
			}
			var out []runs.Task
			for k := 0; k < spt; k++ {
				t := c.Task(round, fmt.Sprintf("r%d/synth/%s/%02d-%s#%d", round, c.Category, c.Index, c.Hash[:10], k))
				t.Meta["synth_category"] = c.Category
				out = append(out, t)
			}
			return out, nil
		},
	}, nil
}

// cudaLabels is the cuda-synth plan's verdict labelling: the domain of an
// answer without a program (the lane classifies programs itself) is the
// task prompt's, by the persona library's keyword table.
func cudaLabels(sp *spec.Spec) (engine.Labels, error) {
	lib, err := personaLibrary(sp)
	if err != nil {
		return engine.Labels{}, err
	}
	cls := lib.Classifier()
	if cls == nil {
		if cls, err = persona.BuiltinClassifier(); err != nil {
			return engine.Labels{}, err
		}
	}
	return engine.Labels{Domain: func(t runs.Task, _ string) string { return cls.Classify(t.Prompt) }}, nil
}

// ---- kiln refine ----

func cmdRefine(ctx context.Context, args []string, e env) error {
	fs := flag.NewFlagSet("refine", flag.ContinueOnError)
	var c common
	c.register(fs, e)
	rounds := fs.Int("rounds", 1, "refinement rounds to run after the finished run's last round")
	cats := fs.String("categories", "", "comma-separated categories to target in every round, besides those the policy picks")
	name := fs.String("name", "", "name of the new campaign (default: RUN's name + \"-refine\")")
	maxTasks := fs.Int("max-tasks", -1, "budget of tasks for the new campaign, copied work included (default: RUN's; 0: none)")
	maxTokens := fs.Int64("max-tokens", -1, "budget of tokens for the new campaign, copied work included (default: RUN's; 0: none)")
	planOnly := fs.Bool("plan", false, "print the next round's plan and exit: nothing runs, no model is called")
	asJSON := fs.Bool("json", false, "with --plan: print JSON")
	if err := parseFlags(fs, args, e); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return badInput("want one campaign id or name")
	}
	if *rounds < 1 {
		return badInput("--rounds: must be >= 1")
	}
	st, src, log, err := c.openCampaign(ctx, e, fs.Arg(0))
	if err != nil {
		return err
	}
	defer st.Close()
	var forced []string
	for _, s := range strings.Split(*cats, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(forced, s) {
			forced = append(forced, s)
		}
	}
	ov := refineOverrides{rounds: src.Round + *rounds, categories: forced, maxTasks: *maxTasks, maxTokens: *maxTokens}
	ov.name = *name
	if ov.name == "" {
		ov.name = strings.TrimRight(truncate(src.Name, 57), "-.") + "-refine"
	}
	specYAML, err := ov.apply(src.Spec)
	if err != nil {
		return fmt.Errorf("stored spec of campaign %s: %w", src.ID, err)
	}
	sp, err := spec.Parse(specYAML, ov.name+".yaml", specOptions(src.SpecDir))
	if err != nil {
		return usageError{err}
	}
	plan, err := planNext(ctx, st, src, sp)
	if err != nil {
		return err
	}
	if *planOnly {
		if *asJSON {
			return writeJSON(e.stdout, plan)
		}
		printPlan(e.stdout, src, plan)
		return nil
	}
	switch src.State {
	case runs.CampaignQueued, runs.CampaignRunning:
		return badInput("campaign %s is %s: let it finish (or kiln resume it) before refining it", src.ID, src.State)
	}
	if plan.Decision.Stop != "" {
		return badInput("nothing to refine in campaign %s: %s", src.ID, plan.Decision.Stop)
	}
	w := c.wiring(e, log, c.data)
	if _, err := w.plan(ctx, sp); err != nil {
		return usageError{err}
	}
	fork, err := st.ForkCampaign(ctx, src.ID, runs.Campaign{Name: ov.name, Spec: specYAML, SpecDir: src.SpecDir,
		Note: "refinement of " + src.ID})
	if err != nil {
		return fmt.Errorf("refine: %w", err)
	}
	fmt.Fprintf(e.stderr, "kiln: refinement campaign %s (%s) from %s (%s) at round %d, %d more round(s); resume with: kiln resume --data %s %s\n",
		fork.ID, fork.Name, src.ID, src.Name, src.Round, *rounds, c.data, fork.ID)
	return runCampaign(ctx, st, w, fork, sp, e)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// refineOverrides are what kiln refine changes in the stored spec.
type refineOverrides struct {
	name       string
	rounds     int
	categories []string
	maxTasks   int
	maxTokens  int64
}

// apply rewrites spec YAML: name, refinement.rounds and .categories (when
// given), budgets (when given, >= 0).
func (o refineOverrides) apply(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("spec is not a mapping")
	}
	root := doc.Content[0]
	setScalar(root, []string{"name"}, o.name, "!!str")
	setScalar(root, []string{"refinement", "rounds"}, fmt.Sprint(o.rounds), "!!int")
	if len(o.categories) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, c := range o.categories {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: c})
		}
		setNode(root, []string{"refinement", "categories"}, seq)
	}
	if o.maxTasks >= 0 {
		setScalar(root, []string{"budgets", "tasks"}, fmt.Sprint(o.maxTasks), "!!int")
	}
	if o.maxTokens >= 0 {
		setScalar(root, []string{"budgets", "tokens"}, fmt.Sprint(o.maxTokens), "!!int")
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func setScalar(m *yaml.Node, path []string, value, tag string) {
	setNode(m, path, &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value})
}

// setNode sets path in mapping m to v, creating block mappings on the way
// (a flow mapping stays flow).
func setNode(m *yaml.Node, path []string, v *yaml.Node) {
	for m.Kind == yaml.AliasNode && m.Alias != nil {
		m = m.Alias
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == path[0] {
			if len(path) == 1 {
				m.Content[i+1] = v
				return
			}
			child := m.Content[i+1]
			if child.Kind != yaml.MappingNode {
				child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: m.Content[i+1].Style & yaml.FlowStyle}
				m.Content[i+1] = child
			}
			setNode(child, path[1:], v)
			return
		}
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: path[0]}
	if len(path) == 1 {
		m.Content = append(m.Content, key, v)
		return
	}
	child := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, key, child)
	setNode(child, path[1:], v)
}

// RefinePlan is what kiln refine --plan prints: the decision on the finished
// run's current round and the next round's mix.
type RefinePlan struct {
	Campaign string          `json:"campaign"`
	Name     string          `json:"name"`
	Round    int             `json:"round"`
	Decision engine.Decision `json:"decision"`
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

// planNext computes the next round's plan of camp under sp without calling
// a model or touching a sandbox.
func planNext(ctx context.Context, st *runs.Store, camp runs.Campaign, sp *spec.Spec) (RefinePlan, error) {
	var items []prompts.CorpusItem
	if sp.Lane != cudasynth.LaneName {
		var err error
		if items, err = corpusItems(sp); err != nil {
			return RefinePlan{}, usageError{err}
		}
	}
	rf, err := refineConfig(sp, items)
	if err != nil {
		return RefinePlan{}, usageError{err}
	}
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
	p := RefinePlan{Campaign: camp.ID, Name: camp.Name, Round: camp.Round, Decision: d, SamplesPerTask: sp.Tasks.SamplesPerTask}
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

func printPlan(w io.Writer, camp runs.Campaign, p RefinePlan) {
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

// ---- kiln report ----

// campaignReport is kiln report's JSON.
type campaignReport struct {
	Campaign string                     `json:"campaign"`
	Name     string                     `json:"name"`
	Lane     string                     `json:"lane"`
	State    runs.CampaignState         `json:"state"`
	Note     string                     `json:"note,omitempty"`
	Parent   string                     `json:"parent,omitempty"`
	Round    int                        `json:"round"`
	Stats    []refinement.CategoryStats `json:"categories"`
	// Refinement is the per-round report (every round, whatever --round).
	Refinement refinement.Report    `json:"refinement"`
	Decisions  []engine.RoundRecord `json:"decisions,omitempty"`
	// SynthesisCost sums the synthesiser calls of every round.
	SynthesisCost synthCost `json:"synthesis_cost"`
	// ModelFaults counts the solver's failed model calls by class over
	// every run of the campaign, retried ones included.
	ModelFaults map[string]int `json:"model_faults"`
}

type synthCost struct {
	Calls            int   `json:"calls"`
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	ReasoningTokens  int64 `json:"reasoning_tokens"`
	LatencyMS        int64 `json:"latency_ms"`
}

func (s *synthCost) add(r engine.SynthRecord) {
	if r.ReplyBlob == "" && r.Error == "" {
		return
	}
	s.Calls++
	s.PromptTokens += int64(r.PromptTokens)
	s.CompletionTokens += int64(r.CompletionTokens)
	s.ReasoningTokens += int64(r.ReasoningTokens)
	s.LatencyMS += r.LatencyMS
}

// buildCampaignReport reads everything kiln report shows.
func buildCampaignReport(ctx context.Context, st *runs.Store, camp runs.Campaign, round int) (campaignReport, error) {
	rep := campaignReport{Campaign: camp.ID, Name: camp.Name, Lane: camp.Lane, State: camp.State, Note: camp.Note,
		Parent: camp.Parent, Round: round}
	all, err := st.Results(ctx, camp.ID, -1)
	if err != nil {
		return rep, err
	}
	sel := all
	if round >= 0 {
		sel = nil
		for _, r := range all {
			if r.Task.Round == round {
				sel = append(sel, r)
			}
		}
	}
	rep.Stats = refinement.Stats(sel)
	if rep.ModelFaults, err = st.Faults(ctx, camp.ID); err != nil {
		return rep, err
	}
	recs, err := st.Rounds(ctx, camp.ID)
	if err != nil {
		return rep, err
	}
	chosen := map[int][]refinement.Choice{}
	for _, rr := range recs {
		d, err := engine.DecodeRoundRecord(rr.Record)
		if err != nil {
			return rep, err
		}
		if !rr.Final {
			continue // a transition in progress: not decided yet
		}
		rep.Decisions = append(rep.Decisions, d)
		if d.NextRound > 0 {
			chosen[d.Round] = d.Choices
		}
		for _, s := range d.Synth {
			rep.SynthesisCost.add(s)
		}
	}
	rep.Refinement = refinement.BuildReport(refinement.ReportInput{Lane: camp.Lane, Results: all, Chosen: chosen,
		DomainOf: storedDomain(st.Blobs())})
	return rep, nil
}

// storedDomain reads the domain a lane recorded as an artifact, for
// verdicts stored before verdict labels were ("" when there is none).
func storedDomain(blobs *runs.Blobs) func(runs.Result) string {
	return func(r runs.Result) string {
		h, ok := r.Verdict.Artifacts[engine.DomainArtifact]
		if !ok {
			return ""
		}
		b, err := blobs.Get(h)
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(b))
	}
}

// writeReport prints kiln report: the per-category table of the selected
// round(s), then, for a campaign with rounds, every round against the one
// before, the choices and their reasons, the synthesis and the cost.
func writeReport(ctx context.Context, st *runs.Store, camp runs.Campaign, round int, asJSON bool, svgPath string, e env) error {
	rep, err := buildCampaignReport(ctx, st, camp, round)
	if err != nil {
		return err
	}
	if svgPath != "" {
		if err := writeFileAtomic(svgPath, func(w io.Writer) error { return refinement.WriteSVG(w, rep.Refinement.Series) }); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
		fmt.Fprintf(e.stderr, "kiln: chart written to %s\n", svgPath)
	}
	if asJSON {
		return writeJSON(e.stdout, rep)
	}
	out := e.stdout
	fmt.Fprintf(out, "campaign %s (%s, lane %s, %s)\n", camp.ID, camp.Name, camp.Lane, camp.State)
	if camp.Parent != "" {
		fmt.Fprintf(out, "refinement of campaign %s\n", camp.Parent)
	}
	if camp.Note != "" {
		fmt.Fprintf(out, "note: %s\n", camp.Note)
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "CATEGORY\tTASKS\tPASS\tRATE\t95% CI\tTOKENS\tTOP FAILURES\t")
	for _, s := range rep.Stats {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f%%\t[%.0f%%, %.0f%%]\t%d\t%s\t\n", s.Category, s.Total, s.Pass,
			100*s.PassRate, 100*s.Low, 100*s.High, s.PromptTokens+s.CompletionTokens, topClasses(s.Classes, 3))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.ModelFaults) > 0 {
		fmt.Fprintf(out, "\nmodel faults (failed calls, retried ones included): %s\n", topClasses(rep.ModelFaults, len(rep.ModelFaults)))
	}
	if len(rep.Refinement.Rounds) < 2 && len(rep.Decisions) == 0 {
		return nil
	}
	decided := map[int]engine.RoundRecord{}
	for _, d := range rep.Decisions {
		decided[d.Round] = d
	}
	for _, rr := range rep.Refinement.Rounds {
		printRound(out, rr, decided[rr.Round])
	}
	t := rep.Refinement.Total
	sc := rep.SynthesisCost
	fmt.Fprintf(out, "\ncost: %d attempts, %d prompt + %d completion tokens (%d reasoning), model time %s; synthesis: %d calls, %d prompt + %d completion tokens, %s\n",
		t.Attempts, t.PromptTokens, t.CompletionTokens, t.ReasoningTokens, msString(t.LatencyMS),
		sc.Calls, sc.PromptTokens, sc.CompletionTokens, msString(sc.LatencyMS))
	return nil
}

func msString(ms int64) string {
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

func printRound(out io.Writer, rr refinement.RoundReport, d engine.RoundRecord) {
	o := rr.Overall
	fmt.Fprintf(out, "\nround %d: %d tasks, %d pass (%.1f%%, 95%% CI %.0f-%.0f%%), %d prompt + %d completion tokens\n",
		rr.Round, o.Total, o.Pass, 100*o.PassRate, 100*o.Low, 100*o.High, rr.Cost.PromptTokens, rr.Cost.CompletionTokens)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  CATEGORY\tTARGETED\tBEFORE\tAFTER\tLIFT\t95% CI OF LIFT")
	for _, c := range rr.Categories {
		before, lift, ci := "-", "-", "-"
		if c.Before != nil {
			before = fmt.Sprintf("r%d %d/%d (%.1f%%)", *c.BeforeRound, c.Before.Pass, c.Before.Total, 100*c.Before.PassRate)
			lift = fmt.Sprintf("%+.1f", 100**c.Lift)
			ci = fmt.Sprintf("[%+.1f, %+.1f]", 100**c.LiftLow, 100**c.LiftHigh)
		}
		tg := ""
		if c.Targeted {
			tg = "yes"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d/%d (%.1f%%)\t%s\t%s\n", c.Category, tg, before, c.After.Pass, c.After.Total,
			100*c.After.PassRate, lift, ci)
	}
	tw.Flush()
	if len(rr.Domains) > 0 {
		var parts []string
		for _, d := range rr.Domains {
			parts = append(parts, fmt.Sprintf("%s %d/%d", d.Category, d.After.Pass, d.After.Total))
		}
		fmt.Fprintf(out, "  domains: %s\n", strings.Join(parts, ", "))
	}
	if len(rr.Labels) > 0 {
		var parts []string
		for i, l := range rr.Labels {
			if i == 5 {
				break
			}
			parts = append(parts, fmt.Sprintf("%s %d", l.Label, l.Count))
		}
		fmt.Fprintf(out, "  failures: %s\n", strings.Join(parts, ", "))
	}
	switch {
	case d.Stop != "":
		fmt.Fprintf(out, "  stopped after this round: %s\n", d.Stop)
		return
	case d.NextRound == 0:
		return
	}
	fmt.Fprintf(out, "  chosen for round %d:\n", d.NextRound)
	for _, ch := range d.Choices {
		fmt.Fprintf(out, "    %s (%s): %s\n", ch.Category, ch.Kind, ch.Reason)
	}
	for _, s := range d.Synth {
		nInv, nDup, nParse := 0, 0, 0
		for _, r := range s.Rejected {
			switch r.Stage {
			case engine.RejectInvalid:
				nInv++
			case engine.RejectDuplicate:
				nDup++
			default:
				nParse++
			}
		}
		fmt.Fprintf(out, "  synthesis %s: asked %d, accepted %d, rejected %d (%d unparsable, %d duplicate, %d invalid); %d+%d tokens, %s\n",
			s.Category, s.K, len(s.Accepted), len(s.Rejected), nParse, nDup, nInv, s.PromptTokens, s.CompletionTokens, msString(s.LatencyMS))
		if s.Error != "" {
			fmt.Fprintf(out, "    no reply: %s\n", s.Error)
		}
		for _, r := range s.Rejected {
			fn := ""
			if r.Function != "" {
				fn = " " + r.Function
			}
			fmt.Fprintf(out, "    dropped #%d%s (%s): %s\n", r.Index, fn, r.Stage, truncate(r.Reason, 200))
		}
	}
	cats := make([]string, 0, len(d.Drawn))
	for c := range d.Drawn {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	var parts []string
	for _, c := range cats {
		parts = append(parts, fmt.Sprintf("%s %d", c, d.Drawn[c]))
	}
	fmt.Fprintf(out, "  round %d: %d tasks = %d drawn from the corpus (%s) + %d synthesised\n",
		d.NextRound, d.Tasks, d.DrawnTasks, strings.Join(parts, ", "), d.SynthTasks)
}

// writeFileAtomic writes path through a temp file and a rename.
func writeFileAtomic(path string, fill func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".kiln-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
