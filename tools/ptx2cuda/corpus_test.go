package ptx2cuda

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/ptx2cuda/rollptx"
)

func loadBoth(t *testing.T) (builtin, bench []Item) {
	t.Helper()
	builtin, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	bench, err = LoadBenchCorpus()
	if err != nil {
		t.Fatal(err)
	}
	return builtin, bench
}

// TestCorpus: both corpora load with every variant's PTX, use the known
// categories, and the bench set's kernels are not the builtin ones.
func TestCorpus(t *testing.T) {
	t.Parallel()
	builtin, bench := loadBoth(t)
	if len(builtin) < 15 || len(bench) < 8 {
		t.Errorf("%d builtin and %d bench kernels", len(builtin), len(bench))
	}
	tasks := 0
	kernels := map[string]string{}
	cats := map[string]map[string]int{}
	for _, set := range [][]Item{builtin, bench} {
		for _, it := range set {
			if !slices.Contains(Categories(), it.Meta.Category) {
				t.Errorf("%s: category %q", it.ID, it.Meta.Category)
			}
			if cats[it.Set] == nil {
				cats[it.Set] = map[string]int{}
			}
			cats[it.Set][it.Meta.Category]++
			if n := len(it.Meta.Variants); n < 2 || n > 4 {
				t.Errorf("%s: %d variants, want 2-4", it.ID, n)
			}
			if prev, dup := kernels[it.Meta.Kernel]; dup {
				t.Errorf("kernel %s in %s and %s", it.Meta.Kernel, prev, it.ID)
			}
			kernels[it.Meta.Kernel] = it.Set + "/" + it.ID
			seen := map[string]string{}
			for _, v := range it.Meta.Variants {
				tasks++
				ptx := it.PTX[v.Name]
				if !strings.Contains(ptx, ".entry") || !strings.Contains(ptx, it.Meta.Kernel) {
					t.Errorf("%s: PTX without the kernel's .entry", TaskID(it.ID, v.Name))
				}
				if other, dup := seen[ptx]; dup {
					t.Errorf("%s: the same PTX as variant %s (the variant changes nothing)", TaskID(it.ID, v.Name), other)
				}
				seen[ptx] = v.Name
			}
		}
	}
	for _, c := range Categories() {
		if cats[CorpusBuiltin][c] == 0 || cats[CorpusBench][c] == 0 {
			t.Errorf("category %s: %d builtin, %d bench kernels", c, cats[CorpusBuiltin][c], cats[CorpusBench][c])
		}
	}
	t.Logf("%d kernels, %d tasks; categories %v", len(builtin)+len(bench), tasks, cats)
}

// TestHarnessResolution: a task's expressions resolve with the variant's
// knobs: a block size flag moves the grid with it.
func TestHarnessResolution(t *testing.T) {
	t.Parallel()
	builtin, _ := loadBoth(t)
	byID := map[string]Item{}
	for _, it := range builtin {
		byID[it.ID] = it
	}
	cases := []struct {
		item, variant        string
		grid, block          [3]int64
		shared               int64
		firstCount, valueOf0 string
	}{
		{"ew_saxpy", "base", [3]int64{1024, 1, 1}, [3]int64{256, 1, 1}, 0, "", "1048576"},
		{"ew_saxpy", "b128_items8", [3]int64{1024, 1, 1}, [3]int64{128, 1, 1}, 0, "", "1048576"},
		{"red_block_sum", "b512", [3]int64{1024, 1, 1}, [3]int64{512, 1, 1}, 0, "", ""},
		{"conv_conv2d_tile", "b16x16", [3]int64{64, 48, 1}, [3]int64{16, 16, 1}, 22 * 22 * 4, "", ""},
		{"conv_conv2d_tile", "r2", [3]int64{64, 48, 1}, [3]int64{16, 16, 1}, 20 * 20 * 4, "", ""},
		{"ew_adam_step", "b1024", [3]int64{66, 1, 1}, [3]int64{1024, 1, 1}, 0, "", ""},
	}
	for _, c := range cases {
		h, err := byID[c.item].Harness(c.variant)
		if err != nil {
			t.Errorf("%s/%s: %v", c.item, c.variant, err)
			continue
		}
		if h.Grid != c.grid || h.Block != c.block || h.Shared != c.shared {
			t.Errorf("%s/%s: grid %v block %v shared %d", c.item, c.variant, h.Grid, h.Block, h.Shared)
		}
		if c.valueOf0 != "" && h.Params[0].Value != c.valueOf0 {
			t.Errorf("%s/%s: first parameter %+v", c.item, c.variant, h.Params[0])
		}
	}
	h, _ := byID["red_histogram"].Harness("bins64")
	if h.Params[0].Init != "int(0,63)" || h.Params[2].Count != 64 {
		t.Errorf("histogram bins64: %+v", h.Params)
	}
	h, _ = byID["ew_saxpy"].Harness("base")
	if got := h.Signature(); got != "__global__ void saxpy(int n, float a, const float* x, float* y)" {
		t.Errorf("signature %q", got)
	}
}

// TestMetaErrors: a broken meta names the field.
func TestMetaErrors(t *testing.T) {
	t.Parallel()
	kernel := "#define BLOCK 64\n__global__ void k(float* y, int n) { y[threadIdx.x] = n; }\n"
	base := func() Meta {
		return Meta{Category: "elementwise", Kernel: "k",
			Params: []Param{{Name: "y", Type: "float*", Role: "out", Count: "N"}, {Name: "n", Type: "int", Value: "N"}},
			Sizes:  map[string]string{"N": "1024"}, Launch: Launch{Grid: []string{"(N + BLOCK - 1) / BLOCK"}, Block: []string{"BLOCK"}},
			Variants: []Variant{{Name: "base"}}}
	}
	cases := []struct {
		name string
		edit func(*Meta)
		want string
	}{
		{"ok", func(*Meta) {}, ""},
		{"unknown name", func(m *Meta) { m.Params[0].Count = "M" }, `params[0] (y): count "M": unknown name "M"`},
		{"role", func(m *Meta) { m.Params[0].Role = "output" }, `params[0] (y): role "output"`},
		{"const out", func(m *Meta) { m.Params[0].Type = "const float*" }, "a const pointer is an input"},
		{"elem type", func(m *Meta) { m.Params[0].Type = "half*" }, `element type "half"`},
		{"uniform int", func(m *Meta) {
			m.Params[0].Type = "int*"
			m.Params[0].Role = "inout"
			m.Params[0].Init = "uniform(0,1)"
		}, "uniform is for floating types"},
		{"block", func(m *Meta) { m.Launch.Block = []string{"2048"} }, "2048 threads per block"},
		{"flag", func(m *Meta) { m.Variants[0].Flags = []string{"-o", "x"} }, `flag "-o" is not allowed`},
		{"xcicc", func(m *Meta) { m.Variants[0].Flags = []string{"-Xcicc"} }, "-Xcicc must be followed by -O0..-O3"},
		{"kernel", func(m *Meta) { m.Kernel = "other" }, "defines no __global__ function other"},
		{"no output", func(m *Meta) { m.Params[0].Role = "in" }, "no out or inout pointer"},
		{"cycle", func(m *Meta) { m.Sizes["N"] = "N + 1" }, "defined in terms of itself"},
		{"div0", func(m *Meta) { m.Launch.Grid = []string{"N / 0"} }, "division by zero"},
		{"variant flag moves block", func(m *Meta) { m.Variants[0].Flags = []string{"-DBLOCK=2048"} }, "2048 threads"},
	}
	for _, c := range cases {
		m := base()
		c.edit(&m)
		err := Item{ID: "x", Meta: m, Kernel: kernel}.check()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestSource: tasks are deterministic, prompts show Rolled-PTX (not the
// reference source) and end with the task tag, and limits and categories
// filter.
func TestSource(t *testing.T) {
	t.Parallel()
	all, err := source(kit.Tasks{Corpus: CorpusBuiltin, SamplesPerTask: 1})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := source(kit.Tasks{Corpus: CorpusBuiltin, SamplesPerTask: 1})
	if !reflect.DeepEqual(all.Round0, again.Round0) {
		t.Error("round 0 differs between two reads")
	}
	if len(all.Round0) != len(all.Corpus) || len(all.Round0) < 40 {
		t.Errorf("%d round-0 tasks, %d corpus tasks", len(all.Round0), len(all.Corpus))
	}
	tagRE := regexp.MustCompile(`\(task ([a-z0-9_]+/[a-z0-9_]+)\)\s*$`)
	for _, task := range all.Round0 {
		m := tagRE.FindStringSubmatch(task.Prompt)
		if m == nil || "r0/"+m[1]+"#0" != task.Key {
			t.Errorf("%s: prompt tag %v", task.Key, m)
		}
		if !strings.Contains(task.Prompt, "```ptx\n") || !strings.Contains(task.Prompt, ".entry") {
			t.Errorf("%s: no PTX in the prompt", task.Key)
		}
		if strings.Contains(task.Prompt, "__syncthreads") || strings.Contains(task.Prompt, "#define") {
			t.Errorf("%s: the prompt shows CUDA source", task.Key)
		}
		if task.Prompt != "" && !strings.Contains(task.Prompt, rollptx.Roll(task.Files[FilePTX])[:200]) {
			t.Errorf("%s: the prompt's PTX is not the Rolled-PTX of kernel.ptx", task.Key)
		}
		if _, err := ParseHarness([]byte(task.Files[FileHarness])); err != nil {
			t.Errorf("%s: %v", task.Key, err)
		}
	}
	some, err := source(kit.Tasks{Corpus: CorpusBench, Categories: []string{"matmul", "scan"}, Limit: 3, Seed: 4, SamplesPerTask: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(some.Round0) != 6 || !slices.Equal(some.Known, []string{"matmul", "scan"}) {
		t.Errorf("%d tasks, known %v", len(some.Round0), some.Known)
	}
	for _, task := range some.Round0 {
		if task.Meta["corpus"] != CorpusBench || !(task.Categories[0] == "matmul" || task.Categories[0] == "scan") {
			t.Errorf("%s: %v %v", task.Key, task.Meta, task.Categories)
		}
	}
	if _, err := source(kit.Tasks{Corpus: CorpusBuiltin, Categories: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "tasks.categories") {
		t.Errorf("unknown category: %v", err)
	}
	if _, err := source(kit.Tasks{Templates: &kit.Templates{Dir: "builtin"}}); err == nil || !strings.Contains(err.Error(), "tasks.templates") {
		t.Errorf("templates: %v", err)
	}
	if _, err := source(kit.Tasks{Corpus: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "tasks.corpus") {
		t.Errorf("empty folder: %v", err)
	}
}

// TestAnswersFile: corpus/answers.jsonl answers every builtin task with
// its reference kernel (regenerate with -regenerate).
func TestAnswersFile(t *testing.T) {
	t.Parallel()
	builtin, _ := loadBoth(t)
	want := answersJSONL(t, builtin)
	path := filepath.Join("corpus", "answers.jsonl")
	if *regenerateFlag {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(want) {
		t.Fatalf("%s is stale (%v): go test ./tools/ptx2cuda -run 'TestAnswersFile|TestCorpusPTX' -args -regenerate", path, err)
	}
	// Every round-0 task of the builtin corpus is matched by its rule.
	ts, err := source(kit.Tasks{Corpus: CorpusBuiltin, SamplesPerTask: 1})
	if err != nil {
		t.Fatal(err)
	}
	var rules []*regexp.Regexp
	sc := bufio.NewScanner(strings.NewReader(string(got)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct{ Match string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		rules = append(rules, regexp.MustCompile(r.Match))
	}
	for _, task := range ts.Round0 {
		n := 0
		for _, re := range rules {
			if re.MatchString(task.Prompt) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d rules match", task.Key, n)
		}
	}
}

// answersJSONL is the script of right answers: one rule per builtin task.
func answersJSONL(t *testing.T, items []Item) []byte {
	t.Helper()
	var b strings.Builder
	for _, it := range items {
		for _, v := range it.Meta.Variants {
			line, err := json.Marshal(map[string]string{"match": `\(task ` + regexp.QuoteMeta(TaskID(it.ID, v.Name)) + `\)`,
				"response": "```cuda\n" + it.Kernel + "```"})
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// TestCorpusPTX: the committed PTX is what nvcc makes of each variant
// (with -regenerate: rewrites it). Needs nvcc; compiles one at a time. The
// default tier checks the first item of each set; TestCorpusPTXRest (-tags
// long) the others; -regenerate rewrites every item here.
func TestCorpusPTX(t *testing.T) {
	if !*regenerateFlag {
		t.Parallel() // -regenerate rewrites the PTX other tests read: before them
	}
	if testing.Short() {
		t.Skip("-short: compiles corpus variants")
	}
	checkCorpusPTX(t, func(i int) bool { return i == 0 || *regenerateFlag })
}

// checkCorpusPTX checks the items of each corpus set whose index keep
// accepts.
func checkCorpusPTX(t *testing.T, keep func(i int) bool) {
	needNVCC(t)
	l := lane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	for _, set := range []string{CorpusBuiltin, CorpusBench} {
		dir := filepath.Join("corpus", set)
		items, err := LoadCorpus(os.DirFS(dir), ".", set, false)
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range items {
			if !keep(i) {
				continue
			}
			ptx, err := l.PreparePTX(ctx, it)
			if err != nil {
				t.Errorf("%s: %v", it.ID, err)
				continue
			}
			for _, v := range it.Meta.Variants {
				p := filepath.Join(dir, it.ID, v.Name+".ptx")
				if *regenerateFlag {
					if err := os.WriteFile(p, []byte(ptx[v.Name]), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				old, err := os.ReadFile(p)
				if err != nil || string(old) != ptx[v.Name] {
					t.Errorf("%s differs from nvcc's output (%v): rerun with -regenerate", p, err)
				}
			}
		}
	}
}
