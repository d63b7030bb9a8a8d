package refinement

import (
	"math"
)

// DefaultWeightKey is the key of a weights map that sets the weight of
// categories it does not list, as prompts.Sample reads it.
const DefaultWeightKey = "*"

// Mix returns the next round's category weights: every category of
// stats, base and choices keeps its base weight (base[c], else base["*"],
// else 1, the rule prompts.Sample applies), and each chosen category's
// weight is multiplied by factor. The result also carries "*" (the base
// default), so categories it does not list keep their old weight relative
// to the rest; it is ready for prompts.Sample. Weights are relative, not
// shares (see Shares). A factor below 1 (or NaN) counts as 1: Mix never
// shifts away from a chosen category. A chosen category with a base
// weight of 0 gets the default weight first, so forcing it revives it.
func Mix(stats []CategoryStats, choices []Choice, base map[string]float64, factor float64) map[string]float64 {
	if math.IsNaN(factor) || factor < 1 {
		factor = 1
	}
	def := 1.0
	if w, ok := base[DefaultWeightKey]; ok && isWeight(w) {
		def = w
	}
	weight := func(c string) float64 {
		if w, ok := base[c]; ok && isWeight(w) {
			return w
		}
		return def
	}
	out := map[string]float64{DefaultWeightKey: def}
	for c := range base {
		if c != DefaultWeightKey && !isPseudo(c) {
			out[c] = weight(c)
		}
	}
	for _, s := range stats {
		if !isPseudo(s.Category) {
			out[s.Category] = weight(s.Category)
		}
	}
	for _, ch := range choices {
		if isPseudo(ch.Category) {
			continue
		}
		w := weight(ch.Category)
		if w == 0 {
			w = def
			if w == 0 {
				w = 1
			}
		}
		out[ch.Category] = w * factor
	}
	return out
}

func isWeight(w float64) bool { return !math.IsNaN(w) && !math.IsInf(w, 0) && w >= 0 }

// Shares normalises weights over the named categories so they sum to 1
// ("*" stands for any category the map does not list). It returns nil
// when every weight is 0.
func Shares(weights map[string]float64, categories []string) map[string]float64 {
	def, ok := weights[DefaultWeightKey]
	if !ok {
		def = 1
	}
	total := 0.0
	out := map[string]float64{}
	for _, c := range categories {
		w, ok := weights[c]
		if !ok {
			w = def
		}
		out[c] = w
		total += w
	}
	if total <= 0 {
		return nil
	}
	for c := range out {
		out[c] /= total
	}
	return out
}

// Plateau reports whether a round brought nothing: no category present in
// both prev and cur (with judged results in both) improved its pass rate by more
// than margin. With no category in common there is no measured
// improvement, so it reports true. The summary rows (all) and (none) are
// ignored: later rounds hold only targeted categories, so their overall
// rate is not comparable with an earlier round's.
func Plateau(prev, cur []CategoryStats, margin float64) bool {
	before := map[string]CategoryStats{}
	for _, s := range prev {
		if !isPseudo(s.Category) && s.Rated() {
			before[s.Category] = s
		}
	}
	for _, s := range cur {
		b, ok := before[s.Category]
		if !ok || !s.Rated() {
			continue
		}
		if s.PassRate-b.PassRate > margin {
			return false
		}
	}
	return true
}
