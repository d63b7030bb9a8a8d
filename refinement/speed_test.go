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
