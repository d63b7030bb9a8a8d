package refinement

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/runs"
)

// outcomeResult builds a result of one outcome: "pass", "pending",
// "task_fault" or a failure class.
func outcomeResult(key, outcome string, cats ...string) runs.Result {
	v := runs.Verdict{Pass: true, Stage: "run", Stages: []byte(`[{"name":"compile","ok":true},{"name":"run","ok":true}]`)}
	switch outcome {
	case "pass":
	case "pending":
		v.Stages = []byte(`[{"name":"compile","ok":true},{"name":"run","ok":false,"skipped":true}]`)
	case "task_fault":
		v = runs.Verdict{Class: runs.ClassReferenceError, Stage: "reference", Diagnostic: "reference timed out after 120s"}
	default:
		v = runs.Verdict{Class: outcome, Stage: "run", Diagnostic: "mismatch at element 3: got 1 want 2"}
	}
	return runs.Result{Task: runs.Task{ID: key, Key: key, Categories: cats}, Attempt: runs.Attempt{Answer: "answer of " + key}, Verdict: v}
}

// Pending results and task faults are neither passes nor failures: rates
// are over judged results, and a category with nothing judged has none.
func TestStatsOutcomes(t *testing.T) {
	t.Parallel()
	results := []runs.Result{
		outcomeResult("a1", "pass", "a"),
		outcomeResult("a2", "wrong_output", "a"),
		outcomeResult("a3", "pending", "a"),
		outcomeResult("a4", "task_fault", "a"),
		outcomeResult("p1", "pending", "p"),
		outcomeResult("p2", "pending", "p"),
		outcomeResult("t1", "task_fault", "t"),
	}
	stats := StatsBy(results, ByCategory, GroupOptions{Taxonomy: Generic().Taxonomy})
	type fig struct{ total, judged, pass, fail, pending, faults int }
	want := map[string]fig{
		"a":           {4, 2, 1, 1, 1, 1},
		"p":           {2, 0, 0, 0, 2, 0},
		"t":           {1, 0, 0, 0, 0, 1},
		AllCategories: {7, 2, 1, 1, 3, 2},
	}
	for _, s := range stats {
		w, ok := want[s.Category]
		if !ok {
			t.Errorf("unexpected row %s", s.Category)
			continue
		}
		got := fig{s.Total, s.Judged, s.Pass, s.Fail, s.Pending, s.TaskFaults}
		if got != w {
			t.Errorf("%s: %+v, want %+v", s.Category, got, w)
		}
		if s.Rated() != (w.judged > 0) {
			t.Errorf("%s: rated %v", s.Category, s.Rated())
		}
		if s.Classes[runs.ClassReferenceError] != 0 || len(s.Classes) != w.fail {
			t.Errorf("%s: classes %v: a task fault is no failure class", s.Category, s.Classes)
		}
		for l := range s.Labels {
			if l == "task.reference_error" || l == LabelPass {
				t.Errorf("%s: label %s counted", s.Category, l)
			}
		}
	}
	a, _ := Find(stats, "a")
	if a.PassRate != 0.5 {
		t.Errorf("a: pass rate %v, want 1 of 2 judged", a.PassRate)
	}
	if lo, hi := Wilson(1, 2, 1.96); a.Low != lo || a.High != hi {
		t.Errorf("a: interval [%v, %v], want Wilson of 1/2", a.Low, a.High)
	}
	p, _ := Find(stats, "p")
	if p.PassRate != 0 || p.Low != 0 || p.High != 1 {
		t.Errorf("p (only pending): rate %v [%v, %v], want none", p.PassRate, p.Low, p.High)
	}
	// JSON: pass counts complete passes only; no rate is null, not 0 or 1.
	for _, tc := range []struct {
		s    CategoryStats
		want string
	}{{a, `"pass_rate":0.5`}, {p, `"pass_rate":null`}} {
		b, err := json.Marshal(tc.s)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), tc.want) || strings.Count(string(b), `"pass_rate"`) != 1 {
			t.Errorf("%s JSON %s lacks %s", tc.s.Category, b, tc.want)
		}
		var back map[string]any
		if err := json.Unmarshal(b, &back); err != nil || back["pass"] != float64(tc.s.Pass) || back["pending"] != float64(tc.s.Pending) ||
			back["task_faults"] != float64(tc.s.TaskFaults) || back["judged"] != float64(tc.s.Judged) {
			t.Errorf("%s JSON %s (%v)", tc.s.Category, b, err)
		}
	}
}

// Refinement never targets a category for its pending results or task
// faults, and never shows a task fault as a failing example.
func TestSelectAndExamplesSkipPendingAndTaskFaults(t *testing.T) {
	t.Parallel()
	var results []runs.Result
	for i := range 10 {
		results = append(results,
			outcomeResult(fmt.Sprintf("p%d", i), "pending", "gpu_only"),
			outcomeResult(fmt.Sprintf("t%d", i), "task_fault", "broken_problems"),
			outcomeResult(fmt.Sprintf("w%d", i), "wrong_output", "weak"))
	}
	stats := Stats(results)
	choices := Select(stats, DefaultPolicy())
	if len(choices) != 1 || choices[0].Category != "weak" || choices[0].Kind != ChoiceWeak {
		t.Fatalf("choices %+v, want only weak (below threshold)", choices)
	}
	if !strings.Contains(choices[0].Reason, "0/10 pass") {
		t.Errorf("reason %q", choices[0].Reason)
	}
	// Pending results and task faults were drawn: they count as samples,
	// so a category of them is not targeted for want of samples either;
	// one with fewer results is, and says what it holds.
	few := Select(Stats([]runs.Result{
		outcomeResult("x1", "pending", "waiting"), outcomeResult("x2", "pending", "waiting"), outcomeResult("x3", "wrong_output", "waiting"),
		outcomeResult("y1", "task_fault", "faulty"), outcomeResult("y2", "task_fault", "faulty"), outcomeResult("y3", "task_fault", "faulty"),
		outcomeResult("z1", "task_fault", "new"), outcomeResult("z2", "pending", "new"),
	}), DefaultPolicy())
	if len(few) != 1 || few[0].Category != "new" || few[0].Kind != ChoiceFewSamples ||
		!strings.Contains(few[0].Reason, "new: no judged result; 1 pending; 1 task faults; only 2 < 3 samples") {
		t.Errorf("few-sample choices %+v", few)
	}
	for _, cat := range []string{"gpu_only", "broken_problems", "weak"} {
		ex := ExamplesFor(results, cat, ExampleOptions{Max: 5})
		for _, e := range ex {
			if !strings.HasPrefix(e.TaskKey, "w") {
				t.Errorf("%s: example %s is no failure", cat, e.TaskKey)
			}
		}
		if (cat == "weak") != (len(ex) > 0) {
			t.Errorf("%s: %d examples", cat, len(ex))
		}
	}
}

// Lift needs judged results on both sides; a round of only pending
// results has no point in the series and no lift.
func TestReportSkipsUnratedRounds(t *testing.T) {
	t.Parallel()
	var results []runs.Result
	add := func(round int, key, outcome string) {
		r := outcomeResult(key, outcome, "k")
		r.Task.Round = round
		results = append(results, r)
	}
	add(0, "r0/a", "wrong_output")
	add(0, "r0/b", "pass")
	add(1, "r1/a", "pending")
	add(2, "r2/a", "pass")
	rep := BuildReport(ReportInput{Results: results, NoFeatures: true})
	if len(rep.Rounds) != 3 {
		t.Fatalf("%d rounds", len(rep.Rounds))
	}
	r1 := rep.Rounds[1].Categories[0]
	if r1.Lift != nil || r1.Before == nil || r1.After.Rated() {
		t.Errorf("round 1 (only pending): %+v", r1)
	}
	r2 := rep.Rounds[2].Categories[0]
	if r2.BeforeRound == nil || *r2.BeforeRound != 0 || r2.Lift == nil || *r2.Lift != 0.5 {
		t.Errorf("round 2 against round 0 (the last judged one): %+v", r2)
	}
	for _, s := range rep.Series {
		for _, p := range s.Points {
			if p.Round == 1 || p.Judged == 0 {
				t.Errorf("series %s has a point without judged results: %+v", s.Name, p)
			}
		}
	}
}

// Kernel-speed figures and pass@k count judged answers only: a task
// fault with a correctness figure is left out.
func TestSpeedStatsSkipTaskFaults(t *testing.T) {
	t.Parallel()
	right := outcomeResult("r0/k#0", "pass", "k")
	right.Verdict.Measurements = map[string]float64{"correct": 1, "speedup": 2}
	wrong := outcomeResult("r0/k#1", "wrong_output", "k")
	wrong.Verdict.Measurements = map[string]float64{"correct": 0}
	fault := outcomeResult("r0/k#2", "task_fault", "k")
	fault.Verdict.Measurements = map[string]float64{"correct": 0}
	st := SpeedStatsBy([]runs.Result{right, wrong, fault}, ByCategory)
	if len(st) != 2 {
		t.Fatalf("speed stats %+v", st)
	}
	all := st[1]
	if all.Judged != 2 || all.Exec.Count != 1 || all.Exec.Rate != 0.5 || all.PassAtK["1"] != 0.5 || all.PassAtK["2"] != 1 {
		t.Errorf("speed %+v, want 1 of 2 judged (the task fault left out)", all)
	}
}
