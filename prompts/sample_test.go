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
	items := synthItems(50, catLoop, catString, catSwitchMany)
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
	items := synthItems(30, catLoop, catBitops)
	for _, n := range []int{1, 7, 29, 30} {
		for seed := int64(0); seed < 20; seed++ {
			got, err := Sample(items, n, seed, map[string]float64{catBitops: 5})
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
// the sample; weight 0 removes a category. (tools/c2x86/corpus_test.go runs
// the same checks on the c2x86 starter corpus.)
func TestSampleWeightsShiftMix(t *testing.T) {
	t.Parallel()
	items := synthItems(240, catLoop, catString, catSwitchMany, catRecursion, catBitops, catIntArith, catStruct, catFloatConst)
	items[0].Categories = append(items[0].Categories, catRecursion) // one item with two categories
	share := func(weights map[string]float64) float64 {
		hits, total := 0, 0
		for seed := int64(0); seed < 40; seed++ {
			got, err := Sample(items, 40, seed, weights)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range got {
				total++
				if it.HasCategory(catSwitchMany) {
					hits++
				}
			}
		}
		return float64(hits) / float64(total)
	}
	uniform := share(nil)
	boosted := share(map[string]float64{catSwitchMany: 8})
	base := float64(CategoryCounts(items)[catSwitchMany]) / float64(len(items))
	if math.Abs(uniform-base) > 0.05 {
		t.Errorf("uniform share %.3f, corpus share %.3f", uniform, base)
	}
	if boosted < 2*uniform {
		t.Errorf("switch_many share: uniform %.3f, weighted %.3f: want at least double", uniform, boosted)
	}

	// Zero weights exclude: only recursion items, no duplicates while n fits.
	only := map[string]float64{DefaultWeightKey: 0, catRecursion: 1}
	eligible := 0
	for _, it := range items {
		if it.HasCategory(catRecursion) {
			eligible++
		}
	}
	got, err := Sample(items, eligible, 7, only)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != eligible {
		t.Fatalf("%d items, want %d", len(got), eligible)
	}
	seen := map[string]bool{}
	for _, it := range got {
		if !it.HasCategory(catRecursion) {
			t.Errorf("%s drawn with weight 0", it.ID)
		}
		if seen[it.ID] {
			t.Errorf("%s drawn twice", it.ID)
		}
		seen[it.ID] = true
	}
	// More than the eligible items: with replacement, still only recursion.
	got, err = Sample(items, eligible*3+1, 7, only)
	if err != nil || len(got) != eligible*3+1 {
		t.Fatalf("oversample: %d items, %v", len(got), err)
	}
	for _, it := range got {
		if !it.HasCategory(catRecursion) {
			t.Errorf("%s drawn with weight 0", it.ID)
		}
	}
}

// TestSampleOversample: n beyond the item count draws with replacement,
// each item floor or ceil of its expected count.
func TestSampleOversample(t *testing.T) {
	t.Parallel()
	items := synthItems(10, catLoop, catString)
	weights := map[string]float64{catString: 3} // 5 items weight 3, 5 items weight 1
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
	it := CorpusItem{ID: "x", Categories: []string{catLoop, catSwitchMany}}
	tests := []struct {
		name    string
		weights map[string]float64
		want    float64
	}{
		{"nil", nil, 1},
		{"max of categories", map[string]float64{catSwitchMany: 4, catLoop: 2}, 4},
		{"unlisted default 1", map[string]float64{catSwitchMany: 0.5}, 1},
		{"star default", map[string]float64{DefaultWeightKey: 0, catSwitchMany: 0.5}, 0.5},
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
	items := synthItems(5, catLoop)
	for _, w := range []float64{-1, math.NaN(), math.Inf(1)} {
		if _, err := Sample(items, 2, 1, map[string]float64{catLoop: w}); err == nil {
			t.Errorf("weight %v accepted", w)
		}
	}
	if _, err := Sample(items, 2, 1, map[string]float64{DefaultWeightKey: 0}); !errors.Is(err, ErrNoEligibleItems) {
		t.Errorf("all-zero weights: %v", err)
	}
	if _, err := Sample(nil, 2, 1, nil); !errors.Is(err, ErrNoEligibleItems) {
		t.Errorf("no items: %v", err)
	}
	dup := append(synthItems(3, catLoop), CorpusItem{ID: "it001", Categories: []string{catLoop}})
	if _, err := Sample(dup, 2, 1, nil); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("duplicate ids: %v", err)
	}
}

// TestResample: systematic resampling with replacement gives every item
// floor or ceil of n*w/W copies, deterministically per seed and whatever
// the input order; items of weight 0 (or of an unusable weight) are never
// drawn.
func TestResample(t *testing.T) {
	t.Parallel()
	// it000..it011 cycle through loop, string, recursion; the zero-weight
	// recursion items sit first, inside and last in ID order, and "zz"
	// (weight Inf) and "aa" (weight NaN) at both ends.
	items := synthItems(12, catRecursion, catLoop, catString)
	items = append(items, CorpusItem{ID: "it012", Categories: []string{catRecursion}},
		CorpusItem{ID: "zz", Categories: []string{catSwitchMany}},
		CorpusItem{ID: "aa", Categories: []string{catSwitchFew}},
		CorpusItem{ID: "neg", Categories: []string{catBitops}})
	weights := map[string]float64{catString: 3, catRecursion: 0, catSwitchMany: math.Inf(1),
		catSwitchFew: math.NaN(), catBitops: -2} // 4 loop items weight 1, 4 string items weight 3: W = 16
	drawable := func(it CorpusItem) bool { return it.HasCategory(catLoop) || it.HasCategory(catString) }
	const total = 16.0
	for _, n := range []int{1, 3, 7, 16, 103, 1000} {
		for seed := int64(0); seed < 25; seed++ {
			got := Resample(items, n, seed, weights)
			if len(got) != n {
				t.Fatalf("n=%d seed=%d: %d items", n, seed, len(got))
			}
			count := map[string]int{}
			for _, it := range got {
				count[it.ID]++
			}
			for _, it := range items {
				c := float64(count[it.ID])
				if !drawable(it) {
					if c != 0 {
						t.Errorf("n=%d seed=%d: %s (weight %v) drawn %v times", n, seed, it.ID, ItemWeight(it, weights), c)
					}
					continue
				}
				want := float64(n) * ItemWeight(it, weights) / total
				if c < math.Floor(want) || c > math.Ceil(want) {
					t.Errorf("n=%d seed=%d: %s: %v copies, want %.2f", n, seed, it.ID, c, want)
				}
			}
		}
	}

	n := 103
	got := Resample(items, n, 99, weights)
	if again := Resample(items, n, 99, weights); !reflect.DeepEqual(ids(got), ids(again)) {
		t.Error("same seed, different draws")
	}
	rev := slices.Clone(items)
	slices.Reverse(rev)
	if fromRev := Resample(rev, n, 99, weights); !reflect.DeepEqual(ids(got), ids(fromRev)) {
		t.Error("input order changed the draw")
	}
	if items[0].ID != "it000" || rev[0].ID != "neg" {
		t.Error("Resample modified its input")
	}
	differ := 0
	for seed := int64(0); seed < 10; seed++ {
		if d := Resample(items, n, seed, weights); !reflect.DeepEqual(ids(got), ids(d)) {
			differ++
		}
	}
	if differ < 9 {
		t.Errorf("only %d of 10 other seeds changed the draw", differ)
	}
	if slices.IsSorted(ids(got)) {
		t.Error("draw is not shuffled")
	}

	// Uniform with n = len: every item exactly once.
	plain := synthItems(10, catLoop, catString)
	once := ids(Resample(plain, 10, 3, nil))
	slices.Sort(once)
	if !reflect.DeepEqual(once, ids(plain)) {
		t.Errorf("n=len uniform: %v", once)
	}

	for _, tt := range []struct {
		name    string
		items   []CorpusItem
		n       int
		weights map[string]float64
	}{
		{"n=0", items, 0, weights},
		{"n<0", items, -4, weights},
		{"all zero", items, 5, map[string]float64{DefaultWeightKey: 0}},
		{"only unusable weights", items, 5, map[string]float64{DefaultWeightKey: math.NaN(), catLoop: -1, catString: math.Inf(1)}},
		{"no items", nil, 5, nil},
	} {
		if got := Resample(tt.items, tt.n, 1, tt.weights); got != nil {
			t.Errorf("%s: got %v, want nil", tt.name, ids(got))
		}
	}
}
