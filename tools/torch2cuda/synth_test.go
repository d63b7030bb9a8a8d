package torch2cuda

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/runs/curate"
	"github.com/kiln-dev/kiln/tools/kit"
)

func synthLanes(t *testing.T) *refinement.Lanes {
	t.Helper()
	r, err := rules()
	if err != nil {
		t.Fatal(err)
	}
	l, err := refinement.NewLanes(r)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestSynthBriefs: a request's briefs are seeded by the request (the same
// request, the same briefs), distinct within it, drawn from the targeted
// family's operators, shown in the prompt; another request (a later
// round's examples) gets other briefs.
func TestSynthBriefs(t *testing.T) {
	t.Parallel()
	lanes := synthLanes(t)
	pools, err := loadPools()
	if err != nil {
		t.Fatal(err)
	}
	req := refinement.SynthRequest{Lane: LaneName, Category: "conv", K: 6,
		Examples: []refinement.Example{{TaskKey: "r0/level1/011_conv_transpose2d#0", Label: "wrong.values"}}}
	a, b := pools.briefs(req), pools.briefs(req)
	if len(a) != 6 || !slices.EqualFunc(a, b, func(x, y map[string]string) bool {
		return x["operators"] == y["operators"] && x["shapes"] == y["shapes"]
	}) {
		t.Fatalf("briefs not deterministic or not 6: %v", a)
	}
	seen := map[string]bool{}
	for _, br := range a {
		if br["family"] != "conv" || !slices.Contains(pools.Operators["conv"], br["operators"]) || br["fusion_depth"] != "a single operator" {
			t.Errorf("brief outside the conv family: %v", br)
		}
		k := strings.Join([]string{br["operators"], br["shapes"], br["dtypes"], br["layouts"], br["reductions"], br["edge_sizes"]}, "|")
		if seen[k] {
			t.Errorf("brief drawn twice: %v", br)
		}
		seen[k] = true
	}
	later := req
	later.Examples = []refinement.Example{{TaskKey: "r1/level1/011_conv_transpose2d#0", Label: "wrong.values"}}
	p1, err := lanes.BuildSynthPrompt(req)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := lanes.BuildSynthPrompt(later)
	if err != nil {
		t.Fatal(err)
	}
	if p1.User == p2.User {
		t.Error("a later round's request renders the same prompt")
	}
	if !strings.Contains(p1.User, "TASK 6: "+a[5]["operators"]) || !strings.Contains(p1.User, `category "conv"`) {
		t.Errorf("prompt lacks the briefs:\n%s", p1.User)
	}
	for _, br := range pools.briefs(refinement.SynthRequest{Lane: LaneName, Category: "level2", K: 3}) {
		if br["family"] != "fusion" || br["fusion_depth"] == "a single operator" {
			t.Errorf("level2 brief %v", br)
		}
	}
}

// TestParseSynthBlock: the static parse of a reply's blocks.
func TestParseSynthBlock(t *testing.T) {
	t.Parallel()
	lanes := synthLanes(t)
	good := "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return x * 2\n\n" +
		"def get_inputs():\n    return [torch.randn(4)]\n\ndef get_init_inputs():\n    return []\n"
	block := func(cat, fn, code string) string {
		return "### TASK 1\ncategory: " + cat + "\nfunction: " + fn + "\ndescription: d\n```python\n" + code + "```\n"
	}
	for _, tc := range []struct {
		name, reply, want string // want: "" accepted, else a word of the reason
	}{
		{"family from the category", block("elementwise", "double_it", good), ""},
		{"family line kept", block("level1", "double_it", "# family: activation\n"+good), ""},
		{"no family for a level", block("level1", "double_it", good), "family"},
		{"unknown family", block("conv", "double_it", "# family: magic\n"+good), "family"},
		{"no get_inputs", block("conv", "x", strings.Replace(good, "def get_inputs", "def inputs", 1)), "get_inputs"},
		{"an answer", block("conv", "x", good+"\nclass ModelNew(nn.Module):\n    pass\n"), "answer"},
		{"bad name", block("conv", "Not A Name", good), "snake_case"},
		{"no code", "### TASK 1\ncategory: conv\nfunction: x\n", "no python"},
	} {
		cands, errs := lanes.ParseSynthesized(LaneName, tc.reply)
		switch {
		case tc.want == "" && (len(cands) != 1 || len(errs) > 0):
			t.Errorf("%s: %d candidates, %v", tc.name, len(cands), errs)
		case tc.want != "" && (len(cands) != 0 || len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.want)):
			t.Errorf("%s: %d candidates, %v (want a rejection naming %q)", tc.name, len(cands), errs, tc.want)
		case tc.want == "":
			c := cands[0]
			c.Category = "elementwise"
			ts, err := fromCandidate(2)(3, c)
			if err != nil || len(ts) != 2 || ts[0].Round != 3 || !strings.HasPrefix(ts[0].Key, "r3/synth/double_it_") ||
				!strings.Contains(ts[0].Prompt, "return x * 2") || ts[0].Meta["origin"] != "resynthesis" || ts[0].Meta["level"] != "level1" {
				t.Errorf("%s: tasks %+v %v", tc.name, ts, err)
			}
		}
	}
}

// TestProblemTokensNear: renamed copies with new sizes are near
// duplicates; among the 73 starter problems the only near duplicates are
// shape variants of one computation (the matmuls 002 and 006 of 001:
// torch.matmul(A, B) with other sizes), so the tokens keep the operators a
// problem calls.
func TestProblemTokensNear(t *testing.T) {
	t.Parallel()
	h, err := curate.NewHasher(curate.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	dd, err := curate.NewDeduper(h.Params())
	if err != nil {
		t.Fatal(err)
	}
	probs, err := LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	var variants []string
	for _, p := range probs {
		if dup, sim := dd.Offer(h.Doc(p.ID, problemTokens("", p.Source))); dup != "" {
			variants = append(variants, p.ID+"~"+dup)
			t.Logf("%s ~ %s (%.2f)", p.ID, dup, sim)
		}
	}
	want := []string{"level1/002_rectangular_matmul~level1/001_square_matmul", "level1/006_tall_skinny_matmul~level1/001_square_matmul"}
	if !slices.Equal(variants, want) {
		t.Errorf("near duplicates among the starter problems: %v, want the matmul shape variants %v", variants, want)
	}
	bench, err := os.ReadFile("testdata/synth/benchmark/level1/1_Conv2d_ReLU_BiasAdd.py")
	if err != nil {
		t.Fatal(err)
	}
	renamed := strings.NewReplacer("x", "inp", "batch_size = 64", "batch_size = 32", "in_channels", "cin").Replace(string(bench))
	if s := curate.Similarity(mustSign(t, h, string(bench)), mustSign(t, h, renamed)); s < h.Params().Threshold {
		t.Errorf("a renamed copy with a new batch size: similarity %.2f", s)
	}
	relu := "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
	if slices.Equal(problemTokens("", relu), problemTokens("", strings.Replace(relu, "relu", "sigmoid", 1))) {
		t.Error("relu and sigmoid give the same tokens")
	}
}

func mustSign(t *testing.T, h *curate.Hasher, src string) curate.Signature {
	t.Helper()
	s, err := h.Sign(problemTokens("", src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// screenReply parses the fixture reply and screens it against the
// builtin corpus and the fixture benchmark with l's validator.
func screenReply(t *testing.T, l *Lane, reply string) (acc []refinement.Candidate, rej []refinement.Rejection) {
	t.Helper()
	lanes := synthLanes(t)
	cands, errs := lanes.ParseSynthesized(LaneName, reply)
	if len(errs) > 0 {
		t.Fatalf("fixture reply: %v", errs)
	}
	for i := range cands {
		cands[i].Category = "conv"
	}
	set, err := source(kit.Tasks{Corpus: "builtin", SamplesPerTask: 1, Benchmarks: []string{filepath.Join("testdata", "synth", "benchmark")}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := validator(l)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	acc, rej, err = refinement.Screen(ctx, cands, refinement.ScreenOptions{Existing: set.Corpus, Validator: v, Parallel: 2, Lanes: lanes})
	if err != nil {
		t.Fatal(err)
	}
	return acc, rej
}

// wantSynthOutcomes are the fixture reply's outcomes by block: the
// reason of a rejection, "pending" or "accepted".
var wantSynthOutcomes = map[int]string{
	1: "ok", 2: "ok", 3: ReasonReturnsInput, 4: "nondeterministic", 5: ReasonTooLarge, 6: ReasonTrivial,
	7: ReasonNonfinite, 8: ReasonStatic, 9: "near duplicate", 10: "benchmark/benchmark/level1/1_Conv2d_ReLU_BiasAdd.py",
}

// checkOutcomes compares a screen's outcomes with wantSynthOutcomes; ok
// is what a sound problem comes to here ("pending" or "accepted").
func checkOutcomes(t *testing.T, acc []refinement.Candidate, rej []refinement.Rejection, ok string) {
	t.Helper()
	got := map[int]string{}
	for _, c := range acc {
		got[c.Index] = "accepted"
	}
	for _, r := range rej {
		var re *RejectError
		switch {
		case errors.Is(r.Err, refinement.ErrPending):
			got[r.Candidate.Index] = "pending"
		case errors.As(r.Err, &re) && re.Reason == ReasonReferenceError:
			got[r.Candidate.Index] = strings.SplitN(re.Detail, ":", 2)[0]
		case errors.As(r.Err, &re):
			got[r.Candidate.Index] = re.Reason
		case errors.Is(r.Err, refinement.ErrDuplicate):
			got[r.Candidate.Index] = r.Err.Error()
		default:
			got[r.Candidate.Index] = "unexpected: " + r.Err.Error()
		}
		t.Logf("block %d (%s): %v", r.Candidate.Index, r.Candidate.Function, r.Err)
	}
	for i, want := range wantSynthOutcomes {
		if want == "ok" {
			want = ok
		}
		if g := got[i]; g != want && !strings.Contains(g, want) {
			t.Errorf("block %d: %q, want %q", i, g, want)
		}
	}
}

// TestValidateSyntheses screens the fixture reply on this host: on a CPU
// host the two sound problems pass every check the CPU can make and wait
// for the GPU check (pending: neither accepted nor rejected); the others
// are rejected with their reasons: the forward returns its input, is
// non-deterministic, is too large, gives a constant or non-finite
// output, imports os, repeats an earlier block under new names, or copies
// the benchmark folder's problem. Then TestValidateProblemCPUDevice's
// check, here on the CPU checks this screen cached.
func TestValidateSyntheses(t *testing.T) {
	t.Parallel()
	l := newLane(t, "")
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: TestValidateSynthesesOnGPU (-tags gpu) checks there")
	}
	l.cfg.Synth.CPURSS = 3 << 30 // the too large problem dies sooner (TestRefineTorch2CUDA in cmd/kiln keeps the default)
	l.cfg.CacheDir = t.TempDir()
	reply, err := os.ReadFile("testdata/synth/reply_conv.md")
	if err != nil {
		t.Fatal(err)
	}
	acc, rej := screenReply(t, l, string(reply))
	checkOutcomes(t, acc, rej, "pending")
	t.Run("cpu device", func(t *testing.T) {
		cpu := newLane(t, "cpu")
		cpu.cfg.Synth.CPURSS, cpu.cfg.CacheDir = l.cfg.Synth.CPURSS, l.cfg.CacheDir
		checkCPUDevice(t, cpu)
	})
}

// TestKernelBenchContamination: a KernelBench problem, copied with its
// names and sizes changed, is dropped as a duplicate of the benchmark
// folder given. The public KernelBench is not part of the repository:
// KILN_KERNELBENCH_DIR names a checkout (or a bare git mirror, whose
// level-1 and level-2 files are extracted into a temp folder).
func TestKernelBenchContamination(t *testing.T) {
	t.Parallel()
	src := os.Getenv("KILN_KERNELBENCH_DIR")
	if src == "" {
		t.Skip("KILN_KERNELBENCH_DIR is not set (a KernelBench checkout or bare mirror, such as /work/.mirror/ScalingIntelligence+KernelBench/repo)")
	}
	dir := kernelBenchDir(t, src)
	set, err := source(kit.Tasks{Corpus: "builtin", SamplesPerTask: 1, Benchmarks: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	var bench []runs.Task
	for _, task := range set.Corpus {
		if task.Meta["origin"] == "benchmark" {
			bench = append(bench, task)
		}
	}
	if len(bench) < 10 {
		t.Fatalf("%d benchmark problems read from %s", len(bench), dir)
	}
	orig := bench[len(bench)/2]
	copied := strings.NewReplacer("batch_size", "n_batch", "x", "inp", "Model", "Model").Replace(orig.Files[ReferenceFile])
	reply := "### TASK 1\ncategory: fusion\nfunction: renamed_copy\n```python\n# family: fusion\n" + copied + "\n```\n"
	lanes := synthLanes(t)
	cands, errs := lanes.ParseSynthesized(LaneName, reply)
	if len(cands) != 1 {
		t.Fatalf("copy does not parse: %v", errs)
	}
	_, rej, err := refinement.Screen(context.Background(), cands, refinement.ScreenOptions{Existing: set.Corpus, Lanes: lanes})
	if err != nil || len(rej) != 1 || !errors.Is(rej[0].Err, refinement.ErrDuplicate) || !strings.Contains(rej[0].Err.Error(), orig.Key) {
		t.Fatalf("a renamed copy of %s: %v %v", orig.Key, rej, err)
	}
}

// kernelBenchDir returns a folder of KernelBench problems: src's
// KernelBench/ folder, or, for a bare git mirror, its level1 and level2
// problems extracted into a temp folder.
func kernelBenchDir(t *testing.T, src string) string {
	t.Helper()
	if st, err := os.Stat(filepath.Join(src, "KernelBench")); err == nil && st.IsDir() {
		return filepath.Join(src, "KernelBench")
	}
	dir := filepath.Join(t.TempDir(), "KernelBench")
	out, err := exec.Command("git", "-C", src, "ls-tree", "-r", "--name-only", "HEAD", "KernelBench/").Output()
	if err != nil {
		t.Skipf("%s: neither a checkout nor a git mirror: %v", src, err)
	}
	n := 0
	for _, f := range strings.Fields(string(out)) {
		if !strings.HasSuffix(f, ".py") || !(strings.Contains(f, "/level1/") || strings.Contains(f, "/level2/")) {
			continue
		}
		b, err := exec.Command("git", "-C", src, "show", "HEAD:"+f).Output()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, strings.TrimPrefix(f, "KernelBench/"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Skipf("%s: no KernelBench/level1 or level2 problems", src)
	}
	return dir
}

// TestProblemFeatures: the features of some starter problems, and the
// briefs of a targeted feature draw only operators that show it.
func TestProblemFeatures(t *testing.T) {
	t.Parallel()
	lanes := synthLanes(t)
	probs, err := LoadBuiltinProblems()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Problem{}
	for _, p := range probs {
		byID[p.ID] = p
	}
	for id, want := range map[string][]string{
		"level1/011_conv_transpose2d": {"conv_transpose"},
		"level1/009_depthwise_conv2d": {"grouped_conv"},
		"level1/036_avg_pool3d":       {"volumetric"},
		"level1/027_softmax":          {"softmax"},
		"level1/045_broadcast_add":    nil,
		"level1/001_square_matmul":    {"gemm"},
		"level1/038_cross_entropy":    {"integer_inputs"},
	} {
		p, ok := byID[id]
		if !ok {
			t.Fatalf("no starter problem %s", id)
		}
		got := lanes.Features.FeaturesOf(runs.Result{Task: runs.Task{Lane: LaneName, Files: map[string]string{ReferenceFile: p.Source}}})
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: features %v lack %s", id, got, w)
			}
		}
		if want == nil && len(got) > 0 {
			t.Errorf("%s: features %v, want none", id, got)
		}
	}
	pools, err := loadPools()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range pools.briefs(refinement.SynthRequest{Lane: LaneName, Category: "conv_transpose", K: 4}) {
		if !strings.Contains(strings.ToLower(b["operators"]), "transpose") {
			t.Errorf("conv_transpose brief %v", b)
		}
	}
	if d := lanes.Book().Description(LaneName, "conv_transpose"); !strings.Contains(d, "transposed convolutions") {
		t.Errorf("feature description %q", d)
	}
}

// TestValidateProblemCPUDevice: a lane that judges on the CPU (Device
// "cpu") takes the CPU check as final: a sound problem is accepted, not
// pending, and one that returns its input is still rejected. On a host
// without a GPU TestValidateSyntheses checks it, with the CPU checks of
// its screen (the same problems: no second check process).
func TestValidateProblemCPUDevice(t *testing.T) {
	t.Parallel()
	if !testRegistry.GPU().Present {
		t.Skip("TestValidateSyntheses checks it on this host (its cpu device subtest)")
	}
	checkCPUDevice(t, newLane(t, "cpu"))
}

// checkCPUDevice validates the fixture reply's first (sound) and third
// (returns its input) problems with l, a lane with Device "cpu".
func checkCPUDevice(t *testing.T, l *Lane) {
	t.Helper()
	reply, err := os.ReadFile("testdata/synth/reply_conv.md")
	if err != nil {
		t.Fatal(err)
	}
	cands, errs := synthLanes(t).ParseSynthesized(LaneName, string(reply))
	if len(errs) > 0 || len(cands) < 3 {
		t.Fatalf("fixture reply: %d candidates, %v", len(cands), errs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := l.ValidateProblem(ctx, cands[0]); err != nil {
		t.Errorf("sound problem: %v", err)
	}
	var re *RejectError
	if err := l.ValidateProblem(ctx, cands[2]); !errors.As(err, &re) || re.Reason != ReasonReturnsInput {
		t.Errorf("a problem returning its input: %v", err)
	}
}
