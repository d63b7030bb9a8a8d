package refinement

import (
	"math"
	"testing"

	"github.com/kiln-dev/kiln/runs"
)

func TestWilson(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		pass, n   int
		low, high float64
	}{
		// Reference values computed by hand from the Wilson formula, z = 1.96.
		{"none", 0, 0, 0, 1},
		{"one of two", 1, 2, 0.0945, 0.9055},
		{"500 of 1000", 500, 1000, 0.4691, 0.5309},
		{"all pass", 10, 10, 0.7225, 1},
		{"all fail", 0, 10, 0, 0.2775},
		{"one sample pass", 1, 1, 0.2065, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lo, hi := Wilson(c.pass, c.n, 1.96)
			if math.Abs(lo-c.low) > 1e-3 || math.Abs(hi-c.high) > 1e-3 {
				t.Fatalf("Wilson(%d,%d) = [%.4f, %.4f], want [%.4f, %.4f]", c.pass, c.n, lo, hi, c.low, c.high)
			}
		})
	}
}

func TestStats(t *testing.T) {
	t.Parallel()
	res := func(pass bool, class string, tokens int, cats ...string) runs.Result {
		return runs.Result{
			Task:    runs.Task{Categories: cats},
			Attempt: runs.Attempt{Usage: runs.Usage{PromptTokens: tokens, CompletionTokens: 2 * tokens}},
			Verdict: runs.Verdict{Pass: pass, Class: class},
		}
	}
	got := Stats([]runs.Result{
		res(true, "", 10, "loop"),
		res(false, "wrong_output", 10, "loop", "switch_many"),
		res(false, "assemble_error", 5, "switch_many"),
		res(true, "", 1),
	})
	want := map[string]struct{ total, pass, fails int }{
		"(none)":      {1, 1, 0},
		"loop":        {2, 1, 1},
		"switch_many": {2, 0, 2},
		AllCategories: {4, 2, 2},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(got), len(want), got)
	}
	if got[len(got)-1].Category != AllCategories {
		t.Fatalf("last row is %q, want the (all) row", got[len(got)-1].Category)
	}
	for _, s := range got {
		w, ok := want[s.Category]
		if !ok {
			t.Fatalf("unexpected category %q", s.Category)
		}
		fails := 0
		for _, n := range s.Classes {
			fails += n
		}
		if s.Total != w.total || s.Pass != w.pass || fails != w.fails {
			t.Errorf("%s: total %d pass %d fails %d, want %+v", s.Category, s.Total, s.Pass, fails, w)
		}
	}
	sm := got[2]
	if sm.Category != "switch_many" || sm.Classes["wrong_output"] != 1 || sm.Classes["assemble_error"] != 1 {
		t.Errorf("switch_many classes = %+v", sm.Classes)
	}
	if sm.PromptTokens != 15 || sm.CompletionTokens != 30 {
		t.Errorf("switch_many tokens = %d/%d, want 15/30", sm.PromptTokens, sm.CompletionTokens)
	}
}
