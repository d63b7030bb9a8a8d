// This file holds the statistics: pass rates per category with Wilson
// score intervals, so that 1 of 2 is not read like 500 of 1000.

package refinement

import (
	"math"

	"github.com/kiln-dev/kiln/runs"
)

// CategoryStats are the figures of one category in one set of results.
type CategoryStats struct {
	Category string `json:"category"`
	Total    int    `json:"total"`
	Pass     int    `json:"pass"`
	// Pending counts the passes that are pending: every stage that ran
	// passed, and stages are left for another host (a GPU run on a CPU
	// host). Rates count them as passes of the stages that ran; the
	// report shows how many there are.
	Pending int `json:"pending"`
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
	// WallMS is the summed wall time of the attempts (start to finish,
	// verification included) where both times are known.
	WallMS int64 `json:"wall_ms"`
	// Labels counts failures (and suspected cheating among passes) by
	// fine label; filled only when grouping with a Taxonomy (StatsBy).
	Labels map[string]int `json:"labels,omitempty"`
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
