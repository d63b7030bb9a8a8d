package refinement

import (
	"math"
	"testing"

	"github.com/kiln-dev/kiln/runs"
)

func TestPassAtK(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n, c, k int
		want    float64
	}{
		{5, 2, 1, 0.4}, {5, 2, 2, 0.7}, {5, 0, 3, 0}, {5, 5, 1, 1}, {4, 2, 3, 1}, {3, 1, 4, 0},
	} {
		if got := PassAtK(tc.n, tc.c, tc.k); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("pass@%d of %d/%d = %v, want %v", tc.k, tc.c, tc.n, got, tc.want)
		}
	}
}

// TestSpeedStats checks the kernel-speed figures on a set with known
// answers: a fast correct kernel, a slow correct one, a wrong one, a
// correct but suspected one (never counted), and a pending one (not
// judged); two samples of each of two tasks.
func TestSpeedStats(t *testing.T) {
	t.Parallel()
	res := func(key, cat string, pass bool, class string, meas map[string]float64) runs.Result {
		return runs.Result{Task: runs.Task{Key: key, Categories: []string{cat}},
			Verdict: runs.Verdict{Pass: pass, Class: class, Measurements: meas}}
	}
	rs := []runs.Result{
		res("r0/a#0", "matmul", true, "", map[string]float64{"correct": 1, "speedup": 2}),
		res("r0/a#1", "matmul", false, "slower", map[string]float64{"correct": 1, "speedup": 0.5}),
		res("r0/b#0", "matmul", false, "wrong_output", map[string]float64{"correct": 0}),
		res("r0/b#1", "matmul", false, "suspected_cheating", map[string]float64{"correct": 1, "speedup": 40}),
		res("r0/c#0", "conv", true, "", map[string]float64{"speedup": 3}), // pending: no correctness figure
	}
	stats := SpeedStatsBy(rs, ByCategory)
	if len(stats) != 2 || stats[0].Category != "matmul" || stats[1].Category != AllCategories {
		t.Fatalf("groups: %+v", stats)
	}
	s := stats[0]
	if s.Judged != 4 || s.Exec.Count != 2 || s.Exec.Rate != 0.5 || s.Tasks != 2 {
		t.Errorf("judged %d exec %+v tasks %d", s.Judged, s.Exec, s.Tasks)
	}
	want := map[string]int{"fast_0": 2, "fast_1": 1, "fast_1.5": 1, "fast_2": 0}
	for k, n := range want {
		if s.Fast[k].Count != n || s.Fast[k].Rate != float64(n)/4 || s.Fast[k].Low > s.Fast[k].Rate || s.Fast[k].High < s.Fast[k].Rate {
			t.Errorf("%s: %+v, want %d of 4", k, s.Fast[k], n)
		}
	}
	if math.Abs(s.GeoMeanSpeedup-1) > 1e-12 {
		t.Errorf("geomean %v, want 1 (2 and 0.5)", s.GeoMeanSpeedup)
	}
	// Task a: 1 pass of 2; task b: 0 of 2.
	if math.Abs(s.PassAtK["1"]-0.25) > 1e-12 || math.Abs(s.PassAtK["2"]-0.5) > 1e-12 {
		t.Errorf("pass@k %v, want 1: 0.25, 2: 0.5", s.PassAtK)
	}
	if HasSpeed(rs[4:]) || !HasSpeed(rs) || SpeedStatsBy(rs[4:], ByCategory) != nil {
		t.Error("a pending result counted as judged")
	}
}

// TestReportFast1: the refinement report gives each category's fast_1
// before and after, with intervals, beside its pass rate; a category
// without speed figures (pending verdicts only) has none.
func TestReportFast1(t *testing.T) {
	t.Parallel()
	res := func(round int, key, cat string, speedup float64, pending bool) runs.Result {
		v := runs.Verdict{Pass: true, Measurements: map[string]float64{"correct": 1, "speedup": speedup}}
		if speedup == 0 {
			v = runs.Verdict{Class: "wrong_output", Measurements: map[string]float64{"correct": 0}}
		}
		if pending {
			v = runs.Verdict{Pass: true, Stages: []byte(`[{"name":"gpu-judge","skipped":true}]`)}
		}
		return runs.Result{Task: runs.Task{Round: round, Key: key, Categories: []string{cat}}, Verdict: v}
	}
	rs := []runs.Result{
		res(0, "r0/a#0", "matmul", 2, false), res(0, "r0/b#0", "matmul", 0.5, false),
		res(0, "r0/c#0", "matmul", 0, false), res(0, "r0/d#0", "matmul", 0, false),
		res(1, "r1/a#0", "matmul", 2, false), res(1, "r1/b#0", "matmul", 1.5, false),
		res(1, "r1/c#0", "matmul", 3, false), res(1, "r1/d#0", "matmul", 0, false),
		res(0, "r0/e#0", "conv", 0, true), res(1, "r1/e#0", "conv", 0, true),
	}
	rep := BuildReport(ReportInput{Results: rs, Chosen: map[int][]Choice{0: {{Category: "matmul"}}}})
	if len(rep.Rounds) != 2 {
		t.Fatalf("%d rounds", len(rep.Rounds))
	}
	var mm, conv *Delta
	for i, d := range rep.Rounds[1].Categories {
		switch d.Category {
		case "matmul":
			mm = &rep.Rounds[1].Categories[i]
		case "conv":
			conv = &rep.Rounds[1].Categories[i]
		}
	}
	if mm == nil || !mm.Targeted || mm.Fast1Before == nil || mm.Fast1After == nil {
		t.Fatalf("matmul delta %+v", mm)
	}
	if b, a := *mm.Fast1Before, *mm.Fast1After; b.Count != 1 || b.Rate != 0.25 || a.Count != 3 || a.Rate != 0.75 ||
		b.Low > b.Rate || b.High < b.Rate || a.Low > a.Rate || a.High < a.Rate {
		t.Errorf("fast_1 before %+v after %+v, want 1/4 and 3/4", b, a)
	}
	if conv == nil || conv.Fast1After != nil || conv.Fast1Before != nil {
		t.Errorf("conv (pending only) has fast_1: %+v", conv)
	}
}
