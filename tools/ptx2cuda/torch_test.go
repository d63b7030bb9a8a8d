package ptx2cuda

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
	"github.com/kiln-dev/kiln/tools/torch2cuda"
)

// shippedAnswers reads torch2cuda's starter answers and problems by
// problem id ("level1/026_gelu").
func shippedAnswers(t *testing.T) (answers, problems map[string]string) {
	t.Helper()
	answers, problems = map[string]string{}, map[string]string{}
	files, err := filepath.Glob(filepath.Join("..", "torch2cuda", "answers", "level*", "*.py"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no shipped answers: %v", err)
	}
	for _, f := range files {
		id := filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".py")
		a, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := os.ReadFile(filepath.Join("..", "torch2cuda", "problems", id+".py"))
		if err != nil {
			t.Fatal(err)
		}
		answers[id], problems[id] = string(a), string(p)
	}
	return answers, problems
}

// TestTorchAnswersKernels: kiln finds the CUDA source of every shipped
// torch2cuda answer, writes it back unchanged, and makes tasks of most of
// their kernels; splicing a kernel's own definition (or emptying it)
// gives modules Python parses.
func TestTorchAnswersKernels(t *testing.T) {
	t.Parallel()
	answers, _ := shippedAnswers(t)
	ids := make([]string, 0, len(answers))
	for id := range answers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	reasons := map[string]int{}
	usable, total := 0, 0
	var modules []string
	for _, id := range ids {
		ts, err := parseTorchAnswer(answers[id])
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		if got := ts.with(ts.cuda); got != answers[id] {
			t.Errorf("%s: the module written back with its own CUDA source differs", id)
		}
		if len(ts.flags) != 0 {
			t.Errorf("%s: flags %v (the answers build with -O3 only, which is no PTX flag)", id, ts.flags)
		}
		names, why := ProgramKernels(ts.cuda)
		p := parseProgram(ts.cuda)
		for i, name := range names {
			total++
			var se *SkipError
			if errors.As(why[i], &se) {
				reasons[se.Reason]++
				continue
			}
			usable++
			k, err := p.kernel(name)
			if err != nil {
				t.Fatal(err)
			}
			def, _ := programKernelSource(ts.cuda, name)
			spliced := ts.with(p.spliceAnswer(k, def))
			if !strings.Contains(spliced, "using kiln_answer::"+name+";") || !strings.Contains(spliced, "class ModelNew") {
				t.Errorf("%s/%s: spliced module:\n%s", id, name, spliced)
			}
			if len(modules) < 12 {
				modules = append(modules, spliced, ts.with(p.blank(k)))
			}
		}
	}
	t.Logf("%d answers, %d kernels: %d usable, skipped %v", len(ids), total, usable, reasons)
	if usable < 60 {
		t.Errorf("only %d of %d kernels usable", usable, total)
	}
	// Python parses the modules kiln writes.
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	dir := t.TempDir()
	var files []string
	for i, m := range modules {
		f := filepath.Join(dir, fmt.Sprintf("m%d.py", i))
		if err := os.WriteFile(f, []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out, err := exec.Command(py, append([]string{"-c", "import ast, sys\nfor f in sys.argv[1:]: ast.parse(open(f).read(), f)"}, files...)...).CombinedOutput()
	if err != nil {
		t.Errorf("python3 does not parse the spliced modules: %v\n%s", err, out)
	}
}

// TestPyLiterals: Python string literals are found past comments and
// other literals, decoded, and written back so that Python reads the same
// string.
func TestPyLiterals(t *testing.T) {
	t.Parallel()
	src := "# a 'comment' with \"quotes\"\nx = 'it\\'s'  # more\ny = b\"bytes\"\nz = f\"{x} __global__\"\n" +
		"S = \"\"\"a \\\"\"\" b\\\\n \\x41\\n\"\"\"\nR = r'''raw \\n ''' + u\"\\u00e9\"\nname\"bad\n"
	var got []string
	for _, l := range pyLiterals(src) {
		v, ok := l.value()
		got = append(got, fmt.Sprintf("%s|%s|%q|%v", l.prefix, l.quote, v, ok))
	}
	want := []string{`|'|"it's"|true`, `b|"|""|false`, `f|"|""|false`, `|"""|"a \"\"\" b\\n A\n"|true`, `r|'''|"raw \\n "|true`, `u|"|"é"|true`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("literals:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if pyUnescape(`a\
b\101\t\q`) != "ab"+"A\t\\q" {
		t.Errorf("pyUnescape: %q", pyUnescape("a\\\nb\\101\\t\\q"))
	}
	cases := []string{"plain\n#define X(a) \\\n  (a)\n", `ends with a quote "`, `has """ inside`, "tab\tcr\rbell\a \\ end\\", "é ünïcode"}
	for _, c := range cases {
		q := pyQuote(c)
		l := pyLiterals("x = " + q)
		if len(l) != 1 {
			t.Errorf("%q: %d literals in %s", c, len(l), q)
			continue
		}
		if v, _ := l[0].value(); v != c {
			t.Errorf("%q: written %s, read back %q", c, q, v)
		}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		return
	}
	var prog strings.Builder
	prog.WriteString("import json\nprint(json.dumps([")
	for _, c := range cases {
		prog.WriteString(pyQuote(c) + ",")
	}
	prog.WriteString("]))\n")
	out, err := exec.Command(py, "-c", prog.String()).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var back []string
	if err := json.Unmarshal(out, &back); err != nil || strings.Join(back, "\x00") != strings.Join(cases, "\x00") {
		t.Errorf("python3 reads %q (%v), want %q", back, err, cases)
	}
}

// torchRecords makes verified torch2cuda records of shipped answers:
// reference.py in the task's files, except for ids listed in noFiles
// (the builtin problem is found by meta "problem").
func torchRecords(t *testing.T, noFiles map[string]bool, ids ...string) kit.RecordSet {
	t.Helper()
	answers, problems := shippedAnswers(t)
	set := kit.RecordSet{Campaign: "t2c", CampaignID: "7f2c0000-0000-4000-8000-000000000002", Lane: torch2cuda.LaneName}
	for i, id := range ids {
		a, ok := answers[id]
		if !ok {
			a = id // an answer given inline
		}
		r := kit.Record{Key: "r0/" + id + "#0", Campaign: set.Campaign, CampaignID: set.CampaignID, Lane: set.Lane,
			TaskID: fmt.Sprintf("task-%d", i), AttemptID: fmt.Sprintf("attempt-%d", i), VerdictID: fmt.Sprintf("verdict-%d", i), Revision: 1,
			Categories: []string{"fam", "level1"}, Meta: map[string]string{"problem": id}, Answer: a, Stage: torch2cuda.StageJudge,
			Measurements: map[string]float64{"speedup": 1.25}}
		if !noFiles[id] {
			r.Files = map[string]string{torch2cuda.ReferenceFile: problems[id]}
		}
		set.Records = append(set.Records, r)
	}
	return set
}

// TestTorchItems: the kernels of torch2cuda records that become items,
// with their provenance and the problem; the records and kernels that do
// not, and why.
func TestTorchItems(t *testing.T) {
	t.Parallel()
	noKernel := "CUDA_SRC = r\"\"\"int f() { return 1; }\"\"\"\nclass ModelNew: pass\n"
	twoSources := "A = r\"\"\"__global__ void a(float *x) { x[0] = 1; } void la(float *x) { a<<<1,1>>>(x); }\"\"\"\n" +
		"B = '''__global__ void b(float *x) { x[0] = 2; } void lb(float *x) { b<<<1,1>>>(x); }'''\n"
	set := torchRecords(t, map[string]bool{"level1/027_softmax": true, "r0/none": true},
		"level1/026_gelu", "level1/027_softmax", "level2/011_attention_softmax_matmul", noKernel, twoSources)
	set.Records[3].Key, set.Records[4].Key = "r0/none#0", "r0/two#0"
	set.Records[4].Files = map[string]string{torch2cuda.ReferenceFile: "class Model: pass\n"}
	items, skips, err := TorchItems(set, []string{"base", "cicc_o1"})
	if err != nil {
		t.Fatal(err)
	}
	var kernels []string
	for _, it := range items {
		kernels = append(kernels, it.Meta.Kernel)
		s := it.Meta.Source
		if it.Meta.Harness != HarnessTorch || len(it.Meta.Variants) != 2 || s == nil || s.Campaign != "t2c" || s.Lane != torch2cuda.LaneName ||
			it.Meta.Category != "fam" || it.Meta.Torch == nil || it.Meta.Torch.ReferenceSpeedup != 1.25 || !strings.Contains(it.TorchReference, "class Model") ||
			!strings.Contains(it.TorchAnswer, "class ModelNew") || !strings.Contains(it.Kernel, "__global__") || !nameRE.MatchString(it.ID) {
			t.Errorf("item %s: %+v", it.ID, it.Meta)
		}
	}
	t.Logf("kernels %v, skips %v", kernels, skips)
	if len(kernels) < 3 || kernels[0] != "gelu_kernel" {
		t.Errorf("kernels %v", kernels)
	}
	var reasons []string
	for _, s := range skips {
		reasons = append(reasons, s.Record+":"+s.Reason)
	}
	if got := strings.Join(reasons, " "); !strings.Contains(got, "r0/none#0:no_cuda_source") || !strings.Contains(got, "r0/two#0:several_cuda_sources") {
		t.Errorf("skips %q", got)
	}
	// A record without reference.py whose problem is no builtin one.
	lost := torchRecords(t, map[string]bool{"level1/026_gelu": true}, "level1/026_gelu")
	lost.Records[0].Meta = nil
	if _, skips, err := TorchItems(lost, []string{"base"}); err != nil || len(skips) != 1 || skips[0].Reason != SkipNoReference {
		t.Errorf("no reference: %v %v", skips, err)
	}
	other := set
	other.Records = []kit.Record{{Key: "r0/x#0", Lane: "cuda-synth", Answer: noKernel}}
	if _, _, err := TorchItems(other, []string{"base"}); err == nil {
		t.Error("a cuda-synth record was taken")
	}
}

// runPrepare runs kiln ptx prepare with args on host h.
func runPrepare(t *testing.T, h kit.Host, args ...string) (string, string, error) {
	t.Helper()
	c := prepareCommand()
	fs := flag.NewFlagSet(c.Verb, flag.ContinueOnError)
	f := c.Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out, errb strings.Builder
	err := f(ctx, h, &out, &errb)
	return out.String(), errb.String(), err
}

// TestPrepareTorchWithoutTorch: on a host without a CUDA build of torch
// and a GPU, kiln ptx prepare --from-campaign of a torch2cuda campaign
// skips its kernels with one message naming what is missing, after the
// skips it can tell without torch.
func TestPrepareTorchWithoutTorch(t *testing.T) {
	t.Parallel()
	l := lane(t)
	if l.torchMissing() == "" {
		t.Skip("this host can prepare torch tasks")
	}
	set := torchRecords(t, nil, "level1/026_gelu", "level1/013_layer_norm", "CUDA_SRC = 'no kernel'\n")
	set.Records[2].Key = "r0/nokernel#0"
	host := testHost
	host.Records = fakeRecords{sets: map[string]kit.RecordSet{"t2c": set}}
	dir := filepath.Join(t.TempDir(), "torch")
	out, errs, err := runPrepare(t, host, "--from-campaign", "t2c", "-o", dir)
	t.Logf("stderr:\n%serror: %v", errs, err)
	if err == nil || !strings.Contains(err.Error(), "no kernel could be prepared") || !strings.Contains(err.Error(), "1 no_cuda_source, 1 no_torch") {
		t.Errorf("prepare: %v\n%s", err, out)
	}
	if strings.Count(errs, "no_torch") != 1 || !strings.Contains(errs, "skipped 2 kernels of 3 torch2cuda records: no_torch: torch tasks are prepared on a host with python3 with a CUDA build of torch") ||
		!strings.Contains(errs, "this host has "+l.torchMissing()) || !strings.Contains(errs, "no_cuda_source") {
		t.Errorf("stderr:\n%s", errs)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the folder was made")
	}
}

// torchFixture writes a torch item folder of a shipped answer's kernel
// (its PTX given: this host cannot make it) and returns the task of its
// base variant.
func torchFixture(t *testing.T, id, kernel, ptx string) (Item, tools.Item) {
	t.Helper()
	items, _, err := TorchItems(torchRecords(t, nil, id), []string{"base"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ri := range items {
		if ri.Meta.Kernel != kernel {
			continue
		}
		ri.PTX = map[string]string{"base": ptx}
		dir := t.TempDir()
		if _, err := WriteProgramItem(dir, ri); err != nil {
			t.Fatal(err)
		}
		loaded, err := LoadCorpus(os.DirFS(dir), ".", dir, true)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := source(kit.Tasks{Corpus: dir, SamplesPerTask: 1})
		if err != nil {
			t.Fatal(err)
		}
		task := ts.Round0[0]
		fromDir, err := ItemFromDir(filepath.Join(dir, ri.ID), "")
		if err != nil || fromDir.Files[FileTorchSpec] != task.Files[FileTorchSpec] || fromDir.Files[FileTorchAnswer] != ri.TorchAnswer {
			t.Errorf("ItemFromDir: %v %v", fromDir.Meta, err)
		}
		return loaded[0], tools.Item{Lane: LaneName, Files: task.Files, Meta: task.Meta}
	}
	t.Fatalf("%s: no kernel %s", id, kernel)
	return Item{}, tools.Item{}
}

const fakePTX = "//\n// Generated by NVIDIA NVVM Compiler\n.version 7.8\n.target sm_90\n.address_size 64\n\n.visible .entry fake(\n\t.param .u64 fake_param_0\n)\n{\n\tret;\n}\n"

// TestTorchTaskPending: a torch task's prompt and files; on this host
// (no torch with CUDA, no GPU) its verdicts: the checks, the standalone
// compile where the CUDA source allows it, and the judged stages
// pending; Complete says what it needs.
func TestTorchTaskPending(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	l := lane(t)
	if l.torchMissing() == "" {
		t.Skip("this host judges torch tasks")
	}
	it, task := torchFixture(t, "level1/026_gelu", "gelu_kernel", fakePTX)
	if !strings.Contains(task.Files[FileTorchSpec], `"kernel": "gelu_kernel"`) || task.Files[FileTorchReference] == "" || task.Meta["harness"] != HarnessTorch {
		t.Fatalf("task files %v meta %v", task.Files[FileTorchSpec], task.Meta)
	}
	// A reply with the kernel's own definition gives it back byte for byte
	// (the GPU check's ptx-ref then hits the builds prepare made).
	if got, ok := ExtractKernel("Here is the kernel.\n\n```cuda\n" + it.Kernel + "```\n"); !ok || got != it.Kernel {
		t.Errorf("extracted %q, want %q", got, it.Kernel)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cases := []struct {
		name, answer string
		pass         bool
		class        tools.FailureClass
		stage        string
		pending      string
		diag         string
	}{
		{"reference", it.Kernel, true, "", StageCompare, "run,compare", ""},
		{"wrong but compiles", strings.Replace(it.Kernel, "op(x[i], p0, p1)", "op(x[i], p0, p1) + 1.0f", 1), true, "", StageCompare, "run,compare", ""},
		{"other signature", strings.Replace(it.Kernel, "long long n", "int n", 1), false, tools.ClassCompileError, StageCompile, "", "parameter types must be exactly"},
		{"syntax error", strings.Replace(it.Kernel, "y[i] =", "y[i] = = ", 1), false, tools.ClassCompileError, StageCompile, "", "answer.cu"},
		{"other name", strings.Replace(it.Kernel, "gelu_kernel", "gelu2", 1), false, tools.ClassCompileError, StageCheck, "", "gelu_kernel"},
		{"asm", strings.Replace(it.Kernel, "y[i] = op(x[i], p0, p1);", `asm volatile("mov.u32 %0, 1;\n\tadd.u32 %0, %0, 1;\n\tadd.u32 %0, %0, 1;" : "=r"(*(unsigned*)&y[i]));`, 1),
			false, ClassEmbeddedPTX, StageCheck, "", ""},
		// Helpers of its own may reuse the source's names (namespace
		// kiln_answer).
		{"own helper", "__device__ float op(float v, float a, float b) { return v; }\n" + it.Kernel, true, "", StageCompare, "run,compare", ""},
	}
	for _, c := range cases {
		v, err := l.Verify(ctx, task, c.answer)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if v.Pass != c.pass || v.Class != c.class || v.Stage != c.stage || strings.Join(tools.PendingStages(v), ",") != c.pending || !strings.Contains(v.Diagnostic, c.diag) {
			t.Errorf("%s: pass %v class %q stage %s pending %v diag %q", c.name, v.Pass, v.Class, v.Stage, tools.PendingStages(v), v.Diagnostic)
		}
		if c.pass && (len(v.Artifacts[ArtifactHarness]) == 0 || !strings.Contains(string(v.Artifacts[ArtifactHarness]), "using kiln_answer::gelu_kernel;")) {
			t.Errorf("%s: no spliced module kept", c.name)
		}
	}
	v, err := l.Verify(ctx, task, it.Kernel)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Complete(ctx, task, v); !errors.Is(err, ErrNoTorch) || !strings.Contains(err.Error(), l.torchMissing()) {
		t.Errorf("Complete here: %v", err)
	}
	if got, err := l.compileOnly(ctx, task, it.Kernel); err != nil || !strings.HasPrefix(got, "ok:") {
		t.Errorf("compile_kernel: %q %v", got, err)
	}

	// A kernel after host code that needs torch: the compile is pending
	// too.
	nt, ntask := torchFixture(t, "level1/026_gelu", "gelu_kernel", fakePTX)
	_ = nt
	ts, _ := parseTorchAnswer(ntask.Files[FileTorchAnswer])
	needy := strings.Replace(ts.cuda, "// Grid-stride elementwise kernel", "static torch::Tensor keep(torch::Tensor t) { return t; }\n// Grid-stride elementwise kernel", 1)
	ntask.Files[FileTorchAnswer] = ts.with(needy)
	v, err = l.Verify(ctx, ntask, it.Kernel)
	if err != nil || !v.Pass || strings.Join(tools.PendingStages(v), ",") != "compile,run,compare" || !strings.Contains(v.Stages[2].Detail, "needs PyTorch's headers") {
		t.Errorf("a source that needs torch: %+v %v", v, err)
	}
	if got, err := l.compileOnly(ctx, ntask, it.Kernel); err != nil || !strings.HasPrefix(got, "not compiled here") {
		t.Errorf("compile_kernel of a source that needs torch: %q %v", got, err)
	}
}

// fakeJudge answers for torch2cuda's judge: the result fn gives for a
// candidate module.
type fakeJudge struct {
	mu    sync.Mutex
	calls []string
	fn    func(candidate string) map[string]any
}

func (f *fakeJudge) Complete(_ context.Context, item tools.Item, prev tools.Verdict) (tools.Verdict, error) {
	cand := string(prev.Artifacts[torch2cuda.ArtifactCandidate])
	if item.Files[torch2cuda.ReferenceFile] == "" || strings.Join(tools.PendingStages(prev), ",") != torch2cuda.StageJudge {
		return tools.Verdict{}, errors.New("fake judge: bad call")
	}
	f.mu.Lock()
	f.calls = append(f.calls, cand)
	f.mu.Unlock()
	raw, err := json.Marshal(f.fn(cand))
	if err != nil {
		return tools.Verdict{}, err
	}
	return tools.Verdict{Artifacts: map[string][]byte{torch2cuda.ArtifactJudge: raw}}, nil
}

// torchLane is a lane on a registry that claims a CUDA build of torch and
// a GPU, judging with j.
func torchLane(t *testing.T, j TorchJudge) *Lane {
	t.Helper()
	rep := testRegistry.Report()
	var tl []toolchain.Tool
	for _, x := range rep.Tools {
		if x.Name != toolchain.Torch {
			tl = append(tl, x)
		}
	}
	rep.Tools = append(tl, toolchain.Tool{Name: toolchain.Torch, Path: "/nonexistent/python3", Version: "python 3.12.0, torch 2.11.0, cuda 13.0"})
	rep.GPU = toolchain.GPU{Present: true, Names: []string{"Fake H100"}}
	l, err := New(Config{Sandbox: testRunner, Toolchains: toolchain.FromReport(rep), Cache: testCache, Parallel: 1,
		Torch: func(context.Context) (TorchJudge, error) { return j, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestTorchJudged: where torch and a GPU are, the judge's results become
// the verdict's stages (a fake judge here): a correct module passes with
// its NAE, speedups and latency ratio; judge classes fail the stage they
// belong to; a reference failure is a bad task. Complete judges a pending
// verdict made on a host without torch. Prepare's check: the kernel's own
// definition must pass, the emptied kernel must not.
func TestTorchJudged(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	it, task := torchFixture(t, "level1/026_gelu", "gelu_kernel", fakePTX)
	result := map[string]map[string]any{
		"pass":    {"pass": true, "class": "", "correct": true, "speedup": 2.0, "t_ref_ms": 1.0, "t_new_ms": 0.5, "max_abs_err": 2e-6, "tolerance": map[string]any{"atol": 4e-3, "atol_scale": 1e-3}},
		"slower":  {"pass": false, "class": "slower", "correct": true, "speedup": 0.5},
		"wrong":   {"pass": false, "class": "wrong_output", "correct": false, "diagnostic": "trial 0: out: 7 elements outside tolerance"},
		"nan":     {"pass": false, "class": "nan", "correct": false, "diagnostic": "NaN"},
		"crash":   {"pass": false, "class": "illegal_memory", "diagnostic": "an illegal memory access"},
		"hang":    {"pass": false, "class": "timeout", "diagnostic": "timed out in correctness"},
		"build":   {"pass": false, "class": "compile_error", "diagnostic": "answer.cu(3): error: x"},
		"suspect": {"pass": false, "class": "suspected_cheating", "correct": true, "suspicion": []string{"modifies its inputs"}},
		"badref":  {"pass": false, "class": "runtime_error", "reference_error": true, "diagnostic": "Model failed"},
		"broken":  {"pass": false, "class": "runtime_error", "judge_error": true, "diagnostic": "judge crashed"},
	}
	var want string
	j := &fakeJudge{fn: func(string) map[string]any { return result[want] }}
	l := torchLane(t, j)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, c := range []struct {
		result string
		pass   bool
		class  tools.FailureClass
		stage  string
	}{
		{"pass", true, "", StageCompare}, {"slower", true, "", StageCompare}, {"wrong", false, tools.ClassWrongOutput, StageCompare},
		{"nan", false, tools.ClassWrongOutput, StageCompare}, {"crash", false, tools.ClassCrash, StageRun}, {"hang", false, tools.ClassTimeout, StageRun},
		{"build", false, tools.ClassCompileError, StageCompile}, {"suspect", false, tools.ClassWrongOutput, StageCompare},
	} {
		want = c.result
		v, err := l.Verify(ctx, task, it.Kernel)
		if err != nil {
			t.Errorf("%s: %v", c.result, err)
			continue
		}
		if v.Pass != c.pass || v.Class != c.class || v.Stage != c.stage || len(tools.PendingStages(v)) != 0 || c.pass && len(v.Stages) != 5 {
			t.Errorf("%s: pass %v class %q stage %s stages %+v", c.result, v.Pass, v.Class, v.Stage, v.Stages)
		}
		if c.result == "pass" {
			if m := v.Measurements; math.Abs(m["nae_max"]-5e-7) > 1e-12 || m["latency_ratio"] != 1.25/2.0 || m["speedup"] != 2 || m["model_ms_answer"] != 0.5 || len(v.Artifacts[torch2cuda.ArtifactJudge]) == 0 {
				t.Errorf("pass: measurements %v", m)
			}
		}
		if c.result == "suspect" && (len(v.Suspicion) != 1 || !strings.Contains(v.Diagnostic, "modifies its inputs")) {
			t.Errorf("suspect: %v %q", v.Suspicion, v.Diagnostic)
		}
	}
	for _, c := range []struct {
		result string
		bad    bool
	}{{"badref", true}, {"broken", false}} {
		want = c.result
		if _, err := l.Verify(ctx, task, it.Kernel); err == nil || errors.Is(err, tools.ErrBadItem) != c.bad {
			t.Errorf("%s: %v", c.result, err)
		}
	}

	// A verdict left pending on a host without torch, completed here.
	pending, err := lane(t).Verify(ctx, task, it.Kernel)
	if err != nil || len(tools.PendingStages(pending)) == 0 {
		t.Skipf("no pending verdict to complete (%v)", err)
	}
	want = "pass"
	v, err := l.Complete(ctx, task, pending)
	if err != nil || !v.Pass || len(tools.PendingStages(v)) != 0 || v.Measurements["latency_ratio"] != 0.625 || v.Measurements["verify_ms"] == 0 ||
		v.Measurements["pending_stages"] != 0 {
		t.Errorf("Complete: %+v %v", v, err)
	}
	want = "wrong"
	if v, err := l.Complete(ctx, task, pending); err != nil || v.Pass || v.Class != tools.ClassWrongOutput || v.Stage != StageCompare {
		t.Errorf("Complete of a wrong module: %+v %v", v, err)
	}

	// Prepare's check.
	blankOf := func(cand string) bool {
		return strings.Contains(cand, "gelu_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, float p0, float p1) { }")
	}
	for _, c := range []struct {
		name         string
		orig, blank  string
		reason       string
		wantSpeedup  float64
		wantBadError bool
	}{
		{"good", "pass", "wrong", "", 2, false},
		{"blank passes", "pass", "pass", SkipUnobserved, 0, false},
		{"original fails", "wrong", "wrong", SkipJudge, 0, false},
		{"blank does not build", "pass", "build", SkipJudge, 0, false},
	} {
		j.fn = func(cand string) map[string]any {
			if blankOf(cand) {
				return result[c.blank]
			}
			return result[c.orig]
		}
		item := it
		item.Meta.Torch = &TorchMeta{ReferenceSpeedup: 9}
		err := l.checkTorch(ctx, &item)
		var se *SkipError
		switch {
		case c.reason == "" && (err != nil || item.Meta.Torch.ReferenceSpeedup != c.wantSpeedup):
			t.Errorf("%s: %v, speedup %v", c.name, err, item.Meta.Torch.ReferenceSpeedup)
		case c.reason != "" && (!errors.As(err, &se) || se.Reason != c.reason):
			t.Errorf("%s: %v, want a skip %s", c.name, err, c.reason)
		}
	}
	if n := len(j.calls); n < 20 {
		t.Errorf("%d judge calls", n)
	}
}
