package c2x86

// Tests of the c2x86 starter corpus and its spec (moved from package
// prompts, which no longer knows any lane; its loader tests stay there).

import (
	"io/fs"
	"math"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/prompts"
)

// TestCorpusSpec checks the lane's corpus spec (was TestLaneTables of
// package prompts: Categories and RequiredFiles of the c2x86 lane).
func TestCorpusSpec(t *testing.T) {
	t.Parallel()
	spec := CorpusSpec()
	cats := spec.Categories
	if spec.Lane != LaneName || len(cats) != 12 || cats[0] != CatIntArith {
		t.Fatalf("spec = %+v", spec)
	}
	cats[0] = "changed" // a copy: the lane table stays intact
	if again := CorpusSpec().Categories; again[0] != CatIntArith {
		t.Error("CorpusSpec returned shared state")
	}
	if files := CorpusSpec().Files; !reflect.DeepEqual(files, []string{"function.c", "driver.c"}) {
		t.Errorf("files = %v", files)
	}
	if spec.SourceFile != "function.c" {
		t.Errorf("source file = %q", spec.SourceFile)
	}
}

// TestBuiltinCorpus checks the size and category mix of the starter corpus
// and that its README's table matches the real counts.
func TestBuiltinCorpus(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if len(items) < 220 {
		t.Errorf("%d items, want at least 220", len(items))
	}
	seenFn := map[string]string{}
	for _, it := range items {
		if n := len(it.Categories); n < 1 || n > 3 {
			t.Errorf("%s: %d categories, want 1 to 3", it.ID, n)
		}
		if it.Description == "" || strings.Contains(it.Description, "\n") {
			t.Errorf("%s: description must be one non-empty line", it.ID)
		}
		if len(it.Files) != 2 {
			t.Errorf("%s: files %v, want function.c and driver.c only", it.ID, corpusFileNames(it.Files))
		}
		if strings.Contains(it.Files["function.c"], "main(") {
			t.Errorf("%s: function.c defines main", it.ID)
		}
		if !strings.Contains(it.Files["driver.c"], "int main(void)") {
			t.Errorf("%s: driver.c has no main", it.ID)
		}
		if prev, dup := seenFn[it.Function]; dup {
			t.Errorf("%s and %s test the same function name %q", prev, it.ID, it.Function)
		}
		seenFn[it.Function] = it.ID
	}
	counts := prompts.CategoryCounts(items)
	cats := CorpusSpec().Categories
	for _, c := range cats {
		if c != CatMixed && counts[c] < 15 {
			t.Errorf("category %s has %d items, want at least 15", c, counts[c])
		}
	}

	// The README's table: "| `cat` | count |" rows and a "**N items**" total.
	readme, err := fs.ReadFile(corpusFS, "corpus/README.md")
	if err != nil {
		t.Fatal(err)
	}
	rowRE := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| (\\d+) \\|")
	rows := rowRE.FindAllStringSubmatch(string(readme), -1)
	if len(rows) != len(cats) {
		t.Errorf("README lists %d categories, want %d", len(rows), len(cats))
	}
	for _, r := range rows {
		n, _ := strconv.Atoi(r[2])
		if counts[r[1]] != n {
			t.Errorf("README says %s has %d items, corpus has %d", r[1], n, counts[r[1]])
		}
	}
	if total := regexp.MustCompile(`\*\*(\d+) items\*\*`).FindStringSubmatch(string(readme)); total == nil || total[1] != strconv.Itoa(len(items)) {
		t.Errorf("README total %v, corpus has %d items", total, len(items))
	}
}

// TestBuiltinCorpusDirFS loads the same corpus from disk through os.DirFS,
// the way a user points a campaign at a folder.
func TestBuiltinCorpusDirFS(t *testing.T) {
	t.Parallel()
	embedded, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	disk, err := LoadCorpus(os.DirFS("corpus"), ".")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(embedded, disk) {
		t.Error("embedded and on-disk corpus differ")
	}
}

// TestSampleWeightsShiftMix: up-weighting a category raises its share of
// the sample; weight 0 removes a category (prompts.Sample on the starter
// corpus; prompts/sample_test.go runs the same checks on a made-up one).
func TestSampleWeightsShiftMix(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	share := func(weights map[string]float64) float64 {
		hits, total := 0, 0
		for seed := int64(0); seed < 40; seed++ {
			got, err := prompts.Sample(items, 40, seed, weights)
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
	base := float64(prompts.CategoryCounts(items)[CatSwitchMany]) / float64(len(items))
	if math.Abs(uniform-base) > 0.05 {
		t.Errorf("uniform share %.3f, corpus share %.3f", uniform, base)
	}
	if boosted < 2*uniform {
		t.Errorf("switch_many share: uniform %.3f, weighted %.3f: want at least double", uniform, boosted)
	}

	// Zero weights exclude: only recursion items, no duplicates while n fits.
	only := map[string]float64{prompts.DefaultWeightKey: 0, CatRecursion: 1}
	eligible := 0
	for _, it := range items {
		if it.HasCategory(CatRecursion) {
			eligible++
		}
	}
	got, err := prompts.Sample(items, eligible, 7, only)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range got {
		if !it.HasCategory(CatRecursion) {
			t.Errorf("%s drawn with weight 0", it.ID)
		}
	}
	// More than the eligible items: with replacement, still only recursion.
	got, err = prompts.Sample(items, eligible*3+1, 7, only)
	if err != nil || len(got) != eligible*3+1 {
		t.Fatalf("oversample: %d items, %v", len(got), err)
	}
	for _, it := range got {
		if !it.HasCategory(CatRecursion) {
			t.Errorf("%s drawn with weight 0", it.ID)
		}
	}
}

func corpusFileNames(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
