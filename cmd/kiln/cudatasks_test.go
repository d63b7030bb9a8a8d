package main

import (
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/cmd/kiln/internal/spec"
)

func TestCUDATasks(t *testing.T) {
	t.Parallel()
	parse := func(tasks string) *spec.Spec {
		t.Helper()
		sp, err := spec.Parse([]byte("name: c\nlane: cuda-synth\ntasks: "+tasks+"\nmodels: [{name: m, kind: openai, base_url: http://127.0.0.1:1/v1, model: x}]\n"),
			"c.yaml", spec.Options{Dir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	ts, err := cudaTasks(parse("{templates: {dir: builtin}, limit: 12, seed: 3, samples_per_task: 2}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 24 {
		t.Fatalf("%d tasks, want 12 prompts x 2 samples", len(ts))
	}
	prompts, keys := map[string]bool{}, map[string]bool{}
	for _, task := range ts {
		prompts[task.Prompt] = true
		keys[task.Key] = true
		if len(task.Categories) != 1 || task.Meta["template"] == "" || task.Meta["bindings"] == "" || strings.Contains(task.Prompt, "{") {
			t.Errorf("task %s: categories %v meta %v prompt %q", task.Key, task.Categories, task.Meta, task.Prompt)
		}
	}
	if len(prompts) != 12 || len(keys) != 24 {
		t.Errorf("%d distinct prompts and %d keys, want 12 and 24", len(prompts), len(keys))
	}
	again, err := cudaTasks(parse("{templates: {dir: builtin}, limit: 12, seed: 3, samples_per_task: 2}"))
	if err != nil || again[0].Prompt != ts[0].Prompt || again[23].Key != ts[23].Key {
		t.Errorf("same seed, different tasks: %v", err)
	}
	if _, err := cudaTasks(parse("{templates: {dir: builtin}}")); err == nil || !strings.Contains(err.Error(), "tasks.limit") {
		t.Errorf("templates without a limit: %v", err)
	}
	ts, err = cudaTasks(parse("{corpus: builtin, limit: 5, categories: [simulation]}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 5 {
		t.Fatalf("%d corpus tasks, want 5", len(ts))
	}
	for _, task := range ts {
		if task.Categories[0] != "simulation" || !strings.Contains(task.Prompt, "(task "+task.Meta["item"]+")") {
			t.Errorf("corpus task %s: %v %q", task.Key, task.Categories, task.Prompt)
		}
	}
}
