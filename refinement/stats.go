// Package refinement turns a round's verdicts into knowledge and new work:
// per-category statistics with confidence intervals, the failure taxonomy,
// long-tail selection and resynthesis of targeted tasks for the next round.
//
// This file holds the statistics: pass rates per category with Wilson score
// intervals, so that 1 of 2 is not read like 500 of 1000.
package refinement

import (
	"math"
	"sort"

	"github.com/kiln-dev/kiln/runs"
)

// CategoryStats are the figures of one category in one set of results.
type CategoryStats struct {
	Category string `json:"category"`
	Total    int    `json:"total"`
	Pass     int    `json:"pass"`
	// PassRate is Pass/Total (0 when Total is 0).
	PassRate float64 `json:"pass_rate"`
	// Low and High bound the 95% Wilson score interval of the pass rate.
	Low  float64 `json:"ci_low"`
	High float64 `json:"ci_high"`
	// Classes counts failures by class.
	Classes          map[string]int `json:"classes,omitempty"`
	PromptTokens     int64          `json:"prompt_tokens"`
	CompletionTokens int64          `json:"completion_tokens"`
	ReasoningTokens  int64          `json:"reasoning_tokens"`
	// LatencyMS is the summed model latency of the category's attempts.
	LatencyMS int64 `json:"latency_ms"`
}

// AllCategories is the pseudo-category that sums every result.
const AllCategories = "(all)"

// Stats groups results by category (a task with several categories counts in
// each) and returns them sorted by category, with the (all) row last.
func Stats(results []runs.Result) []CategoryStats {
	by := map[string]*CategoryStats{}
	get := func(c string) *CategoryStats {
		s, ok := by[c]
		if !ok {
			s = &CategoryStats{Category: c, Classes: map[string]int{}}
			by[c] = s
		}
		return s
	}
	for _, r := range results {
		cats := r.Task.Categories
		if len(cats) == 0 {
			cats = []string{"(none)"}
		}
		for _, c := range append(append([]string(nil), cats...), AllCategories) {
			s := get(c)
			s.Total++
			if r.Verdict.Pass {
				s.Pass++
			} else {
				s.Classes[r.Verdict.Class]++
			}
			u := r.Attempt.Usage
			s.PromptTokens += int64(u.PromptTokens)
			s.CompletionTokens += int64(u.CompletionTokens)
			s.ReasoningTokens += int64(u.ReasoningTokens)
			s.LatencyMS += u.LatencyMS
		}
	}
	out := make([]CategoryStats, 0, len(by))
	for _, s := range by {
		s.Low, s.High = Wilson(s.Pass, s.Total, 1.96)
		if s.Total > 0 {
			s.PassRate = float64(s.Pass) / float64(s.Total)
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Category == AllCategories) != (out[j].Category == AllCategories) {
			return out[j].Category == AllCategories
		}
		return out[i].Category < out[j].Category
	})
	return out
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
