package torch2cuda

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

var (
	testRunner   *sandboxes.Runner
	testRegistry *toolchain.Registry
	testSkip     string // why the sandboxed tests cannot run here
)

func TestMain(m *testing.M) {
	sandboxes.MaybeRunInit()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "kiln-torch2cuda-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	testRegistry, err = toolchain.Detect(ctx, toolchain.Config{SkipProbes: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, ok := testRegistry.Get(toolchain.Torch); !ok {
		testSkip = "no python3 with torch (apt-get install python3-torch)"
	} else if testRunner, err = sandboxes.New(sandboxes.Config{ScratchRoot: filepath.Join(dir, "boxes"),
		ReadOnlyPaths: testRegistry.SandboxPaths(), Logger: slog.New(slog.DiscardHandler)}); err != nil {
		testSkip = "no sandbox: " + err.Error()
	}
	if testRunner != nil {
		defer testRunner.Close()
	}
	return m.Run()
}

func needSandbox(t *testing.T) {
	t.Helper()
	if testSkip != "" {
		t.Skip(testSkip)
	}
}

func TestBuiltinProblems(t *testing.T) {
	t.Parallel()
	probs, err := LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) < 60 {
		t.Errorf("%d problems, want at least 60", len(probs))
	}
	perFamily, perLevel := map[string]int{}, map[string]int{}
	for _, p := range probs {
		perFamily[p.Family]++
		perLevel[p.Level]++
		if p.Description == "" || !strings.HasPrefix(p.ID, p.Level+"/") {
			t.Errorf("%s: level %s description %q", p.ID, p.Level, p.Description)
		}
		if _, err := BuiltinAnswer(p.ID); err != nil {
			t.Errorf("%s: %v", p.ID, err)
		}
	}
	for _, f := range Families {
		if perFamily[f] < 4 {
			t.Errorf("family %s: %d problems, want at least 4", f, perFamily[f])
		}
	}
	for _, l := range []string{"level1", "level2", "level3"} {
		if perLevel[l] == 0 {
			t.Errorf("no %s problem", l)
		}
	}
	t.Logf("%d problems: %v, %v", len(probs), perLevel, perFamily)
}

// TestLoadProblemsKernelBenchLayout: a KernelBench checkout's layout, with
// its file names and no family lines, and a file that is no problem.
func TestLoadProblemsKernelBenchLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	model := "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return x\n\n" +
		"def get_inputs():\n    return [torch.randn(4)]\n\ndef get_init_inputs():\n    return []\n"
	files := map[string]string{
		"level1/1_Square_matrix_multiplication_.py":   model,
		"level1/23_Softmax.py":                        model,
		"level1/40_LayerNorm.py":                      model,
		"level1/54_conv_standard_3D.py":               model,
		"level1/100_HingeLoss.py":                     model,
		"level1/19_ReLU.py":                           model,
		"level1/47_Sum_reduction_over_a_dimension.py": model,
		"level2/1_Conv2D_ReLU_BiasAdd.py":             model,
		"level3/11_VGG16.py":                          model,
		"level1/README.md":                            "not a problem",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	probs, err := LoadProblems(os.DirFS(dir), ".")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"level1/1_Square_matrix_multiplication_": "matmul", "level1/23_Softmax": "activation", "level1/40_LayerNorm": "norm",
		"level1/54_conv_standard_3D": "conv", "level1/100_HingeLoss": "loss", "level1/19_ReLU": "activation",
		"level1/47_Sum_reduction_over_a_dimension": "reduction", "level2/1_Conv2D_ReLU_BiasAdd": "fusion", "level3/11_VGG16": "network",
	}
	if len(probs) != len(want) {
		t.Fatalf("%d problems, want %d", len(probs), len(want))
	}
	for _, p := range probs {
		if want[p.ID] != p.Family {
			t.Errorf("%s: family %q, want %q", p.ID, p.Family, want[p.ID])
		}
	}
	// A file without get_inputs is an error naming it.
	bad := filepath.Join(dir, "level1", "7_Broken.py")
	if err := os.WriteFile(bad, []byte("class Model: pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProblems(os.DirFS(dir), "."); err == nil || !strings.Contains(err.Error(), "level1/7_Broken.py") || !strings.Contains(err.Error(), "get_inputs") {
		t.Errorf("broken problem: %v", err)
	}
	// An unknown family line is an error too.
	if err := os.WriteFile(bad, []byte("# family: magic\n"+model), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProblems(os.DirFS(dir), "."); err == nil || !strings.Contains(err.Error(), `family "magic"`) {
		t.Errorf("unknown family: %v", err)
	}
}

func TestExtractAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, reply, want string
		ok                bool
	}{
		{"python block", "Here:\n```python\nclass ModelNew(nn.Module):\n    pass\n```\n", "class ModelNew(nn.Module):\n    pass\n", true},
		{"the block with ModelNew wins", "```python\nimport torch\n```\n```python\nclass ModelNew:\n    pass\n```\n```python\nprint(1)\n```", "class ModelNew:\n    pass\n", true},
		{"last python block", "```py\nx = 1\n```\n```python\ny = 2\n```", "y = 2\n", true},
		{"no python", "```cuda\n__global__ void k() {}\n```", "", false},
		{"prose", "I cannot.", "", false},
	} {
		got, ok := ExtractAnswer(tc.reply)
		if ok != tc.ok || got != tc.want {
			t.Errorf("%s: %q %v, want %q %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestSource(t *testing.T) {
	t.Parallel()
	ts, err := source(kit.Tasks{Corpus: "builtin", Categories: []string{"loss", "level3"}, Limit: 5, Seed: 3, SamplesPerTask: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Round0) != 10 {
		t.Fatalf("%d tasks, want 5 problems x 2", len(ts.Round0))
	}
	for _, task := range ts.Round0 {
		fam, lvl := task.Meta["family"], task.Meta["level"]
		if fam != "loss" && lvl != "level3" {
			t.Errorf("%s: %s/%s outside the categories", task.Key, lvl, fam)
		}
		if !slices.Equal(task.Categories, []string{fam, lvl}) || !strings.Contains(task.Prompt, "(task "+task.Meta["problem"]+")") ||
			!strings.Contains(task.Prompt, task.Files[ReferenceFile][:40]) {
			t.Errorf("%s: categories %v, prompt %.200q", task.Key, task.Categories, task.Prompt)
		}
	}
	again, _ := source(kit.Tasks{Corpus: "builtin", Categories: []string{"loss", "level3"}, Limit: 5, Seed: 3, SamplesPerTask: 2})
	if again.Round0[7].Key != ts.Round0[7].Key {
		t.Error("same seed, different tasks")
	}
	if _, err := source(kit.Tasks{Templates: &kit.Templates{Dir: "builtin"}}); err == nil || !strings.Contains(err.Error(), "tasks.templates") {
		t.Errorf("templates: %v", err)
	}
	if _, err := source(kit.Tasks{Corpus: "builtin", Categories: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), "tasks.categories") {
		t.Errorf("unknown category: %v", err)
	}
}

func newLane(t *testing.T, device string) *Lane {
	t.Helper()
	needSandbox(t)
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Device: device, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestVerifyStatic: on a host without a GPU, a right answer is pending
// (its candidate kept), and the static stage catches what it can.
func TestVerifyStatic(t *testing.T) {
	t.Parallel()
	l := newLane(t, "")
	if testRegistry.GPU().Present {
		t.Skip("a GPU host judges for real")
	}
	const id = "level1/045_broadcast_add"
	probs, err := LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	var ref string
	for _, p := range probs {
		if p.ID == id {
			ref = p.Source
		}
	}
	right, err := BuiltinAnswer(id)
	if err != nil {
		t.Fatal(err)
	}
	item := tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: ref}}
	ctx := context.Background()
	v, err := l.Verify(ctx, item, right)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass || !slices.Equal(tools.PendingStages(v), []string{StageJudge}) || string(v.Artifacts[ArtifactCandidate]) != right {
		t.Errorf("right answer: %+v", v)
	}
	for _, tc := range []struct {
		name, answer string
		class        tools.FailureClass
		stage, diag  string
	}{
		{"syntax", strings.Replace(right, "class ModelNew(nn.Module):", "class ModelNew(nn.Module)", 1), tools.ClassCompileError, StageStatic, "SyntaxError"},
		{"torch fallback, no kernel", "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x, y):\n        return x + y\n",
			ClassSuspectedCheating, StageStatic, "builds no extension"},
		{"no ModelNew", "import torch\n", tools.ClassNoAnswer, StageExtract, "no ModelNew"},
	} {
		v, err := l.Verify(ctx, item, tc.answer)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if v.Pass || v.Class != tc.class || v.Stage != tc.stage || !strings.Contains(v.Diagnostic, tc.diag) {
			t.Errorf("%s: pass %v class %s stage %s diagnostic %q", tc.name, v.Pass, v.Class, v.Stage, v.Diagnostic)
		}
	}
	if _, err := l.Verify(ctx, tools.Item{Lane: LaneName}, right); err == nil {
		t.Error("an item without a reference verified")
	}
	// Completing needs a GPU: an error, not a verdict.
	if _, err := l.Complete(ctx, item, v); err == nil {
		t.Error("Complete without a GPU succeeded")
	}
}

// TestJudgeOnCPU runs the real judge in the sandbox on the CPU (Debian's
// CPU torch, C++ extensions): batches of concurrent evaluations, each
// judged alike whatever else is in the batch; a crash or a hang does not
// disturb the others; concurrent evaluations of one candidate share its
// build; the second evaluation of a candidate reuses its cached build.
//
// Every fixture candidate builds the same extension (only its Python
// differs), and judge.py keys a build by the extension's sources and
// arguments, not the module around them. The default tier therefore builds
// it once: the cases of cand_correct.py first (one build for three
// concurrent evaluations), then the others in one batch with the correct
// candidate again, their cache entries holding that build (seedBuild);
// that second evaluation of the correct candidate is the cached one.
// Under -tags long every candidate is built, all cases in one batch, and
// the correct candidate is judged once more after it.
//
// The hanging candidate spins until the run timeout: judgeRunTimeout is
// short so that it burns little CPU, long enough for every other
// evaluation on a loaded 2-core host (they take a few seconds).
func TestJudgeOnCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds C++ extensions against torch")
	}
	needSandbox(t)
	t.Parallel() // its builds overlap the judge's own suite (TestJudgePythonSuite)
	// Two evaluations at once per judge process, timing alone
	// (SlotsPerDevice): the verdicts must be those of one at a time.
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Device: "cpu", Timeout: 3 * time.Minute,
		RunTimeout: judgeRunTimeout, CompileParallel: 2, Trials: 3, CacheDir: t.TempDir(), SlotsPerDevice: 2})
	if err != nil {
		t.Fatal(err)
	}
	cases, correct := judgeCases(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var again tools.Verdict // a second evaluation of the correct candidate
	if longTier {
		checkJudged(t, cases, judgeAll(ctx, l, cases))
		v, err := l.Verify(ctx, tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: cases[0].ref}}, correct)
		if err != nil {
			t.Fatal(err)
		}
		again = v
	} else {
		var first, rest []judgeCase
		for _, tc := range cases {
			if tc.cand == correct {
				first = append(first, tc)
			} else {
				rest = append(rest, tc)
			}
		}
		checkJudged(t, first, judgeAll(ctx, l, first))
		seedBuild(ctx, t, l, correct, rest)
		rest = append(rest, first[0])
		got := judgeAll(ctx, l, rest)
		checkJudged(t, rest, got)
		again = got[len(got)-1].v
	}
	// Again: the build comes from the cache.
	var jr struct {
		Cached bool `json:"compile_cached"`
		Lock   *struct {
			Windows [][]any `json:"windows"`
		} `json:"device_lock"`
	}
	if err := json.Unmarshal(again.Artifacts[ArtifactJudge], &jr); err != nil || !jr.Cached || again.Measurements["correct"] != 1 {
		t.Errorf("second judge of the same candidate: cached %v correct %v err %v", jr.Cached, again.Measurements["correct"], err)
	}
	// It held the device shared, then alone to time.
	if jr.Lock == nil || len(jr.Lock.Windows) != 2 || jr.Lock.Windows[1][0] != "exclusive" {
		t.Errorf("judge with 2 slots per device: device lock %+v, want a shared and an exclusive window", jr.Lock)
	}
}

// judgeRunTimeout is TestJudgeOnCPU's run timeout, which its hanging
// candidate waits out (it was 40 s).
const judgeRunTimeout = 15 * time.Second

// judgeCase is one evaluation of TestJudgeOnCPU and what it must give.
type judgeCase struct {
	name, ref, cand string
	class           tools.FailureClass // "": a correct answer, a pass (faster than torch or not)
	stage           string             // where it fails; "" is StageJudge
}

// judgeCases are TestJudgeOnCPU's evaluations (the correct one first) and
// the correct candidate's source.
func judgeCases(t *testing.T) ([]judgeCase, string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("judge", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	big, small, correct := read("ref_relu_matmul.py"), read("ref_small_scale.py"), read("cand_correct.py")
	return []judgeCase{
		{"correct", big, correct, "", ""},
		{"zeros on a small output", small, read("cand_zeros.py"), tools.ClassWrongOutput, ""},
		{"torch fallback", big, read("cand_fallback.py"), ClassSuspectedCheating, ""},
		{"crash", big, read("cand_crash.py"), ClassRuntimeError, ""},
		{"hang", big, read("cand_hang.py"), tools.ClassTimeout, ""},
		{"wrong shape", big, read("cand_wrong_shape.py"), ClassWrongShape, ""},
		// The problem's faults, not the candidate's: caught by the problem check,
		// and (a problem that passes its check) by the judge's reference stage.
		{"broken problem", read("problems/ref_raises.py"), correct, tools.ClassReferenceError, StageCheck},
		{"problem failing in the judge", read("problems/ref_fails_later.py"), correct, tools.ClassReferenceError, ""},
	}, correct
}

// judged is one case's verdict, or the error that kept it from one.
type judged struct {
	v   tools.Verdict
	err error
}

// judgeAll verifies the cases concurrently.
func judgeAll(ctx context.Context, l *Lane, cases []judgeCase) []judged {
	out := make([]judged, len(cases))
	var wg sync.WaitGroup
	for i, tc := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i].v, out[i].err = l.Verify(ctx, tools.Item{Lane: LaneName, Files: map[string]string{ReferenceFile: tc.ref}}, tc.cand)
		}()
	}
	wg.Wait()
	return out
}

// checkJudged checks each case's verdict against what it must give.
func checkJudged(t *testing.T, cases []judgeCase, got []judged) {
	t.Helper()
	for i, tc := range cases {
		v := got[i].v
		if got[i].err != nil {
			t.Errorf("%s: %v", tc.name, got[i].err)
			continue
		}
		var took []string // the stages' times (the judge stage's from submission: with its wait for a batch)
		for _, s := range v.Stages {
			took = append(took, s.Name+" "+s.Duration.Round(time.Millisecond).String())
		}
		t.Logf("%s: %v", tc.name, took)
		if tc.class == "" {
			// Correct is a pass, faster than torch or not; speed is reported beside it.
			_, timed := v.Measurements[MeasureFast]
			if !v.Pass || v.Measurements["correct"] != 1 || v.Class != "" || len(v.Suspicion) > 0 || !timed {
				t.Errorf("%s: pass %v class %q measurements %v suspicion %v: %s", tc.name, v.Pass, v.Class, v.Measurements, v.Suspicion, v.Diagnostic)
			}
			continue
		}
		stage := cmp.Or(tc.stage, StageJudge)
		if v.Pass || v.Class != tc.class || v.Stage != stage {
			t.Errorf("%s: pass %v class %q (want %q) at %s (want %s): %.600s", tc.name, v.Pass, v.Class, tc.class, v.Stage, stage, v.Diagnostic)
		}
		if tc.class == tools.ClassReferenceError && (!v.TaskFault() || !strings.HasPrefix(v.Diagnostic, "reference_error (crash): ")) {
			t.Errorf("%s: a task fault naming its reason, got %q", tc.name, v.Diagnostic)
		}
	}
}

// seedBuild stores the build of candidate from (in l's cache already)
// under the cache key of each case's candidate, after checking that the
// candidate builds the very same extension: the same text from "CPP_SRC = "
// to the end of the load_inline call. judge.py keys a build by the
// extension's sources and arguments (not its name or the module around
// it), so the files are those building the candidate would make.
func seedBuild(ctx context.Context, t *testing.T, l *Lane, from string, cases []judgeCase) {
	t.Helper()
	arch := l.arch(ctx)
	files := l.loadCached(l.cacheKey(from, arch))
	if files == nil {
		t.Fatal("the correct candidate's build is not in the cache")
	}
	ext := extensionPart(t, from)
	for _, tc := range cases {
		if extensionPart(t, tc.cand) != ext {
			t.Fatalf("%s: its candidate builds another extension than cand_correct.py", tc.name)
		}
		l.storeCached(l.cacheKey(tc.cand, arch), files)
	}
}

// extensionPart is a fixture candidate's extension: its C++ source and the
// load_inline call that builds it.
func extensionPart(t *testing.T, cand string) string {
	t.Helper()
	i := strings.Index(cand, "CPP_SRC = ")
	j := strings.Index(cand, "\n)\n")
	if i < 0 || j < i {
		t.Fatalf("no CPP_SRC and load_inline call in the candidate:\n%.300s", cand)
	}
	return cand[i:j]
}

// TestJudgePythonSuite runs the judge's own unittest suite (judge/
// test_judge.py: every fixture class, isolation, the build cache, batch
// mode) with the python3 that has torch.
func TestJudgePythonSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds C++ extensions against torch")
	}
	py, ok := testRegistry.Get(toolchain.Torch)
	if !ok {
		t.Skip("no python3 with torch")
	}
	t.Parallel() // one python process at a time: it overlaps TestJudgeOnCPU's builds
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py.Path, "-m", "unittest", "discover", "-s", "judge", "-p", "test_*.py")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("judge unittest: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "OK") {
		t.Errorf("judge unittest printed no OK:\n%s", out)
	}
	t.Logf("%s", lastLines(string(out), 3))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
