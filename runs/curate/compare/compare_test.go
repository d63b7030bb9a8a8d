package compare

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/kiln-dev/kiln/runs/curate"
)

// The generator is deterministic and its ground truth is exact and in
// the intended ranges.
func TestGeneratorTruth(t *testing.T) {
	const n = 3000
	c := Generate(n, 7, Options{})
	if d := Generate(n, 7, Options{Workers: 1}); !slices.Equal(d.Docs, c.Docs) || !slices.Equal(d.Pairs, c.Pairs) || !slices.Equal(d.Kind, c.Kind) {
		t.Fatal("same seed, other corpus (or the corpus depends on the number of workers)")
	}
	if d := Generate(n, 8, Options{}); slices.Equal(d.Docs, c.Docs) {
		t.Fatal("another seed made the same corpus")
	}
	if len(c.Docs) != n || len(c.Kind) != n || len(c.Family) != n {
		t.Fatalf("%d docs, want %d", len(c.Docs), n)
	}

	kinds := map[Kind]int{}
	bases := map[int32]int32{} // family -> its base
	for i, k := range c.Kind {
		kinds[k]++
		if (k == Single) != (c.Family[i] < 0) {
			t.Fatalf("doc %d: kind %s, family %d", i, k, c.Family[i])
		}
		if k == Base {
			if _, dup := bases[c.Family[i]]; dup {
				t.Fatalf("family %d has two bases", c.Family[i])
			}
			bases[c.Family[i]] = int32(i)
		}
		lines := 0
		for _, ch := range c.Docs[i] {
			if ch == '\n' {
				lines++
			}
		}
		if k == Single || k == Base {
			if lines < 40 || lines > 80 {
				t.Errorf("doc %d (%s): %d lines", i, k, lines)
			}
		}
	}
	for _, k := range []Kind{Single, Base, Exact, High, Near, Low} {
		if kinds[k] < 20 {
			t.Errorf("only %d documents of kind %s", kinds[k], k)
		}
	}

	// Every pair of a family is listed once, with the exact Jaccard
	// similarity of the texts' shingle sets.
	members := map[int32][]int32{}
	for i, f := range c.Family {
		if f >= 0 {
			members[f] = append(members[f], int32(i))
		}
	}
	want := 0
	for _, m := range members {
		want += len(m) * (len(m) - 1) / 2
	}
	if len(c.Pairs) != want {
		t.Fatalf("%d pairs, want %d", len(c.Pairs), want)
	}
	sets := map[int32][]uint64{}
	set := func(i int32) []uint64 {
		if s, ok := sets[i]; ok {
			return s
		}
		sets[i] = ShingleSet(c.Docs[i])
		return sets[i]
	}
	inRange := map[Kind]int{}
	for _, p := range c.Pairs {
		if p.A >= p.B || c.Family[p.A] != c.Family[p.B] || c.Family[p.A] < 0 {
			t.Fatalf("pair %+v: not two documents of one family", p)
		}
		if j := Jaccard(set(p.A), set(p.B)); j != p.J {
			t.Fatalf("pair %+v: the texts' Jaccard similarity is %v", p, j)
		}
		// A variant against its base: J in the kind's range.
		base, v := p.A, p.B
		if c.Kind[v] == Base {
			base, v = v, base
		}
		if c.Kind[base] != Base {
			continue
		}
		var lo, hi float64
		switch c.Kind[v] {
		case Exact:
			lo, hi = 1, 1
			if c.Docs[v] == c.Docs[base] {
				t.Errorf("exact variant %d is the same text as its base", v)
			}
		case High:
			lo, hi = HighRange[0], HighRange[1]
		case Near:
			lo, hi = NearRange[0], NearRange[1]
		case Low:
			lo, hi = LowRange[0], LowRange[1]
		}
		if p.J < lo || p.J > hi {
			t.Errorf("%s variant %d of %d: J %.4f outside [%.2f, %.2f]", c.Kind[v], v, base, p.J, lo, hi)
		}
		inRange[c.Kind[v]]++
	}
	for _, k := range []Kind{Exact, High, Near, Low} {
		if inRange[k] != kinds[k] {
			t.Errorf("%d %s variants checked against their base, want %d", inRange[k], k, kinds[k])
		}
	}

	// Unrelated documents are far apart.
	r := rand.New(rand.NewPCG(1, 1))
	for range 500 {
		a, b := r.IntN(n), r.IntN(n)
		if a == b || (c.Family[a] >= 0 && c.Family[a] == c.Family[b]) {
			continue
		}
		if j := Jaccard(set(int32(a)), set(int32(b))); j > 0.3 {
			t.Errorf("unrelated documents %d and %d: J %.3f", a, b, j)
		}
	}
}

func corpus5k(t *testing.T) (*Corpus, []string) {
	t.Helper()
	c := Generate(5000, 11, Options{})
	ids := make([]string, len(c.Docs))
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}
	return c, ids
}

// checkFound asserts that r found at least minHigh of the planted pairs
// with J above high and no pair at all (planted or not) below 0.6.
func checkFound(t *testing.T, c *Corpus, r *Result, high, minHigh float64) {
	t.Helper()
	truth := NewTruth(c, 0.8)
	found := map[uint64]bool{}
	for _, f := range r.Found {
		if f.A >= f.B {
			t.Fatalf("%s: pair %+v not ordered", r.Mode, f)
		}
		if j := truth.J(f.A, f.B); j < 0.6 {
			t.Errorf("%s: reported %d-%d with exact J %.3f (estimate %.3f)", r.Mode, f.A, f.B, j, f.Est)
		}
		if f.Est < 0.8 {
			t.Errorf("%s: reported %d-%d with estimate %.3f below the threshold", r.Mode, f.A, f.B, f.Est)
		}
		found[key(f.A, f.B)] = true
	}
	var nHigh, gotHigh, nLow int
	for _, p := range c.Pairs {
		switch {
		case p.J > high:
			nHigh++
			if found[key(p.A, p.B)] {
				gotHigh++
			}
		case p.J < 0.6:
			nLow++
		}
	}
	if nHigh < 200 || nLow < 50 {
		t.Fatalf("too few planted pairs to judge: %d above %.2f, %d below 0.6", nHigh, high, nLow)
	}
	if frac := float64(gotHigh) / float64(nHigh); frac < minHigh {
		t.Errorf("%s: found %d of %d planted pairs above J %.2f (%.3f), want >= %.2f", r.Mode, gotHigh, nHigh, high, frac, minHigh)
	}
	t.Logf("%s: %d of %d planted pairs above %.2f found; %d pairs below 0.6 planted, none reported; %d reported in all", r.Mode, gotHigh, nHigh, high, nLow, len(r.Found))
}

func TestKilnFindsPlantedPairs(t *testing.T) {
	c, ids := corpus5k(t)
	r, err := RunKiln(c.Docs, ids, curate.DefaultParams(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkFound(t, c, r, 0.9, 0.95)
}

// The harness drives ekzhu correctly: with its own banding (9 x 13 at
// 0.8) it finds nearly all pairs above 0.95 and nothing below 0.6.
func TestEkzhuFindsPlantedPairs(t *testing.T) {
	c, ids := corpus5k(t)
	p := curate.DefaultParams()
	r := RunEkzhu(c.Docs, ids, p.Perms, p.Shingle, p.Threshold, p.Threshold, 1)
	if r.Bands != 9 || r.Rows != 13 {
		t.Errorf("ekzhu chose %d bands x %d rows, want 9 x 13", r.Bands, r.Rows)
	}
	checkFound(t, c, r, 0.95, 0.97)
}

func TestDetectProb(t *testing.T) {
	if p := DetectProb(1, 16, 8, 128, 103); p != 1 {
		t.Errorf("J=1: %v", p)
	}
	if p := DetectProb(0, 16, 8, 128, 103); p != 0 {
		t.Errorf("J=0: %v", p)
	}
	// One band of one row and no estimate check: the probability is J.
	if p := DetectProb(0.3, 1, 1, 1, 0); math.Abs(p-0.3) > 1e-12 {
		t.Errorf("1x1: %v", p)
	}
	// Without the estimate check, banding alone: 1-(1-J^r)^b.
	j := 0.75
	if p, want := DetectProb(j, 16, 8, 128, 0), 1-math.Pow(1-math.Pow(j, 8), 16); math.Abs(p-want) > 1e-9 {
		t.Errorf("banding: %v, want %v", p, want)
	}
	prev := 0.0
	for j := 0.0; j <= 1; j += 0.05 {
		p := DetectProb(j, 16, 8, 128, MinEqual(128, 0.8))
		if p < prev-1e-12 {
			t.Errorf("not monotone at %v", j)
		}
		prev = p
	}
	if MinEqual(128, 0.8) != 103 {
		t.Errorf("MinEqual(128, 0.8) = %d, want 103", MinEqual(128, 0.8))
	}
}

func TestCompareClusterings(t *testing.T) {
	a := []int32{0, 0, 2, 3, 3, 3, 6}
	if ag := CompareClusterings(a, a); ag.ARI != 1 || ag.F1 != 1 || ag.SameClusterDocs != 5 || ag.ClusteredDocs != 5 {
		t.Errorf("identical: %+v", ag)
	}
	b := []int32{0, 0, 2, 3, 3, 5, 6} // doc 5 split off
	ag := CompareClusterings(a, b)
	// a's same-cluster pairs: 1 + 3 = 4; b's: 1 + 1 = 2, both in a.
	if ag.Precision != 1 || ag.Recall != 0.5 || ag.SameClusterDocs != 2 || ag.ClusteredDocs != 5 {
		t.Errorf("split: %+v", ag)
	}
	if ag.ARI >= 1 || ag.ARI <= 0 {
		t.Errorf("split: ARI %v", ag.ARI)
	}
	labels := Components(5, func(yield func(a, b int32)) { yield(3, 1); yield(4, 3) })
	if !slices.Equal(labels, []int32{0, 1, 2, 1, 1}) {
		t.Errorf("components %v", labels)
	}
}
