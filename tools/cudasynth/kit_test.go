package cudasynth

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/kit"
)

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func TestKitTasks(t *testing.T) {
	t.Parallel()
	round0 := func(t2 kit.Tasks) ([]runs.Task, error) {
		if t2.SamplesPerTask == 0 {
			t2.SamplesPerTask = 1
		}
		if t2.Seed == 0 {
			t2.Seed = 1
		}
		ts, err := source(t2)
		if err != nil {
			return nil, err
		}
		return ts.Round0, nil
	}
	ts, err := round0(kit.Tasks{Templates: &kit.Templates{Dir: "builtin"}, Limit: 12, Seed: 3, SamplesPerTask: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 24 {
		t.Fatalf("%d tasks, want 12 prompts x 2 samples", len(ts))
	}
	prs, keys := map[string]bool{}, map[string]bool{}
	for _, task := range ts {
		prs[task.Prompt] = true
		keys[task.Key] = true
		if len(task.Categories) != 1 || task.Meta["template"] == "" || task.Meta["bindings"] == "" || strings.Contains(task.Prompt, "{") {
			t.Errorf("task %s: categories %v meta %v prompt %q", task.Key, task.Categories, task.Meta, task.Prompt)
		}
	}
	if len(prs) != 12 || len(keys) != 24 {
		t.Errorf("%d distinct prompts and %d keys, want 12 and 24", len(prs), len(keys))
	}
	again, err := round0(kit.Tasks{Templates: &kit.Templates{Dir: "builtin"}, Limit: 12, Seed: 3, SamplesPerTask: 2})
	if err != nil || again[0].Prompt != ts[0].Prompt || again[23].Key != ts[23].Key {
		t.Errorf("same seed, different tasks: %v", err)
	}
	if _, err := round0(kit.Tasks{Templates: &kit.Templates{Dir: "builtin"}}); err == nil || !strings.Contains(err.Error(), "tasks.limit") {
		t.Errorf("templates without a limit: %v", err)
	}
	ts, err = round0(kit.Tasks{Corpus: "builtin", Limit: 5, Categories: []string{"simulation"}})
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

// TestKitRefinementSource checks the lane's refinement task source without
// a model or a compiler: known categories, the weighted draws of both task
// sources, and the tasks of a synthesised candidate.
func TestKitRefinementSource(t *testing.T) {
	t.Parallel()
	rules, err := RefinementRules()
	if err != nil {
		t.Fatal(err)
	}
	lanes, err := refinement.NewLanes(rules)
	if err != nil {
		t.Fatal(err)
	}
	// Corpus: 10 items of two categories, resampled with simulation x4.
	rf, err := source(kit.Tasks{Corpus: "builtin", Categories: []string{"simulation", "graph_algorithms"}, Seed: 1, SamplesPerTask: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sorted(rf.Known), []string{"graph_algorithms", "simulation"}) || len(rf.Corpus) != 10 {
		t.Fatalf("known %v, corpus %d", rf.Known, len(rf.Corpus))
	}
	drawn, err := rf.Draw(1, map[string]float64{"simulation": 4, refinement.DefaultWeightKey: 1})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, task := range drawn {
		per[task.Categories[0]]++
		if task.Round != 1 || !strings.HasPrefix(task.Key, "r1/") || !strings.Contains(task.Prompt, "(task "+task.Meta["item"]+")") {
			t.Errorf("drawn task %+v", task)
		}
	}
	if len(drawn) != 10 || per["simulation"] != 8 || per["graph_algorithms"] != 2 {
		t.Errorf("drawn %d: %v, want 8 simulation and 2 graph_algorithms", len(drawn), per)
	}
	// A synthesised candidate duplicating a corpus prompt (its tag aside)
	// is caught by the corpus hash.
	if lanes.TaskHash(rf.Corpus[0]) != lanes.SourceHash("cuda-synth", nil, strings.ToLower(rf.Corpus[0].Prompt[:strings.Index(rf.Corpus[0].Prompt, "\n\n(task")])) {
		t.Error("a corpus prompt's hash depends on its task tag")
	}

	// Templates: fresh prompts, weights of non-template targets ignored.
	rf, err = source(kit.Tasks{Templates: &kit.Templates{Dir: "builtin"}, Limit: 20, Seed: 3, SamplesPerTask: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rf.Known) != 10 || rf.Corpus != nil {
		t.Fatalf("known %v, corpus %d", rf.Known, len(rf.Corpus))
	}
	drawn, err = rf.Draw(2, map[string]float64{"machine_learning": 11, "atomics": 5, refinement.DefaultWeightKey: 1})
	if err != nil {
		t.Fatal(err)
	}
	per = map[string]int{}
	for _, task := range drawn {
		per[task.Categories[0]]++
		if task.Round != 2 || task.Meta["template"] == "" || task.Meta["origin"] != "resample" || task.Prompt == "" {
			t.Errorf("drawn task %+v", task)
		}
	}
	if len(drawn) != 40 || per["machine_learning"] != 22 || per["simulation"] != 2 {
		t.Errorf("drawn %d: %v, want 40: 11 of the 20 prompts machine_learning (weight 11 of 20), 2 tasks each", len(drawn), per)
	}
	again, _ := rf.Draw(2, map[string]float64{"machine_learning": 11, "atomics": 5, refinement.DefaultWeightKey: 1})
	if len(again) != len(drawn) || again[7].Key != drawn[7].Key {
		t.Error("the draw is not deterministic")
	}
	c := refinement.Candidate{Lane: "cuda-synth", Index: 3, Category: "machine_learning", Prompt: "Write a softmax over 4096 rows.",
		Files: map[string]string{ReferenceFile: "__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n"}}
	c.Hash = lanes.SourceHash(c.Lane, c.Files, c.Prompt)
	ts, err := rf.FromCandidate(2, c)
	if err != nil || len(ts) != 2 {
		t.Fatalf("candidate tasks: %d %v", len(ts), err)
	}
	for k, task := range ts {
		if task.Key != fmt.Sprintf("r2/synth/machine_learning/03-%s#%d", c.Hash[:10], k) || task.Prompt != c.Prompt ||
			task.Files[ReferenceFile] == "" || task.Meta["origin"] != "resynthesis" || task.Meta["synth_category"] != "machine_learning" {
			t.Errorf("candidate task %+v", task)
		}
	}
}
