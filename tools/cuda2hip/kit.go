package cuda2hip

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
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
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/hipify"
	"github.com/kiln-dev/kiln/tools/kit"
)

//go:embed prompts
var promptFS embed.FS

// Reserved tasks.corpus values.
const (
	corpusBuiltin = "builtin"
	corpusBench   = "bench"
)

// Kit is the cuda2hip lane kit: a CUDA program in, a HIP program out,
// checked for CUDA left in it, built for RDNA3 and as HIP on NVIDIA, and
// run against the CUDA program on a GPU host (pending elsewhere).
func Kit() kit.Kit {
	return kit.Kit{
		Name:            LaneName,
		Summary:         "CUDA -> HIP translation: CUDA-leak check, hipcc gfx1100, HIP on NVIDIA, GPU run vs the CUDA program",
		Toolchains:      []string{toolchain.NVCC, toolchain.CUObjdump, toolchain.HIPCC},
		ProbeToolchains: true,
		Capability:      kit.CapabilityGPU,
		Open:            open,
		Source:          source,
		System:          system,
		Repair:          repair,
		Rules:           RefinementRules,
		Validator:       validator,
		Domain:          domain,
		Bench:           Bench,
		RecordLanes:     recordLanes,
		Verify: &kit.VerifyCommand{
			Usage: "--cuda P.cu --hip P.hip [--json]",
			Flags: verifyFlags,
		},
		Example: example,
	}
}

// open builds the lane over a cuda-synth lane with the same sandbox,
// toolchains and compile cache folder (so the two lanes share compiles).
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
	cs, err := cudasynth.New(cudasynth.Config{Sandbox: r, Toolchains: reg, CacheDir: filepath.Join(h.DataDir, "compile-cache"),
		Translate: hipify.Translate, Classify: cls.Classify, Logger: h.Log})
	if err != nil {
		return nil, err
	}
	return New(cs)
}

func promptLibrary() (*prompts.Library, error) {
	return prompts.NewLaneLibrary(LaneName, promptFS, "prompts")
}

// system is the lane's system prompt, naming the tools offered.
func system(_ kit.Tasks, toolNames []string) (string, error) {
	lib, err := promptLibrary()
	if err != nil {
		return "", err
	}
	return lib.Render(LaneName, prompts.PromptSystem, prompts.SystemData{Tools: toolNames})
}

// repair is the repair turn after a failed verdict.
func repair(v tools.Verdict) (string, error) {
	lib, err := promptLibrary()
	if err != nil {
		return "", err
	}
	return lib.Render(LaneName, prompts.PromptRepair, prompts.RepairData{Diagnostic: v.Diagnostic, Class: string(v.Class)})
}

// userData is the data of the task prompt (prompts/user.tmpl).
type userData struct {
	ID      string
	Program string
}

// renderer returns the task prompt's renderer.
func renderer() (func(id, program string) (string, error), error) {
	lib, err := promptLibrary()
	if err != nil {
		return nil, err
	}
	return func(id, program string) (string, error) {
		return lib.Render(LaneName, prompts.PromptUser, userData{ID: id, Program: program})
	}, nil
}

// domain labels an answer the verifier did not label (no program built)
// with its item's domain.
func domain(kit.Tasks) (func(runs.Task, string) string, error) {
	return func(task runs.Task, _ string) string { return task.Meta["domain"] }, nil
}

// source reads the lane's tasks: the CUDA programs of tasks.corpus
// ("builtin": LoadBuiltinCorpus; "bench": Bench; else a folder read with
// LoadCorpus, items whose meta.json says expect_translate: false kept) or
// of tasks.from_campaign (the verified cuda-synth records cmd/kiln read:
// recordItems), those of tasks.categories, tasks.limit of them drawn with tasks.seed,
// samples_per_task tasks each. A task's files hold its program
// (program.cu), its prompt the program and its id. Refinement rounds
// resample the items with category weights; a synthesised task is its
// CUDA program.
func source(t kit.Tasks) (*kit.TaskSet, error) {
	if t.Templates != nil {
		return nil, fmt.Errorf("tasks.templates: lane %s takes a corpus of CUDA programs, not templates", LaneName)
	}
	items, err := corpusItems(t)
	if err != nil {
		return nil, err
	}
	render, err := renderer()
	if err != nil {
		return nil, err
	}
	spt := max(t.SamplesPerTask, 1)
	task := func(round int, key string, it Item, origin string) (runs.Task, error) {
		p, err := render(it.ID, it.Program)
		if err != nil {
			return runs.Task{}, fmt.Errorf("render task %s: %w", it.ID, err)
		}
		meta := map[string]string{"item": it.ID}
		for k, v := range it.Meta {
			meta[k] = v
		}
		if it.Domain != "" {
			meta["domain"] = it.Domain
		}
		if origin != "" {
			meta["origin"] = origin
		}
		return runs.Task{Round: round, Key: key, Lane: LaneName, Files: map[string]string{ProgramFile: it.Program},
			Meta: meta, Categories: slices.Clone(it.categories()), Prompt: p}, nil
	}
	ts := &kit.TaskSet{}
	byID := map[string]Item{}
	pool := make([]prompts.CorpusItem, 0, len(items))
	for _, it := range items {
		byID[it.ID] = it
		pool = append(pool, prompts.CorpusItem{ID: it.ID, Categories: it.categories()})
		for _, c := range it.categories() {
			if !slices.Contains(ts.Known, c) {
				ts.Known = append(ts.Known, c)
			}
		}
		ct, err := task(0, "corpus/"+it.ID, it, "")
		if err != nil {
			return nil, err
		}
		ts.Corpus = append(ts.Corpus, ct)
	}
	slices.Sort(ts.Known)
	round0 := limitItems(items, t)
	for _, it := range round0 {
		for k := 0; k < spt; k++ {
			rt, err := task(0, fmt.Sprintf("r0/%s#%d", it.ID, k), it, "")
			if err != nil {
				return nil, err
			}
			ts.Round0 = append(ts.Round0, rt)
		}
	}
	size := len(round0) * spt
	ts.Draw = func(round int, weights map[string]float64) ([]runs.Task, error) {
		seen := map[string]int{}
		var out []runs.Task
		for _, p := range prompts.Resample(pool, size, t.Seed+int64(round), weights) {
			it := byID[p.ID]
			k := seen[it.ID]
			seen[it.ID]++
			rt, err := task(round, fmt.Sprintf("r%d/%s#%d", round, it.ID, k), it, "resample")
			if err != nil {
				return nil, err
			}
			out = append(out, rt)
		}
		return out, nil
	}
	ts.FromCandidate = candidateTasks(render, spt)
	return ts, nil
}

// limitItems are the items of round 0: all of them, or t.Limit drawn with
// t.Seed, in ID order.
func limitItems(items []Item, t kit.Tasks) []Item {
	round0 := slices.Clone(items)
	if n := t.Limit; n > 0 && n < len(round0) {
		rng := rand.New(rand.NewPCG(uint64(t.Seed), 0x6b696c6e))
		rng.Shuffle(len(round0), func(i, j int) { round0[i], round0[j] = round0[j], round0[i] })
		round0 = round0[:n]
		slices.SortFunc(round0, func(a, b Item) int { return strings.Compare(a.ID, b.ID) })
	}
	return round0
}

// candidateTasks makes the tasks of a synthesised candidate program:
// samples-per-task tasks of its rendered prompt.
func candidateTasks(render func(id, program string) (string, error), spt int) func(int, refinement.Candidate) ([]runs.Task, error) {
	return func(round int, c refinement.Candidate) ([]runs.Task, error) {
		prog := c.Files[ProgramFile]
		if strings.TrimSpace(prog) == "" {
			return nil, fmt.Errorf("no %s", ProgramFile)
		}
		id := fmt.Sprintf("synth-%s-%02d-%s", c.Category, c.Index, c.Hash[:10])
		p, err := render(id, prog)
		if err != nil {
			return nil, err
		}
		var out []runs.Task
		for k := 0; k < spt; k++ {
			task := c.Task(round, fmt.Sprintf("r%d/synth/%s/%02d-%s#%d", round, c.Category, c.Index, c.Hash[:10], k))
			task.Prompt = p
			task.Meta["synth_category"] = c.Category
			out = append(out, task)
		}
		return out, nil
	}
}

// corpusItems loads tasks.corpus and keeps the items of tasks.categories.
func corpusItems(t kit.Tasks) ([]Item, error) {
	var (
		items []Item
		err   error
	)
	field := "tasks.corpus"
	switch {
	case t.FromCampaign != "" || len(t.Records) > 0:
		if t.Corpus != "" {
			return nil, fmt.Errorf("tasks.from_campaign: cannot be used together with tasks.corpus")
		}
		field = "tasks.from_campaign"
		if items, err = recordItems(t); err != nil {
			return nil, err
		}
	case t.Corpus == "" || t.Corpus == corpusBuiltin:
		items, err = LoadBuiltinCorpus()
	case t.Corpus == corpusBench:
		var fsys fs.FS
		var root string
		if fsys, root, err = Bench(); err == nil {
			items, err = LoadCorpus(fsys, root)
		}
	default:
		items, err = LoadCorpus(os.DirFS(t.Corpus), ".")
	}
	if err != nil {
		return nil, fmt.Errorf("tasks.corpus: %w", err)
	}
	if cats := t.Categories; len(cats) > 0 {
		var known []string
		for _, it := range items {
			for _, c := range it.categories() {
				if !slices.Contains(known, c) {
					known = append(known, c)
				}
			}
		}
		for _, c := range cats {
			if !slices.Contains(known, c) {
				slices.Sort(known)
				return nil, fmt.Errorf("tasks.categories: no item of category %q in %s (categories: %s)", c, field, strings.Join(known, ", "))
			}
		}
		items = slices.DeleteFunc(items, func(it Item) bool {
			return !slices.ContainsFunc(it.categories(), func(c string) bool { return slices.Contains(cats, c) })
		})
	}
	if len(items) == 0 {
		return nil, errors.New("tasks: no corpus item left after the category filter")
	}
	return items, nil
}

// verifyFlags are kiln verify cuda2hip's flags: the CUDA program is the
// item, the HIP program the answer.
func verifyFlags(fs *flag.FlagSet) func() (tools.Item, string, error) {
	cuda := fs.String("cuda", "", "the CUDA program (.cu) the translation is of (required)")
	hip := fs.String("hip", "", "the HIP translation (a .hip file, or a model reply with a fenced block) (required)")
	return func() (tools.Item, string, error) {
		for _, f := range []struct{ flag, v string }{{"--cuda", *cuda}, {"--hip", *hip}} {
			if f.v == "" {
				return tools.Item{}, "", kit.BadInput("%s is required", f.flag)
			}
		}
		item, err := cudasynth.ItemFromFile(*cuda)
		if err != nil {
			return tools.Item{}, "", kit.BadInput("--cuda: %v", err)
		}
		item.Lane = LaneName
		raw, err := os.ReadFile(*hip)
		if err != nil {
			return tools.Item{}, "", kit.BadInput("--hip: %v", err)
		}
		return item, string(raw), nil
	}
}
