// This file holds the statistics: pass rates per category with Wilson
// score intervals, so that 1 of 2 is not read like 500 of 1000.

package refinement

import (
	"encoding/json"
	"math"

	"github.com/kiln-dev/kiln/runs"
)

// CategoryStats are the figures of one category in one set of results.
//
// A result is counted by its outcome (runs.Verdict.Outcome): Pass counts
// complete passes, Fail failures, Pending the results that passed every
// stage that ran with stages left for another host (a GPU run on a CPU
// host), TaskFaults the results whose task's own reference failed. Only
// passes and fails are judged: the pass rate and its interval are over
// Judged, and a category with nothing judged has no rate (Rated).
type CategoryStats struct {
	Category string `json:"category"`
	// Total counts every result: Judged + Pending + TaskFaults.
	Total int `json:"total"`
	// Judged is Pass + Fail, the denominator of the pass rate.
	Judged     int `json:"judged"`
	Pass       int `json:"pass"`
	Fail       int `json:"fail"`
	Pending    int `json:"pending"`
	TaskFaults int `json:"task_faults"`
	// PassRate is Pass/Judged; 0 when nothing is judged, and null in
	// JSON then (no rate, not 0%).
	PassRate float64 `json:"pass_rate"`
	// Low and High bound the 95% Wilson score interval of the pass rate
	// ([0, 1] when nothing is judged).
	Low  float64 `json:"ci_low"`
	High float64 `json:"ci_high"`
	// Classes counts failures by class (task faults are no failures).
	Classes          map[string]int `json:"classes,omitempty"`
	PromptTokens     int64          `json:"prompt_tokens"`
	CompletionTokens int64          `json:"completion_tokens"`
	ReasoningTokens  int64          `json:"reasoning_tokens"`
	// LatencyMS is the summed model latency of the category's attempts.
	LatencyMS int64 `json:"latency_ms"`
	// WallMS is the summed wall time of the attempts (start to finish,
	// verification included) where both times are known.
	WallMS int64 `json:"wall_ms"`
	// Labels counts failures (and suspected cheating among passes) by
	// fine label; filled only when grouping with a Taxonomy (StatsBy).
	Labels map[string]int `json:"labels,omitempty"`
}

// Rated reports whether s has a pass rate: at least one judged result.
func (s CategoryStats) Rated() bool { return s.Judged > 0 }

// MarshalJSON writes pass_rate as null when nothing is judged.
func (s CategoryStats) MarshalJSON() ([]byte, error) {
	type plain CategoryStats
	out := struct {
		plain
		PassRate *float64 `json:"pass_rate"`
	}{plain: plain(s)}
	if s.Rated() {
		out.PassRate = &s.PassRate
	}
	return json.Marshal(out)
}

// count adds one result of outcome o (and failure class class) to s.
func (s *CategoryStats) count(o runs.Outcome, class string) {
	s.Total++
	switch o {
	case runs.OutcomePass:
		s.Pass++
	case runs.OutcomePending:
		s.Pending++
	case runs.OutcomeTaskFault:
		s.TaskFaults++
	default:
		s.Fail++
		s.Classes[class]++
	}
}

// rate fills Judged, PassRate, Low and High from the counts.
func (s *CategoryStats) rate() {
	s.Judged = s.Pass + s.Fail
	s.PassRate = 0
	if s.Judged > 0 {
		s.PassRate = float64(s.Pass) / float64(s.Judged)
	}
	s.Low, s.High = Wilson(s.Pass, s.Judged, 1.96)
}

// AllCategories is the pseudo-category that sums every result.
const AllCategories = "(all)"

// Stats groups results by category (a task with several categories counts in
// each) and returns them sorted by category, with the (all) row last.
func Stats(results []runs.Result) []CategoryStats {
	return StatsBy(results, ByCategory, GroupOptions{})
}

// Wilson returns the Wilson score interval of pass successes out of n trials
// at the normal quantile z (1.96 for 95%). With n == 0 it returns [0, 1]:
// nothing is known.
func Wilson(pass, n int, z float64) (low, high float64) {
	if n <= 0 {
		return 0, 1
	}
	p := float64(pass) / float64(n)
	fn := float64(n)
	z2 := z * z
	den := 1 + z2/fn
	centre := (p + z2/(2*fn)) / den
	half := z * math.Sqrt(p*(1-p)/fn+z2/(4*fn*fn)) / den
	low, high = centre-half, centre+half
	if low < 0 {
		low = 0
	}
	if high > 1 {
		high = 1
	}
	return low, high
}
