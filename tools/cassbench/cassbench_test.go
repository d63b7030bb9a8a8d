package cassbench_test

// Checks of the bench set: layout and metadata (through the cuda-synth
// corpus loader), feature tags against the sources, the program rules, the
// reference translations, the README, distance from the cuda-synth starter
// corpus (MinHash, runs/curate), and compiles with nvcc (and, on request,
// hipcc) when the toolchains are installed.

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/tools/cassbench"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/hipify"
)

var compileHIP = flag.Bool("cassbench.hip", false,
	"also compile every reference.hip with hipcc --offload-arch=gfx1030 and as HIP on NVIDIA with nvcc -arch=sm_90")

const wantPrograms = 20

// domains are the seven domains of CASS appendix A.4.
var domains = []string{
	"general_compute", "simulation", "data_structure", "machine_learning", "graphics", "cryptography",
	"scientific_computing",
}

// feature says how a feature tag shows in the source. With exact set, the
// pattern must match exactly when the tag is present; otherwise the tag
// only requires a match. The vocabulary is the cuda-synth corpus's plus
// atomic_exch and vector_types.
type feature struct {
	re    *regexp.Regexp
	exact bool
}

func features() map[string]feature {
	f := func(pattern string, exact bool) feature {
		return feature{re: regexp.MustCompile(pattern), exact: exact}
	}
	return map[string]feature{
		"shared_memory":         f(`__shared__`, true),
		"dynamic_shared_memory": f(`extern\s+__shared__`, true),
		"atomic_add_int":        f(`\batomicAdd\s*\(`, false),
		"atomic_add_float":      f(`\batomicAdd\s*\(`, false),
		"atomic_cas":            f(`\batomicCAS\s*\(`, true),
		"atomic_min_max":        f(`\batomic(Min|Max)\s*\(`, true),
		"atomic_bitwise":        f(`\batomic(Or|And|Xor)\s*\(`, true),
		"atomic_exch":           f(`\batomicExch\s*\(`, true),
		"warp_shuffle_down":     f(`__shfl_down_sync\s*\(`, true),
		"warp_shuffle_xor":      f(`__shfl_xor_sync\s*\(`, true),
		"ballot_sync":           f(`__ballot_sync\s*\(`, true),
		"streams":               f(`cudaStreamCreate`, true),
		"events":                f(`cudaEventRecord\s*\(`, true),
		"constant_memory":       f(`__constant__`, true),
		"managed_memory":        f(`cudaMallocManaged\s*\(`, true),
		"pinned_memory":         f(`cudaMallocHost\s*\(|cudaHostAlloc\s*\(`, true),
		"block_reduction":       f(`__syncthreads\s*\(\s*\)`, false),
		"grid_2d":               f(`blockIdx\.y`, true),
		"grid_3d":               f(`blockIdx\.z`, true),
		"templates":             f(`template\s*<`, true),
		"device_functions":      f(`__device__[^;{}]*\b\w+\s*\([^;{}]*\)\s*\{`, true),
		"grid_stride_loop":      f(`blockDim\.x\s*\*\s*gridDim\.x|gridDim\.x\s*\*\s*blockDim\.x`, true),
		"double_precision":      f(`\bdouble\b`, false),
		"vector_types":          f(`\b(u?char|u?short|u?int|u?long|longlong|ulonglong|float|double)[1-4]\b`, true),
	}
}

// coverage are the constructs the bench set as a whole must exercise.
func coverage() []string {
	return []string{
		"shared_memory", "dynamic_shared_memory", "atomic_add_int", "atomic_min_max", "atomic_bitwise", "atomic_exch",
		"warp_shuffle_down", "warp_shuffle_xor", "ballot_sync", "streams", "events", "constant_memory",
		"managed_memory", "pinned_memory", "block_reduction", "grid_2d", "grid_3d", "templates", "device_functions",
		"grid_stride_loop", "double_precision", "vector_types",
	}
}

// program is one bench program with all its files.
type program struct {
	cudasynth.CorpusItem
	Reference string // reference.hip
	Stdout    string // expected_stdout.txt
	Files     []string
}

func load(t *testing.T) []program {
	t.Helper()
	items, err := cudasynth.LoadCorpus(cassbench.FS, cassbench.Root)
	if err != nil {
		t.Fatalf("cudasynth.LoadCorpus: %v", err)
	}
	progs := make([]program, 0, len(items))
	for _, it := range items {
		p := program{CorpusItem: it}
		dir := path.Join(cassbench.Root, it.ID)
		entries, err := fs.ReadDir(cassbench.FS, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			p.Files = append(p.Files, e.Name())
		}
		if b, err := fs.ReadFile(cassbench.FS, path.Join(dir, cassbench.ReferenceFile)); err == nil {
			p.Reference = string(b)
		}
		if b, err := fs.ReadFile(cassbench.FS, path.Join(dir, cassbench.StdoutFile)); err == nil {
			p.Stdout = string(b)
		}
		progs = append(progs, p)
	}
	return progs
}

// TestBenchSet checks the set as a whole: 20 programs, four per category,
// ids of the form <prefix>_<nn>_<name> that are unique and contain no
// other id (the starter corpus's included), and every file present.
func TestBenchSet(t *testing.T) {
	t.Parallel()
	progs := load(t)
	if len(progs) != wantPrograms {
		t.Errorf("%d programs, want %d", len(progs), wantPrograms)
	}
	starter, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	perCategory := map[string]int{}
	seen := map[string]bool{}
	for _, p := range progs {
		perCategory[p.Category]++
		if seen[p.ID] {
			t.Errorf("id %s used twice", p.ID)
		}
		seen[p.ID] = true
		prefix := cassbench.Prefix(p.Category)
		if prefix == "" {
			t.Errorf("%s: unknown category %q (want one of %v)", p.ID, p.Category, cassbench.Categories())
		} else if !regexp.MustCompile(`^` + prefix + `_\d{2}_[a-z0-9_]+$`).MatchString(p.ID) {
			t.Errorf("%s: id does not look like %s_<nn>_<name>", p.ID, prefix)
		}
		for _, q := range progs {
			if q.ID != p.ID && strings.Contains(q.ID, p.ID) {
				t.Errorf("id %s is contained in id %s", p.ID, q.ID)
			}
		}
		for _, s := range starter {
			if strings.Contains(s.ID, p.ID) || strings.Contains(p.ID, s.ID) {
				t.Errorf("bench id %s and starter corpus id %s contain one another", p.ID, s.ID)
			}
		}
		want := []string{cassbench.StdoutFile, cassbench.MetaFile, cassbench.ProgramFile, cassbench.ReferenceFile} // ReadDir order
		if !slices.Equal(p.Files, want) {
			t.Errorf("%s: files %v, want exactly %v", p.ID, p.Files, want)
		}
	}
	for _, c := range cassbench.Categories() {
		if perCategory[c] != cassbench.PerCategory {
			t.Errorf("category %s has %d programs, want %d", c, perCategory[c], cassbench.PerCategory)
		}
	}
	if len(perCategory) != len(cassbench.Categories()) {
		t.Errorf("categories %v, want %v", perCategory, cassbench.Categories())
	}
}

// TestMetadata checks meta.json: domain, description, prompt, translation
// flag, and every feature tag against the source, then the coverage of the
// set as a whole.
func TestMetadata(t *testing.T) {
	t.Parallel()
	feats := features()
	perFeature := map[string]int{}
	for _, p := range load(t) {
		if !slices.Contains(domains, p.Domain) {
			t.Errorf("%s: unknown domain %q", p.ID, p.Domain)
		}
		if strings.TrimSpace(p.Description) == "" || strings.TrimSpace(p.Prompt) == "" {
			t.Errorf("%s: empty description or prompt", p.ID)
		}
		if !p.ExpectTranslate {
			t.Errorf("%s: expect_translate is false; every bench program must be translatable", p.ID)
		}
		if len(p.Features) == 0 {
			t.Errorf("%s: no features", p.ID)
		}
		for i, name := range p.Features {
			if _, ok := feats[name]; !ok {
				t.Errorf("%s: unknown feature %q", p.ID, name)
			}
			if slices.Contains(p.Features[:i], name) {
				t.Errorf("%s: feature %q listed twice", p.ID, name)
			}
			perFeature[name]++
		}
		for name, f := range feats {
			tagged, found := slices.Contains(p.Features, name), f.re.MatchString(p.Program)
			if tagged && !found {
				t.Errorf("%s: tagged %s but the source has no %s", p.ID, name, f.re)
			}
			if f.exact && found && !tagged {
				t.Errorf("%s: the source uses %s (%s) but meta.json does not list it", p.ID, name, f.re)
			}
		}
		if strings.Contains(p.Program, "atomicAdd") && !slices.Contains(p.Features, "atomic_add_int") &&
			!slices.Contains(p.Features, "atomic_add_float") {
			t.Errorf("%s: uses atomicAdd but lists neither atomic_add_int nor atomic_add_float", p.ID)
		}
	}
	for _, f := range coverage() {
		if perFeature[f] == 0 {
			t.Errorf("no program exercises %s", f)
		}
	}
}

var (
	mainRE      = regexp.MustCompile(`\bint\s+main\s*\(\s*(void)?\s*\)`)
	fileIORE    = regexp.MustCompile(`\b(fopen|freopen|fwrite|fread|ifstream|ofstream|fstream|argv|getenv)\b`)
	return0RE   = regexp.MustCompile(`return\s+0\s*;|\?\s*0\s*:\s*1\s*;`)
	timingRE    = regexp.MustCompile(`%[-0-9.]*f\s*(ms|us|MH/s|GB/s|G\w+/s)\b`)
	outTimeRE   = regexp.MustCompile(`\b\d+(\.\d+)?\s*(ms|us|MH/s|GB/s|G\w+/s)\b`)
	printfRE    = regexp.MustCompile(`(?m)^.*\bprintf\s*\(.*$`)
	untransRE   = regexp.MustCompile(`\basm\s*(volatile\s*)?\(|\bcublas|\bcufft|\bcurand|\bcusparse|thrust::|\b__nv_\w+\s*\(|cudaTextureObject_t|\btex[123]D\b|\btexture\s*<|cooperative_groups|\bgrid\.sync\s*\(`)
	cudaNameRE  = regexp.MustCompile(`\bcuda[A-Z]\w*|\bCUDA_\w*|<cuda_runtime\.h>|__\w+_sync\s*\(`)
	commentRE   = regexp.MustCompile(`(?s)//[^\n]*|/\*.*?\*/`)
	stdoutStrRE = regexp.MustCompile(`\bprintf\s*\(\s*("(?:[^"\\]|\\.)*")`)
)

// TestSourceRules applies the program rules: one self-contained file, CUDA
// runtime only and nothing a rule-based translator cannot map, an
// argument-less main that can return 0, checked CUDA calls, no file I/O,
// timings only on stderr, 60 to 200 lines, at least one kernel.
func TestSourceRules(t *testing.T) {
	t.Parallel()
	for _, p := range load(t) {
		src := p.Program
		lines := strings.Count(src, "\n")
		switch {
		case lines < 60 || lines > 200:
			t.Errorf("%s: %d lines, want 60-200", p.ID, lines)
		case !strings.Contains(src, "#include <cuda_runtime.h>"):
			t.Errorf("%s: does not include <cuda_runtime.h>", p.ID)
		case strings.Contains(src, "#include \""):
			t.Errorf("%s: includes a local header; programs must be one file", p.ID)
		case !strings.Contains(src, "__global__"):
			t.Errorf("%s: no kernel", p.ID)
		case !mainRE.MatchString(src):
			t.Errorf("%s: no argument-less int main()", p.ID)
		case !return0RE.MatchString(src):
			t.Errorf("%s: main never returns 0", p.ID)
		case !strings.Contains(src, "cudaGetErrorString("):
			t.Errorf("%s: CUDA errors are never checked (no cudaGetErrorString)", p.ID)
		}
		if m := fileIORE.FindString(src); m != "" {
			t.Errorf("%s: file I/O, arguments or environment (%q)", p.ID, m)
		}
		if m := untransRE.FindString(src); m != "" {
			t.Errorf("%s: uses %q, which a rule-based CUDA->HIP translator cannot map", p.ID, m)
		}
		for _, line := range printfRE.FindAllString(src, -1) {
			if !strings.Contains(line, "fprintf(stderr") && timingRE.MatchString(line) {
				t.Errorf("%s: timing printed to stdout: %s", p.ID, strings.TrimSpace(line))
			}
		}
	}
}

// TestExpectedStdout checks expected_stdout.txt: a GPU-recorded output (or
// the single line PENDING-GPU) that ends in a newline, holds no timing and
// reports no failed check.
func TestExpectedStdout(t *testing.T) {
	t.Parallel()
	pending := 0
	for _, p := range load(t) {
		switch {
		case p.Stdout == cassbench.Pending:
			pending++
			continue
		case p.Stdout == "" || !strings.HasSuffix(p.Stdout, "\n"):
			t.Errorf("%s: %s is empty or lacks a final newline", p.ID, cassbench.StdoutFile)
		case outTimeRE.MatchString(p.Stdout):
			t.Errorf("%s: %s contains a timing: %q", p.ID, cassbench.StdoutFile, outTimeRE.FindString(p.Stdout))
		case strings.Contains(p.Stdout, "FAIL"):
			t.Errorf("%s: %s records a failed self-check", p.ID, cassbench.StdoutFile)
		case strings.Contains(p.Stdout, "PENDING"):
			t.Errorf("%s: %s mixes output with a PENDING mark", p.ID, cassbench.StdoutFile)
		}
	}
	if pending > 0 {
		t.Logf("%d expected outputs still wait for a GPU run (%q)", pending, strings.TrimSpace(cassbench.Pending))
	}
}

// TestReferenceHIP checks the reference translations: HIP runtime only,
// no CUDA names outside comments, checked HIP calls, the same kernels, and
// the same stdout format strings in the same order as the CUDA program
// (a translation keeps user-visible strings: CASS appendix A.8.2).
func TestReferenceHIP(t *testing.T) {
	t.Parallel()
	kernelRE := regexp.MustCompile(`__global__\s+void\s+(\w+)`)
	for _, p := range load(t) {
		hip := p.Reference
		code := commentRE.ReplaceAllString(hip, "")
		switch {
		case !strings.Contains(hip, "#include <hip/hip_runtime.h>"):
			t.Errorf("%s: reference.hip does not include <hip/hip_runtime.h>", p.ID)
		case cudaNameRE.MatchString(code):
			t.Errorf("%s: reference.hip still uses %q", p.ID, cudaNameRE.FindString(code))
		case !strings.Contains(code, "hipGetErrorString("):
			t.Errorf("%s: reference.hip never checks HIP errors", p.ID)
		case !mainRE.MatchString(code):
			t.Errorf("%s: reference.hip has no argument-less int main()", p.ID)
		}
		names := func(s string, re *regexp.Regexp) []string {
			var out []string
			for _, m := range re.FindAllStringSubmatch(s, -1) {
				out = append(out, m[1])
			}
			return out
		}
		if k, h := names(p.Program, kernelRE), names(code, kernelRE); !slices.Equal(k, h) {
			t.Errorf("%s: kernels %v in program.cu but %v in reference.hip", p.ID, k, h)
		}
		if c, h := names(p.Program, stdoutStrRE), names(code, stdoutStrRE); !slices.Equal(c, h) {
			t.Errorf("%s: stdout format strings differ:\n program.cu    %q\n reference.hip %q", p.ID, c, h)
		}
	}
}

// TestHipifyTranslates checks every program goes through kiln's rule-based
// translator without an unsupported construct (expect_translate is true).
func TestHipifyTranslates(t *testing.T) {
	t.Parallel()
	for _, p := range load(t) {
		r, err := hipify.Translate(p.Program)
		if err != nil {
			t.Errorf("%s: hipify: %v", p.ID, err)
			continue
		}
		if !r.OK() || r.Replacements == 0 {
			t.Errorf("%s: hipify: %d replacements, unsupported %+v", p.ID, r.Replacements, r.Unsupported)
		}
	}
}

// TestReadme checks README.md names every program once in its category's
// table and states the total.
func TestReadme(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	rowRE := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|")
	for _, p := range load(t) {
		head := "### " + p.Category
		at := strings.Index(text, head)
		if at < 0 {
			t.Errorf("README has no %q section", head)
			continue
		}
		section := text[at+len(head):]
		if next := strings.Index(section, "\n### "); next >= 0 {
			section = section[:next]
		}
		n := 0
		for _, m := range rowRE.FindAllStringSubmatch(section, -1) {
			if m[1] == p.ID {
				n++
			}
		}
		if n != 1 {
			t.Errorf("README section %s lists %s %d times, want once", p.Category, p.ID, n)
		}
	}
	if !strings.Contains(text, fmt.Sprintf("**%d programs**", wantPrograms)) {
		t.Errorf("README does not state **%d programs**", wantPrograms)
	}
}

// TestNotNearDuplicateOfStarterCorpus checks that no bench program (CUDA
// source or HIP reference) is a near-duplicate of a cuda-synth starter
// corpus program, whose programs seed training data: neither the exact
// Jaccard similarity of their normalised 5-token shingles nor its MinHash
// estimate reaches runs/curate's default near-duplicate threshold, and
// curate.Reference, as the dataset export uses it, flags nothing in either
// direction. Bench programs are not near-duplicates of one another either.
func TestNotNearDuplicateOfStarterCorpus(t *testing.T) {
	t.Parallel()
	params := curate.DefaultParams()
	h, err := curate.NewHasher(params)
	if err != nil {
		t.Fatal(err)
	}
	starter, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	type doc struct {
		name     string
		tokens   []string
		shingles map[uint64]bool
		sig      curate.Signature
	}
	mk := func(name, text string) doc {
		d := doc{name: name, tokens: curate.Normalise(text), shingles: map[uint64]bool{}}
		for _, s := range curate.Shingles(d.tokens, params.Shingle) {
			d.shingles[s] = true
		}
		if d.sig, err = h.Sign(d.tokens); err != nil {
			t.Fatalf("%s: sign: %v", name, err)
		}
		return d
	}
	jaccard := func(a, b doc) float64 {
		inter := 0
		for s := range a.shingles {
			if b.shingles[s] {
				inter++
			}
		}
		return float64(inter) / float64(len(a.shingles)+len(b.shingles)-inter)
	}

	ref := curate.NewReference(h)
	var train []doc
	for _, s := range starter {
		d := mk("cudasynth/"+s.ID, s.Program)
		train = append(train, d)
		ref.Add(d.name, d.tokens)
	}
	var bench []doc
	for _, p := range load(t) {
		bench = append(bench, mk(p.ID+"/"+cassbench.ProgramFile, p.Program), mk(p.ID+"/"+cassbench.ReferenceFile, p.Reference))
	}
	worst, worstPair := 0.0, ""
	for _, b := range bench {
		if name, sim := ref.Match(b.tokens); name != "" {
			t.Errorf("%s: curate.Reference matches starter program %s (similarity %.2f)", b.name, name, sim)
		}
		for _, s := range train {
			j, est := jaccard(b, s), curate.Similarity(b.sig, s.sig)
			if j >= params.Threshold || est >= params.Threshold {
				t.Errorf("%s and %s: Jaccard %.3f, MinHash estimate %.3f, threshold %.2f", b.name, s.name, j, est, params.Threshold)
			}
			if j > worst {
				worst, worstPair = j, b.name+" ~ "+s.name
			}
		}
	}
	t.Logf("closest bench/starter pair: %s (Jaccard %.3f, threshold %.2f)", worstPair, worst, params.Threshold)

	// The other direction: the bench set as the export loads it.
	benchRef := curate.NewReference(h)
	if err := benchRef.LoadFS(cassbench.FS, cassbench.Root, "cassbench"); err != nil {
		t.Fatal(err)
	}
	for _, s := range train {
		if name, sim := benchRef.Match(s.tokens); name != "" {
			t.Errorf("%s would be dropped as contaminated by %s (similarity %.2f)", s.name, name, sim)
		}
	}
	// Within the set: a program and its own translation are near-duplicates
	// (the positive control: the detector sees through the CUDA->HIP
	// renames), any other pair is not.
	for i, a := range bench {
		for _, b := range bench[i+1:] {
			if path.Dir(a.name) == path.Dir(b.name) {
				if j := jaccard(a, b); j < params.Threshold {
					t.Errorf("%s and its translation %s: Jaccard %.3f, want at least %.2f", a.name, b.name, j, params.Threshold)
				}
				continue
			}
			if j := jaccard(a, b); j >= params.Threshold {
				t.Errorf("bench programs %s and %s are near-duplicates (Jaccard %.3f)", a.name, b.name, j)
			}
		}
	}
}

// TestCompileNVCC compiles every program with nvcc for sm_90 (-tags long;
// the default tier and -short compile the first program of each category),
// one nvcc at a time, when nvcc is on PATH. Warnings are errors; -Os goes to the host compiler (nvcc 11.8
// has no -Os of its own).
func TestCompileNVCC(t *testing.T) {
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not found in PATH: skipping the bench compile check (Debian: apt-get install nvidia-cuda-toolkit, nvcc 11.8)")
	}
	progs := subset(t, load(t))
	for _, p := range progs {
		t.Run(p.ID, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, cassbench.ProgramFile, p.Program)
			run(t, dir, nil, nvcc, "-Xcompiler", "-Os", "-Werror", "all-warnings", "-arch=sm_90",
				"-c", cassbench.ProgramFile, "-o", "program.o")
		})
	}
}

// TestCompileReferenceHIP compiles every reference.hip the two ways kiln's
// cuda2hip lane does, on request (-cassbench.hip; it doubles the compile
// time): hipcc for RDNA2 (HIP_PLATFORM=amd --offload-arch=gfx1030) and nvcc
// as HIP on NVIDIA (-x cu -D__HIP_PLATFORM_NVIDIA__, sm_90; warp votes go
// through compute_60 PTX, as the lane builds them, because HIP 5.2's NVIDIA
// headers leave __ballot to CUDA's pre-Volta intrinsic).
func TestCompileReferenceHIP(t *testing.T) {
	if !*compileHIP {
		t.Skip("compiles the HIP references: run with -cassbench.hip")
	}
	hipcc, err := exec.LookPath("hipcc")
	if err != nil {
		t.Skip("hipcc not found in PATH (Debian: hipcc libamdhip64-dev rocm-device-libs)")
	}
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not found in PATH")
	}
	vote := regexp.MustCompile(`\b__(ballot|any|all)\s*\(`)
	for _, p := range subset(t, load(t)) {
		t.Run(p.ID, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, cassbench.ReferenceFile, p.Reference)
			run(t, dir, []string{"HIP_PLATFORM=amd"}, hipcc, "-Os", "--offload-arch=gfx1030", "-c", cassbench.ReferenceFile,
				"-o", "amd.o")
			arch := "arch=compute_90,code=sm_90"
			if vote.MatchString(p.Reference) {
				arch = "arch=compute_60,code=sm_90"
			}
			run(t, dir, nil, nvcc, "-x", "cu", "-D__HIP_PLATFORM_NVIDIA__", "-Xcompiler", "-Os", "-gencode", arch,
				"-c", cassbench.ReferenceFile, "-o", "nvidia.o")
		})
	}
}

// subset returns progs in the long tier (-tags long), or else (the
// default tier, -short) the first program of each category.
func subset(t *testing.T, progs []program) []program {
	if longTier && !testing.Short() {
		return progs
	}
	var some []program
	seen := map[string]bool{}
	for _, p := range progs {
		if !seen[p.Category] {
			seen[p.Category] = true
			some = append(some, p)
		}
	}
	t.Logf("compiling %d of %d programs, the first of each category (all: -tags long)", len(some), len(progs))
	return some
}

func write(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs one compiler in dir with a deadline and fails the test with its
// output on error.
func run(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out: %w", ctx.Err())
	}
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
}
