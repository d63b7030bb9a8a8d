package prompts

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
)

func ids(items []CorpusItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// synthItems makes n items; item i has category cats[i%len(cats)].
func synthItems(n int, cats ...string) []CorpusItem {
	out := make([]CorpusItem, n)
	for i := range out {
		out[i] = CorpusItem{ID: fmt.Sprintf("it%03d", i), Categories: []string{cats[i%len(cats)]}}
	}
	return out
}

func TestSampleDeterministic(t *testing.T) {
	t.Parallel()
	items := synthItems(50, CatLoop, CatString, CatSwitchMany)
	a, err := Sample(items, 20, 42, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Sample(items, 20, 42, nil)
	if !reflect.DeepEqual(ids(a), ids(b)) {
		t.Error("same seed, different samples")
	}
	// The input order does not matter.
	rev := slices.Clone(items)
	slices.Reverse(rev)
	c, _ := Sample(rev, 20, 42, nil)
	if !reflect.DeepEqual(ids(a), ids(c)) {
		t.Error("input order changed the sample")
	}
	// Other seeds give other samples.
	differ := 0
	for seed := int64(0); seed < 10; seed++ {
		d, _ := Sample(items, 20, seed, nil)
		if !reflect.DeepEqual(ids(a), ids(d)) {
			differ++
		}
	}
	if differ < 9 {
		t.Errorf("only %d of 10 other seeds changed the sample", differ)
	}
	// The input slice is not reordered.
	if items[0].ID != "it000" || rev[0].ID != "it049" {
		t.Error("Sample modified its input")
	}
}

func TestSampleNoDuplicates(t *testing.T) {
	t.Parallel()
	items := synthItems(30, CatLoop, CatBitops)
	for _, n := range []int{1, 7, 29, 30} {
		for seed := int64(0); seed < 20; seed++ {
			got, err := Sample(items, n, seed, map[string]float64{CatBitops: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n {
				t.Fatalf("n=%d: got %d", n, len(got))
			}
			s := ids(got)
			slices.Sort(s)
			if len(slices.Compact(s)) != n {
				t.Fatalf("n=%d seed=%d: duplicates in %v", n, seed, ids(got))
			}
		}
	}
	if got, _ := Sample(items, 0, 1, nil); len(got) != 0 {
		t.Error("n=0 returned items")
	}
	if got, _ := Sample(items, -3, 1, nil); len(got) != 0 {
		t.Error("n<0 returned items")
	}
}

// TestSampleWeightsShiftMix: up-weighting a category raises its share of
// the sample; weight 0 removes a category.
func TestSampleWeightsShiftMix(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus(LaneC2X86)
	if err != nil {
		t.Fatal(err)
	}
	share := func(weights map[string]float64) float64 {
		hits, total := 0, 0
		for seed := int64(0); seed < 40; seed++ {
			got, err := Sample(items, 40, seed, weights)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range got {
				total++
				if it.HasCategory(CatSwitchMany) {
					hits++
				}
			}
		}
		return float64(hits) / float64(total)
	}
	uniform := share(nil)
	boosted := share(map[string]float64{CatSwitchMany: 8})
	base := float64(CategoryCounts(items)[CatSwitchMany]) / float64(len(items))
	if math.Abs(uniform-base) > 0.05 {
		t.Errorf("uniform share %.3f, corpus share %.3f", uniform, base)
	}
	if boosted < 2*uniform {
		t.Errorf("switch_many share: uniform %.3f, weighted %.3f: want at least double", uniform, boosted)
	}

	// Zero weights exclude: only recursion items, no duplicates while n fits.
	only := map[string]float64{DefaultWeightKey: 0, CatRecursion: 1}
	eligible := 0
	for _, it := range items {
		if it.HasCategory(CatRecursion) {
			eligible++
		}
	}
	got, err := Sample(items, eligible, 7, only)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if !it.HasCategory(CatRecursion) {
			t.Errorf("%s drawn with weight 0", it.ID)
		}
	}
	// More than the eligible items: with replacement, still only recursion.
	got, err = Sample(items, eligible*3+1, 7, only)
	if err != nil || len(got) != eligible*3+1 {
		t.Fatalf("oversample: %d items, %v", len(got), err)
	}
	for _, it := range got {
		if !it.HasCategory(CatRecursion) {
			t.Errorf("%s drawn with weight 0", it.ID)
		}
	}
}

// TestSampleOversample: n beyond the item count draws with replacement,
// each item floor or ceil of its expected count.
func TestSampleOversample(t *testing.T) {
	t.Parallel()
	items := synthItems(10, CatLoop, CatString)
	weights := map[string]float64{CatString: 3} // 5 items weight 3, 5 items weight 1
	n := 103
	got, err := Sample(items, n, 99, weights)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("got %d items", len(got))
	}
	count := map[string]int{}
	for _, it := range got {
		count[it.ID]++
	}
	for _, it := range items {
		want := float64(n) * ItemWeight(it, weights) / 20.0
		c := float64(count[it.ID])
		if c < math.Floor(want) || c > math.Ceil(want) {
			t.Errorf("%s: %v copies, want %.2f", it.ID, c, want)
		}
	}
	again, _ := Sample(items, n, 99, weights)
	if !reflect.DeepEqual(ids(got), ids(again)) {
		t.Error("oversample not deterministic")
	}
	// Uniform with n = len+1: everything once, one item twice.
	got, _ = Sample(items, 11, 5, nil)
	count = map[string]int{}
	for _, it := range got {
		count[it.ID]++
	}
	if len(count) != 10 {
		t.Errorf("n=len+1 uniform: %d distinct items, want 10", len(count))
	}
}

func TestItemWeight(t *testing.T) {
	t.Parallel()
	it := CorpusItem{ID: "x", Categories: []string{CatLoop, CatSwitchMany}}
	tests := []struct {
		name    string
		weights map[string]float64
		want    float64
	}{
		{"nil", nil, 1},
		{"max of categories", map[string]float64{CatSwitchMany: 4, CatLoop: 2}, 4},
		{"unlisted default 1", map[string]float64{CatSwitchMany: 0.5}, 1},
		{"star default", map[string]float64{DefaultWeightKey: 0, CatSwitchMany: 0.5}, 0.5},
		{"all zero", map[string]float64{DefaultWeightKey: 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ItemWeight(it, tt.weights); got != tt.want {
				t.Errorf("ItemWeight = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSampleErrors(t *testing.T) {
	t.Parallel()
	items := synthItems(5, CatLoop)
	for _, w := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := Sample(items, 2, 1, map[string]float64{CatLoop: w}); err == nil {
			t.Errorf("weight %v accepted", w)
		}
	}
	if _, err := Sample(items, 2, 1, map[string]float64{DefaultWeightKey: 0}); !errors.Is(err, ErrNoEligibleItems) {
		t.Errorf("all-zero weights: %v", err)
	}
	if _, err := Sample(nil, 2, 1, nil); !errors.Is(err, ErrNoEligibleItems) {
		t.Errorf("no items: %v", err)
	}
	dup := append(synthItems(3, CatLoop), CorpusItem{ID: "it001", Categories: []string{CatLoop}})
	if _, err := Sample(dup, 2, 1, nil); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("duplicate ids: %v", err)
	}
}
