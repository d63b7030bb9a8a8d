package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/kiln-dev/kiln/agent"
	"github.com/kiln-dev/kiln/cmd/kiln/internal/engine"
	"github.com/kiln-dev/kiln/cmd/kiln/internal/spec"
	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/prompts/persona"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools"
)

// cudaSystem is the cuda-synth system prompt: the persona library's.
func cudaSystem(sp *spec.Spec) (string, error) {
	lib, err := personaLibrary(sp)
	if err != nil {
		return "", err
	}
	return lib.SystemPrompt(), nil
}

// personaLibrary is the builtin persona library, with the spec's template
// folder laid over it when there is one.
func personaLibrary(sp *spec.Spec) (*persona.Library, error) {
	t := sp.Tasks.Templates
	if t == nil || (t.Dir == "builtin" && len(t.Pools) == 0) {
		return persona.LoadBuiltin()
	}
	if len(t.Pools) > 0 {
		return nil, fmt.Errorf("tasks.templates.pools: inline pools are not read for %s; put them as files in %s/pools/<name>.txt", sp.Lane, t.Dir)
	}
	lib, err := persona.LoadWithUser(os.DirFS(t.Dir))
	if err != nil {
		return nil, fmt.Errorf("tasks.templates.dir: %w", err)
	}
	return lib, nil
}

// cudaTasks renders round 0 of a cuda-synth campaign: persona prompts
// sampled from the templates (tasks.templates; tasks.limit prompts), or the
// prompts of a cuda-synth corpus (tasks.corpus). A corpus task's prompt ends
// with its id, so a replay script can answer each one.
func cudaTasks(sp *spec.Spec) ([]runs.Task, error) {
	var out []runs.Task
	add := func(key, prompt, category string, meta map[string]string) {
		for k := 0; k < sp.Tasks.SamplesPerTask; k++ {
			out = append(out, runs.Task{Round: 0, Key: fmt.Sprintf("r0/%s#%d", key, k), Lane: sp.Lane,
				Files: map[string]string{}, Meta: meta, Categories: []string{category}, Prompt: prompt})
		}
	}
	if sp.Tasks.Templates != nil {
		if sp.Tasks.Limit <= 0 {
			return nil, fmt.Errorf("tasks.limit: how many prompts to sample from the templates (> 0)")
		}
		lib, err := personaLibrary(sp)
		if err != nil {
			return nil, err
		}
		ts, err := lib.Sample(sp.Tasks.Limit, sp.Tasks.Seed, persona.Options{Categories: sp.Tasks.Categories})
		if err != nil {
			return nil, fmt.Errorf("tasks: %w", err)
		}
		for _, t := range ts {
			b, _ := json.Marshal(t.Bindings)
			add(t.TemplateID+"/"+t.Key[:16], t.Prompt, t.Category,
				map[string]string{"template": t.TemplateID, "bindings": string(b)})
		}
		return out, nil
	}
	items, err := cudaCorpusItems(sp)
	if err != nil {
		return nil, err
	}
	if n := sp.Tasks.Limit; n > 0 && n < len(items) {
		rng := rand.New(rand.NewPCG(uint64(sp.Tasks.Seed), 0x6b696c6e))
		rng.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		items = items[:n]
	}
	for _, it := range items {
		add(it.ID, cudaCorpusPrompt(it), it.Category, map[string]string{"item": it.ID, "domain": it.Domain})
	}
	return out, nil
}

// cudaCorpusItems loads the spec's cuda-synth corpus (tasks.corpus) and
// keeps the items of tasks.categories (before tasks.limit).
func cudaCorpusItems(sp *spec.Spec) ([]prompts.CUDAItem, error) {
	var (
		items []prompts.CUDAItem
		err   error
	)
	if sp.Tasks.Corpus == "" || sp.Tasks.Corpus == "builtin" {
		items, err = prompts.LoadBuiltinCUDACorpus()
	} else {
		items, err = prompts.LoadCUDACorpus(os.DirFS(sp.Tasks.Corpus), ".")
	}
	if err != nil {
		return nil, fmt.Errorf("tasks.corpus: %w", err)
	}
	if cats := sp.Tasks.Categories; len(cats) > 0 {
		var keep []prompts.CUDAItem
		for _, it := range items {
			for _, c := range cats {
				if it.Category == c {
					keep = append(keep, it)
					break
				}
			}
		}
		items = keep
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("tasks: no corpus item left after the category filter")
	}
	return items, nil
}

// cudaCorpusPrompt is a corpus item's task prompt: its prompt and its id
// (so a replay script can answer each one).
func cudaCorpusPrompt(it prompts.CUDAItem) string {
	return strings.TrimSpace(it.Prompt) + "\n\n(task " + it.ID + ")"
}

// cudaPlan is plan for the cuda-synth lane.
func (w *wiring) cudaPlan(ctx context.Context, sp *spec.Spec, lane tools.Lane, model agent.Model, mode agent.ToolMode, toolNames []string) (*engine.Plan, error) {
	var refine *engine.Refine
	if sp.Refinement.Rounds > 0 {
		var err error
		if refine, err = w.refine(ctx, sp, lane, nil); err != nil {
			return nil, err
		}
	}
	labels, err := cudaLabels(sp)
	if err != nil {
		return nil, err
	}
	system, err := cudaSystem(sp)
	if err != nil {
		return nil, err
	}
	if len(toolNames) > 0 {
		system += "\n\nYou may call these tools to compile and check your program before you answer: " + strings.Join(toolNames, ", ") + "."
	}
	tasks, err := cudaTasks(sp)
	if err != nil {
		return nil, err
	}
	maxTools := sp.Agent.MaxToolCalls
	if mode == agent.ToolsNone || maxTools == 0 {
		maxTools = -1
	}
	return &engine.Plan{
		Lane: lane, Model: model, ToolMode: mode, Sampling: sp.Sampling.Agent(), System: system,
		RepairTurns: sp.Agent.RepairTurns, MaxToolCalls: maxTools, Concurrency: sp.Concurrency,
		Tasks:    func() ([]runs.Task, error) { return tasks, nil },
		MaxTasks: sp.Budgets.Tasks, MaxTokens: sp.Budgets.Tokens, MaxWall: sp.Budgets.WallTime.D(),
		Toolchain: w.toolchain(), Policy: w.policy(),
		Refine: refine, Labels: labels,
	}, nil
}
