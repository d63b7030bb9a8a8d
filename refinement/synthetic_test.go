package refinement

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs"
)

// A small synthetic campaign with figures computed by hand (Wilson bounds
// from the formula, z = 1.96, checked with a calculator):
//
//	round 0: switch_many 1/8 (CI 2.24-47.09%), loop 5/6 (43.65-96.99%),
//	         bitops 0/1 (one of the loop tasks), float_const 2/2; all 8/16
//	round 1: switch_many 6/10 (31.27-83.18%), goto 1/5, loop 2/2; all 9/17
//
// Every attempt costs 100 prompt, 50 completion, 20 reasoning tokens,
// 1000 ms model latency and 2 s wall time.
const (
	srcSwitch = "int f(int x) { switch (x) { case 1: return 10; case 2: return 20; case 3: return 30; case 4: return 40; case 5: return 50; default: return 0; } }"
	srcLoop   = "int f(int n) { int s = 0; for (int i = 0; i < n; i++) s += i; return s; }"
	srcBitops = "unsigned f(unsigned n) { unsigned s = 0; for (unsigned i = 0; i < n; i++) s ^= i << 1; return s; }"
	srcFloat  = "double f(double x) { return x * 6.0; }"
	srcGoto   = "int f(int x) { if (x) goto out; x = 2; out: return x; }"
)

const (
	diagNumeric  = "the output differs from the reference:\nline 1: expected \"2.500000\"\n        got      \"2.500001\"\n(expected 1 lines, got 1)"
	diagMnemonic = "answer.s:3: Error: no such instruction: `mulsss -16(%rbp),%xmm0'"
	diagSegv     = "the program killed by signal SIGSEGV (segmentation fault). Before that it printed 0 of the 4 expected output lines correctly."
)

var synthStart = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func synthResult(round, n int, src string, pass bool, class, diag string, cats ...string) runs.Result {
	return runs.Result{
		Task: runs.Task{ID: fmt.Sprintf("t%d-%d", round, n), Key: fmt.Sprintf("r%d/item%02d", round, n), Round: round, Lane: toyLane,
			Files: map[string]string{"function.c": src, "driver.c": "int main(void) { return 0; }"}, Meta: map[string]string{"function": "f"},
			Categories: cats},
		Attempt: runs.Attempt{
			Answer:     "\t.globl f\nf:\n\tret\n",
			Usage:      runs.Usage{PromptTokens: 100, CompletionTokens: 50, ReasoningTokens: 20, LatencyMS: 1000},
			StartedAt:  synthStart,
			FinishedAt: synthStart.Add(2 * time.Second),
		},
		Verdict: runs.Verdict{Pass: pass, Class: class, Diagnostic: diag},
	}
}

func synthCampaign() []runs.Result {
	var rs []runs.Result
	n := 0
	add := func(round int, src string, pass bool, class, diag string, cats ...string) {
		n++
		rs = append(rs, synthResult(round, n, src, pass, class, diag, cats...))
	}
	// Round 0.
	add(0, srcSwitch, true, "", "", "switch_many")
	for i := 0; i < 4; i++ {
		add(0, srcSwitch, false, ClassWrongOutput, diagNumeric, "switch_many")
	}
	for i := 0; i < 3; i++ {
		add(0, srcSwitch, false, ClassAssembleError, diagMnemonic, "switch_many")
	}
	for i := 0; i < 5; i++ {
		add(0, srcLoop, true, "", "", "loop")
	}
	add(0, srcBitops, false, ClassCrash, diagSegv, "loop", "bitops")
	add(0, srcFloat, true, "", "", "float_const")
	add(0, srcFloat, true, "", "", "float_const")
	// Round 1.
	for i := 0; i < 10; i++ {
		if i < 6 {
			add(1, srcSwitch, true, "", "", "switch_many")
		} else {
			add(1, srcSwitch, false, ClassWrongOutput, diagNumeric, "switch_many")
		}
	}
	for i := 0; i < 5; i++ {
		if i == 0 {
			add(1, srcGoto, true, "", "", "goto")
		} else {
			add(1, srcGoto, false, ClassCrash, diagSegv, "goto")
		}
	}
	add(1, srcLoop, true, "", "", "loop")
	add(1, srcLoop, true, "", "", "loop")
	return rs
}

type wantRow struct {
	total, pass int
	low, high   float64
}

func checkRows(t *testing.T, what string, got []CategoryStats, want map[string]wantRow) {
	t.Helper()
	if len(got) != len(want) {
		names := make([]string, 0, len(got))
		for _, s := range got {
			names = append(names, s.Category)
		}
		t.Fatalf("%s: rows %v, want %d rows", what, names, len(want))
	}
	for _, s := range got {
		w, ok := want[s.Category]
		if !ok {
			t.Fatalf("%s: unexpected row %q", what, s.Category)
		}
		if s.Total != w.total || s.Pass != w.pass {
			t.Errorf("%s %s: %d/%d, want %d/%d", what, s.Category, s.Pass, s.Total, w.pass, w.total)
		}
		if math.Abs(s.PassRate-float64(w.pass)/float64(w.total)) > 1e-12 {
			t.Errorf("%s %s: rate %v", what, s.Category, s.PassRate)
		}
		if w.high != 0 && (math.Abs(s.Low-w.low) > 1e-4 || math.Abs(s.High-w.high) > 1e-4) {
			t.Errorf("%s %s: CI [%.4f, %.4f], want [%.4f, %.4f]", what, s.Category, s.Low, s.High, w.low, w.high)
		}
		if s.PromptTokens != int64(100*s.Total) || s.CompletionTokens != int64(50*s.Total) || s.ReasoningTokens != int64(20*s.Total) ||
			s.LatencyMS != int64(1000*s.Total) || s.WallMS != int64(2000*s.Total) {
			t.Errorf("%s %s: cost %+v", what, s.Category, s)
		}
	}
}

func TestSyntheticCampaign(t *testing.T) {
	t.Parallel()
	results := synthCampaign()
	tax := toyLanes.Taxonomy
	rounds := StatsByRound(results, ByCategory, GroupOptions{Taxonomy: tax})
	if len(rounds) != 2 || rounds[0].Round != 0 || rounds[1].Round != 1 {
		t.Fatalf("rounds %+v", rounds)
	}
	r0, r1 := rounds[0].Stats, rounds[1].Stats
	checkRows(t, "round 0", r0, map[string]wantRow{
		"switch_many": {8, 1, 0.0224, 0.4709},
		"loop":        {6, 5, 0.4365, 0.9699},
		"bitops":      {1, 0, 0, 0.7935},
		"float_const": {2, 2, 0.3424, 1},
		AllCategories: {16, 8, 0.2800, 0.7200},
	})
	checkRows(t, "round 1", r1, map[string]wantRow{
		"switch_many": {10, 6, 0.3127, 0.8318},
		"goto":        {5, 1, 0.0362, 0.6245},
		"loop":        {2, 2, 0.3424, 1},
		AllCategories: {17, 9, 0.3096, 0.7384},
	})
	sm, _ := Find(r0, "switch_many")
	if sm.Labels["wrong.numeric"] != 4 || sm.Labels["asm.mnemonic"] != 3 || len(sm.Labels) != 2 {
		t.Errorf("switch_many labels %v", sm.Labels)
	}
	if sm.Classes[ClassWrongOutput] != 4 || sm.Classes[ClassAssembleError] != 3 {
		t.Errorf("switch_many classes %v", sm.Classes)
	}

	// Features of round 0, from the sources.
	feat := StatsByRound(results, ByFeature(toyLanes.Features), GroupOptions{})
	checkRows(t, "features round 0", feat[0].Stats, map[string]wantRow{
		"switch": {8, 1, 0.0224, 0.4709}, "switch_many": {8, 1, 0.0224, 0.4709},
		"loop": {6, 5, 0.4365, 0.9699}, "loop_for": {6, 5, 0.4365, 0.9699},
		"bitops": {1, 0, 0, 0.7935}, "unsigned": {1, 0, 0, 0.7935},
		"float_const": {2, 2, 0.3424, 1}, "float_type": {2, 2, 0.3424, 1},
		AllCategories: {16, 8, 0.2800, 0.7200},
	})

	// Selection after round 0.
	p := Policy{Threshold: 0.5, MinEvidence: 5, MinSamples: 3, Forced: []string{"goto"}}
	choices := Select(r0, p)
	var got []string
	for _, c := range choices {
		got = append(got, string(c.Kind)+":"+c.Category)
	}
	want := []string{"forced:goto", "below_threshold:switch_many", "few_samples:bitops", "few_samples:float_const"}
	if !slices.Equal(got, want) {
		t.Fatalf("choices %v, want %v", got, want)
	}
	if r := choices[1].Reason; r != "switch_many: 1/8 pass (12%, 95% CI 2-47%); the upper bound 47% is below the threshold 50%, with 8 >= 5 samples" {
		t.Errorf("reason %q", r)
	}
	if r := choices[0].Reason; r != "goto: forced by the user; no results yet" {
		t.Errorf("reason %q", r)
	}
	if r := choices[2].Reason; r != "bitops: 0/1 pass (0%, 95% CI 0-79%); only 1 < 3 samples, too few to judge" {
		t.Errorf("reason %q", r)
	}

	// Mixing.
	mix := Mix(r0, choices, nil, 10)
	wantMix := map[string]float64{"*": 1, "loop": 1, "switch_many": 10, "bitops": 10, "float_const": 10, "goto": 10}
	if len(mix) != len(wantMix) {
		t.Fatalf("mix %v, want %v", mix, wantMix)
	}
	for k, w := range wantMix {
		if mix[k] != w {
			t.Errorf("mix[%s] = %v, want %v", k, mix[k], w)
		}
	}

	// Plateau: switch_many went from 12.5% to 60%.
	if Plateau(r0, r1, 0.02) {
		t.Error("plateau after a 47.5-point lift")
	}
	if !Plateau(r1, r1, 0) {
		t.Error("no plateau between identical rounds")
	}

	// The report.
	rep := BuildReport(ReportInput{Lane: toyLane, Results: results, Chosen: map[int][]Choice{0: choices}, Lanes: toyLanes})
	if len(rep.Rounds) != 2 {
		t.Fatalf("report rounds %d", len(rep.Rounds))
	}
	r0rep, r1rep := rep.Rounds[0], rep.Rounds[1]
	if r0rep.Overall.Pass != 8 || r0rep.Cost != (Cost{16, 1600, 800, 320, 16000, 32000}) {
		t.Errorf("round 0 overall %d pass, cost %+v", r0rep.Overall.Pass, r0rep.Cost)
	}
	if rep.Total != (Cost{33, 3300, 1650, 660, 33000, 66000}) {
		t.Errorf("total cost %+v", rep.Total)
	}
	if !slices.Equal(r1rep.Labels, []LabelCount{{"crash.segv", 4}, {"wrong.numeric", 4}}) {
		t.Errorf("round 1 labels %v", r1rep.Labels)
	}
	if !slices.Equal(r0rep.Labels, []LabelCount{{"wrong.numeric", 4}, {"asm.mnemonic", 3}, {"crash.segv", 1}}) {
		t.Errorf("round 0 labels %v", r0rep.Labels)
	}
	if len(r0rep.Chosen) != 4 || r1rep.Chosen != nil {
		t.Errorf("chosen: round 0 %d, round 1 %d", len(r0rep.Chosen), len(r1rep.Chosen))
	}
	deltas := map[string]Delta{}
	for _, d := range r1rep.Categories {
		deltas[d.Category] = d
	}
	if len(deltas) != 3 {
		t.Fatalf("round 1 deltas %v", r1rep.Categories)
	}
	d := deltas["switch_many"]
	if d.Lift == nil || math.Abs(*d.Lift-0.475) > 1e-9 || !d.Targeted || *d.BeforeRound != 0 || d.Before.Pass != 1 {
		t.Fatalf("switch_many delta %+v", d)
	}
	// Newcombe: 0.475 - sqrt((0.6-0.3127)^2 + (0.4709-0.125)^2), 0.475 + sqrt((0.8318-0.6)^2 + (0.125-0.0224)^2).
	if math.Abs(*d.LiftLow-0.0253) > 1e-3 || math.Abs(*d.LiftHigh-0.7285) > 1e-3 {
		t.Errorf("switch_many lift CI [%.4f, %.4f], want [0.0253, 0.7285]", *d.LiftLow, *d.LiftHigh)
	}
	if d := deltas["loop"]; d.Lift == nil || math.Abs(*d.Lift-1.0/6) > 1e-9 || d.Targeted ||
		math.Abs(*d.LiftLow-(-0.5050)) > 1e-3 || math.Abs(*d.LiftHigh-0.5635) > 1e-3 {
		t.Errorf("loop delta %+v", d)
	}
	if d := deltas["goto"]; d.Lift != nil || d.Before != nil || !d.Targeted {
		t.Errorf("goto delta %+v", d)
	}
	if len(r0rep.Categories) != 4 || r0rep.Categories[0].Lift != nil || r0rep.Features == nil {
		t.Errorf("round 0 deltas %+v", r0rep.Categories)
	}
	// Series: bitops, float_const, goto, loop, switch_many, (all).
	var names []string
	for _, s := range rep.Series {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"bitops", "float_const", "goto", "loop", "switch_many", AllCategories}) {
		t.Fatalf("series %v", names)
	}
	if sm := rep.Series[4]; len(sm.Points) != 2 || sm.Points[0].PassRate != 0.125 || sm.Points[1].PassRate != 0.6 {
		t.Errorf("switch_many series %+v", sm)
	}
	// JSON round trip keeps the figures.
	raw, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Rounds[1].Categories[2].Category != "switch_many" || *back.Rounds[1].Categories[2].Lift != 0.475 {
		t.Errorf("round trip lost the lift: %+v", back.Rounds[1].Categories[2])
	}
}
