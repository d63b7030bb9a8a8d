package refinement

import (
	"slices"
	"strings"
	"testing"
)

// row builds a stats row the way StatsBy would.
func row(cat string, pass, total int) CategoryStats {
	s := CategoryStats{Category: cat, Pass: pass, Fail: total - pass, Total: total}
	s.rate()
	return s
}

func TestSelect(t *testing.T) {
	t.Parallel()
	def := Policy{Threshold: 0.5, MinEvidence: 5, MinSamples: 3}
	tests := []struct {
		name    string
		stats   []CategoryStats
		policy  Policy
		want    []string // kind:category, in order
		reasons []string // substrings of the reasons, in order
	}{
		{"empty input", nil, def, nil, nil},
		{"empty input, forced", nil, Policy{Threshold: 0.5, MinEvidence: 5, Forced: []string{"avx"}},
			[]string{"forced:avx"}, []string{"avx: forced by the user; no results yet"}},
		{"all pass", []CategoryStats{row("loop", 20, 20), row("struct", 9, 9), row(AllCategories, 29, 29)}, def, nil, nil},
		{"all fail", []CategoryStats{row("loop", 0, 20), row("struct", 0, 9), row("bitops", 0, 2), row(AllCategories, 0, 31)}, def,
			[]string{"below_threshold:loop", "below_threshold:struct", "few_samples:bitops"},
			[]string{"loop: 0/20 pass (0%, 95% CI 0-16%); the upper bound 16% is below the threshold 50%, with 20 >= 5 samples",
				"struct: 0/9 pass (0%, 95% CI 0-30%)", "bitops: 0/2 pass (0%, 95% CI 0-66%); only 2 < 3 samples, too few to judge"}},
		{"one sample failing is too few, not weak", []CategoryStats{row("loop", 0, 1)}, def,
			[]string{"few_samples:loop"}, []string{"only 1 < 3 samples"}},
		{"one sample and min samples off", []CategoryStats{row("loop", 0, 1)}, Policy{Threshold: 0.5, MinEvidence: 5}, nil, nil},
		{"min evidence floor for a high threshold", []CategoryStats{row("loop", 0, 1), row("struct", 0, 5)}, Policy{Threshold: 0.95, MinEvidence: 5},
			[]string{"below_threshold:struct"}, nil},
		{"upper bound not point estimate", []CategoryStats{row("a", 3, 8), row("b", 0, 6)}, def,
			// a: 38%, CI 14-69%: straddles the threshold, not chosen.
			[]string{"below_threshold:b"}, []string{"b: 0/6 pass (0%, 95% CI 0-39%)"}},
		{"weak ordered by upper bound then rate", []CategoryStats{row("c", 1, 10), row("a", 0, 6), row("b", 0, 30)}, def,
			[]string{"below_threshold:b", "below_threshold:a", "below_threshold:c"}, nil},
		{"forced unknown category first", []CategoryStats{row("loop", 0, 20)}, Policy{Threshold: 0.5, MinEvidence: 5, Forced: []string{"avx_intrinsics", " loop ", "avx_intrinsics", ""}},
			[]string{"forced:avx_intrinsics", "forced:loop"}, []string{"no results yet", "loop: forced by the user; 0/20 pass (0%, 95% CI 0-16%)"}},
		{"pseudo rows never chosen", []CategoryStats{row(AllCategories, 0, 50), row(NoGroup, 0, 40)}, Policy{Threshold: 0.5, MinEvidence: 5, Forced: []string{AllCategories}},
			nil, nil},
		{"known categories without results", []CategoryStats{row("loop", 10, 10)}, Policy{Threshold: 0.5, MinEvidence: 5, MinSamples: 3, Known: []string{"loop", "goto"}},
			[]string{"few_samples:goto"}, []string{"goto: no results; fewer than 3 samples"}},
		{"max targets keeps forced", []CategoryStats{row("a", 0, 20), row("b", 0, 10), row("c", 0, 1)},
			Policy{Threshold: 0.5, MinEvidence: 5, MinSamples: 3, MaxTargets: 2, Forced: []string{"x", "y", "z"}},
			[]string{"forced:x", "forced:y", "forced:z"}, nil},
		{"max targets fills weak before few", []CategoryStats{row("a", 0, 20), row("b", 0, 10), row("c", 0, 1)},
			Policy{Threshold: 0.5, MinEvidence: 5, MinSamples: 3, MaxTargets: 2},
			[]string{"below_threshold:a", "below_threshold:b"}, nil},
		{"threshold zero picks nothing weak", []CategoryStats{row("a", 0, 50)}, Policy{Threshold: 0, MinEvidence: 1}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Select(tt.stats, tt.policy)
			var kinds []string
			for _, c := range got {
				kinds = append(kinds, string(c.Kind)+":"+c.Category)
				if c.Stats.Category != c.Category {
					t.Errorf("choice %s carries stats of %q", c.Category, c.Stats.Category)
				}
			}
			if !slices.Equal(kinds, tt.want) {
				t.Fatalf("choices %v, want %v", kinds, tt.want)
			}
			for i, r := range tt.reasons {
				if !strings.Contains(got[i].Reason, r) {
					t.Errorf("reason %d %q lacks %q", i, got[i].Reason, r)
				}
			}
			// Deterministic: the same input in another order gives the same.
			rev := slices.Clone(tt.stats)
			slices.Reverse(rev)
			again := Select(rev, tt.policy)
			if len(again) != len(got) {
				t.Fatalf("reordered input: %d choices, want %d", len(again), len(got))
			}
			for i := range got {
				if again[i].Category != got[i].Category || again[i].Reason != got[i].Reason {
					t.Errorf("reordered input: choice %d %+v, want %+v", i, again[i], got[i])
				}
			}
		})
	}
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	if err := DefaultPolicy().Validate(); err != nil {
		t.Fatalf("default: %v", err)
	}
	bad := []Policy{
		{Threshold: 1.5, MinEvidence: 1},
		{Threshold: -0.1, MinEvidence: 1},
		{Threshold: 0.5, MinEvidence: 0},
		{Threshold: 0.5, MinEvidence: 1, MinSamples: -1},
		{Threshold: 0.5, MinEvidence: 1, MaxTargets: -2},
	}
	for _, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
}

func TestMix(t *testing.T) {
	t.Parallel()
	stats := []CategoryStats{row("loop", 5, 6), row("switch_many", 1, 8), row(AllCategories, 6, 14)}
	weak := Choice{Category: "switch_many", Kind: ChoiceWeak}
	tests := []struct {
		name    string
		choices []Choice
		base    map[string]float64
		factor  float64
		want    map[string]float64
	}{
		{"no choices keeps the base", nil, map[string]float64{"loop": 2}, 10,
			map[string]float64{"*": 1, "loop": 2, "switch_many": 1}},
		{"chosen multiplied", []Choice{weak}, nil, 10,
			map[string]float64{"*": 1, "loop": 1, "switch_many": 10}},
		{"default weight from base", []Choice{weak}, map[string]float64{"*": 0.5, "struct": 3}, 4,
			map[string]float64{"*": 0.5, "loop": 0.5, "switch_many": 2, "struct": 3}},
		{"zero weight revived when chosen", []Choice{weak}, map[string]float64{"switch_many": 0}, 10,
			map[string]float64{"*": 1, "loop": 1, "switch_many": 10}},
		{"factor below one is one", []Choice{weak}, nil, 0.2,
			map[string]float64{"*": 1, "loop": 1, "switch_many": 1}},
		{"forced new category", []Choice{{Category: "avx", Kind: ChoiceForced}}, nil, 10,
			map[string]float64{"*": 1, "loop": 1, "switch_many": 1, "avx": 10}},
		{"bad base weights ignored", []Choice{weak}, map[string]float64{"loop": -1, "*": 2}, 3,
			map[string]float64{"*": 2, "loop": 2, "switch_many": 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Mix(stats, tt.choices, tt.base, tt.factor)
			if len(got) != len(tt.want) {
				t.Fatalf("mix %v, want %v", got, tt.want)
			}
			for k, w := range tt.want {
				if g, ok := got[k]; !ok || g != w {
					t.Errorf("mix[%s] = %v, want %v", k, g, w)
				}
			}
		})
	}
	shares := Shares(map[string]float64{"*": 1, "a": 3}, []string{"a", "b"})
	if shares["a"] != 0.75 || shares["b"] != 0.25 {
		t.Errorf("shares %v", shares)
	}
	if Shares(map[string]float64{"*": 0}, []string{"a"}) != nil {
		t.Error("all-zero shares not nil")
	}
}

func TestPlateau(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		prev, cur []CategoryStats
		margin    float64
		want      bool
	}{
		{"improved", []CategoryStats{row("a", 2, 10)}, []CategoryStats{row("a", 5, 10)}, 0.02, false},
		{"improved within margin", []CategoryStats{row("a", 50, 100)}, []CategoryStats{row("a", 51, 100)}, 0.02, true},
		{"exactly the margin is not more", []CategoryStats{row("a", 1, 4)}, []CategoryStats{row("a", 2, 4)}, 0.25, true},
		{"worse", []CategoryStats{row("a", 5, 10)}, []CategoryStats{row("a", 2, 10)}, 0, true},
		{"one of two improved", []CategoryStats{row("a", 5, 10), row("b", 1, 10)}, []CategoryStats{row("a", 4, 10), row("b", 6, 10)}, 0.1, false},
		{"nothing in common", []CategoryStats{row("a", 1, 10)}, []CategoryStats{row("b", 9, 10)}, 0, true},
		{"summary rows ignored", []CategoryStats{row(AllCategories, 1, 10)}, []CategoryStats{row(AllCategories, 9, 10)}, 0, true},
		{"empty", nil, nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Plateau(tt.prev, tt.cur, tt.margin); got != tt.want {
				t.Fatalf("Plateau = %v, want %v", got, tt.want)
			}
		})
	}
}
