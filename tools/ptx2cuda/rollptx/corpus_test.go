package rollptx

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The test corpus is the PTX nvcc 11.8 makes of the cuda-synth starter
// programs, in three variants each, kept gzipped in testdata/corpus. Remake it
// with
//
//	go test ./tools/ptx2cuda/rollptx -run TestRegenerate -regenerate
var regenerate = flag.Bool("regenerate", false, "remake testdata/corpus with nvcc")

const (
	programs  = "../../cudasynth/corpus"
	corpusDir = "testdata/corpus"
)

// variant is one way of compiling a program to PTX.
type variant struct {
	name  string
	flags []string
}

var variants = []variant{
	{"sm86", []string{"-arch=compute_86"}},                        // nvcc's default -O3
	{"sm90fast", []string{"-arch=compute_90", "--use_fast_math"}}, // another target, fast math
	{"sm86O0", []string{"-arch=compute_86", "-Xcicc", "-O0"}},     // unoptimised NVVM: no unrolling
}

// nvccPTX compiles one program to PTX.
func nvccPTX(t testing.TB, nvcc, src string, v variant) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.ptx")
	args := append([]string{"-ptx"}, v.flags...)
	args = append(args, "-o", out, src)
	cmd := exec.Command(nvcc, args...)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", nvcc, strings.Join(args, " "), err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func gunzipFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func TestRegenerate(t *testing.T) {
	if !*regenerate {
		t.Skip("use -regenerate to remake testdata/corpus")
	}
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Fatal("nvcc not found")
	}
	srcs, _ := filepath.Glob(filepath.Join(programs, "*", "program.cu"))
	if len(srcs) == 0 {
		t.Fatalf("no programs under %s", programs)
	}
	old, _ := filepath.Glob(filepath.Join(corpusDir, "*.ptx.gz"))
	for _, f := range old {
		os.Remove(f)
	}
	if err := os.MkdirAll(corpusDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, src := range srcs {
		id := filepath.Base(filepath.Dir(src))
		for _, v := range variants {
			ptx := nvccPTX(t, nvcc, src, v)
			name := filepath.Join(corpusDir, id+"."+v.name+".ptx.gz")
			if err := os.WriteFile(name, gzipBytes(ptx), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("wrote %d files", len(srcs)*len(variants))
}

// TestCorpusIsReal recompiles one program and checks that the committed PTX
// is what nvcc makes of it.
func TestCorpusIsReal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs nvcc")
	}
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not found")
	}
	const id = "basic_03_matmul_tiled_128"
	src := filepath.Join(programs, id, "program.cu")
	if _, err := os.Stat(src); err != nil {
		t.Skip("cuda-synth corpus not found")
	}
	for _, v := range variants {
		want, err := gunzipFile(filepath.Join(corpusDir, id+"."+v.name+".ptx.gz"))
		if err != nil {
			t.Fatal(err)
		}
		got := nvccPTX(t, nvcc, src, v)
		if !bytes.Equal(got, want) {
			t.Errorf("%s %s: nvcc's PTX differs from testdata (%d vs %d bytes); "+
				"if the program changed, run go test -run TestRegenerate -regenerate", id, v.name, len(got), len(want))
		}
	}
}

type corpusFile struct {
	name string
	ptx  string
}

var (
	corpusOnce  sync.Once
	corpusFiles []corpusFile
	corpusErr   error
)

func loadCorpusQuiet() ([]corpusFile, error) {
	corpusOnce.Do(func() {
		names, _ := filepath.Glob(filepath.Join(corpusDir, "*.ptx.gz"))
		sort.Strings(names)
		for _, n := range names {
			b, err := gunzipFile(n)
			if err != nil {
				corpusErr = err
				return
			}
			corpusFiles = append(corpusFiles, corpusFile{strings.TrimSuffix(filepath.Base(n), ".ptx.gz"), string(b)})
		}
	})
	return corpusFiles, corpusErr
}

func loadCorpus(t testing.TB) []corpusFile {
	t.Helper()
	files, err := loadCorpusQuiet()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 100 {
		t.Fatalf("testdata corpus has %d files, want >= 100", len(files))
	}
	return files
}

// TestRoundTripCorpus: Unroll(Roll(x)) == x for every PTX of the corpus, and
// the Stats add up.
func TestRoundTripCorpus(t *testing.T) {
	t.Parallel()
	files := loadCorpus(t)
	folded := 0
	for _, f := range files {
		rolled, st := RollStats(f.ptx)
		back, err := Unroll(rolled)
		if err != nil {
			t.Errorf("%s: Unroll: %v", f.name, err)
			continue
		}
		if back != f.ptx {
			t.Errorf("%s: round trip differs at byte %d", f.name, firstDiff(back, f.ptx))
			continue
		}
		if st.InBytes != len(f.ptx) || st.OutBytes != len(rolled) || st.OutBytes > st.InBytes {
			t.Errorf("%s: bad byte counts %+v", f.name, st)
		}
		if st.InLines != countLines(f.ptx) || st.OutLines != countLines(rolled) {
			t.Errorf("%s: bad line counts %+v", f.name, st)
		}
		if got := strings.Count(rolled, "for.size."); got != st.Loops {
			t.Errorf("%s: %d loop headers, Stats says %d", f.name, got, st.Loops)
		}
		if st.Loops > 0 {
			folded++
		}
		// Rolled text is not plain PTX: rolling it again changes nothing.
		if st.Loops > 0 && Roll(rolled) != rolled {
			t.Errorf("%s: Roll(Roll(x)) != Roll(x)", f.name)
		}
	}
	if folded < len(files)/2 {
		t.Errorf("only %d of %d files fold", folded, len(files))
	}
}

func firstDiff(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// TestFoldsUnrolledPrograms: the programs with #pragma unroll do shrink.
func TestFoldsUnrolledPrograms(t *testing.T) {
	t.Parallel()
	files := loadCorpus(t)
	want := map[string]float64{ // at least this reduction
		"basic_02_stencil1d_radius5.sm86":    0.25,
		"basic_03_matmul_tiled_128.sm86":     0.25,
		"basic_04_conv2d_filter7.sm86":       0.50,
		"crypto_02_aes128_ctr.sm86":          0.50,
		"img_01_gaussian_separable.sm86":     0.15,
		"ml_02_attention_softmax.sm86":       0.40,
		"sim_04_nbody_tiled.sm86":            0.15,
		"basic_04_conv2d_filter7.sm90fast":   0.50,
		"basic_03_matmul_tiled_128.sm90fast": 0.25,
		// loops whose bodies span basic blocks or hold inline asm
		"opt_01_annealing_tsp.sm86":        0.60, // an outer loop of 14 around a 1500-step one
		"ds_01_hash_linear_probing.sm86":   0.50, // 16 probes, each a branch
		"crypto_01_sha256_batch.sm86":      0.45, // 64 byte loads, each an if
		"crypto_03_mining_ptx_rotate.sm86": 0.40, // SHA-256 rounds in inline asm
		"img_05_haar_wavelet_1024.sm86":    0.45,
	}
	seen := 0
	for _, f := range files {
		min, ok := want[f.name]
		if !ok {
			continue
		}
		seen++
		_, st := RollStats(f.ptx)
		if st.Reduction() < min {
			t.Errorf("%s: reduction %.3f, want >= %.2f", f.name, st.Reduction(), min)
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of %d files", seen, len(want))
	}
}

// TestCorpusStats prints the figures of ROLLED_PTX_BENCH.md (go test -v).
func TestCorpusStats(t *testing.T) {
	t.Parallel()
	files := loadCorpus(t)
	type group struct {
		name                       string
		n, nf                      int
		in, out, inL, outL         int
		sumR, sumLR, sumRF, sumLRF float64
		fin, fout, finL, foutL     int
	}
	unrolled := map[string]bool{} // programs with #pragma unroll
	groups := map[string]*group{}
	var order []string
	add := func(name string, st Stats) {
		g := groups[name]
		if g == nil {
			g = &group{name: name}
			groups[name] = g
			order = append(order, name)
		}
		g.n++
		g.in, g.out, g.inL, g.outL = g.in+st.InBytes, g.out+st.OutBytes, g.inL+st.InLines, g.outL+st.OutLines
		g.sumR += st.Reduction()
		g.sumLR += st.LineReduction()
		if st.Loops > 0 {
			g.nf++
			g.sumRF += st.Reduction()
			g.sumLRF += st.LineReduction()
			g.fin, g.fout, g.finL, g.foutL = g.fin+st.InBytes, g.fout+st.OutBytes, g.finL+st.InLines, g.foutL+st.OutLines
		}
	}
	type row struct {
		name string
		st   Stats
	}
	var rows []row
	var inS, outS int
	for _, f := range files {
		_, st := RollStats(f.ptx)
		rows = append(rows, row{f.name, st})
		inS, outS = inS+st.InStatements, outS+st.OutStatements
		id, v, _ := strings.Cut(f.name, ".")
		add("all", st)
		add("variant "+v, st)
		if _, ok := unrolled[id]; !ok {
			src, err := os.ReadFile(filepath.Join(programs, id, "program.cu"))
			unrolled[id] = err == nil && bytes.Contains(src, []byte("#pragma unroll"))
		}
		if unrolled[id] && v != "sm86O0" {
			add("#pragma unroll programs, optimised variants", st)
		}
	}
	pct := func(a, b int) float64 { return 100 * (1 - float64(b)/float64(a)) }
	var b strings.Builder
	fmt.Fprintf(&b, "statements (instruction lines; loop headers count): %d -> %d (%.1f%%)\n", inS, outS, pct(inS, outS))
	fmt.Fprintf(&b, "| group | files | folding | bytes total | lines total | bytes mean/file | lines mean/file | folding files: bytes total | lines total | bytes mean | lines mean |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, name := range order {
		g := groups[name]
		fmt.Fprintf(&b, "| %s | %d | %d | %d -> %d (%.1f%%) | %d -> %d (%.1f%%) | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n",
			g.name, g.n, g.nf, g.in, g.out, pct(g.in, g.out), g.inL, g.outL, pct(g.inL, g.outL),
			100*g.sumR/float64(g.n), 100*g.sumLR/float64(g.n),
			pct(g.fin, g.fout), pct(g.finL, g.foutL), 100*g.sumRF/float64(max(g.nf, 1)), 100*g.sumLRF/float64(max(g.nf, 1)))
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].st.Reduction() > rows[j].st.Reduction() })
	fmt.Fprintf(&b, "\n| file | bytes | lines | loops | depth |\n|---|---|---|---|---|\n")
	for _, r := range rows[:min(20, len(rows))] {
		fmt.Fprintf(&b, "| %s | %d -> %d (%.1f%%) | %d -> %d (%.1f%%) | %d | %d |\n",
			r.name, r.st.InBytes, r.st.OutBytes, 100*r.st.Reduction(), r.st.InLines, r.st.OutLines,
			100*r.st.LineReduction(), r.st.Loops, r.st.MaxDepth)
	}
	t.Log("\n" + b.String())
}

func BenchmarkRoll(b *testing.B) {
	files := loadCorpus(b)
	var total int64
	for _, f := range files {
		total += int64(len(f.ptx))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			Roll(f.ptx)
		}
	}
}

func BenchmarkUnroll(b *testing.B) {
	files := loadCorpus(b)
	rolled := make([]string, len(files))
	var total int64
	for i, f := range files {
		rolled[i] = Roll(f.ptx)
		total += int64(len(f.ptx)) // bytes produced
	}
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rolled {
			if _, err := Unroll(r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// The ptx2cuda task inputs: the PTX the ptx2cuda lane shows models (as
// Rolled-PTX), kept in ../corpus/{builtin,bench}/<task>/<variant>.ptx.
const taskCorpus = "../corpus"

func loadTaskCorpus(t testing.TB) []corpusFile {
	t.Helper()
	names, _ := filepath.Glob(filepath.Join(taskCorpus, "*", "*", "*.ptx"))
	if len(names) == 0 {
		t.Skip("no ptx2cuda task corpus")
	}
	sort.Strings(names)
	var files []corpusFile
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(taskCorpus, n)
		files = append(files, corpusFile{filepath.ToSlash(rel), string(b)})
	}
	return files
}

// TestTaskCorpus: the round trip is exact on the ptx2cuda task PTX too; with
// -v it prints the figures of ROLLED_PTX_BENCH.md for it.
func TestTaskCorpus(t *testing.T) {
	t.Parallel()
	reportCorpus(t, loadTaskCorpus(t))
}

// TestTritonCorpus: the round trip is exact on the PTX of the 116 Triton
// kernels torch.compile made for the torch2cuda starter problems (torch
// 2.11, triton 3.6, H100; kiln ptx harvest-triton); with -v it prints
// their figures.
func TestTritonCorpus(t *testing.T) {
	t.Parallel()
	names, _ := filepath.Glob(filepath.Join("testdata", "triton", "*.ptx.gz"))
	if len(names) < 100 {
		t.Fatalf("%d Triton PTX files in testdata/triton", len(names))
	}
	sort.Strings(names)
	var files []corpusFile
	for _, n := range names {
		b, err := gunzipFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, corpusFile{strings.TrimSuffix(filepath.Base(n), ".ptx.gz"), string(b)})
	}
	reportCorpus(t, files)
}

// reportCorpus checks the round trip on every file and logs the length
// reduction (the figures of ROLLED_PTX_BENCH.md).
func reportCorpus(t *testing.T, files []corpusFile) {
	var in, out, inL, outL, folding int
	var sum float64
	type row struct {
		name string
		st   Stats
	}
	var rows []row
	for _, f := range files {
		rolled, st := RollStats(f.ptx)
		back, err := Unroll(rolled)
		if err != nil || back != f.ptx {
			t.Errorf("%s: round trip failed (%v)", f.name, err)
			continue
		}
		in, out, inL, outL = in+st.InBytes, out+st.OutBytes, inL+st.InLines, outL+st.OutLines
		sum += st.Reduction()
		if st.Loops > 0 {
			folding++
		}
		rows = append(rows, row{f.name, st})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].st.Reduction() > rows[j].st.Reduction() })
	var b strings.Builder
	fmt.Fprintf(&b, "%d files, %d fold; bytes %d -> %d (%.1f%%), lines %d -> %d (%.1f%%), mean per file %.1f%%\n",
		len(files), folding, in, out, 100*(1-float64(out)/float64(in)), inL, outL, 100*(1-float64(outL)/float64(inL)), 100*sum/float64(len(files)))
	for _, r := range rows[:min(10, len(rows))] {
		fmt.Fprintf(&b, "| %s | %d -> %d (%.1f%%) | %d -> %d | %d | %d |\n", r.name, r.st.InBytes, r.st.OutBytes,
			100*r.st.Reduction(), r.st.InLines, r.st.OutLines, r.st.Loops, r.st.MaxDepth)
	}
	t.Log("\n" + b.String())
}
