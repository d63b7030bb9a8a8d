package curate

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"testing/fstest"
)

func TestItemKey(t *testing.T) {
	for key, want := range map[string]string{
		"r0/l1_matmul#0":                 "l1_matmul",
		"r12/l1_matmul#4":                "l1_matmul",
		"r1/synth/loops/03-abcdef0123#2": "synth/loops/03-abcdef0123",
		"custom-key":                     "custom-key",
		"r0/a#b#1":                       "a#b",
		"r3/":                            "r3/",
		"r0/no-suffix":                   "no-suffix",
	} {
		if got := ItemKey(key); got != want {
			t.Errorf("ItemKey(%q) = %q, want %q", key, got, want)
		}
	}
}

// concurSet is a synthetic set whose ConCuR selection is known by hand.
func concurSet() []Candidate {
	c := func(id, item string, speedup float64, reasoning int, cats ...string) Candidate {
		return Candidate{ID: id, Item: item, Speedup: speedup, Reasoning: reasoning, Answer: 100, Categories: cats}
	}
	return []Candidate{
		// a: the shortest reasoning (a2) is also the fastest: kept.
		c("a1", "a", 1.2, 5000, "matmul", "level1"),
		c("a2", "a", 1.5, 2000, "matmul", "level1"),
		c("a3", "a", 0.9, 9000, "matmul", "level1"),
		// b: the shortest (b1) is not the fastest (b2): none by part a;
		// b3 is faster than 5: kept by part b.
		c("b1", "b", 1.1, 1000, "conv", "level1"),
		c("b2", "b", 1.3, 3000, "conv", "level1"),
		c("b3", "b", 6.0, 8000, "conv", "level1"),
		// c: a tie on speed: the shortest is among the fastest.
		c("c1", "c", 2.0, 4000, "fusion", "level2"),
		c("c2", "c", 2.0, 3000, "fusion", "level2"),
		// d: a lane without timing (speedup 0): the shortest.
		c("d1", "d", 0, 700, "fusion", "level2"),
		c("d2", "d", 0, 600, "fusion", "level2"),
		// e: one sample.
		c("e1", "e", 0.8, 12000, "network", "level3"),
	}
}

func kept(cands []Candidate, keep []string) map[string]string {
	out := map[string]string{}
	for i, k := range keep {
		if k != "" {
			out[cands[i].ID] = k
		}
	}
	return out
}

func TestSelectConcur(t *testing.T) {
	cands := concurSet()
	keep, err := Selection{Policy: Concur, KeepSpeedup: DefaultKeepSpeedup}.Select(cands)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a2": KeptConcise, "b3": KeptFast, "c2": KeptConcise, "d2": KeptConcise, "e1": KeptConcise}
	if got := kept(cands, keep); !reflect.DeepEqual(got, want) {
		t.Errorf("concur kept %v, want %v", got, want)
	}
	// The answer does not depend on the order of the candidates.
	slices.Reverse(cands)
	keep, _ = Selection{Policy: Concur, KeepSpeedup: DefaultKeepSpeedup}.Select(cands)
	if got := kept(cands, keep); !reflect.DeepEqual(got, want) {
		t.Errorf("reversed: concur kept %v, want %v", got, want)
	}
}

func TestSelectConcurBalance(t *testing.T) {
	cands := concurSet()
	// Kept without balance: singles a2, b3 (2); fusions c2, d2, e1 (3).
	// A single share of 0.6 wants 3 singles for 3 fusions at least
	// (ceil(0.6*3/0.4) = 5 singles? no: 0.6 share of singles means
	// singles/(singles+3) >= 0.6, so 4.5 -> 5 singles); the unselected
	// singles are a1, a3, b1, b2: items a and b already have one kept,
	// so they are added best first: b2 (1.3), a1 (1.2), b1 (1.1); that is
	// 5 singles.
	keep, err := Selection{Policy: Concur, KeepSpeedup: 5, SingleShare: 0.6}.Select(cands)
	if err != nil {
		t.Fatal(err)
	}
	got := kept(cands, keep)
	for _, id := range []string{"b2", "a1", "b1"} {
		if got[id] != KeptBalance {
			t.Errorf("%s: kept as %q, want %q (kept %v)", id, got[id], KeptBalance, got)
		}
	}
	if _, ok := got["a3"]; ok || len(got) != 8 {
		t.Errorf("kept %v: want the 5 concur picks and b2, a1, b1", got)
	}

	// A share of 0.9 wants 27 singles for 3 fusions: only 6 exist, so the
	// fusions are cut to floor(6*0.1/0.9) = 0... at least the concise ones
	// go first; every single is kept.
	keep, _ = Selection{Policy: Concur, KeepSpeedup: 5, SingleShare: 0.9}.Select(cands)
	got = kept(cands, keep)
	nS, nF := 0, 0
	for i, k := range keep {
		if k == "" {
			continue
		}
		if IsFusion(cands[i].Categories) {
			nF++
		} else {
			nS++
		}
	}
	if nS != 6 || nF != 0 {
		t.Errorf("share 0.9: %d singles and %d fusions kept (%v), want 6 and 0", nS, nF, got)
	}

	// Fusion scarce: share 0.2 of singles wants fusions >= 4*2 = 8 for 2
	// singles; only 5 fusions exist (3 kept, c1 and d1 added), so singles
	// are cut to floor(5*0.2/0.8) = 1: the concise pick a2 goes before
	// the fast b3.
	keep, _ = Selection{Policy: Concur, KeepSpeedup: 5, SingleShare: 0.2}.Select(cands)
	got = kept(cands, keep)
	if got["c1"] != KeptBalance || got["d1"] != KeptBalance || got["b3"] != KeptFast {
		t.Errorf("share 0.2: kept %v, want c1 and d1 added and b3 kept", got)
	}
	if _, ok := got["a2"]; ok {
		t.Errorf("share 0.2: a2 kept (%v); the concise single goes before the fast one", got)
	}

	// Only one kind present: no balancing at all.
	var singles []Candidate
	for _, c := range cands {
		if !IsFusion(c.Categories) {
			singles = append(singles, c)
		}
	}
	keep, _ = Selection{Policy: Concur, KeepSpeedup: 5, SingleShare: 0.5}.Select(singles)
	if got := kept(singles, keep); len(got) != 2 {
		t.Errorf("singles only: kept %v, want a2 and b3 untouched", got)
	}
}

func TestSelectBestAndAll(t *testing.T) {
	cands := concurSet()
	cands[1].Pending = true // a2: pending loses to verified a1 and a3
	keep, err := Selection{Policy: BestPerTask}.Select(cands)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a1": KeptBest, "b3": KeptBest, "c2": KeptBest, "d2": KeptBest, "e1": KeptBest}
	if got := kept(cands, keep); !reflect.DeepEqual(got, want) {
		t.Errorf("best-per-task kept %v, want %v", got, want)
	}
	keep, _ = Selection{Policy: AllVerified}.Select(cands)
	if got := kept(cands, keep); len(got) != len(cands) {
		t.Errorf("all-verified kept %d of %d", len(got), len(cands))
	}
}

func TestSelectionValidate(t *testing.T) {
	for _, s := range []Selection{{Policy: "fastest"}, {Policy: Concur, SingleShare: 1}, {Policy: Concur, KeepSpeedup: -1},
		{Policy: AllVerified, MinSpeedup: -1}, {Policy: AllVerified, MinSpeedup: math.NaN()}, {Policy: AllVerified, Stream: "sometimes"}} {
		if _, err := s.Select(nil); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
	if _, err := ParsePolicy("concur"); err != nil {
		t.Error(err)
	}
}

// TestSelectMinSpeedupAndStream: correct samples are kept however slow by
// default; MinSpeedup demands a speed-up under any policy; the stream
// policy prefers or requires kernels on the current stream.
func TestSelectMinSpeedupAndStream(t *testing.T) {
	t.Parallel()
	cands := concurSet()
	keep, err := Selection{Policy: AllVerified}.Select(cands)
	if err != nil {
		t.Fatal(err)
	}
	if got := kept(cands, keep); len(got) != len(cands) {
		t.Errorf("all-verified, no min speedup: kept %v, want all %d (a3 and e1 are slower than the reference)", got, len(cands))
	}
	keep, _ = Selection{Policy: AllVerified, MinSpeedup: 1}.Select(cands)
	want := map[string]string{"a1": KeptAll, "a2": KeptAll, "b1": KeptAll, "b2": KeptAll, "b3": KeptAll, "c1": KeptAll, "c2": KeptAll}
	if got := kept(cands, keep); !reflect.DeepEqual(got, want) {
		t.Errorf("all-verified, min speedup 1: kept %v, want %v", got, want)
	}
	// concur with a speed-up required: a2, b3, c2 as before; d (no
	// timing) and e1 (0.8x) are left out.
	keep, _ = Selection{Policy: Concur, KeepSpeedup: DefaultKeepSpeedup, MinSpeedup: 1}.Select(cands)
	want = map[string]string{"a2": KeptConcise, "b3": KeptFast, "c2": KeptConcise}
	if got := kept(cands, keep); !reflect.DeepEqual(got, want) {
		t.Errorf("concur, min speedup 1: kept %v, want %v", got, want)
	}
	// a2 is the fastest of a but on the legacy default stream; a1 on the
	// current stream; a3 unmeasured.
	cands[0].Stream, cands[1].Stream = StreamCurrent, StreamOther
	keep, _ = Selection{Policy: BestPerTask}.Select(cands)
	if got := kept(cands, keep); got["a2"] != KeptBest {
		t.Errorf("best-per-task, any stream: kept %v, want a2 (the fastest)", got)
	}
	keep, _ = Selection{Policy: BestPerTask, Stream: StreamPrefer}.Select(cands)
	if got := kept(cands, keep); got["a1"] != KeptBest || got["a2"] != "" || got["b3"] != KeptBest {
		t.Errorf("best-per-task, prefer current: kept %v, want a1 (current stream) and b3", got)
	}
	keep, _ = Selection{Policy: AllVerified, Stream: StreamRequire}.Select(cands)
	if got := kept(cands, keep); !reflect.DeepEqual(got, map[string]string{"a1": KeptAll}) {
		t.Errorf("require current: kept %v, want only a1", got)
	}
	for _, tc := range []struct {
		s    Selection
		c    Candidate
		want string
	}{
		{Selection{MinSpeedup: 1}, Candidate{Speedup: 0.99}, ExcludeSlow},
		{Selection{MinSpeedup: 1}, Candidate{Speedup: 1}, ""},
		{Selection{MinSpeedup: 1}, Candidate{}, ExcludeSlow},
		{Selection{Stream: StreamRequire}, Candidate{Stream: StreamOther, Speedup: 3}, ExcludeStream},
		{Selection{Stream: StreamRequire}, Candidate{}, ExcludeStream},
		{Selection{Stream: StreamPrefer}, Candidate{Stream: StreamOther}, ""},
		{Selection{}, Candidate{Speedup: 0.1, Stream: StreamOther}, ""},
	} {
		if got := tc.s.Admit(&tc.c); got != tc.want {
			t.Errorf("%+v admits %+v: %q, want %q", tc.s, tc.c, got, tc.want)
		}
	}
	if p, err := ParseStreamPolicy("any"); err != nil || p != StreamAny {
		t.Errorf("any: %q %v", p, err)
	}
	if _, err := ParseStreamPolicy("sometimes"); err == nil {
		t.Error("stream policy sometimes: no error")
	}
}

func TestTiers(t *testing.T) {
	tr := DefaultTiers()
	for arl, want := range map[float64]string{0: "unknown", 100: "easy", 3999: "easy", 4000: "medium", 8500: "medium", 8501: "hard"} {
		if got := tr.Label(arl); got != want {
			t.Errorf("Label(%g) = %s, want %s", arl, got, want)
		}
	}
	a := NewARL()
	for i := range 4 {
		a.Add("x", 1000*(i+1))
	}
	if got := a.Mean("x"); got != 2500 {
		t.Errorf("ARL = %g, want 2500", got)
	}
	if got := a.Mean("y"); got != 0 {
		t.Errorf("ARL of an unknown task = %g", got)
	}
}

func TestDeduperKeepsFirstOfCluster(t *testing.T) {
	h, _ := NewHasher(DefaultParams())
	dd, _ := NewDeduper(DefaultParams())
	base := kernelSource("scale", 40)
	renamed := kernelSource("mul", 40) // identifiers renamed: the same tokens
	other := kernelSource("scale", 3)  // a different program
	if dup, _ := dd.Offer(h.Doc("best", Normalise(base))); dup != "" {
		t.Fatalf("first document a duplicate of %s", dup)
	}
	if dup, sim := dd.Offer(h.Doc("renamed", Normalise(renamed))); dup != "best" || sim != 1 {
		t.Errorf("renamed copy: duplicate of %q at %g, want best at 1", dup, sim)
	}
	edited := base + "\n__global__ void extra(float *q) { q[threadIdx.x] = 0.0f; }\n"
	if dup, sim := dd.Offer(h.Doc("edited", Normalise(edited))); dup != "best" || sim < 0.8 || sim == 1 {
		t.Errorf("edited copy: duplicate of %q at %g, want best, near", dup, sim)
	}
	if dup, _ := dd.Offer(h.Doc("other", Normalise(other))); dup != "" {
		t.Errorf("a distinct program was called a duplicate of %s", dup)
	}
	if dup, _ := dd.Offer(h.Doc("empty", nil)); dup != "" || dd.Kept() != 2 {
		t.Errorf("empty: dup %q, kept %d, want kept 2", dup, dd.Kept())
	}
}

// kernelSource writes a CUDA program with n statements in its kernel.
func kernelSource(name string, n int) string {
	s := fmt.Sprintf("__global__ void %s(float *x, int n) {\n int i = blockIdx.x * blockDim.x + threadIdx.x;\n", name)
	for k := range n {
		s += fmt.Sprintf(" if (i < n) x[i] = x[i] * %d.0f + %d;\n", k+1, k*k)
	}
	return s + "}\n"
}

func TestReferenceFindsLeaks(t *testing.T) {
	h, _ := NewHasher(DefaultParams())
	dir := t.TempDir() + "/bench"
	writeFile(t, dir+"/level1/1_scale.cu", kernelSource("scale", 30))
	writeFile(t, dir+"/level1/2_asm.s", asmListing(30))
	writeFile(t, dir+"/tiny.py", "x = 1\n")
	writeFile(t, dir+"/.git/objects", kernelSource("hidden", 50))
	writeFile(t, dir+"/blob.bin", "\x00\x01binary")
	r := NewReference(h)
	if err := r.LoadDir(dir); err != nil {
		t.Fatal(err)
	}
	if r.Files != 2 {
		t.Errorf("loaded %d files, want 2 (tiny, hidden and binary skipped)", r.Files)
	}
	if name, sim := r.Match(Normalise(kernelSource("renamed", 30))); name != "bench/level1/1_scale.cu" || sim != 1 {
		t.Errorf("renamed leak: %q at %g", name, sim)
	}
	if name, _ := r.Match(NormaliseAsm(asmListing(30) + "\tret\n")); name != "bench/level1/2_asm.s" {
		t.Errorf("near assembly leak: %q", name)
	}
	if name, _ := r.Match(Normalise(kernelSource("hidden", 50))); name != "" {
		t.Errorf("a file in a hidden folder matched: %s", name)
	}
	if name, _ := r.Match(Normalise(kernelSource("scale", 4) + "int main() { return 0; }")); name != "" {
		t.Errorf("a distinct program matched %s", name)
	}
	if err := NewReference(h).LoadDir(t.TempDir()); err == nil {
		t.Error("an empty benchmark folder loaded without error")
	}
	if err := NewReference(h).LoadDir(dir + "/nope"); err == nil {
		t.Error("a missing benchmark folder loaded without error")
	}
}

func asmListing(n int) string {
	s := "scale:\n"
	for k := range n {
		s += fmt.Sprintf("\tmovl\t%d(%%rdi), %%eax\n\taddl\t$%d, %%eax\n", 4*k, k)
	}
	return s
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReferenceLoadFS: an embedded bench set (an fs.FS) loads like a
// folder, its documents named by the set's name.
func TestReferenceLoadFS(t *testing.T) {
	h, _ := NewHasher(DefaultParams())
	fsys := fstest.MapFS{
		"programs/a/program.cu": {Data: []byte(kernelSource("scale", 30))},
		"programs/.hidden/x.cu": {Data: []byte(kernelSource("hidden", 50))},
		"other/b.cu":            {Data: []byte(kernelSource("outside", 40))},
	}
	r := NewReference(h)
	if err := r.LoadFS(fsys, "programs", "bench:cuda2hip"); err != nil {
		t.Fatal(err)
	}
	if r.Files != 1 {
		t.Errorf("loaded %d files, want 1 (hidden folder and files outside root skipped)", r.Files)
	}
	if name, sim := r.Match(Normalise(kernelSource("renamed", 30))); name != "bench:cuda2hip/a/program.cu" || sim != 1 {
		t.Errorf("leak: %q at %g", name, sim)
	}
	if name, _ := r.Match(Normalise(kernelSource("outside", 40))); name != "" {
		t.Errorf("a file outside root matched: %s", name)
	}
	if err := NewReference(h).LoadFS(fstest.MapFS{"programs/tiny.cu": {Data: []byte("int x;")}}, "programs", "b"); err == nil {
		t.Error("a bench set without a usable document loaded without error")
	}
}

// TestReferenceLoadFSTwice: two lanes sharing one bench set load it twice
// without error; the second load adds nothing.
func TestReferenceLoadFSTwice(t *testing.T) {
	h, _ := NewHasher(DefaultParams())
	fsys := fstest.MapFS{"programs/a/program.cu": {Data: []byte(kernelSource("scale", 30))}}
	r := NewReference(h)
	for _, name := range []string{"bench:cuda2hip", "bench:sass2rdna"} {
		if err := r.LoadFS(fsys, "programs", name); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if r.Files != 1 {
		t.Errorf("%d files after loading one set twice, want 1", r.Files)
	}
}
