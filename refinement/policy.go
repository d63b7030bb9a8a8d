package refinement

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Policy says which categories a refinement round targets.
//
// The rule for "the model is weak here" is the upper bound of the 95%
// Wilson interval: a category is targeted when even the optimistic end of
// its interval is below Threshold, and it has at least MinEvidence
// results. Using the upper bound rather than the point estimate keeps noise
// out: 1 failure of 1 (interval 0-79%) is not evidence of a long tail,
// 0 of 6 (0-39%) is. The bound already needs about five straight failures
// at Threshold 0.5; MinEvidence is the floor for high thresholds, where the
// bound alone would accept a single failure. A category whose interval
// straddles the threshold is not targeted: the next round's sampling gives
// it more evidence. Categories with fewer than MinSamples results are
// targeted for a different reason: to learn anything about them at all.
//
// Evidence of weakness is judged results only (CategoryStats.Judged): a
// pending result (stages left for another host) is neither a pass nor a
// failure here, and a task fault (the task's reference failed) says
// nothing about the model, so neither makes a category weak. MinSamples
// counts every result, pending ones and task faults included: they were
// drawn, and drawing more of a category whose tasks are broken or wait for
// a GPU host teaches nothing.
type Policy struct {
	// Threshold is the pass rate below which a category is weak (0..1).
	Threshold float64 `json:"threshold"`
	// MinEvidence is the results a category needs before it can be found
	// weak (>= 1).
	MinEvidence int `json:"min_evidence"`
	// MinSamples: categories with fewer results are targeted to gather
	// evidence (0 turns this off).
	MinSamples int `json:"min_samples"`
	// Forced categories are always targeted, first, in the given order,
	// even when they have no results (a new construct, like the seed
	// paper's AVX intrinsics).
	Forced []string `json:"forced,omitempty"`
	// MaxTargets bounds the choices (0: no bound). Forced categories are
	// always kept; weak ones fill the remaining places before under-sampled
	// ones.
	MaxTargets int `json:"max_targets"`
	// Known lists the categories that exist (for c2x86 the corpus
	// categories). Those absent from the statistics count as having no
	// results, so MinSamples can target them. Optional.
	Known []string `json:"known,omitempty"`
}

// DefaultPolicy returns the defaults that match the campaign spec's:
// threshold 0.5, min evidence 5, min samples 3, no target bound.
func DefaultPolicy() Policy {
	return Policy{Threshold: 0.5, MinEvidence: 5, MinSamples: 3}
}

// Validate reports whether p is usable.
func (p Policy) Validate() error {
	var errs []error
	if math.IsNaN(p.Threshold) || p.Threshold < 0 || p.Threshold > 1 {
		errs = append(errs, fmt.Errorf("threshold %v not in [0, 1]", p.Threshold))
	}
	if p.MinEvidence < 1 {
		errs = append(errs, fmt.Errorf("min evidence %d < 1", p.MinEvidence))
	}
	if p.MinSamples < 0 {
		errs = append(errs, fmt.Errorf("min samples %d < 0", p.MinSamples))
	}
	if p.MaxTargets < 0 {
		errs = append(errs, fmt.Errorf("max targets %d < 0", p.MaxTargets))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("refinement policy: %w", err)
	}
	return nil
}

// ChoiceKind is why a category was chosen.
type ChoiceKind string

// Choice kinds, in the order choices are listed.
const (
	ChoiceForced     ChoiceKind = "forced"
	ChoiceWeak       ChoiceKind = "below_threshold"
	ChoiceFewSamples ChoiceKind = "few_samples"
)

// Choice is one targeted category.
type Choice struct {
	Category string     `json:"category"`
	Kind     ChoiceKind `json:"kind"`
	// Reason explains the choice in one line, with the figures.
	Reason string        `json:"reason"`
	Stats  CategoryStats `json:"stats"`
}

// isPseudo reports whether c is a summary row rather than a category.
func isPseudo(c string) bool { return c == AllCategories || c == NoGroup || c == "" }

// Select picks the categories to target from one round's statistics (as
// Stats or StatsBy return them) under p: forced ones first, then weak
// ones (lowest upper bound first, then lowest pass rate, most results,
// name), then under-sampled ones (fewest results first, then name). The
// summary rows (all) and (none) are never chosen. Select does not validate
// p; a MinEvidence below 1 counts as 1.
func Select(stats []CategoryStats, p Policy) []Choice {
	minEv := max(p.MinEvidence, 1)
	byName := map[string]CategoryStats{}
	for _, s := range stats {
		if !isPseudo(s.Category) {
			byName[s.Category] = s
		}
	}
	for _, k := range p.Known {
		if _, ok := byName[k]; !ok && !isPseudo(k) {
			lo, hi := Wilson(0, 0, 1.96)
			byName[k] = CategoryStats{Category: k, Low: lo, High: hi}
		}
	}
	var out []Choice
	taken := map[string]bool{}
	for _, f := range p.Forced {
		f = strings.TrimSpace(f)
		if isPseudo(f) || taken[f] {
			continue
		}
		taken[f] = true
		s, ok := byName[f]
		if !ok {
			lo, hi := Wilson(0, 0, 1.96)
			s = CategoryStats{Category: f, Low: lo, High: hi}
		}
		reason := f + ": forced by the user"
		if s.Total > 0 {
			reason += "; " + figures(s)
		} else {
			reason += "; no results yet"
		}
		out = append(out, Choice{Category: f, Kind: ChoiceForced, Reason: reason, Stats: s})
	}
	var weak, few []CategoryStats
	for name, s := range byName {
		if taken[name] {
			continue
		}
		switch {
		case s.Judged >= minEv && s.High < p.Threshold:
			weak = append(weak, s)
		case s.Total < p.MinSamples:
			few = append(few, s)
		}
	}
	sort.Slice(weak, func(i, j int) bool {
		a, b := weak[i], weak[j]
		if a.High != b.High {
			return a.High < b.High
		}
		if a.PassRate != b.PassRate {
			return a.PassRate < b.PassRate
		}
		if a.Judged != b.Judged {
			return a.Judged > b.Judged
		}
		return a.Category < b.Category
	})
	sort.Slice(few, func(i, j int) bool {
		if few[i].Total != few[j].Total {
			return few[i].Total < few[j].Total
		}
		return few[i].Category < few[j].Category
	})
	room := func() bool { return p.MaxTargets == 0 || len(out) < p.MaxTargets }
	for _, s := range weak {
		if !room() {
			break
		}
		out = append(out, Choice{Category: s.Category, Kind: ChoiceWeak, Stats: s, Reason: fmt.Sprintf(
			"%s: %s; the upper bound %s is below the threshold %s, with %d >= %d samples",
			s.Category, figures(s), pct(s.High), pct(p.Threshold), s.Judged, minEv)})
	}
	for _, s := range few {
		if !room() {
			break
		}
		r := fmt.Sprintf("%s: no results; fewer than %d samples, too few to judge", s.Category, p.MinSamples)
		if s.Total > 0 {
			r = fmt.Sprintf("%s: %s; only %d < %d samples, too few to judge", s.Category, figures(s), s.Total, p.MinSamples)
		}
		out = append(out, Choice{Category: s.Category, Kind: ChoiceFewSamples, Stats: s, Reason: r})
	}
	return out
}

// figures writes "2/12 pass (17%, 95% CI 5-45%)" over judged results,
// then the pending results and task faults apart ("; 3 pending").
func figures(s CategoryStats) string {
	out := "no judged result"
	if s.Rated() {
		out = fmt.Sprintf("%d/%d pass (%s, 95%% CI %.0f-%s)", s.Pass, s.Judged, pct(s.PassRate), 100*s.Low, pct(s.High))
	}
	if s.Pending > 0 {
		out += fmt.Sprintf("; %d pending", s.Pending)
	}
	if s.TaskFaults > 0 {
		out += fmt.Sprintf("; %d task faults", s.TaskFaults)
	}
	return out
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }
