package torch2cuda

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// Kit is the torch2cuda lane kit.
func Kit() kit.Kit {
	return kit.Kit{
		Name:       LaneName,
		Summary:    "PyTorch modules -> custom CUDA kernels (KernelBench format), judged for correctness and speed on a GPU",
		Toolchains: []string{toolchain.Torch},
		Capability: kit.CapabilityTorch,
		Open:       open,
		Source:     source,
		System:     system,
		Rules:      rules,
		Validator:  validator,
		Example:    example,
		Verify: &kit.VerifyCommand{
			Usage: "--reference REF.py --candidate CAND.py [--json]",
			Flags: verifyFlags,
		},
		Commands:  []kit.Command{checkProblemsCommand()},
		SharesGPU: true,
	}
}

func open(_ context.Context, h kit.Host, _ sandboxes.Limits) (tools.Lane, error) {
	return openLane(context.Background(), h, nil)
}

// openLane opens the lane on h's sandbox and toolchains, with one judge
// process per GPU (h.SlotsPerDevice evaluations at once in it) and the
// cache in the data folder; set, when not nil, changes the
// configuration first.
func openLane(ctx context.Context, h kit.Host, set func(*Config)) (*Lane, error) {
	reg, err := h.Toolchains(ctx, false)
	if err != nil {
		return nil, err
	}
	r, err := h.Sandbox()
	if err != nil {
		return nil, err
	}
	gpus := max(len(reg.GPU().Devices), 1)
	if n := h.GPUDevices; n > 0 {
		if have := len(reg.GPU().Devices); have > 0 && n > have {
			return nil, fmt.Errorf("torch2cuda: gpu.devices %d: this host has %d GPU(s)", n, have)
		}
		gpus = n
	}
	cfg := Config{Sandbox: r, Toolchains: reg, GPUSlots: gpus, GPUs: gpus, CompileParallel: runtime.NumCPU(),
		SlotsPerDevice: h.SlotsPerDevice, CacheDir: filepath.Join(h.DataDir, "torch2cuda-cache"), Logger: h.Log}
	if set != nil {
		set(&cfg)
	}
	return New(cfg)
}

// source reads problems (tasks.corpus: "builtin" or a folder laid out as
// KernelBench's: level1/, level2/, level3/ of .py files, or .py files
// directly), keeps tasks.categories (families or levels), takes tasks.limit
// of them (seeded), and gives each samples_per_task tasks. A task's
// categories are its family and its level. The problems of
// tasks.benchmarks folders (the spec's curation.benchmarks) join the
// corpus tasks as uncategorised, never drawn, so that refinement drops
// synthesised problems that duplicate one; accepted synthesised problems
// become tasks through fromCandidate.
func source(t kit.Tasks) (*kit.TaskSet, error) {
	if t.Templates != nil {
		return nil, fmt.Errorf("tasks.templates: lane %s takes a corpus of problems, not templates", LaneName)
	}
	var (
		probs []Problem
		err   error
	)
	if t.Corpus == "" || t.Corpus == "builtin" {
		probs, err = LoadBuiltinProblems()
	} else {
		probs, err = LoadProblems(os.DirFS(t.Corpus), ".")
	}
	if err != nil {
		return nil, fmt.Errorf("tasks.corpus: %w", err)
	}
	if len(t.Categories) > 0 {
		probs = slices.DeleteFunc(probs, func(p Problem) bool {
			return !slices.Contains(t.Categories, p.Family) && !slices.Contains(t.Categories, p.Level)
		})
		if len(probs) == 0 {
			return nil, fmt.Errorf("tasks.categories: no problem of %s (families: %s; levels: level1, level2, level3, custom)",
				strings.Join(t.Categories, ", "), strings.Join(Families, ", "))
		}
	}
	items := make([]prompts.CorpusItem, len(probs))
	byID := map[string]Problem{}
	for i, p := range probs {
		items[i] = prompts.CorpusItem{ID: p.ID, Lane: LaneName, Categories: []string{p.Family, p.Level}}
		byID[p.ID] = p
	}
	round0 := items
	if n := t.Limit; n > 0 && n < len(items) {
		if round0, err = prompts.Sample(items, n, t.Seed, nil); err != nil {
			return nil, fmt.Errorf("tasks.limit: %w", err)
		}
	}
	spt := max(t.SamplesPerTask, 1)
	ts := &kit.TaskSet{FromCandidate: fromCandidate(spt)}
	known := map[string]bool{}
	for _, it := range items {
		p := byID[it.ID]
		ts.Corpus = append(ts.Corpus, problemTask(p, 0, "corpus/"+p.ID, nil))
		known[p.Family], known[p.Level] = true, true
	}
	bench, err := benchmarkTasks(t.Benchmarks)
	if err != nil {
		return nil, err
	}
	ts.Corpus = append(ts.Corpus, bench...)
	for c := range known {
		ts.Known = append(ts.Known, c)
	}
	slices.Sort(ts.Known)
	for _, it := range round0 {
		for k := 0; k < spt; k++ {
			ts.Round0 = append(ts.Round0, problemTask(byID[it.ID], 0, fmt.Sprintf("r0/%s#%d", it.ID, k), nil))
		}
	}
	size, seed := len(round0)*spt, t.Seed
	ts.Draw = func(round int, weights map[string]float64) ([]runs.Task, error) {
		seen := map[string]int{}
		var out []runs.Task
		for _, it := range prompts.Resample(items, size, seed+int64(round), weights) {
			k := seen[it.ID]
			seen[it.ID]++
			out = append(out, problemTask(byID[it.ID], round, fmt.Sprintf("r%d/%s#%d", round, it.ID, k), map[string]string{"origin": "resample"}))
		}
		return out, nil
	}
	return ts, nil
}

// problemTask is the task of problem p.
func problemTask(p Problem, round int, key string, meta map[string]string) runs.Task {
	m := map[string]string{"problem": p.ID, "level": p.Level, "family": p.Family}
	for k, v := range meta {
		m[k] = v
	}
	return runs.Task{Round: round, Key: key, Lane: LaneName, Categories: []string{p.Family, p.Level},
		Files: map[string]string{ReferenceFile: p.Source}, Meta: m, Prompt: taskPrompt(p)}
}

// taskPrompt shows the problem and asks for ModelNew. It ends with the
// problem's id, so a replay script can answer each one.
func taskPrompt(p Problem) string {
	return "Here is a PyTorch module, with the functions that make its inputs:\n\n```python\n" + strings.TrimSpace(p.Source) +
		"\n```\n\nWrite `class ModelNew(nn.Module)`: the same constructor and forward signature as Model, and the same " +
		"outputs, computed with custom CUDA kernels that you write and build with " +
		"`torch.utils.cpp_extension.load_inline` (cuda_sources with your __global__ kernels and their launchers, cpp_sources " +
		"with the declarations, functions=[...]). Replace the operators you can make faster; fuse them where it pays. " +
		"Answer with the complete Python module in one ```python block.\n\n(task " + p.ID + ")"
}

func system(_ kit.Tasks, toolNames []string) (string, error) {
	s := "You are an expert CUDA performance engineer. You rewrite PyTorch modules as custom CUDA kernels that are " +
		"correct for every input the module's get_inputs() can produce (mind tails, strides and numerics) and faster than " +
		"PyTorch on a modern NVIDIA GPU. Your answer is judged by running it against the original on fresh random inputs " +
		"and timing both; answers that call back into the original PyTorch operators, cache results, or hide work on other " +
		"streams are rejected."
	if len(toolNames) > 0 {
		s += "\n\nYou may call these tools before you answer: " + strings.Join(toolNames, ", ") + "."
	}
	return s, nil
}

// rules are the lane's refinement rules: a taxonomy of the judge's
// failures, the static suspicion check, task identity by problem source
// (near duplicates too: problemTokens), and the resynthesis format of new
// problems (synth.go).
func rules() (refinement.LaneRules, error) {
	synth, err := synthFormat()
	if err != nil {
		return refinement.LaneRules{}, err
	}
	cc := []string{refinement.ClassCompileError}
	rt := []string{string(ClassRuntimeError), string(ClassIllegalMemory)}
	wrong := []string{refinement.ClassWrongOutput}
	return refinement.LaneRules{
		Lane: LaneName,
		Rules: []refinement.Rule{
			{Label: "compile.syntax", Classes: cc, Stages: []string{StageStatic}, Doc: "the Python module does not parse"},
			{Label: "compile.nvcc", Classes: cc, Pattern: `error: |nvcc|ptxas`, Doc: "the CUDA sources do not compile"},
			{Label: "compile.cpp", Classes: cc, Pattern: `c\+\+|g\+\+|\.cpp:\d+`, Doc: "the C++ binding sources do not compile"},
			{Label: "compile.python", Classes: cc, Pattern: `Traceback|Error:`, Doc: "the module fails while being imported or built"},
			{Label: "compile.other", Classes: cc, Doc: "another build failure"},
			{Label: "runtime.illegal_memory", Classes: rt, Pattern: `illegal memory access|out of bounds|misaligned`, Doc: "a kernel touched memory outside its tensors"},
			{Label: "runtime.launch", Classes: rt, Pattern: `invalid configuration|too many resources|invalid argument`, Doc: "a kernel launch with a bad grid, block or shared-memory size"},
			{Label: "runtime.other", Classes: rt, Doc: "the module raised or crashed while running"},
			{Label: "wrong.shape", Classes: []string{string(ClassWrongShape)}, Doc: "an output of the wrong shape or dtype"},
			{Label: "wrong.nan", Classes: []string{string(ClassNaN)}, Doc: "NaN or Inf where the reference is finite"},
			{Label: "wrong.values", Classes: wrong, Doc: "outputs differ from the reference beyond the tolerance"},
			{Label: "cheat.judge", Classes: []string{string(ClassSuspectedCheating)}, Doc: "the judge found the answer sidestepping the task (see its suspicion)"},
			refinement.BuildTimeoutRule(StageStatic),
		},
		Suspect:  func(answer string, _ runs.Task) string { return staticSuspicion(answer) },
		Features: featureTable(),
		Identity: refinement.Identity{Files: func(n string) bool { return n == ReferenceFile }, NoPrompt: true, Near: problemTokens},
		Synth:    synth,
	}, nil
}

// verifyFlags are kiln verify torch2cuda's flags.
func verifyFlags(fs *flag.FlagSet) func() (tools.Item, string, error) {
	ref := fs.String("reference", "", "the problem: a Python file with class Model, get_inputs and get_init_inputs (required)")
	cand := fs.String("candidate", "", "the answer: a Python module with class ModelNew, or a model reply with a fenced block (required)")
	return func() (tools.Item, string, error) {
		if *ref == "" || *cand == "" {
			return tools.Item{}, "", kit.BadInput("--reference and --candidate are required")
		}
		rb, err := os.ReadFile(*ref)
		if err != nil {
			return tools.Item{}, "", kit.BadInput("--reference: %v", err)
		}
		for _, want := range []string{"class Model", "def get_inputs", "def get_init_inputs"} {
			if !strings.Contains(string(rb), want) {
				return tools.Item{}, "", kit.BadInput("--reference %s: no %q (a KernelBench problem defines class Model, get_inputs and get_init_inputs)", *ref, want)
			}
		}
		cb, err := os.ReadFile(*cand)
		if err != nil {
			return tools.Item{}, "", kit.BadInput("--candidate: %v", err)
		}
		if len(cb) == 0 {
			return tools.Item{}, "", kit.UsageError{Err: errors.New("--candidate: empty file")}
		}
		return tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: string(rb)}, Meta: map[string]string{"reference": *ref}}, string(cb), nil
	}
}
