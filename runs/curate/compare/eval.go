package compare

import (
	"math"
)

// Truth is the ground truth a run is scored against: every planted family
// pair with its exact Jaccard similarity, and the exact similarity of any
// other pair some implementation reported (an "accidental" pair).
type Truth struct {
	c         *Corpus
	Threshold float64
	exact     map[uint64]float64 // pair key -> exact Jaccard
	planted   map[uint64]bool
	// Accidental: reported pairs outside the planted families.
	Accidental map[uint64]float64
}

func key(a, b int32) uint64 {
	if a > b {
		a, b = b, a
	}
	return uint64(a)<<32 | uint64(uint32(b))
}

// NewTruth indexes c's planted pairs.
func NewTruth(c *Corpus, threshold float64) *Truth {
	t := &Truth{c: c, Threshold: threshold, exact: map[uint64]float64{}, planted: map[uint64]bool{}, Accidental: map[uint64]float64{}}
	for _, p := range c.Pairs {
		k := key(p.A, p.B)
		t.exact[k] = p.J
		t.planted[k] = true
	}
	return t
}

// J is the exact Jaccard similarity of a reported pair, computed from the
// texts when it is not a planted pair.
func (t *Truth) J(a, b int32) float64 {
	k := key(a, b)
	if j, ok := t.exact[k]; ok {
		return j
	}
	j := Jaccard(ShingleSet(t.c.Docs[a]), ShingleSet(t.c.Docs[b]))
	t.exact[k] = j
	t.Accidental[k] = j
	return j
}

// Observe computes the exact similarity of every pair r reported; call it
// for every result before scoring any, so that the truth includes the
// accidental pairs any implementation found.
func (t *Truth) Observe(r *Result) {
	for _, f := range r.Found {
		t.J(f.A, f.B)
	}
}

// Positives is the number of true near-duplicate pairs known: planted
// pairs and observed accidental pairs at or above the threshold.
func (t *Truth) Positives() int {
	n := 0
	for _, j := range t.exact {
		if j >= t.Threshold {
			n++
		}
	}
	return n
}

// Stratum counts planted pairs in a range of exact similarity.
type Stratum struct {
	Lo, Hi   float64 // [Lo, Hi); Hi > 1 holds exactly 1
	Pairs    int
	Found    int
	Expected float64 // under ideal MinHash with the run's banding
	SD       float64 // of Found under the same model
}

// Strata are the similarity ranges reported.
var Strata = [][2]float64{{1, 2}, {0.9, 1}, {0.85, 0.9}, {0.8, 0.85}, {0.75, 0.8}, {0.7, 0.75}, {0.6, 0.7}, {0, 0.6}}

// Score is how a run does against the truth.
type Score struct {
	Found, FoundPlanted, FoundAccidental int
	TruePos                              int // reported pairs with exact J >= threshold
	Positives                            int
	Precision, Recall                    float64
	// Reported pairs far from the threshold on the wrong side.
	FoundBelow07, MissedAbove09 int
	Strata                      []Stratum
	// Estimation error over every planted pair: mean and RMS of
	// (estimate - exact), the RMS of the binomial standard error
	// sqrt(J(1-J)/perms) for comparison, and the fraction of pairs off
	// by more than 3 standard errors (J < 1).
	EstBias, EstRMSE, EstRMSEIdeal, EstBeyond3SD float64
	// Clusters (connected components of reported pairs) against the
	// truth's (components of true pairs): adjusted Rand index and
	// pairwise precision, recall and F1 of "in the same cluster".
	Clusters                               int // non-singleton clusters
	ClusteredDocs                          int
	ARI, PairPrecision, PairRecall, PairF1 float64
	TruthClusters, TruthClusteredDocs      int
	ExactClusterDocs                       int // clustered docs whose cluster equals their truth cluster
}

// ScoreRun scores r; perms and threshold are those of the estimate check.
func (t *Truth) ScoreRun(r *Result, perms int) Score {
	if r.PlantedEst == nil {
		r.Finish(t.c)
	}
	s := Score{Found: len(r.Found), Positives: t.Positives()}
	found := make(map[uint64]bool, len(r.Found))
	for _, f := range r.Found {
		k := key(f.A, f.B)
		found[k] = true
		j := t.J(f.A, f.B)
		if t.planted[k] {
			s.FoundPlanted++
		} else {
			s.FoundAccidental++
		}
		if j >= t.Threshold {
			s.TruePos++
		}
		if j < 0.7 {
			s.FoundBelow07++
		}
	}
	if s.Found > 0 {
		s.Precision = float64(s.TruePos) / float64(s.Found)
	}
	if s.Positives > 0 {
		s.Recall = float64(s.TruePos) / float64(s.Positives)
	}
	minEq := MinEqual(perms, t.Threshold)
	memo := detectMemo{}
	for _, b := range Strata {
		s.Strata = append(s.Strata, Stratum{Lo: b[0], Hi: b[1]})
	}
	var sumErr, sumSq, sumVar float64
	var n, beyond, nvar int
	for pi, p := range t.c.Pairs {
		k := key(p.A, p.B)
		if p.J >= 0.9 && !found[k] {
			s.MissedAbove09++
		}
		for i := range s.Strata {
			st := &s.Strata[i]
			if p.J >= st.Lo && p.J < st.Hi {
				st.Pairs++
				if found[k] {
					st.Found++
				}
				q := memo.get(p.J, r.Bands, r.Rows, perms, minEq)
				st.Expected += q
				st.SD += q * (1 - q) // variance until the end
				break
			}
		}
		e := r.PlantedEst[pi] - p.J
		sumErr += e
		sumSq += e * e
		n++
		if p.J < 1 {
			v := p.J * (1 - p.J) / float64(perms)
			sumVar += v
			nvar++
			if math.Abs(e) > 3*math.Sqrt(v) {
				beyond++
			}
		}
	}
	for i := range s.Strata {
		s.Strata[i].SD = math.Sqrt(s.Strata[i].SD)
	}
	if n > 0 {
		s.EstBias = sumErr / float64(n)
		s.EstRMSE = math.Sqrt(sumSq / float64(n))
		s.EstRMSEIdeal = math.Sqrt(sumVar / float64(n))
	}
	if nvar > 0 {
		s.EstBeyond3SD = float64(beyond) / float64(nvar)
	}

	got := Components(r.N, func(yield func(a, b int32)) {
		for _, f := range r.Found {
			yield(f.A, f.B)
		}
	})
	truth := t.Clusters()
	s.Clusters, s.ClusteredDocs = ClusterStats(got)
	s.TruthClusters, s.TruthClusteredDocs = ClusterStats(truth)
	a := CompareClusterings(truth, got)
	s.ARI, s.PairPrecision, s.PairRecall, s.PairF1, s.ExactClusterDocs = a.ARI, a.Precision, a.Recall, a.F1, a.SameClusterDocs
	return s
}

// Clusters are the connected components of the true pairs.
func (t *Truth) Clusters() []int32 {
	return Components(len(t.c.Docs), func(yield func(a, b int32)) {
		for k, j := range t.exact {
			if j >= t.Threshold {
				yield(int32(k>>32), int32(uint32(k)))
			}
		}
	})
}

// MinEqual is the least number of equal minima out of perms whose
// estimate eq/perms is at least threshold (the check kiln makes).
func MinEqual(perms int, threshold float64) int {
	for eq := 0; eq <= perms; eq++ {
		if float64(eq)/float64(perms) >= threshold {
			return eq
		}
	}
	return perms + 1
}

// DetectProb is the probability that ideal MinHash (perms independent
// min-wise hashes, each equal for the two sets with probability j) makes a
// pair a candidate (some band of rows equal, the first bands*rows hashes
// split into bands) and its estimate passes (at least minEq equal minima
// over all perms).
func DetectProb(j float64, bands, rows, perms, minEq int) float64 {
	binom := func(n int) []float64 {
		p := make([]float64, n+1)
		switch {
		case j >= 1:
			p[n] = 1
		case j <= 0:
			p[0] = 1
		default:
			lg, _ := math.Lgamma(float64(n + 1))
			for m := 0; m <= n; m++ {
				la, _ := math.Lgamma(float64(m + 1))
				lb, _ := math.Lgamma(float64(n - m + 1))
				p[m] = math.Exp(lg - la - lb + float64(m)*math.Log(j) + float64(n-m)*math.Log(1-j))
			}
		}
		return p
	}
	pr := binom(rows)
	none := make([]float64, perms+1) // no band equal yet, by count
	some := make([]float64, perms+1) // some band equal
	none[0] = 1
	for range bands {
		n0, n1 := make([]float64, perms+1), make([]float64, perms+1)
		for c := 0; c <= perms; c++ {
			if none[c] == 0 && some[c] == 0 {
				continue
			}
			for m := 0; m <= rows && c+m <= perms; m++ {
				if m == rows {
					n1[c+m] += (none[c] + some[c]) * pr[m]
				} else {
					n0[c+m] += none[c] * pr[m]
					n1[c+m] += some[c] * pr[m]
				}
			}
		}
		none, some = n0, n1
	}
	rest := perms - bands*rows
	prest := binom(rest)
	p := 0.0
	for c := 0; c <= perms; c++ {
		if some[c] == 0 {
			continue
		}
		for m := 0; m <= rest; m++ {
			if c+m >= minEq {
				p += some[c] * prest[m]
			}
		}
	}
	return p
}

// Components labels n documents by the connected component of the given
// edges (the smallest document number of the component).
func Components(n int, edges func(yield func(a, b int32))) []int32 {
	parent := make([]int32, n)
	for i := range parent {
		parent[i] = int32(i)
	}
	var find func(x int32) int32
	find = func(x int32) int32 {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	edges(func(a, b int32) {
		ra, rb := find(a), find(b)
		if ra == rb {
			return
		}
		if ra < rb {
			parent[rb] = ra
		} else {
			parent[ra] = rb
		}
	})
	for i := range parent {
		parent[i] = find(int32(i))
	}
	return parent
}

// ClusterStats counts the non-singleton clusters and their documents.
func ClusterStats(labels []int32) (clusters, docs int) {
	size := map[int32]int{}
	for _, l := range labels {
		size[l]++
	}
	for _, s := range size {
		if s > 1 {
			clusters++
			docs += s
		}
	}
	return
}

// Agreement compares two clusterings of the same documents.
type Agreement struct {
	// ARI is the adjusted Rand index over all documents.
	ARI float64
	// Precision, Recall and F1 of B's same-cluster pairs against A's.
	Precision, Recall, F1 float64
	// SameClusterDocs is the number of documents in a non-singleton
	// cluster of A or B whose cluster is the same set in both;
	// ClusteredDocs the number in a non-singleton cluster of either.
	SameClusterDocs, ClusteredDocs int
}

// CompareClusterings compares clustering b with reference a.
func CompareClusterings(a, b []int32) Agreement {
	sa, sb := map[int32]int{}, map[int32]int{}
	nab := map[uint64]int{}
	for i := range a {
		sa[a[i]]++
		sb[b[i]]++
		nab[uint64(uint32(a[i]))<<32|uint64(uint32(b[i]))]++
	}
	c2 := func(n int) float64 { return float64(n) * float64(n-1) / 2 }
	var index, sumA, sumB float64
	for _, v := range nab {
		index += c2(v)
	}
	for _, v := range sa {
		sumA += c2(v)
	}
	for _, v := range sb {
		sumB += c2(v)
	}
	var ag Agreement
	total := c2(len(a))
	expected := sumA * sumB / total
	if den := (sumA+sumB)/2 - expected; den != 0 {
		ag.ARI = (index - expected) / den
	} else {
		ag.ARI = 1
	}
	if sumB > 0 {
		ag.Precision = index / sumB
	}
	if sumA > 0 {
		ag.Recall = index / sumA
	}
	if ag.Precision+ag.Recall > 0 {
		ag.F1 = 2 * ag.Precision * ag.Recall / (ag.Precision + ag.Recall)
	}
	for i := range a {
		na, nb := sa[a[i]], sb[b[i]]
		if na == 1 && nb == 1 {
			continue
		}
		ag.ClusteredDocs++
		if na == nb && nab[uint64(uint32(a[i]))<<32|uint64(uint32(b[i]))] == na {
			ag.SameClusterDocs++
		}
	}
	return ag
}

// PairOverlap is |A∩B| / |A∪B| of two runs' reported pairs, with the
// counts only in A and only in B.
func PairOverlap(a, b *Result) (jaccard float64, onlyA, onlyB int) {
	sa := make(map[uint64]bool, len(a.Found))
	for _, f := range a.Found {
		sa[key(f.A, f.B)] = true
	}
	both := 0
	sb := make(map[uint64]bool, len(b.Found))
	for _, f := range b.Found {
		k := key(f.A, f.B)
		if sb[k] {
			continue
		}
		sb[k] = true
		if sa[k] {
			both++
		}
	}
	onlyA, onlyB = len(sa)-both, len(sb)-both
	if u := len(sa) + len(sb) - both; u > 0 {
		jaccard = float64(both) / float64(u)
	} else {
		jaccard = 1
	}
	return
}

// detectMemo caches DetectProb: planted pairs share few distinct
// similarities.
type detectMemo map[[4]float64]float64

func (m detectMemo) get(j float64, bands, rows, perms, minEq int) float64 {
	k := [4]float64{j, float64(bands), float64(rows), float64(perms*1000 + minEq)}
	if p, ok := m[k]; ok {
		return p
	}
	p := DetectProb(j, bands, rows, perms, minEq)
	m[k] = p
	return p
}

// ExpectedDisagreement is what two independent ideal MinHash
// implementations with the given bandings would be expected to report on
// c's planted pairs: pairs reported by A alone, by B alone, and by both.
// Two implementations agree within sampling error when their observed
// disagreement is near this.
func ExpectedDisagreement(c *Corpus, bandsA, rowsA, bandsB, rowsB, perms int, threshold float64) (onlyA, onlyB, both float64) {
	m := detectMemo{}
	minEq := MinEqual(perms, threshold)
	for _, p := range c.Pairs {
		a := m.get(p.J, bandsA, rowsA, perms, minEq)
		b := m.get(p.J, bandsB, rowsB, perms, minEq)
		onlyA += a * (1 - b)
		onlyB += b * (1 - a)
		both += a * b
	}
	return
}
