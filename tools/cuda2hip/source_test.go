package cuda2hip

import (
	"errors"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/cudasynth"
	"github.com/kiln-dev/kiln/tools/kit"
)

func TestExtractProgram(t *testing.T) {
	t.Parallel()
	prog := "#include <hip/hip_runtime.h>\n__global__ void k() {}\nint main() { k<<<1, 1>>>(); return 0; }\n"
	for _, tc := range []struct {
		name, text, want string
		ok               bool
	}{
		{"hip block", "Here:\n```hip\n" + prog + "```\nDone.", prog, true},
		{"hip preferred over an echoed cuda block", "The CUDA was:\n```cuda\n__global__ void k() {}\nint main() {}\n```\nHIP:\n```hip\n" + prog + "```", prog, true},
		{"cpp block", "```cpp\n" + prog + "```", prog, true},
		{"last program among hip blocks", "```hip\n__device__ int f();\n```\n```hip\n" + prog + "```\n```hip\nint x;\n```", prog, true},
		{"bare program", prog, prog, true},
		{"thinking ignored", "<think>```hip\nint wrong;\n```</think>```hip\n" + prog + "```", prog, true},
		{"prose", "The rule-based translator cannot translate this program to HIP: line 3: asm (inline assembly).", "", false},
		{"other language only", "```python\nprint(1)\n```", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := ExtractProgram(tc.text)
			if ok != tc.ok || got != tc.want {
				t.Errorf("ExtractProgram = %v %q, want %v %q", ok, got, tc.ok, tc.want)
			}
		})
	}
}

func TestLoadCorpus(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"c/a/program.cu":          {Data: []byte("__global__ void k() {}\n")},
		"c/a/meta.json":           {Data: []byte(`{"category": "graphs", "domain": "graph", "expect_translate": false, "extra": 1}`)},
		"c/b/program.cu":          {Data: []byte("__global__ void k() {}\n")},
		"c/b/expected_stdout.txt": {Data: []byte("1\n")},
		"c/c/program.cu":          {Data: []byte("__global__ void k() {}\n")},
		"c/c/meta.json":           {Data: []byte(`{"domain": "physics"}`)},
		"c/_skip/program.cu":      {Data: []byte("x")},
	}
	items, err := LoadCorpus(fsys, "c")
	if err != nil {
		t.Fatal(err)
	}
	got := [][3]any{}
	for _, it := range items {
		got = append(got, [3]any{it.ID, it.Category, it.ExpectTranslate})
	}
	want := [][3]any{{"a", "graphs", false}, {"b", DefaultCategory, true}, {"c", "physics", true}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("items %v, want %v", got, want)
	}

	bad := fstest.MapFS{
		"c/a/meta.json":  {Data: []byte(`{}`)},
		"c/b/program.cu": {Data: []byte("k")},
		"c/b/meta.json":  {Data: []byte(`{"category": 3}`)},
	}
	_, err = LoadCorpus(bad, "c")
	if err == nil || !strings.Contains(err.Error(), "c/a/program.cu") || !strings.Contains(err.Error(), "c/b/meta.json") ||
		!errors.Is(err, prompts.ErrMissingFile) || !errors.Is(err, prompts.ErrBadMeta) {
		t.Errorf("errors do not name the files: %v", err)
	}
	if _, err := LoadCorpus(fstest.MapFS{"c/x.txt": {}}, "c"); !errors.Is(err, prompts.ErrEmptyCorpus) {
		t.Errorf("empty corpus: %v", err)
	}
}

func TestBuiltinCorpus(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	all, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, it := range all {
		if it.ExpectTranslate {
			n++
		}
	}
	if len(items) != n || n == 0 || n == len(all) {
		t.Errorf("%d items of %d (%d translatable)", len(items), len(all), n)
	}
}

func TestSource(t *testing.T) {
	t.Parallel()
	ts, err := source(kit.Tasks{Corpus: "builtin", Limit: 3, Seed: 7, SamplesPerTask: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Round0) != 6 || len(ts.Corpus) < 40 {
		t.Fatalf("%d round-0 tasks, %d corpus tasks", len(ts.Round0), len(ts.Corpus))
	}
	for _, task := range ts.Round0 {
		prog := task.Files[ProgramFile]
		id := task.Meta["item"]
		if prog == "" || task.Lane != LaneName || !strings.Contains(task.Prompt, strings.TrimSpace(prog)) ||
			!strings.HasSuffix(strings.TrimSpace(task.Prompt), "(task "+id+")") || !strings.Contains(task.Prompt, "```cuda\n") {
			t.Errorf("task %s: prompt or files wrong:\n%.300s", task.Key, task.Prompt)
		}
	}
	again, err := source(kit.Tasks{Corpus: "builtin", Limit: 3, Seed: 7, SamplesPerTask: 2})
	if err != nil || !reflect.DeepEqual(ts.Round0, again.Round0) {
		t.Errorf("round 0 is not deterministic: %v", err)
	}
	d, err := ts.Draw(1, map[string]float64{ts.Known[0]: 5, refinement.DefaultWeightKey: 1})
	if err != nil || len(d) != 6 {
		t.Errorf("draw: %d tasks, %v", len(d), err)
	}

	for _, tc := range []struct {
		t    kit.Tasks
		want string
	}{
		{kit.Tasks{Templates: &kit.Templates{Dir: "builtin"}}, "tasks.templates: lane cuda2hip takes a corpus"},
		{kit.Tasks{Corpus: "builtin", Categories: []string{"nope"}}, `tasks.categories: no item of category "nope"`},
		{kit.Tasks{Corpus: "/no/such/folder"}, "tasks.corpus: "},
	} {
		if _, err := source(tc.t); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("source(%+v) = %v, want %q", tc.t, err, tc.want)
		}
	}
}

// TestBench: the bench set loads as a corpus, and its tasks are the
// programs of tools/cassbench.
func TestBench(t *testing.T) {
	t.Parallel()
	ts, err := source(kit.Tasks{Corpus: "bench", Seed: 1, SamplesPerTask: 1})
	if err != nil {
		t.Fatal(err)
	}
	fsys, root, err := Bench()
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := fs.ReadDir(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Round0) != len(dirs) || len(ts.Known) == 0 {
		t.Errorf("%d bench tasks for %d programs, categories %v", len(ts.Round0), len(dirs), ts.Known)
	}
	for _, task := range ts.Round0 {
		if strings.TrimSpace(task.Files[ProgramFile]) == "" || task.Categories[0] == DefaultCategory {
			t.Errorf("bench task %s: no program or no category", task.Key)
		}
	}
}

func TestSynthParse(t *testing.T) {
	t.Parallel()
	rules, err := RefinementRules()
	if err != nil {
		t.Fatal(err)
	}
	lanes, err := refinement.NewLanes(rules)
	if err != nil {
		t.Fatal(err)
	}
	prog := "#include <cstdio>\n__global__ void k(int *p) { p[threadIdx.x] = 1; }\nint main() {\n  int *d;\n  cudaMalloc(&d, 128);\n  k<<<1, 32>>>(d);\n  printf(\"ok\\n\");\n  return 0;\n}\n"
	block := func(body string) string {
		return "### TASK 1\ncategory: atomics\ndescription: d\n```cuda program.cu\n" + body + "```\n"
	}
	cands, errs := lanes.ParseSynthesized(LaneName, block(prog))
	if len(cands) != 1 || cands[0].Files[ProgramFile] != prog {
		t.Fatalf("candidates %+v, errors %v", cands, errs)
	}
	for reason, body := range map[string]string{
		"no __global__ kernel":   "int main() { return 0; }\n",
		"launches no kernel":     "__global__ void k() {}\nint main() { return 0; }\n",
		"does not define main":   "__global__ void k() {}\nvoid f() { k<<<1, 1>>>(); }\n",
		"calls rand":             strings.Replace(prog, "return 0;", "return rand();", 1),
		"inline PTX assembly":    strings.Replace(prog, "p[threadIdx.x] = 1;", "asm(\"mov.u32 %0, 1;\" : \"=r\"(p[0]));", 1),
		"includes a local heade": "#include \"x.h\"\n" + prog,
	} {
		cands, errs := lanes.ParseSynthesized(LaneName, block(body))
		if len(cands) != 0 || len(errs) == 0 || !strings.Contains(errs[0].Error(), reason) {
			t.Errorf("%s: candidates %d, errors %v", reason, len(cands), errs)
		}
	}
}

func TestTaxonomy(t *testing.T) {
	t.Parallel()
	rules, err := RefinementRules()
	if err != nil {
		t.Fatal(err)
	}
	lanes, err := refinement.NewLanes(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ class, stage, diag, want string }{
		{"cuda_in_hip", StageHIPCheck, "the HIP program depends on CUDA:\nline 2: #include <cuda.h>: a CUDA header (HIP: <hip/hip_runtime.h>)", "cuda_in_hip.header"},
		{"cuda_in_hip", StageHIPCheck, "the HIP program depends on CUDA:\nline 9: cudaMalloc: a CUDA API name (HIP: hipMalloc)", "cuda_in_hip.api"},
		{"cuda_in_hip", StageHIPCheck, "the HIP program depends on CUDA:\nline 4: inline PTX assembly", "cuda_in_hip.ptx"},
		{"cuda_in_hip", StageHIPCheck, "the HIP program depends on CUDA:\nline 1: __CUDACC__: a CUDA compiler macro", "cuda_in_hip.macro"},
		{"hip_compile_error", cudasynth.StageRDNA3, "kernels missing from the RDNA3 assembly: spmv", "hip.missing_kernel"},
		{"hip_compile_error", cudasynth.StageHIPCompileAMD, "program.hip:12:3: error: use of undeclared identifier 'hipMallocc'", "hip.undefined_identifier"},
		{"wrong_output", cudasynth.StageRun, "the CUDA and HIP builds print different results:\nline 3: \"sum 12\" vs \"sum 13\"", ""},
		{"timeout", cudasynth.StageHIPCompileAMD, "hipcc timed out", "timeout.build"},
	} {
		res := runsResult(tc.class, tc.stage, tc.diag)
		got := lanes.Labeler().Labels(res, "").DiagnosticKind
		if tc.want != "" && got != tc.want || got == "" || got == refinement.LabelUnknown {
			t.Errorf("%s at %s (%q): label %q, want %q", tc.class, tc.stage, tc.diag, got, tc.want)
		}
		if doc := lanes.Taxonomy.Labels(LaneName)[got]; doc == "" {
			t.Errorf("label %s has no doc", got)
		}
	}
	names := map[string]bool{}
	for _, r := range rules.Rules {
		if names[r.Label] {
			t.Errorf("label %s twice", r.Label)
		}
		names[r.Label] = true
		if slices.Contains(r.Classes, refinement.ClassCompileError) {
			t.Errorf("rule %s labels compile_error, which this lane never gives", r.Label)
		}
	}
}

// runsResult is a verdict of the lane for the taxonomy.
func runsResult(class, stage, diag string) runs.Result {
	return runs.Result{Task: runs.Task{Lane: LaneName, Categories: []string{"c"}},
		Attempt: runs.Attempt{Answer: "__global__ void k() {}\nint main() { k<<<1, 1>>>(); }\n"},
		Verdict: runs.Verdict{Class: class, Stage: stage, Diagnostic: diag}}
}
