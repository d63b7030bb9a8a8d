package ptx2cuda

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/ptx2cuda/rollptx"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// Kit is the ptx2cuda lane kit (PtxDec): the Rolled-PTX of a kernel kiln
// compiled in, its CUDA source out, judged by building it into the
// original's harness and comparing outputs on a GPU (pending without
// one).
func Kit() kit.Kit {
	return kit.Kit{
		Name:       LaneName,
		Summary:    "PTX -> CUDA decompilation (Rolled-PTX prompt), judged against the original kernel's outputs on a GPU",
		Toolchains: []string{toolchain.NVCC},
		Capability: kit.CapabilityGPU,
		ItemCapability: func(item tools.Item) string {
			if isTorchTask(item) {
				return kit.CapabilityTorch // the judge needs torch with CUDA
			}
			return ""
		},
		Open:   open,
		Source: source,
		System: func(_ kit.Tasks, toolNames []string) (string, error) {
			lib, err := promptLibrary()
			if err != nil {
				return "", err
			}
			return lib.Render(LaneName, prompts.PromptSystem, prompts.SystemData{Tools: toolNames})
		},
		Repair: func(v tools.Verdict) (string, error) {
			lib, err := promptLibrary()
			if err != nil {
				return "", err
			}
			return lib.Render(LaneName, prompts.PromptRepair, prompts.RepairData{Diagnostic: v.Diagnostic, Class: string(v.Class)})
		},
		Rules:     RefinementRules,
		Validator: validator,
		Example:   example,
		Verify: &kit.VerifyCommand{
			Usage: "--item DIR [--variant NAME] --answer A.cu [--json]",
			Flags: verifyFlags,
		},
		Commands: []kit.Command{rollCommand(), unrollCommand(), prepareCommand(), harvestTritonCommand()},
	}
}

// open builds the lane with a compile cache in the data folder. The run
// limits are the lane's own (a GPU program's needs).
func open(ctx context.Context, h kit.Host, _ sandboxes.Limits) (tools.Lane, error) {
	reg, err := h.Toolchains(ctx, false)
	if err != nil {
		return nil, err
	}
	r, err := h.Sandbox()
	if err != nil {
		return nil, err
	}
	// Torch tasks are judged by a torch2cuda lane of the same host,
	// opened when the first is judged.
	judge := func(ctx context.Context) (TorchJudge, error) {
		tl, err := torch2cuda.Kit().Open(ctx, h, sandboxes.Limits{})
		if err != nil {
			return nil, err
		}
		j, ok := tl.(TorchJudge)
		if !ok {
			return nil, fmt.Errorf("lane %s completes no verdict", torch2cuda.LaneName)
		}
		return j, nil
	}
	return New(Config{Sandbox: r, Toolchains: reg, CacheDir: filepath.Join(h.DataDir, "compile-cache"), Logger: h.Log, Torch: judge})
}

func promptLibrary() (*prompts.Library, error) {
	return prompts.NewLaneLibrary(LaneName, corpusFS, "prompts")
}

// LoadBuiltinCorpus reads the embedded starter corpus (corpus/builtin).
func LoadBuiltinCorpus() ([]Item, error) {
	return LoadCorpus(corpusFS, "corpus/builtin", CorpusBuiltin, true)
}

// LoadBenchCorpus reads the embedded held-out benchmark set (corpus/bench).
func LoadBenchCorpus() ([]Item, error) {
	return LoadCorpus(corpusFS, "corpus/bench", CorpusBench, true)
}

// loadCorpus reads tasks.corpus: builtin (also ""), bench, or a folder.
func loadCorpus(name string) ([]Item, error) {
	switch name {
	case "", CorpusBuiltin:
		return LoadBuiltinCorpus()
	case CorpusBench:
		return LoadBenchCorpus()
	}
	return LoadCorpus(os.DirFS(name), ".", name, true)
}

// corpusTask is one (item, variant) of a corpus.
type corpusTask struct {
	item    Item
	variant string
}

func (c corpusTask) id() string { return TaskID(c.item.ID, c.variant) }

// userData is the data of the task prompt.
type userData struct {
	ID, Kernel, Signature, PTX string
	Flags                      []string
	Grid, Block                [3]int64
	Shared                     int64
	Params                     []string
}

// task renders c as a task of round with key.
func (c corpusTask) task(lib *prompts.Library, round int, key string, meta map[string]string) (runs.Task, error) {
	if c.item.isProgram() {
		return c.programTask(lib, round, key, meta)
	}
	if c.item.isTorch() {
		return c.torchTask(lib, round, key, meta)
	}
	h, err := c.item.Harness(c.variant)
	if err != nil {
		return runs.Task{}, err
	}
	return harnessTask(lib, round, key, c.item, c.variant, h, c.item.PTX[c.variant], meta)
}

// harnessTask renders the task of item's variant (a corpus item's or a
// synthesised kernel's) with its resolved harness h and raw PTX: the
// prompt shows the Rolled-PTX, the files are kernel.cu, kernel.ptx and
// harness.json.
func harnessTask(lib *prompts.Library, round int, key string, it Item, variant string, h HarnessSpec, ptx string, meta map[string]string) (runs.Task, error) {
	spec, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return runs.Task{}, err
	}
	d := userData{ID: TaskID(it.ID, variant), Kernel: h.Kernel, Signature: h.Signature(), PTX: rollptx.Roll(ptx), Flags: h.Flags,
		Grid: h.Grid, Block: h.Block, Shared: h.Shared}
	for _, p := range h.Params {
		d.Params = append(d.Params, describeParam(p))
	}
	prompt, err := lib.Render(LaneName, prompts.PromptUser, d)
	if err != nil {
		return runs.Task{}, err
	}
	m := map[string]string{"item": it.ID, "variant": variant, "kernel": h.Kernel, "corpus": it.Set}
	for k, v := range meta {
		m[k] = v
	}
	files := map[string]string{FilePTX: ptx, FileHarness: string(spec) + "\n"}
	if it.Kernel != "" { // a Triton item's reference is its PTX
		files[FileKernel] = it.Kernel
	}
	return runs.Task{Round: round, Key: key, Lane: LaneName, Categories: []string{it.Meta.Category}, Prompt: prompt, Meta: m,
		Files: files}, nil
}

// describeParam is a parameter's line in the prompt.
func describeParam(p HarnessParam) string {
	if !p.Pointer {
		return fmt.Sprintf("%s: %s = %s", p.Name, p.Type, p.Value)
	}
	role := map[string]string{RoleIn: "input", RoleOut: "output", RoleInOut: "input and output"}[p.Role]
	return fmt.Sprintf("%s: %s, %s, %d elements", p.Name, p.Type, role, p.Count)
}

// source reads the corpus (tasks.corpus: builtin, bench or a prepared
// folder), keeps tasks.categories, and makes one task per kernel variant
// (tasks.limit of them, drawn with tasks.seed, when set), samples_per_task
// times. A task's prompt ends with "(task <item>/<variant>)", so a script
// model can answer each. Refinement rounds resample the corpus's variants
// with the categories re-weighted, as many tasks as round 0 had, and add
// the synthesised kernels the validator compiled (candidateTasks),
// samples_per_task tasks each.
func source(t kit.Tasks) (*kit.TaskSet, error) {
	if t.Templates != nil {
		return nil, fmt.Errorf("tasks.templates: lane %s takes a corpus (builtin, bench or a folder), not templates", LaneName)
	}
	items, err := loadCorpus(t.Corpus)
	if err != nil {
		return nil, fmt.Errorf("tasks.corpus: %w", err)
	}
	lib, err := promptLibrary()
	if err != nil {
		return nil, err
	}
	var pool []prompts.CorpusItem
	byID := map[string]corpusTask{}
	ts := &kit.TaskSet{}
	for _, it := range items {
		if len(t.Categories) > 0 && !slices.Contains(t.Categories, it.Meta.Category) {
			continue
		}
		if !slices.Contains(ts.Known, it.Meta.Category) {
			ts.Known = append(ts.Known, it.Meta.Category)
		}
		for _, v := range it.Meta.Variants {
			c := corpusTask{item: it, variant: v.Name}
			byID[c.id()] = c
			pool = append(pool, prompts.CorpusItem{ID: c.id(), Categories: []string{it.Meta.Category}})
			task, err := c.task(lib, 0, "corpus/"+c.id(), nil)
			if err != nil {
				return nil, fmt.Errorf("tasks.corpus: %s: %w", c.id(), err)
			}
			ts.Corpus = append(ts.Corpus, task)
		}
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("tasks.categories: no %s task left (categories: %s)", LaneName, strings.Join(categoriesOf(items), ", "))
	}
	slices.Sort(ts.Known)
	picked := pool
	if t.Limit > 0 && t.Limit < len(pool) {
		if picked, err = prompts.Sample(pool, t.Limit, t.Seed, nil); err != nil {
			return nil, fmt.Errorf("tasks.limit: %w", err)
		}
		slices.SortFunc(picked, func(a, b prompts.CorpusItem) int { return strings.Compare(a.ID, b.ID) })
	}
	spt := max(t.SamplesPerTask, 1)
	for _, p := range picked {
		for k := 0; k < spt; k++ {
			task, err := byID[p.ID].task(lib, 0, fmt.Sprintf("r0/%s#%d", p.ID, k), nil)
			if err != nil {
				return nil, err
			}
			ts.Round0 = append(ts.Round0, task)
		}
	}
	size := len(ts.Round0)
	ts.Draw = func(round int, weights map[string]float64) ([]runs.Task, error) {
		seen := map[string]int{}
		var out []runs.Task
		for _, p := range prompts.Resample(pool, size, t.Seed+int64(round), weights) {
			k := seen[p.ID]
			seen[p.ID]++
			task, err := byID[p.ID].task(lib, round, fmt.Sprintf("r%d/%s#%d", round, p.ID, k), map[string]string{"origin": "resample"})
			if err != nil {
				return nil, err
			}
			out = append(out, task)
		}
		return out, nil
	}
	ts.FromCandidate = func(round int, c refinement.Candidate) ([]runs.Task, error) {
		return candidateTasks(lib, round, spt, c)
	}
	return ts, nil
}

func categoriesOf(items []Item) []string {
	var out []string
	for _, it := range items {
		if !slices.Contains(out, it.Meta.Category) {
			out = append(out, it.Meta.Category)
		}
	}
	slices.Sort(out)
	return out
}
