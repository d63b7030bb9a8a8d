package refinement

import (
	"sort"

	"github.com/kiln-dev/kiln/runs"
)

// NoGroup is the group of a result whose key function gives none: a task
// without categories, a source without any detected feature.
const NoGroup = "(none)"

// KeyFunc returns the groups a result counts in (a result counts once in
// each).
type KeyFunc func(r runs.Result) []string

// ByCategory groups by the task's categories.
func ByCategory(r runs.Result) []string { return r.Task.Categories }

// ByFeature groups by the construct features of the task's source (see
// Featurizer.FeaturesOf); a nil f has no features (stored ones count).
func ByFeature(f *Featurizer) KeyFunc {
	if f == nil {
		f = Generic().Features
	}
	return f.FeaturesOf
}

// ByLabel groups by fine failure label (LabelPass for passes); a nil t
// uses the generic table.
func ByLabel(t *Taxonomy) KeyFunc {
	if t == nil {
		t = Generic().Taxonomy
	}
	return func(r runs.Result) []string { return []string{t.ClassifyResult(r).Key()} }
}

// GroupOptions tune StatsBy.
type GroupOptions struct {
	// Taxonomy, when set, fills CategoryStats.Labels with the fine labels
	// of failures and of passes whose answer is suspect.
	Taxonomy *Taxonomy
}

// StatsBy groups results by key and returns the groups sorted by name with
// the (all) row last. A result whose key gives no group counts in
// NoGroup. Every group gets counts by outcome, the pass rate over judged
// results with its 95% Wilson interval, failure classes (and fine labels
// of failures with a Taxonomy; task faults get none), tokens, model
// latency and attempt wall time.
func StatsBy(results []runs.Result, key KeyFunc, opt GroupOptions) []CategoryStats {
	by := map[string]*CategoryStats{}
	get := func(c string) *CategoryStats {
		s, ok := by[c]
		if !ok {
			s = &CategoryStats{Category: c, Classes: map[string]int{}}
			if opt.Taxonomy != nil {
				s.Labels = map[string]int{}
			}
			by[c] = s
		}
		return s
	}
	for _, r := range results {
		groups := key(r)
		if len(groups) == 0 {
			groups = []string{NoGroup}
		}
		outcome := r.Verdict.Outcome()
		var label string
		if opt.Taxonomy != nil && outcome != runs.OutcomeTaskFault {
			l := opt.Taxonomy.ClassifyResult(r)
			if outcome == runs.OutcomeFail || l.Suspicion != "" {
				label = l.Key()
			}
		}
		seen := map[string]bool{}
		for _, c := range append(append([]string(nil), groups...), AllCategories) {
			if seen[c] {
				continue
			}
			seen[c] = true
			s := get(c)
			s.count(outcome, r.Verdict.Class)
			if label != "" {
				s.Labels[label]++
			}
			u := r.Attempt.Usage
			s.PromptTokens += int64(u.PromptTokens)
			s.CompletionTokens += int64(u.CompletionTokens)
			s.ReasoningTokens += int64(u.ReasoningTokens)
			s.LatencyMS += u.LatencyMS
			if a := r.Attempt; !a.StartedAt.IsZero() && a.FinishedAt.After(a.StartedAt) {
				s.WallMS += a.FinishedAt.Sub(a.StartedAt).Milliseconds()
			}
		}
	}
	out := make([]CategoryStats, 0, len(by))
	for _, s := range by {
		s.rate()
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

// RoundStats are one round's groups.
type RoundStats struct {
	Round int             `json:"round"`
	Stats []CategoryStats `json:"stats"`
}

// StatsByRound splits results by Task.Round and groups each round with
// StatsBy; rounds come back in increasing order.
func StatsByRound(results []runs.Result, key KeyFunc, opt GroupOptions) []RoundStats {
	byRound := map[int][]runs.Result{}
	for _, r := range results {
		byRound[r.Task.Round] = append(byRound[r.Task.Round], r)
	}
	rounds := make([]int, 0, len(byRound))
	for r := range byRound {
		rounds = append(rounds, r)
	}
	sort.Ints(rounds)
	out := make([]RoundStats, 0, len(rounds))
	for _, r := range rounds {
		out = append(out, RoundStats{Round: r, Stats: StatsBy(byRound[r], key, opt)})
	}
	return out
}

// Find returns the row of category in stats.
func Find(stats []CategoryStats, category string) (CategoryStats, bool) {
	for _, s := range stats {
		if s.Category == category {
			return s, true
		}
	}
	return CategoryStats{}, false
}
