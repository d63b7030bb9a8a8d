package cudasynth

// Checks of the cuda-synth starter corpus (tools/cudasynth/corpus): CUDA programs
// as an LLM would write them for the CASS persona templates (appendix A.8.1),
// their meta.json, the script-model answers file and the README tables, plus
// an nvcc 11.8 compile of every program when nvcc is on PATH.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/prompts"
)

var cudaSynthSM90 = flag.Bool("cudasynth.sm90", false, "also compile the cuda-synth corpus for sm_90 (doubles the nvcc time)")

const (
	cudaSynthRoot    = "corpus"
	cudaSynthSource  = "program.cu"
	cudaSynthAnswers = "answers.jsonl"
	cudaSynthReadme  = "README.md"
	cudaSynthStdout  = "expected_stdout.txt"
)

// cudaSynthCategories are the ten template groups of CASS appendix A.8.1.
func cudaSynthCategories() []string {
	return []string{
		"basic_operations", "graph_algorithms", "scientific_computing", "machine_learning", "sparse_operations",
		"simulation", "image_signal_processing", "optimization_algorithms", "cryptography_security", "data_structures",
	}
}

// cudaSynthDomains are the seven domains of CASS appendix A.4.
func cudaSynthDomains() []string {
	return []string{
		"general_compute", "simulation", "data_structure", "machine_learning", "graphics", "cryptography",
		"scientific_computing",
	}
}

// cudaSynthFeature says how a feature tag shows in the source. With exact
// set, the pattern must match exactly when the tag is present; otherwise
// the tag only requires a match.
type cudaSynthFeature struct {
	re    *regexp.Regexp
	exact bool
}

func cudaSynthFeatures() map[string]cudaSynthFeature {
	f := func(pattern string, exact bool) cudaSynthFeature {
		return cudaSynthFeature{re: regexp.MustCompile(pattern), exact: exact}
	}
	return map[string]cudaSynthFeature{
		"shared_memory":         f(`__shared__`, true),
		"dynamic_shared_memory": f(`extern\s+__shared__`, true),
		"atomic_add_int":        f(`\batomicAdd\s*\(`, false),
		"atomic_add_float":      f(`\batomicAdd\s*\(`, false),
		"atomic_cas":            f(`\batomicCAS\s*\(`, true),
		"atomic_min_max":        f(`\batomic(Min|Max)\s*\(`, true),
		"atomic_bitwise":        f(`\batomic(Or|And|Xor)\s*\(`, true),
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
		"inline_ptx":            f(`\basm\s*(volatile\s*)?\(`, true),
		"cublas":                f(`\bcublas\w*\s*\(`, true),
		"nv_intrinsic":          f(`\b__nv_\w+\s*\(`, true),
	}
}

// cudaSynthUntranslatable are the features a rule-based CUDA->HIP translator
// cannot map; a program has one of them exactly when expect_translate is false.
func cudaSynthUntranslatable() []string { return []string{"inline_ptx", "cublas", "nv_intrinsic"} }

// cudaSynthCoverage are the features the corpus as a whole must exercise.
func cudaSynthCoverage() []string {
	return []string{
		"shared_memory", "dynamic_shared_memory", "atomic_add_int", "atomic_add_float", "atomic_cas",
		"warp_shuffle_down", "warp_shuffle_xor", "ballot_sync", "streams", "events", "constant_memory",
		"managed_memory", "block_reduction", "grid_2d", "templates", "device_functions", "grid_stride_loop",
	}
}

type cudaSynthMeta struct {
	Category        string   `json:"category"`
	Domain          string   `json:"domain"`
	Features        []string `json:"features"`
	Description     string   `json:"description"`
	Prompt          string   `json:"prompt"`
	ExpectTranslate *bool    `json:"expect_translate"`
}

type cudaSynthProgram struct {
	ID     string
	Meta   cudaSynthMeta
	Source string
	Stdout string // expected_stdout.txt, recorded on a GPU
}

// loadCudaSynth reads every program folder under root in fsys.
func loadCudaSynth(t *testing.T, fsys fs.FS, root string) []cudaSynthProgram {
	t.Helper()
	entries, err := fs.ReadDir(fsys, root)
	if err != nil {
		t.Fatalf("read %s: %v", root, err)
	}
	var progs []cudaSynthProgram
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := path.Join(root, e.Name())
		files, err := fs.ReadDir(fsys, dir)
		if err != nil {
			t.Fatalf("read %s: %v", dir, err)
		}
		for _, f := range files {
			if n := f.Name(); n != cudaSynthSource && n != prompts.MetaFile && n != cudaSynthStdout {
				t.Errorf("%s: unexpected file %s", dir, n)
			}
		}
		p := cudaSynthProgram{ID: e.Name()}
		src, err := fs.ReadFile(fsys, path.Join(dir, cudaSynthSource))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		p.Source = string(src)
		if out, err := fs.ReadFile(fsys, path.Join(dir, cudaSynthStdout)); err == nil {
			p.Stdout = string(out)
		}
		raw, err := fs.ReadFile(fsys, path.Join(dir, prompts.MetaFile))
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p.Meta); err != nil {
			t.Errorf("%s/%s: %v", dir, prompts.MetaFile, err)
			continue
		}
		progs = append(progs, p)
	}
	return progs
}

var (
	cudaSynthIDRE       = regexp.MustCompile(`^[a-z]+_\d{2}_[a-z0-9_]+$`)
	cudaSynthMainRE     = regexp.MustCompile(`\bint\s+main\s*\(\s*(void)?\s*\)`)
	cudaSynthFileIORE   = regexp.MustCompile(`\b(fopen|freopen|fwrite|fread|ifstream|ofstream|fstream|argv)\b`)
	cudaSynthReturn0RE  = regexp.MustCompile(`return\s+0\s*;|\?\s*0\s*:\s*1\s*;`)
	cudaSynthCheckRE    = regexp.MustCompile(`cudaGetErrorString\s*\(`)
	cudaSynthTimingRE   = regexp.MustCompile(`%[-0-9.]*f\s*(ms|us|MH/s|GB/s|G\w+/s)\b`)
	cudaSynthOutTimeRE  = regexp.MustCompile(`\b\d+(\.\d+)?\s*(ms|us|MH/s|GB/s|G\w+/s)\b`)
	cudaSynthForeignRE  = regexp.MustCompile(`\basm\s*(volatile\s*)?\(|\bcublas|\bcufft|\bcurand|\bcusparse|thrust::|\b__nv_\w+\s*\(|cudaTextureObject_t|\btex[123]D\b|\btexture\s*<`)
	cudaSynthPrintfLine = regexp.MustCompile(`(?m)^.*\bprintf\s*\(.*$`)
)

// TestCudaSynthCorpus checks every program and meta.json of the embedded
// cuda-synth corpus and the coverage of the corpus as a whole.
func TestCudaSynthCorpus(t *testing.T) {
	t.Parallel()
	progs := loadCudaSynth(t, corpusFS, cudaSynthRoot)
	features := cudaSynthFeatures()
	if len(progs) < 44 {
		t.Errorf("%d programs, want at least 44", len(progs))
	}

	perCategory := map[string]int{}
	perFeature := map[string]int{}
	untranslatable := map[string]int{}
	for _, p := range progs {
		m := p.Meta
		if !cudaSynthIDRE.MatchString(p.ID) {
			t.Errorf("%s: id does not look like <group>_<nn>_<name>", p.ID)
		}
		for _, q := range progs {
			if q.ID != p.ID && strings.Contains(q.ID, p.ID) {
				t.Errorf("id %s is contained in id %s: a literal match would be ambiguous", p.ID, q.ID)
			}
		}
		if !slices.Contains(cudaSynthCategories(), m.Category) {
			t.Errorf("%s: unknown category %q", p.ID, m.Category)
		}
		perCategory[m.Category]++
		if !slices.Contains(cudaSynthDomains(), m.Domain) {
			t.Errorf("%s: unknown domain %q", p.ID, m.Domain)
		}
		if strings.TrimSpace(m.Description) == "" || strings.TrimSpace(m.Prompt) == "" {
			t.Errorf("%s: empty description or prompt", p.ID)
		}
		if m.ExpectTranslate == nil {
			t.Errorf("%s: expect_translate missing", p.ID)
			continue
		}
		if len(m.Features) == 0 {
			t.Errorf("%s: no features", p.ID)
		}
		for i, f := range m.Features {
			if _, ok := features[f]; !ok {
				t.Errorf("%s: unknown feature %q", p.ID, f)
			}
			if slices.Contains(m.Features[:i], f) {
				t.Errorf("%s: feature %q listed twice", p.ID, f)
			}
			perFeature[f]++
		}
		for name, f := range features {
			tagged, found := slices.Contains(m.Features, name), f.re.MatchString(p.Source)
			if tagged && !found {
				t.Errorf("%s: tagged %s but the source has no %s", p.ID, name, f.re)
			}
			if f.exact && found && !tagged {
				t.Errorf("%s: the source uses %s (%s) but meta.json does not list it", p.ID, name, f.re)
			}
		}
		if strings.Contains(p.Source, "atomicAdd") && !slices.Contains(m.Features, "atomic_add_int") &&
			!slices.Contains(m.Features, "atomic_add_float") {
			t.Errorf("%s: uses atomicAdd but lists neither atomic_add_int nor atomic_add_float", p.ID)
		}

		var foreign []string
		for _, f := range cudaSynthUntranslatable() {
			if slices.Contains(m.Features, f) {
				foreign = append(foreign, f)
				untranslatable[f]++
			}
		}
		switch {
		case *m.ExpectTranslate && cudaSynthForeignRE.MatchString(p.Source):
			t.Errorf("%s: expect_translate is true but the source uses %q", p.ID, cudaSynthForeignRE.FindString(p.Source))
		case !*m.ExpectTranslate && len(foreign) == 0:
			t.Errorf("%s: expect_translate is false but no feature among %v is listed", p.ID, cudaSynthUntranslatable())
		}

		checkCudaSynthSource(t, p)
	}

	for _, c := range cudaSynthCategories() {
		if perCategory[c] < 5 {
			t.Errorf("category %s has %d programs, want at least 5", c, perCategory[c])
		}
	}
	for _, f := range cudaSynthCoverage() {
		if perFeature[f] == 0 {
			t.Errorf("no program exercises %s", f)
		}
	}
	for _, f := range cudaSynthUntranslatable() {
		if untranslatable[f] == 0 {
			t.Errorf("no expect_translate=false program uses %s", f)
		}
	}
}

// checkCudaSynthSource applies the rules every program follows: one
// self-contained file, CUDA runtime only, main() without arguments that
// returns 0, checked CUDA calls, no file I/O, timings only on stderr.
func checkCudaSynthSource(t *testing.T, p cudaSynthProgram) {
	t.Helper()
	src := p.Source
	if !strings.Contains(src, "#include <cuda_runtime.h>") {
		t.Errorf("%s: does not include <cuda_runtime.h>", p.ID)
	}
	if !cudaSynthMainRE.MatchString(src) {
		t.Errorf("%s: no argument-less int main()", p.ID)
	}
	if m := cudaSynthFileIORE.FindString(src); m != "" {
		t.Errorf("%s: file I/O or argv (%q)", p.ID, m)
	}
	if !cudaSynthReturn0RE.MatchString(src) {
		t.Errorf("%s: main never returns 0", p.ID)
	}
	if !cudaSynthCheckRE.MatchString(src) {
		t.Errorf("%s: CUDA errors are never checked (no cudaGetErrorString)", p.ID)
	}
	if strings.Contains(src, "#include \"") {
		t.Errorf("%s: includes a local header; programs must be one file", p.ID)
	}
	for _, line := range cudaSynthPrintfLine.FindAllString(src, -1) {
		if strings.Contains(line, "fprintf(stderr") {
			continue
		}
		if cudaSynthTimingRE.MatchString(line) {
			t.Errorf("%s: timing printed to stdout: %s", p.ID, strings.TrimSpace(line))
		}
	}
	if p.Stdout != "" && cudaSynthOutTimeRE.MatchString(p.Stdout) {
		t.Errorf("%s: %s contains a timing", p.ID, cudaSynthStdout)
	}
}

type cudaSynthAnswer struct {
	Match    string `json:"match"`
	Response string `json:"response"`
}

// TestCudaSynthAnswers checks answers.jsonl: one script-model line per
// program, whose match regexp selects that program's id and no other, and
// whose response carries the program source in a ```cuda block.
func TestCudaSynthAnswers(t *testing.T) {
	t.Parallel()
	progs := loadCudaSynth(t, corpusFS, cudaSynthRoot)
	raw, err := fs.ReadFile(corpusFS, path.Join(cudaSynthRoot, cudaSynthAnswers))
	if err != nil {
		t.Fatal(err)
	}
	answered := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	lines := 0
	for sc.Scan() {
		lines++
		var a cudaSynthAnswer
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&a); err != nil {
			t.Errorf("line %d: %v", lines, err)
			continue
		}
		re, err := regexp.Compile(a.Match)
		if err != nil {
			t.Errorf("line %d: match: %v", lines, err)
			continue
		}
		var hits []cudaSynthProgram
		for _, p := range progs {
			if re.MatchString(p.ID) {
				hits = append(hits, p)
			}
		}
		if len(hits) != 1 {
			t.Errorf("line %d: match %q selects %d program ids, want 1", lines, a.Match, len(hits))
			continue
		}
		p := hits[0]
		answered[p.ID]++
		if a.Match != regexp.QuoteMeta(p.ID) {
			t.Errorf("line %d: match %q, want the literal id %q", lines, a.Match, regexp.QuoteMeta(p.ID))
		}
		if !strings.Contains(a.Response, "```cuda\n"+p.Source+"```") {
			t.Errorf("line %d: response does not carry %s/%s in a ```cuda block", lines, p.ID, cudaSynthSource)
		}
		if i := strings.Index(a.Response, "```cuda"); i <= 0 || strings.TrimSpace(a.Response[:i]) == "" {
			t.Errorf("line %d: response should open with a sentence before the code block", lines)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines != len(progs) {
		t.Errorf("%d answer lines for %d programs", lines, len(progs))
	}
	for _, p := range progs {
		if answered[p.ID] != 1 {
			t.Errorf("%s: %d answer lines, want 1", p.ID, answered[p.ID])
		}
	}
}

// TestCudaSynthReadme checks the README's per-category and per-feature
// tables ("| `name` | count |" rows under the two headings) and the total.
func TestCudaSynthReadme(t *testing.T) {
	t.Parallel()
	progs := loadCudaSynth(t, corpusFS, cudaSynthRoot)
	readme, err := fs.ReadFile(corpusFS, path.Join(cudaSynthRoot, cudaSynthReadme))
	if err != nil {
		t.Fatal(err)
	}
	perCategory, perFeature := map[string]int{}, map[string]int{}
	for _, p := range progs {
		perCategory[p.Meta.Category]++
		for _, f := range p.Meta.Features {
			perFeature[f]++
		}
	}
	text := string(readme)
	catAt, featAt := strings.Index(text, "## Programs per category"), strings.Index(text, "## Programs per feature")
	if catAt < 0 || featAt < catAt {
		t.Fatal("README needs a '## Programs per category' section followed by '## Programs per feature'")
	}
	rowRE := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\| (\\d+) \\|")
	check := func(section string, want map[string]int) {
		rows := rowRE.FindAllStringSubmatch(section, -1)
		got := map[string]int{}
		for _, r := range rows {
			n, _ := strconv.Atoi(r[2])
			got[r[1]] = n
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("README says %s: %d, corpus has %d", k, got[k], n)
			}
		}
		if len(got) != len(want) {
			t.Errorf("README table has %d rows, corpus has %d distinct names", len(got), len(want))
		}
	}
	check(text[catAt:featAt], perCategory)
	check(text[featAt:], perFeature)
	if total := regexp.MustCompile(`\*\*(\d+) programs\*\*`).FindStringSubmatch(text); total == nil || total[1] != strconv.Itoa(len(progs)) {
		t.Errorf("README total %v, corpus has %d programs", total, len(progs))
	}
}

// TestCudaSynthCompileNVCC compiles every program with nvcc for sm_86
// (and sm_90 with -cudasynth.sm90), two compiles at a time, under -tags
// long; the default tier compiles every tenth program (the corpus is
// fixed: TestCudaSynthCorpus checks its layout and metadata in full). nvcc 11.8 has
// no -Os of its own, so -Os goes to the host compiler; device code is
// compiled at nvcc's default optimization level. Warnings are errors.
func TestCudaSynthCompileNVCC(t *testing.T) {
	t.Parallel()
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not found in PATH: skipping the cuda-synth compile check (Debian: apt-get install nvidia-cuda-toolkit, nvcc 11.8)")
	}
	if out, err := exec.CommandContext(t.Context(), nvcc, "--version").Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Logf("using %s: %s", nvcc, lines[len(lines)-1])
	}
	archs := []string{"sm_86"}
	if *cudaSynthSM90 {
		archs = append(archs, "sm_90")
	}
	progs := loadCudaSynth(t, corpusFS, cudaSynthRoot)
	if !longTier {
		var some []cudaSynthProgram
		for i := 0; i < len(progs); i += 10 {
			some = append(some, progs[i])
		}
		t.Logf("compiling %d of %d programs, every tenth (all: -tags long)", len(some), len(progs))
		progs = some
	}
	slots := make(chan struct{}, 2) // at most two nvcc processes at once
	t.Run("programs", func(t *testing.T) {
		for _, p := range progs {
			t.Run(p.ID, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				src := filepath.Join(dir, cudaSynthSource)
				if err := os.WriteFile(src, []byte(p.Source), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, arch := range archs {
					slots <- struct{}{}
					out, err := cudaSynthCompile(t.Context(), nvcc, dir, arch)
					<-slots
					if err != nil {
						t.Errorf("nvcc -arch=%s: %v\n%s", arch, err, out)
					}
				}
			})
		}
	})
}

// cudaSynthCompile runs one nvcc -c in dir and returns its combined output.
func cudaSynthCompile(ctx context.Context, nvcc, dir, arch string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, nvcc, "-Xcompiler", "-Os", "-Werror", "all-warnings", "-arch="+arch,
		"-c", cudaSynthSource, "-o", "program_"+arch+".o")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out: %w", ctx.Err())
	}
	return string(out), err
}
