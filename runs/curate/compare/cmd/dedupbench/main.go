// Command dedupbench compares kiln's MinHash/LSH near-duplicate detection
// (runs/curate) with github.com/ekzhu/minhash-lsh on a synthetic corpus
// of C/CUDA-like documents with planted near-duplicates, on one core.
//
//	go run ./cmd/dedupbench -n 400000 -modes kiln,ekzhu,ekzhu:0.7 -json out.json
//
// The corpus is generated first (in parallel, not timed); then GOMAXPROCS
// is set to -procs (1) and the modes run one after the other in this
// goroutine.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/runs/curate/compare"
	"github.com/kiln-dev/kiln/runs/curate/compare/fastsign"
)

func main() {
	n := flag.Int("n", 400000, "number of documents")
	seed := flag.Uint64("seed", 1, "corpus seed")
	modes := flag.String("modes", "kiln,ekzhu", "comma-separated runs: kiln; kiln-fast (proposed Sign, same signatures); kiln-wrap64 (proposed cheaper permutations, other signatures); kiln-seedS (kiln with MinHash seed S); expected (disagreement expected of independent ideal MinHash); interleaved, interleaved-variants (signing alone, implementations interleaved batch by batch); ekzhu (its LSH built at the threshold); ekzhu:T (its LSH built at threshold T, then the same estimate check)")
	procs := flag.Int("procs", 1, "GOMAXPROCS while timing")
	jsonOut := flag.String("json", "", "write the figures as JSON to this file")
	hashSeed := flag.Int64("hashseed", 1, "MinHash seed of every implementation (curate.Params.Seed, ekzhu's NewMinhash seed)")
	flag.Parse()

	p := curate.DefaultParams()
	p.Seed = uint64(*hashSeed)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	out := map[string]any{}

	fmt.Fprintf(w, "dedupbench: n=%d seed=%d hashseed=%d modes=%s %s %s/%s cpu=%q\n", *n, *seed, *hashSeed, *modes, runtime.Version(), runtime.GOOS, runtime.GOARCH, cpuModel())
	c := generate(w, *n, *seed, out)
	ids := make([]string, *n)
	for i := range ids {
		ids[i] = strconv.Itoa(i)
	}

	runtime.GOMAXPROCS(*procs)
	var results []*compare.Result
	for _, m := range strings.Split(*modes, ",") {
		if m == "expected" {
			expected(w, c, p)
			continue
		}
		if m == "interleaved" || m == "interleaved-variants" {
			interleaved(w, c, p, *hashSeed, m == "interleaved-variants", out)
			continue
		}
		runtime.GC()
		debug.FreeOSMemory()
		r := runMode(m, c, ids, p, *hashSeed)
		r.Finish(c)
		results = append(results, r)
		fmt.Fprintf(w, "ran %s: %v wall, %v CPU\n", m, r.Total().Round(time.Millisecond), r.CPU.Total().Round(time.Millisecond))
		w.Flush()
	}
	runtime.GOMAXPROCS(runtime.NumCPU())
	if len(results) == 0 {
		writeJSON(*jsonOut, out)
		return
	}

	truth := compare.NewTruth(c, p.Threshold)
	for _, r := range results {
		truth.Observe(r)
	}
	rows := stageTable(w, results)
	scores := scoreTable(w, truth, results, rows, p)
	strataTable(w, results, scores)
	clusterTable(w, results, scores)
	if len(results) > 1 {
		out["agreement_with_"+results[0].Mode] = agreementTable(w, c, results, p)
	}
	out["runs"] = rows
	out["accidental_pairs"] = len(truth.Accidental)
	out["positives"] = truth.Positives()
	fmt.Fprintf(w, "\ntrue pairs (J>=%.2f): %d, of which accidental (not planted): %d of %d accidental pairs reported\n", p.Threshold, truth.Positives(), countAbove(truth.Accidental, p.Threshold), len(truth.Accidental))
	writeJSON(*jsonOut, out)
}

// generate makes the corpus (in parallel, not timed) and describes it on
// w and in out.
func generate(w *bufio.Writer, n int, seed uint64, out map[string]any) *compare.Corpus {
	t0 := time.Now()
	c := compare.Generate(n, seed, compare.Options{})
	gen := time.Since(t0)
	kinds := map[string]int{}
	for _, k := range c.Kind {
		kinds[k.String()]++
	}
	var bytes int
	for _, d := range c.Docs {
		bytes += len(d)
	}
	mean, maxJ := unrelated(c, 2000)
	fmt.Fprintf(w, "corpus: %d docs (%.0f bytes/doc) in %v (GOMAXPROCS %d); kinds %v; %d planted pairs; unrelated pairs (2000 sampled): mean J %.3f, max %.3f\n",
		n, float64(bytes)/float64(n), gen.Round(time.Millisecond), runtime.GOMAXPROCS(0), kinds, len(c.Pairs), mean, maxJ)
	out["corpus"] = map[string]any{"n": n, "seed": seed, "kinds": kinds, "planted_pairs": len(c.Pairs), "bytes_per_doc": float64(bytes) / float64(n), "unrelated_mean_j": mean, "unrelated_max_j": maxJ, "generate_s": gen.Seconds()}
	return c
}

// runMode runs the kiln or ekzhu mode m on the corpus; a bad mode exits.
func runMode(m string, c *compare.Corpus, ids []string, p curate.Params, hashSeed int64) *compare.Result {
	var r *compare.Result
	switch {
	case m == "kiln" || m == "kiln-fast" || m == "kiln-wrap64" || strings.HasPrefix(m, "kiln-seed"):
		var sign compare.Signer
		switch {
		case strings.HasPrefix(m, "kiln-seed"): // kiln with another MinHash seed
			q := p
			s, err := strconv.ParseUint(strings.TrimPrefix(m, "kiln-seed"), 10, 64)
			if err != nil {
				fmt.Fprintf(os.Stderr, "mode %q: %v\n", m, err)
				os.Exit(2)
			}
			q.Seed = s
			h, _ := curate.NewHasher(q)
			sign = h.Sign
		case m == "kiln-fast":
			h, _ := fastsign.New(p)
			sign = h.Sign
		case m == "kiln-wrap64":
			h, _ := fastsign.NewWrap64(p)
			sign = h.Sign
		}
		var err error
		if r, err = compare.RunKiln(c.Docs, ids, p, sign); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		r.Mode = m
	case m == "ekzhu" || strings.HasPrefix(m, "ekzhu:"):
		lt := p.Threshold
		if s, ok := strings.CutPrefix(m, "ekzhu:"); ok {
			var err error
			if lt, err = strconv.ParseFloat(s, 64); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
		r = compare.RunEkzhu(c.Docs, ids, p.Perms, p.Shingle, lt, p.Threshold, hashSeed)
		r.Mode = m
	default:
		fmt.Fprintf(os.Stderr, "unknown mode %q\n", m)
		os.Exit(2)
	}
	return r
}

// stageTable prints the CPU and wall seconds of each run's stages, and
// returns the runs' JSON rows.
func stageTable(w *bufio.Writer, results []*compare.Result) []map[string]any {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", d.Seconds()) }
	mb := func(b uint64) string { return fmt.Sprintf("%.0f", float64(b)/(1<<20)) }
	fmt.Fprintf(w, "\nCPU seconds of the process per stage (wall seconds in brackets):\n\n| mode | bands x rows | normalise | shingle | sign | LSH | total CPU s | total wall s | us/doc (CPU) | docs/s (CPU) | peak heap MiB | retained MiB | allocated MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var rows []map[string]any
	for _, r := range results {
		c, tot := r.CPU, r.CPU.Total()
		st := func(cpu, wall time.Duration) string { return fmt.Sprintf("%.2f (%.2f)", cpu.Seconds(), wall.Seconds()) }
		fmt.Fprintf(w, "| %s | %d x %d | %s | %s | %s | %s | %s | %s | %.1f | %.0f | %s | %s | %s |\n", r.Mode, r.Bands, r.Rows,
			st(c.Normalise, r.Normalise), st(c.Shingle, r.Shingle), st(c.Sign, r.Sign), st(c.LSH, r.LSH), ms(tot), ms(r.Total()),
			float64(tot.Microseconds())/float64(r.N), float64(r.N)/tot.Seconds(), mb(r.PeakHeap), mb(r.Retained), mb(r.Allocated))
		rows = append(rows, map[string]any{"mode": r.Mode, "n": r.N, "bands": r.Bands, "rows": r.Rows,
			"normalise_s": r.Normalise.Seconds(), "shingle_s": r.Shingle.Seconds(), "sign_s": r.Sign.Seconds(), "lsh_s": r.LSH.Seconds(), "total_s": r.Total().Seconds(),
			"cpu_normalise_s": c.Normalise.Seconds(), "cpu_shingle_s": c.Shingle.Seconds(), "cpu_sign_s": c.Sign.Seconds(), "cpu_lsh_s": c.LSH.Seconds(), "cpu_total_s": tot.Seconds(),
			"cpu_us_per_doc": float64(tot.Microseconds()) / float64(r.N), "peak_heap_bytes": r.PeakHeap, "retained_bytes": r.Retained, "allocated_bytes": r.Allocated})
	}
	return rows
}

// scoreTable prints each run's pairs and estimates against the truth, and
// returns the scores by mode (also put in rows).
func scoreTable(w *bufio.Writer, truth *compare.Truth, results []*compare.Result, rows []map[string]any, p curate.Params) map[string]compare.Score {
	fmt.Fprintf(w, "\n| mode | reported pairs | planted | accidental | precision (J>=%.2f) | recall | reported J<0.7 | missed J>=0.9 | est. bias | est. RMSE | ideal RMSE | beyond 3 SE |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n", p.Threshold)
	scores := map[string]compare.Score{}
	for i, r := range results {
		s := truth.ScoreRun(r, p.Perms)
		scores[r.Mode] = s
		rows[i]["score"] = s
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.4f | %.4f | %d | %d | %+.4f | %.4f | %.4f | %.4f |\n", r.Mode, s.Found, s.FoundPlanted, s.FoundAccidental, s.Precision, s.Recall, s.FoundBelow07, s.MissedAbove09, s.EstBias, s.EstRMSE, s.EstRMSEIdeal, s.EstBeyond3SD)
	}
	return scores
}

// strataTable prints the planted pairs found per Jaccard stratum against
// ideal MinHash's expectation.
func strataTable(w *bufio.Writer, results []*compare.Result, scores map[string]compare.Score) {
	fmt.Fprintf(w, "\nplanted pairs by exact Jaccard: found / expected under ideal MinHash with the run's banding (± 1 SD)\n\n| J range | pairs |")
	for _, r := range results {
		fmt.Fprintf(w, " %s |", r.Mode)
	}
	fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("---|", len(results)))
	for i, b := range compare.Strata {
		rng := fmt.Sprintf("[%.2f, %.2f)", b[0], b[1])
		if b[0] == 1 {
			rng = "= 1"
		}
		fmt.Fprintf(w, "| %s | %d |", rng, scores[results[0].Mode].Strata[i].Pairs)
		for _, r := range results {
			st := scores[r.Mode].Strata[i]
			fmt.Fprintf(w, " %d / %.1f ± %.1f |", st.Found, st.Expected, st.SD)
		}
		fmt.Fprintln(w)
	}
}

// clusterTable prints each run's clusters against the true ones.
func clusterTable(w *bufio.Writer, results []*compare.Result, scores map[string]compare.Score) {
	fmt.Fprintf(w, "\nclusters vs truth (%d true clusters over %d docs):\n\n| mode | clusters | clustered docs | ARI | pair precision | pair recall | docs with exactly the true cluster |\n|---|---|---|---|---|---|---|\n",
		scores[results[0].Mode].TruthClusters, scores[results[0].Mode].TruthClusteredDocs)
	for _, r := range results {
		s := scores[r.Mode]
		fmt.Fprintf(w, "| %s | %d | %d | %.4f | %.4f | %.4f | %d |\n", r.Mode, s.Clusters, s.ClusteredDocs, s.ARI, s.PairPrecision, s.PairRecall, s.ExactClusterDocs)
	}
	fmt.Fprintf(w, "\n(with almost all documents singletons the ARI's chance term vanishes and it equals the pairwise F1.)\n")
}

// agreementTable prints how each run after the first agrees with it, and
// returns the figures.
func agreementTable(w *bufio.Writer, c *compare.Corpus, results []*compare.Result, p curate.Params) []map[string]any {
	fmt.Fprintf(w, "\nagreement with %s:\n\n| mode | reported-pair Jaccard | only %s | only other | expected if independent ideal: only %s / only other / pair Jaccard | ARI | pair precision | pair recall | same cluster / clustered docs |\n|---|---|---|---|---|---|---|---|---|\n", results[0].Mode, results[0].Mode, results[0].Mode)
	var agree []map[string]any
	labels0 := labels(results[0])
	for _, r := range results[1:] {
		pj, oa, ob := compare.PairOverlap(results[0], r)
		a := compare.CompareClusterings(labels0, labels(r))
		ea, eb, e2 := compare.ExpectedDisagreement(c, results[0].Bands, results[0].Rows, r.Bands, r.Rows, p.Perms, p.Threshold)
		fmt.Fprintf(w, "| %s | %.4f | %d | %d | %.0f / %.0f / %.4f | %.4f | %.4f | %.4f | %d / %d |\n", r.Mode, pj, oa, ob, ea, eb, e2/(ea+eb+e2), a.ARI, a.Precision, a.Recall, a.SameClusterDocs, a.ClusteredDocs)
		agree = append(agree, map[string]any{"mode": r.Mode, "pair_jaccard": pj, "only_ref": oa, "only_other": ob, "expected_only_ref": ea, "expected_only_other": eb, "expected_both": e2, "agreement": a})
	}
	return agree
}

func writeJSON(path string, out map[string]any) {
	if path == "" {
		return
	}
	b, _ := json.MarshalIndent(out, "", "  ")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// interleaved times the signing steps of every implementation batch by
// batch in turn over the same documents (compare.Interleaved).
func interleaved(w *bufio.Writer, c *compare.Corpus, p curate.Params, seed int64, variants bool, out map[string]any) {
	h, _ := curate.NewHasher(p)
	fh, _ := fastsign.New(p)
	wh, _ := fastsign.NewWrap64(p)
	steps := []compare.Step{
		{Name: "curate.Shingles (shared by ekzhu's pipeline; inside kiln's Sign)", Run: func(t []string, _ []uint64) { curate.Shingles(t, p.Shingle) }},
		{Name: "kiln: Hasher.Sign (shingles + MinHash)", Run: func(t []string, _ []uint64) { h.Sign(t) }},
		{Name: "kiln-fast: fastsign.Sign (same signatures)", Run: func(t []string, _ []uint64) { fh.Sign(t) }},
		{Name: "kiln-wrap64: fastsign.Wrap64.Sign (other signatures)", Run: func(t []string, _ []uint64) { wh.Sign(t) }},
		{Name: "ekzhu: NewMinhash + Push + Signature (given shingles)", Run: func(_ []string, sh []uint64) { compare.EkzhuSign(seed, p.Perms, sh) }},
	}
	if variants { // each proposed change alone and together (same signatures)
		for _, v := range []struct {
			name string
			v    fastsign.Variant
		}{
			{"fastsign: copy of curate's Sign, no change", fastsign.Variant{}},
			{"fastsign: fused reduction", fastsign.Variant{Fused: true}},
			{"fastsign: fused + permutations outer, 1 at a time", fastsign.Variant{Fused: true, PermOuter: true, Width: 1}},
			{"fastsign: fused + permutations outer, 2 at a time", fastsign.Variant{Fused: true, PermOuter: true, Width: 2}},
			{"fastsign: fused + permutations outer, 4 at a time", fastsign.Variant{Fused: true, PermOuter: true, Width: 4}},
			{"fastsign: no dedup map only", fastsign.Variant{NoDedup: true}},
			{"fastsign: all, 2 at a time", fastsign.Variant{Fused: true, PermOuter: true, NoDedup: true, Width: 2}},
		} {
			steps = append(steps, compare.Step{Name: v.name, Run: func(t []string, _ []uint64) { fh.SignVariant(t, v.v) }})
		}
	}
	wall, cpu := compare.Interleaved(c.Docs, p.Shingle, steps)
	n := float64(len(c.Docs))
	ek := cpu[0] + cpu[4] // ekzhu's pipeline: shingles, then its MinHash
	fmt.Fprintf(w, "\ninterleaved signing over the %d documents (batches of the same documents through each step in turn):\n\n| step | CPU s | wall s | us/doc (CPU) | vs ekzhu shingles + MinHash |\n|---|---|---|---|---|\n", len(c.Docs))
	var rows []map[string]any
	for i, s := range steps {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.1f | %.2f |\n", s.Name, cpu[i].Seconds(), wall[i].Seconds(), cpu[i].Seconds()/n*1e6, cpu[i].Seconds()/ek.Seconds())
		rows = append(rows, map[string]any{"step": s.Name, "cpu_s": cpu[i].Seconds(), "wall_s": wall[i].Seconds(), "cpu_us_per_doc": cpu[i].Seconds() / n * 1e6})
	}
	fmt.Fprintf(w, "| ekzhu: curate.Shingles + its MinHash | %.2f | %.2f | %.1f | 1.00 |\n", ek.Seconds(), (wall[0] + wall[4]).Seconds(), ek.Seconds()/n*1e6)
	out["interleaved"] = rows
	w.Flush()
}

// expected prints what independent ideal MinHash implementations with
// kiln's and ekzhu's bandings would disagree on over c's planted pairs.
func expected(w *bufio.Writer, c *compare.Corpus, p curate.Params) {
	type cfg struct {
		name        string
		bands, rows int
	}
	kiln := cfg{"kiln 16x8", p.Bands, p.Rows}
	fmt.Fprintf(w, "\nexpected disagreement of independent ideal MinHash implementations over the %d planted pairs:\n\n| A | B | only A | only B | both | pair Jaccard |\n|---|---|---|---|---|---|\n", len(c.Pairs))
	for _, b := range []cfg{kiln, {"ekzhu 9x13", 9, 13}, {"ekzhu:0.7 14x9", 14, 9}} {
		ea, eb, e2 := compare.ExpectedDisagreement(c, kiln.bands, kiln.rows, b.bands, b.rows, p.Perms, p.Threshold)
		fmt.Fprintf(w, "| %s | %s | %.0f | %.0f | %.0f | %.4f |\n", kiln.name, b.name, ea, eb, e2, e2/(ea+eb+e2))
	}
	w.Flush()
}

func labels(r *compare.Result) []int32 {
	return compare.Components(r.N, func(yield func(a, b int32)) {
		for _, f := range r.Found {
			yield(f.A, f.B)
		}
	})
}

func countAbove(m map[uint64]float64, t float64) int {
	n := 0
	for _, j := range m {
		if j >= t {
			n++
		}
	}
	return n
}

// unrelated samples pairs of documents of different families (or none)
// and returns their mean and largest exact Jaccard similarity.
func unrelated(c *compare.Corpus, pairs int) (mean, maxJ float64) {
	r := rand.New(rand.NewPCG(c.Seed, 99))
	n := 0
	for n < pairs {
		a, b := r.IntN(len(c.Docs)), r.IntN(len(c.Docs))
		if a == b || (c.Family[a] >= 0 && c.Family[a] == c.Family[b]) {
			continue
		}
		j := compare.Jaccard(compare.ShingleSet(c.Docs[a]), compare.ShingleSet(c.Docs[b]))
		mean += j
		maxJ = max(maxJ, j)
		n++
	}
	return mean / float64(n), maxJ
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}
