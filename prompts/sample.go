package prompts

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// DefaultWeightKey is the key of a weights map that sets the weight of
// categories it does not list (1 when absent).
const DefaultWeightKey = "*"

// ErrNoEligibleItems is returned by Sample when every item has weight 0.
var ErrNoEligibleItems = errors.New("prompts: sample: no item has a positive weight")

// ErrDuplicateID is returned by Sample when two input items share an ID.
var ErrDuplicateID = errors.New("prompts: sample: duplicate item id")

// Sample draws n items, reproducibly for a given seed and input set (the
// input order does not matter: items are ordered by ID first).
//
// An item's weight is the largest weight among its categories; a category
// missing from weights gets weights["*"], or 1 when that is absent too. A
// nil or empty map samples uniformly. Items of weight 0 are never drawn.
//
// While n is at most the number of eligible (positive-weight) items, the
// draw is without replacement (weighted reservoir keys, Efraimidis-
// Spirakis): no item appears twice, and heavier items are more likely to be
// among the n. For larger n, the draw is with replacement by systematic
// (low-variance) resampling: every eligible item appears floor or ceil of
// n*w/W times, so the mix follows the weights closely; the result is then
// shuffled. n <= 0 gives an empty result. Weights must be finite and
// non-negative.
func Sample(items []CorpusItem, n int, seed int64, weights map[string]float64) ([]CorpusItem, error) {
	for k, w := range weights {
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return nil, fmt.Errorf("prompts: sample: weight of %q is %v: want a finite value >= 0", k, w)
		}
	}
	if n <= 0 {
		return []CorpusItem{}, nil
	}
	sorted := make([]CorpusItem, len(items))
	copy(sorted, items)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	for i := 1; i < len(sorted); i++ {
		if sorted[i].ID == sorted[i-1].ID {
			return nil, fmt.Errorf("%w %q", ErrDuplicateID, sorted[i].ID)
		}
	}

	type cand struct {
		item CorpusItem
		w    float64
		key  float64
	}
	var cands []cand
	total := 0.0
	for _, it := range sorted {
		w := ItemWeight(it, weights)
		if w > 0 {
			cands = append(cands, cand{item: it, w: w})
			total += w
		}
	}
	if len(cands) == 0 {
		return nil, ErrNoEligibleItems
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b696c6e2d736d70)) // "kiln-smp"

	if n <= len(cands) {
		// Efraimidis-Spirakis A-ES: key = log(u)/w, keep the n largest.
		for i := range cands {
			u := 1 - rng.Float64() // (0, 1]
			cands[i].key = math.Log(u) / cands[i].w
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].key > cands[j].key })
		out := make([]CorpusItem, n)
		for i := range out {
			out[i] = cands[i].item
		}
		return out, nil
	}

	// Systematic resampling with replacement.
	out := make([]CorpusItem, 0, n)
	step := total / float64(n)
	pos := rng.Float64() * step
	cum := 0.0
	ci := 0
	for k := 0; k < n; k++ {
		target := pos + float64(k)*step
		for ci < len(cands)-1 && cum+cands[ci].w <= target {
			cum += cands[ci].w
			ci++
		}
		out = append(out, cands[ci].item)
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out, nil
}

// ItemWeight is the sampling weight Sample gives it under weights: the
// largest weight of its categories, unlisted categories taking
// weights["*"] (default 1).
func ItemWeight(it CorpusItem, weights map[string]float64) float64 {
	def := 1.0
	if w, ok := weights[DefaultWeightKey]; ok {
		def = w
	}
	if len(it.Categories) == 0 {
		return def
	}
	best := -1.0
	for _, c := range it.Categories {
		w, ok := weights[c]
		if !ok {
			w = def
		}
		if w > best {
			best = w
		}
	}
	return best
}

// Resample draws n items with replacement by systematic resampling over
// the items' weights (ItemWeight): each item appears floor or ceil of
// n*w/W times; the result is shuffled. Deterministic for a seed. Items
// with weight 0 (or NaN, Inf, negative) are never drawn; nil when every
// weight is 0 or n <= 0.
func Resample(items []CorpusItem, n int, seed int64, weights map[string]float64) []CorpusItem {
	sorted := slices.Clone(items)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	ws := make([]float64, len(sorted))
	total := 0.0
	for i, it := range sorted {
		w := ItemWeight(it, weights)
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			w = 0
		}
		ws[i] = w
		total += w
	}
	if n <= 0 || total <= 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6b696c6e2d726566)) // "kiln-ref"
	step := total / float64(n)
	pos := rng.Float64() * step
	out := make([]CorpusItem, 0, n)
	cum, i := 0.0, 0
	for k := 0; k < n; k++ {
		target := pos + float64(k)*step
		for i < len(sorted)-1 && (ws[i] == 0 || cum+ws[i] <= target) {
			cum += ws[i]
			i++
		}
		out = append(out, sorted[i])
	}
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}
