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
	var in, out, inL, outL, inS, outS int
	var sumR, sumLR, sumRF, sumLRF float64
	nf := 0
	type row struct {
		name string
		st   Stats
	}
	var rows []row
	for _, f := range files {
		_, st := RollStats(f.ptx)
		in, out, inL, outL, inS, outS = in+st.InBytes, out+st.OutBytes, inL+st.InLines, outL+st.OutLines, inS+st.InStatements, outS+st.OutStatements
		sumR += st.Reduction()
		sumLR += st.LineReduction()
		if st.Loops > 0 {
			nf++
			sumRF += st.Reduction()
			sumLRF += st.LineReduction()
		}
		rows = append(rows, row{f.name, st})
	}
	n := float64(len(files))
	var b strings.Builder
	fmt.Fprintf(&b, "files %d, files that fold %d\n", len(files), nf)
	fmt.Fprintf(&b, "total: bytes %d -> %d (%.1f%%), lines %d -> %d (%.1f%%), statements %d -> %d (%.1f%%)\n",
		in, out, 100*(1-float64(out)/float64(in)), inL, outL, 100*(1-float64(outL)/float64(inL)),
		inS, outS, 100*(1-float64(outS)/float64(inS)))
	fmt.Fprintf(&b, "mean per file: bytes %.1f%%, lines %.1f%%\n", 100*sumR/n, 100*sumLR/n)
	fmt.Fprintf(&b, "mean per folding file: bytes %.1f%%, lines %.1f%%\n", 100*sumRF/float64(nf), 100*sumLRF/float64(nf))
	sort.Slice(rows, func(i, j int) bool { return rows[i].st.Reduction() > rows[j].st.Reduction() })
	for _, r := range rows[:min(15, len(rows))] {
		fmt.Fprintf(&b, "%-45s %7d -> %7d B (%5.1f%%)  %5d -> %5d lines (%5.1f%%)  loops %d depth %d\n",
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
