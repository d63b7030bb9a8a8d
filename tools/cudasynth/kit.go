package cudasynth

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/prompts/persona"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/hipify"
	"github.com/kiln-dev/kiln/tools/kit"
)

// Kit is the cuda-synth lane kit (CASS synthesis): a persona prompt or a
// corpus prompt in, one CUDA program out, built with nvcc for two NVIDIA
// architectures, translated to HIP and built for RDNA3 and for NVIDIA,
// and run on a GPU where there is one (pending otherwise).
func Kit() kit.Kit {
	return kit.Kit{
		Name:            LaneName,
		Summary:         "CUDA programs from persona prompts: nvcc, SASS, HIP translation, RDNA3, GPU run",
		Toolchains:      []string{toolchain.NVCC, toolchain.CUObjdump, toolchain.HIPCC},
		ProbeToolchains: true,
		Capability:      kit.CapabilityGPU,
		Open:            open,
		Source:          source,
		System:          system,
		Rules:           RefinementRules,
		Validator:       validator,
		Domain:          domain,
		Verify: &kit.VerifyCommand{
			Usage: "--source P.cu [--json]",
			Flags: verifyFlags,
		},
		Commands: []kit.Command{benchCompileCommand()},
		Example:  example,
	}
}

// open builds the lane: nvcc, cuobjdump, the CUDA->HIP translator and
// hipcc, run in the sandbox, with a content-hash compile cache in the data
// folder. The run limits are the lane's own (a GPU program's needs).
func open(ctx context.Context, h kit.Host, _ sandboxes.Limits) (tools.Lane, error) {
	reg, err := h.Toolchains(ctx, true)
	if err != nil {
		return nil, err
	}
	r, err := h.Sandbox()
	if err != nil {
		return nil, err
	}
	cls, err := persona.BuiltinClassifier()
	if err != nil {
		return nil, err
	}
	return New(Config{
		Sandbox: r, Toolchains: reg, CacheDir: filepath.Join(h.DataDir, "compile-cache"),
		Translate: hipify.Translate, Classify: cls.Classify, Logger: h.Log,
	})
}

// personaLibrary is the builtin persona library, with the spec's template
// folder laid over it when there is one.
func personaLibrary(t kit.Tasks) (*persona.Library, error) {
	tp := t.Templates
	if tp == nil || (tp.Dir == "builtin" && len(tp.Pools) == 0) {
		return persona.LoadBuiltin()
	}
	if len(tp.Pools) > 0 {
		return nil, fmt.Errorf("tasks.templates.pools: inline pools are not read for %s; put them as files in %s/pools/<name>.txt", LaneName, tp.Dir)
	}
	lib, err := persona.LoadWithUser(os.DirFS(tp.Dir))
	if err != nil {
		return nil, fmt.Errorf("tasks.templates.dir: %w", err)
	}
	return lib, nil
}

// system is the persona library's system prompt, naming the tools.
func system(t kit.Tasks, toolNames []string) (string, error) {
	lib, err := personaLibrary(t)
	if err != nil {
		return "", err
	}
	s := lib.SystemPrompt()
	if len(toolNames) > 0 {
		s += "\n\nYou may call these tools to compile and check your program before you answer: " + strings.Join(toolNames, ", ") + "."
	}
	return s, nil
}

// domain labels an answer without a program (the lane classifies the
// programs it builds itself) by the task prompt's domain, with the
// persona library's keyword table.
func domain(t kit.Tasks) (func(runs.Task, string) string, error) {
	lib, err := personaLibrary(t)
	if err != nil {
		return nil, err
	}
	cls := lib.Classifier()
	if cls == nil {
		if cls, err = persona.BuiltinClassifier(); err != nil {
			return nil, err
		}
	}
	return func(task runs.Task, _ string) string { return cls.Classify(task.Prompt) }, nil
}

// source renders a campaign's tasks: persona prompts sampled from the
// templates (tasks.templates; tasks.limit prompts per round, seed
// tasks.seed + round, the categories re-weighted in refinement rounds), or
// the prompts of a cuda-synth corpus (tasks.corpus; resampled with weights
// in refinement rounds). A corpus task's prompt ends with its id, so a
// replay script can answer each one. A synthesised task is its statement
// as the prompt, with its reference program kept in the task's files
// (ReferenceFile). Known categories are those round 0 could draw:
// tasks.categories, else every template or corpus category.
func source(t kit.Tasks) (*kit.TaskSet, error) {
	var ts *kit.TaskSet
	var err error
	if t.Templates != nil {
		ts, err = templateSource(t)
	} else {
		ts, err = corpusSource(t)
	}
	if err != nil {
		return nil, err
	}
	spt := t.SamplesPerTask
	ts.FromCandidate = func(round int, c refinement.Candidate) ([]runs.Task, error) {
		if strings.TrimSpace(c.Prompt) == "" {
			return nil, errors.New("no task statement")
		}
		var out []runs.Task
		for k := 0; k < spt; k++ {
			task := c.Task(round, fmt.Sprintf("r%d/synth/%s/%02d-%s#%d", round, c.Category, c.Index, c.Hash[:10], k))
			task.Meta["synth_category"] = c.Category
			out = append(out, task)
		}
		return out, nil
	}
	return ts, nil
}

// samples turns one prompt into samples_per_task tasks of round.
func samples(t kit.Tasks, round int, key, prompt, category string, meta map[string]string) []runs.Task {
	var out []runs.Task
	for k := 0; k < t.SamplesPerTask; k++ {
		out = append(out, runs.Task{Round: round, Key: fmt.Sprintf("r%d/%s#%d", round, key, k), Lane: LaneName,
			Files: map[string]string{}, Meta: meta, Categories: []string{category}, Prompt: prompt})
	}
	return out
}

func templateSource(t kit.Tasks) (*kit.TaskSet, error) {
	if t.Limit <= 0 {
		return nil, fmt.Errorf("tasks.limit: how many prompts to sample from the templates (> 0)")
	}
	lib, err := personaLibrary(t)
	if err != nil {
		return nil, err
	}
	draw := func(round int, weights map[string]float64, refining bool) ([]runs.Task, error) {
		opt := persona.Options{Categories: t.Categories}
		if refining {
			// Weights of targets that are not template categories (a
			// feature such as atomics) do not steer the draw.
			w := map[string]float64{}
			for c, x := range weights {
				if c == refinement.DefaultWeightKey || slices.Contains(lib.Categories(), c) {
					w[c] = x
				}
			}
			opt.Weights, opt.AllowFewer = w, true
		}
		sampled, err := lib.Sample(t.Limit, t.Seed+int64(round), opt)
		if err != nil {
			return nil, fmt.Errorf("tasks: %w", err)
		}
		var out []runs.Task
		for _, p := range sampled {
			b, _ := json.Marshal(p.Bindings)
			meta := map[string]string{"template": p.TemplateID, "bindings": string(b)}
			if refining {
				meta["origin"] = "resample"
			}
			out = append(out, samples(t, round, p.TemplateID+"/"+p.Key[:16], p.Prompt, p.Category, meta)...)
		}
		return out, nil
	}
	round0, err := draw(0, nil, false)
	if err != nil {
		return nil, err
	}
	known := t.Categories
	if len(known) == 0 {
		known = lib.Categories()
	}
	return &kit.TaskSet{Round0: round0, Known: slices.Clone(known),
		Draw: func(round int, weights map[string]float64) ([]runs.Task, error) { return draw(round, weights, true) }}, nil
}

func corpusSource(t kit.Tasks) (*kit.TaskSet, error) {
	items, err := corpusItems(t)
	if err != nil {
		return nil, err
	}
	ts := &kit.TaskSet{}
	byID := map[string]CorpusItem{}
	pool := make([]prompts.CorpusItem, 0, len(items))
	for _, it := range items {
		byID[it.ID] = it
		pool = append(pool, prompts.CorpusItem{ID: it.ID, Categories: []string{it.Category}})
		if !slices.Contains(ts.Known, it.Category) {
			ts.Known = append(ts.Known, it.Category)
		}
		ts.Corpus = append(ts.Corpus, runs.Task{Key: "corpus/" + it.ID, Lane: LaneName, Files: map[string]string{},
			Meta: map[string]string{"item": it.ID}, Categories: []string{it.Category}, Prompt: corpusPrompt(it)})
	}
	round0 := slices.Clone(items)
	if n := t.Limit; n > 0 && n < len(round0) {
		rng := rand.New(rand.NewPCG(uint64(t.Seed), 0x6b696c6e))
		rng.Shuffle(len(round0), func(i, j int) { round0[i], round0[j] = round0[j], round0[i] })
		round0 = round0[:n]
	}
	for _, it := range round0 {
		ts.Round0 = append(ts.Round0, samples(t, 0, it.ID, corpusPrompt(it), it.Category,
			map[string]string{"item": it.ID, "domain": it.Domain})...)
	}
	size := len(items) * t.SamplesPerTask
	if n := t.Limit; n > 0 && n < len(items) {
		size = n * t.SamplesPerTask
	}
	ts.Draw = func(round int, weights map[string]float64) ([]runs.Task, error) {
		seen := map[string]int{}
		var out []runs.Task
		for _, p := range prompts.Resample(pool, size, t.Seed+int64(round), weights) {
			it := byID[p.ID]
			k := seen[it.ID]
			seen[it.ID]++
			out = append(out, runs.Task{Round: round, Key: fmt.Sprintf("r%d/%s#%d", round, it.ID, k), Lane: LaneName,
				Files: map[string]string{}, Categories: []string{it.Category}, Prompt: corpusPrompt(it),
				Meta: map[string]string{"item": it.ID, "domain": it.Domain, "origin": "resample"}})
		}
		return out, nil
	}
	return ts, nil
}

// corpusItems loads the spec's corpus (tasks.corpus) and keeps the items
// of tasks.categories (before tasks.limit).
func corpusItems(t kit.Tasks) ([]CorpusItem, error) {
	var (
		items []CorpusItem
		err   error
	)
	if t.Corpus == "" || t.Corpus == "builtin" {
		items, err = LoadBuiltinCorpus()
	} else {
		items, err = LoadCorpus(os.DirFS(t.Corpus), ".")
	}
	if err != nil {
		return nil, fmt.Errorf("tasks.corpus: %w", err)
	}
	if cats := t.Categories; len(cats) > 0 {
		items = slices.DeleteFunc(items, func(it CorpusItem) bool { return !slices.Contains(cats, it.Category) })
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("tasks: no corpus item left after the category filter")
	}
	return items, nil
}

// corpusPrompt is a corpus item's task prompt: its prompt and its id (so a
// replay script can answer each one).
func corpusPrompt(it CorpusItem) string {
	return strings.TrimSpace(it.Prompt) + "\n\n(task " + it.ID + ")"
}

// compileTool is the lane's nvcc-only model tool, which the validator of
// synthesised tasks uses on their reference programs.
const compileTool = "compile_cuda"

// validator accepts a synthesised task when its reference program
// compiles with nvcc for the lane's targets and defines a kernel (the
// compile_cuda tool: the same sandbox, toolchain registry and compile
// cache as verification). A tool that cannot run (sandbox, missing nvcc)
// wraps refinement.ErrValidatorBroken.
func validator(lane tools.Lane) (refinement.Validator, error) {
	var compile tools.Tool
	for _, t := range lane.Tools(tools.Item{Lane: LaneName}) {
		if t.Name() == compileTool {
			compile = t
		}
	}
	if compile == nil {
		return nil, fmt.Errorf("refinement: lane %s has no %s tool to validate synthesised tasks", lane.Name(), compileTool)
	}
	return refinement.ValidatorFunc(func(ctx context.Context, c refinement.Candidate) error {
		ref := c.Files[ReferenceFile]
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
			return fmt.Errorf("%w: %w", refinement.ErrValidatorBroken, err)
		case strings.HasPrefix(out, "ok"):
			return nil
		}
		return fmt.Errorf("the reference program does not build: %s", strings.TrimSpace(out))
	}), nil
}

// verifyFlags are kiln verify cuda-synth's flags: the program is the
// answer; the item holds no program of its own (an answer with no
// extractable program is no answer).
func verifyFlags(fs *flag.FlagSet) func() (tools.Item, string, error) {
	src := fs.String("source", "", "the CUDA program (.cu, or a model reply with a fenced block) (required)")
	return func() (tools.Item, string, error) {
		if *src == "" {
			return tools.Item{}, "", kit.BadInput("--source is required")
		}
		item, err := ItemFromFile(*src)
		if err != nil {
			return tools.Item{}, "", kit.BadInput("--source: %v", err)
		}
		answer := item.Files[SourceFile]
		item.Files[SourceFile] = ""
		return item, answer, nil
	}
}
