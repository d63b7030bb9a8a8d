package c2x86

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// Kit is the c2x86 lane kit: C functions with drivers in, x86-64 assembly
// out, judged by assembling, linking with the driver and comparing the
// output with GCC's -O0 reference.
func Kit() kit.Kit {
	return kit.Kit{
		Name:       LaneName,
		Summary:    "C -> x86-64 assembly, judged against GCC -O0's program output",
		Toolchains: []string{toolchain.GCC, toolchain.AS, toolchain.LD},
		Open:       open,
		Source:     source,
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
		Normalise: curate.NormaliseAsm,
		Verify: &kit.VerifyCommand{
			Usage: "--function F.c --driver D.c --candidate C.s [--json]",
			Flags: verifyFlags,
		},
	}
}

// open builds the lane with the campaign's run limits and a reference
// cache in the data folder.
func open(_ context.Context, h kit.Host, lim sandboxes.Limits) (tools.Lane, error) {
	r, err := h.Sandbox()
	if err != nil {
		return nil, err
	}
	return New(Config{Sandbox: r, CacheDir: filepath.Join(h.DataDir, "cache", "c2x86"), RunLimits: lim, Logger: h.Log})
}

// source reads the corpus (tasks.corpus: "builtin" or a folder) with the
// category filter and limit; round 0 has samples_per_task tasks per item.
// Refinement rounds resample the whole corpus (after tasks.categories,
// before tasks.limit), as many tasks as round 0 had, with the categories
// re-weighted (prompts.Resample).
func source(t kit.Tasks) (*kit.TaskSet, error) {
	if t.Templates != nil {
		return nil, fmt.Errorf("tasks.templates: lane %s takes a corpus, not templates", LaneName)
	}
	pool, err := corpusItems(t)
	if err != nil {
		return nil, err
	}
	items := pool
	if n := t.Limit; n > 0 && n < len(items) {
		items, err = prompts.Sample(items, n, t.Seed, nil)
		if err != nil {
			return nil, fmt.Errorf("tasks.limit: %w", err)
		}
	}
	lib, err := promptLibrary()
	if err != nil {
		return nil, err
	}
	render := func(function, source string) (string, error) {
		return lib.Render(LaneName, prompts.PromptUser, prompts.UserData{Function: function, Source: source})
	}
	ts := &kit.TaskSet{}
	for _, it := range items {
		user, err := render(it.Function, it.Files["function.c"])
		if err != nil {
			return nil, fmt.Errorf("render task %s: %w", it.ID, err)
		}
		for k := 0; k < t.SamplesPerTask; k++ {
			ts.Round0 = append(ts.Round0, runs.Task{
				Round: 0, Key: fmt.Sprintf("r0/%s#%d", it.ID, k), Lane: LaneName,
				Files: it.Files, Meta: map[string]string{"function": it.Function, "item": it.ID},
				Categories: it.Categories, Prompt: user,
			})
		}
	}
	known := map[string]bool{}
	for _, it := range pool {
		for _, c := range it.Categories {
			known[c] = true
		}
		ts.Corpus = append(ts.Corpus, runs.Task{Key: "corpus/" + it.ID, Lane: LaneName, Files: it.Files,
			Meta: map[string]string{"function": it.Function, "item": it.ID}, Categories: it.Categories})
	}
	for c := range known {
		ts.Known = append(ts.Known, c)
	}
	slices.Sort(ts.Known)
	size, spt, seed := len(items)*t.SamplesPerTask, t.SamplesPerTask, t.Seed
	ts.Draw = func(round int, weights map[string]float64) ([]runs.Task, error) {
		picks := prompts.Resample(pool, size, seed+int64(round), weights)
		seen := map[string]int{}
		out := make([]runs.Task, 0, len(picks))
		for _, it := range picks {
			user, err := render(it.Function, it.Files["function.c"])
			if err != nil {
				return nil, fmt.Errorf("render task %s: %w", it.ID, err)
			}
			k := seen[it.ID]
			seen[it.ID]++
			out = append(out, runs.Task{
				Round: round, Key: fmt.Sprintf("r%d/%s#%d", round, it.ID, k), Lane: LaneName, Files: it.Files,
				Meta:       map[string]string{"function": it.Function, "item": it.ID, "origin": "resample"},
				Categories: it.Categories, Prompt: user,
			})
		}
		return out, nil
	}
	ts.FromCandidate = func(round int, c refinement.Candidate) ([]runs.Task, error) {
		user, err := render(c.Function, c.Files["function.c"])
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
	}
	return ts, nil
}

// corpusItems loads the corpus and keeps the items of tasks.categories.
func corpusItems(t kit.Tasks) ([]prompts.CorpusItem, error) {
	var (
		items []prompts.CorpusItem
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
		known := CorpusSpec().Categories
		for _, c := range cats {
			if !slices.Contains(known, c) {
				return nil, fmt.Errorf("tasks.categories: unknown category %q (known: %s)", c, strings.Join(known, ", "))
			}
		}
		items = slices.DeleteFunc(items, func(it prompts.CorpusItem) bool {
			return !slices.ContainsFunc(cats, it.HasCategory)
		})
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("tasks: no corpus item left after the category filter")
	}
	return items, nil
}

// validator accepts a synthesised task when its function and driver
// compile, the reference program runs, prints something and prints the
// same twice. A sandbox or toolchain failure is not the task's fault: it
// wraps refinement.ErrValidatorBroken.
func validator(lane tools.Lane) (refinement.Validator, error) {
	l, ok := lane.(*Lane)
	if !ok {
		return nil, fmt.Errorf("c2x86 validator: lane is %T", lane)
	}
	return refinement.ValidatorFunc(func(ctx context.Context, c refinement.Candidate) error {
		item := tools.Item{Lane: c.Lane, Files: c.Files, Meta: map[string]string{"function": c.Function}}
		ref, err := l.Reference(ctx, item)
		switch {
		case errors.Is(err, ErrBadItem):
			return err
		case err != nil && ctx.Err() != nil:
			return err
		case err != nil:
			return fmt.Errorf("%w: %w", refinement.ErrValidatorBroken, err)
		case len(strings.TrimSpace(string(ref.Output))) == 0:
			return errors.New("the driver prints nothing: the task would test nothing")
		}
		return nil
	}), nil
}

// verifyFlags are kiln verify c2x86's flags.
func verifyFlags(fs *flag.FlagSet) func() (tools.Item, string, error) {
	fn := fs.String("function", "", "C file with the function(s) under test (required)")
	driver := fs.String("driver", "", "C file with main() calling the function and printing results (required)")
	cand := fs.String("candidate", "", "the candidate x86-64 assembly (a .s file, or a model reply with a fenced block) (required)")
	name := fs.String("name", "", "the function's name (optional, recorded only)")
	return func() (tools.Item, string, error) {
		for _, f := range []struct{ flag, v string }{{"--function", *fn}, {"--driver", *driver}, {"--candidate", *cand}} {
			if f.v == "" {
				return tools.Item{}, "", kit.BadInput("%s is required", f.flag)
			}
		}
		item, err := ItemFromFiles(*fn, *driver, *name)
		if err != nil {
			return tools.Item{}, "", kit.UsageError{Err: err}
		}
		raw, err := os.ReadFile(*cand)
		if err != nil {
			return tools.Item{}, "", kit.BadInput("--candidate: %v", err)
		}
		return item, string(raw), nil
	}
}
