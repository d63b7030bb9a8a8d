package refinement

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kiln-dev/kiln/runs"
)

// Kernel-speed figures (KernelBench's metrics) of lanes whose verdicts
// measure "correct" (1 or 0) and "speedup" (reference time / candidate
// time): the torch2cuda lane. A verdict without a "correct" measurement
// (a pending one, or another lane's) is not counted, and neither is a
// pending verdict or a task fault (the task's reference failed) that has
// one.

// FastThresholds are the speedup thresholds p of fast_p.
var FastThresholds = []float64{0, 1, 1.5, 2}

// Rate is a count out of a total with its 95% Wilson interval.
type Rate struct {
	Count int     `json:"count"`
	Rate  float64 `json:"rate"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

func rateOf(count, total int) Rate {
	r := Rate{Count: count}
	if total > 0 {
		r.Rate = float64(count) / float64(total)
	}
	r.Low, r.High = Wilson(count, total, 1.96)
	return r
}

// SpeedStats are one group's kernel-speed figures.
type SpeedStats struct {
	Category string `json:"category"`
	// Judged counts the answers with a correctness figure.
	Judged int `json:"judged"`
	// Exec is the fraction of answers that are correct and not suspected
	// of cheating.
	Exec Rate `json:"exec"`
	// Fast holds fast_p per threshold ("fast_0", "fast_1", "fast_1.5",
	// "fast_2"): the fraction of answers that are correct, not suspected,
	// and faster than the reference by more than p.
	Fast map[string]Rate `json:"fast"`
	// GeoMeanSpeedup is the geometric mean speedup of the correct ones
	// (0 when none has a speedup).
	GeoMeanSpeedup float64 `json:"geomean_speedup"`
	// Tasks counts distinct tasks; PassAtK is the unbiased pass@k (a
	// pass: the verdict passed) averaged over tasks with at least k
	// answers, for k up to the fewest answers of a task.
	Tasks   int                `json:"tasks"`
	PassAtK map[string]float64 `json:"pass_at_k,omitempty"`
}

// FastKey is the Fast map's key of threshold p.
func FastKey(p float64) string { return "fast_" + strconv.FormatFloat(p, 'f', -1, 64) }

// judgedSpeed reports whether r has a correctness figure, and whether it
// counts as correct (correct and not suspected of cheating).
func judgedSpeed(r runs.Result) (judged, correct bool) {
	c, ok := r.Verdict.Measurements["correct"]
	if !ok || !r.Verdict.Outcome().Judged() {
		return false, false
	}
	suspect := r.Verdict.Class == "suspected_cheating" || (r.Verdict.Labels != nil && r.Verdict.Labels.Suspicion != "")
	return true, c == 1 && !suspect
}

// HasSpeed reports whether any result has kernel-speed figures.
func HasSpeed(results []runs.Result) bool {
	for _, r := range results {
		if j, _ := judgedSpeed(r); j {
			return true
		}
	}
	return false
}

// SpeedStatsBy computes the figures per key (every category of a task,
// for ByCategory) and for all results (AllCategories, last).
func SpeedStatsBy(results []runs.Result, key KeyFunc) []SpeedStats {
	groups := map[string][]runs.Result{}
	var all []runs.Result
	for _, r := range results {
		if j, _ := judgedSpeed(r); !j {
			continue
		}
		all = append(all, r)
		for _, k := range key(r) {
			groups[k] = append(groups[k], r)
		}
	}
	if len(all) == 0 {
		return nil
	}
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []SpeedStats
	for _, k := range names {
		out = append(out, speedOf(k, groups[k]))
	}
	return append(out, speedOf(AllCategories, all))
}

func speedOf(name string, rs []runs.Result) SpeedStats {
	s := SpeedStats{Category: name, Judged: len(rs), Fast: map[string]Rate{}}
	correct := 0
	fast := make([]int, len(FastThresholds))
	logSum, nSpeed := 0.0, 0
	perTask := map[string][2]int{} // task -> answers, passes
	for _, r := range rs {
		_, ok := judgedSpeed(r)
		t := taskIdentity(r.Task)
		c := perTask[t]
		c[0]++
		if r.Verdict.Outcome() == runs.OutcomePass {
			c[1]++
		}
		perTask[t] = c
		if !ok {
			continue
		}
		correct++
		sp, has := r.Verdict.Measurements["speedup"]
		if has && sp > 0 && !math.IsInf(sp, 0) && !math.IsNaN(sp) {
			logSum += math.Log(sp)
			nSpeed++
		}
		for i, p := range FastThresholds {
			if has && sp > p {
				fast[i]++
			}
		}
	}
	s.Exec = rateOf(correct, len(rs))
	for i, p := range FastThresholds {
		s.Fast[FastKey(p)] = rateOf(fast[i], len(rs))
	}
	if nSpeed > 0 {
		s.GeoMeanSpeedup = math.Exp(logSum / float64(nSpeed))
	}
	s.Tasks = len(perTask)
	minN := math.MaxInt
	for _, c := range perTask {
		minN = min(minN, c[0])
	}
	if len(perTask) > 0 {
		s.PassAtK = map[string]float64{}
		for k := 1; k <= minN; k++ {
			sum := 0.0
			for _, c := range perTask {
				sum += PassAtK(c[0], c[1], k)
			}
			s.PassAtK[strconv.Itoa(k)] = sum / float64(len(perTask))
		}
	}
	return s
}

// taskIdentity is the task an answer belongs to: its key without the
// sample suffix ("r0/level1/001_x#2" -> "r0/level1/001_x").
func taskIdentity(t runs.Task) string {
	if i := strings.LastIndexByte(t.Key, '#'); i > 0 {
		return t.Key[:i]
	}
	return t.Key
}

// PassAtK is the unbiased estimator of pass@k for a task with n answers of
// which c pass: 1 - C(n-c, k) / C(n, k) (Chen et al., 2021).
func PassAtK(n, c, k int) float64 {
	if k <= 0 || n <= 0 || k > n {
		return 0
	}
	if n-c < k {
		return 1
	}
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}
