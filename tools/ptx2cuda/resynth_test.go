package ptx2cuda

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// synthLanes is refinement's view of this lane alone.
func synthLanes(t *testing.T) *refinement.Lanes {
	t.Helper()
	lr, err := RefinementRules()
	if err != nil {
		t.Fatal(err)
	}
	l, err := refinement.NewLanes(lr)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// synthBlock writes one TASK block; an empty kernel or meta leaves that
// code block out.
func synthBlock(i int, category, kernel, meta string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### TASK %d\ncategory: %s\ndescription: test kernel %d\n", i, category, i)
	if kernel != "" {
		fmt.Fprintf(&b, "```cuda kernel.cu\n%s```\n", kernel)
	}
	if meta != "" {
		fmt.Fprintf(&b, "```json meta.json\n%s```\n", meta)
	}
	return b.String() + "\n"
}

// parseOne parses a reply of one block: the candidate, or why not.
func parseOne(t *testing.T, lanes *refinement.Lanes, block string) (refinement.Candidate, string) {
	t.Helper()
	cands, errs := lanes.ParseSynthesized(LaneName, "Analysis first.\n\n"+block)
	if len(cands)+len(errs) != 1 {
		t.Fatalf("%d candidates, %d errors", len(cands), len(errs))
	}
	if len(errs) == 1 {
		var be *refinement.BlockError
		if !errors.As(errs[0], &be) {
			t.Fatalf("error %T %v", errs[0], errs[0])
		}
		return refinement.Candidate{}, be.Reason
	}
	return cands[0], ""
}

func TestParseSynth(t *testing.T) {
	t.Parallel()
	lanes := synthLanes(t)
	k, m := exampleSynthKernel, exampleSynthMeta
	repl := func(s, old, new string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("%q not in %q", old, s)
		}
		return strings.Replace(s, old, new, 1)
	}
	twoKernels := k + "\n__global__ void other(float* y) { y[0] = 1.0f; }\n"
	typedef := "typedef float real;\n" + repl(k, "float* __restrict__ y", "real* __restrict__ y")
	cases := []struct {
		name, kernel, meta string
		want               string // "" parses
	}{
		{"good", k, m, ""},
		{"flags", k, repl(m, `"launch"`, `"variants": [{"name": "fast", "flags": ["--use_fast_math", "-DBLOCK=128"]}], "launch"`), ""},
		{"unsigned", repl(k, "int n,", "unsigned n,"), repl(m, `"type": "int"`, `"type": "unsigned int"`), ""},
		{"typedef left to the build", typedef, m, ""},
		{"no harness", k, "", "no ```json block with meta.json"},
		{"no kernel", "", m, "no ```cuda block with kernel.cu"},
		{"malformed json", k, repl(m, `"kernel": "clamp_scale",`, `"kernel": "clamp_scale"`), "meta.json: invalid character"},
		{"unknown field", k, repl(m, `"sizes"`, `"size_names": {}, "sizes"`), `"size_names" is not a field of a synthesised kernel's harness`},
		{"two variants", k, repl(m, `"launch"`, `"variants": [{"name": "a"}, {"name": "b"}], "launch"`), "at most one"},
		{"bad flag", k, repl(m, `"launch"`, `"variants": [{"name": "a", "flags": ["-o", "x"]}], "launch"`), `flag "-o" is not allowed`},
		{"program harness", k, repl(m, `"sizes"`, `"harness": "program", "sizes"`), `"harness" is not a field`},
		{"kernel name", k, repl(m, `"kernel": "clamp_scale"`, `"kernel": "clamp"`), "defines no __global__ function clamp"},
		{"signature", k, repl(m, `"type": "const float*"`, `"type": "const double*"`), "are not the kernel's parameter types (int, float, float, const float*, float*)"},
		{"param count", k, repl(m, `    {"name": "hi", "type": "float", "value": "0.75"},`+"\n", ""), "are not the kernel's parameter types"},
		{"no output", k, repl(m, `"role": "out"`, `"role": "in"`), "no out or inout pointer"},
		{"undefined size", k, repl(m, `"count": "N"}`+"\n", `"count": "M"}`+"\n"), `count "M"`},
		{"too many threads", k, repl(m, `"block": ["BLOCK"]`, `"block": ["2048"]`), "threads per block"},
		{"two kernels", twoKernels, m, "2 __global__ functions"},
		{"main", k + "\nint main() { return 0; }\n", m, "defines main"},
		{"template", "template <typename T>\n" + repl(k, "float* __restrict__ y", "T* __restrict__ y"), m, "template"},
		{"inline asm", repl(k, "if (i < n)", `asm volatile("mov.u32 %0, %0;\n\tmov.u32 %0, %0;\n\tmov.u32 %0, %0;" : "+r"(i));`+"\n    if (i < n)"), m, "carries PTX"},
		{"local include", "#include \"helpers.h\"\n" + k, m, "local header"},
	}
	for _, c := range cases {
		cand, why := parseOne(t, lanes, synthBlock(1, "elementwise", c.kernel, c.meta))
		switch {
		case c.want == "" && why != "":
			t.Errorf("%s: rejected: %s", c.name, why)
		case c.want != "" && !strings.Contains(why, c.want):
			t.Errorf("%s: reason %q, want %q", c.name, why, c.want)
		case c.want == "":
			if cand.Function != "clamp_scale" || cand.Description != "test kernel 1" || cand.Hash == "" ||
				!slices.Equal(slices.Sorted(maps.Keys(cand.Files)), []string{FileKernel, MetaFile}) {
				t.Errorf("%s: candidate %+v", c.name, cand)
			}
			if cand.Files[MetaFile] != strings.TrimSpace(c.meta)+"\n" || cand.Files[FileKernel] != strings.TrimSpace(c.kernel)+"\n" {
				t.Errorf("%s: files are not as written: %q", c.name, cand.Files)
			}
		}
	}
}

// TestSynthPrompt: the resynthesis prompt of a failing task shows the
// original kernel (not its PTX) and asks for kernel.cu and meta.json; the
// lane's categories are described.
func TestSynthPrompt(t *testing.T) {
	t.Parallel()
	lanes := synthLanes(t)
	lr, _ := RefinementRules()
	if got := slices.Sorted(maps.Keys(lr.Synth.Categories)); !slices.Equal(got, slices.Sorted(slices.Values(Categories()))) {
		t.Errorf("described categories %v, want the lane's %v", got, Categories())
	}
	set, err := source(kit.Tasks{Corpus: CorpusBuiltin, Categories: []string{"reduction"}, SamplesPerTask: 1})
	if err != nil {
		t.Fatal(err)
	}
	task := set.Round0[0]
	res := failing(task, "__global__ void block_sum(const float* in, float* partial, int n) {}", "outputs differ from the original kernel's: partial: NAE 1 > 0.001")
	ex := refinement.ExamplesFor(res, "reduction", refinement.ExampleOptions{Lanes: lanes})
	p, err := lanes.BuildSynthPrompt(refinement.SynthRequest{Lane: LaneName, Category: "reduction", K: 4, Examples: ex, Avoid: []string{"saxpy"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shared-memory trees", "The original kernel.cu:", task.Files[FileKernel][:40], "The model's decompilation:",
		"NAE 1 > 0.001", "(failure: wrong.nae", "write 4 NEW kernels", "```json meta.json", "pick others): saxpy"} {
		if !strings.Contains(p.User, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p.User)
		}
	}
	if strings.Contains(p.User, ".entry") || !strings.Contains(p.System, `"role": "inout"`) {
		t.Errorf("the prompt shows PTX, or the system prompt lacks the harness format")
	}
}

// TestPrepareCandidate compiles synthesised kernels with nvcc in the
// sandbox: a good one gets its PTX and resolved harness; one that does not
// compile, and one whose harness's signature is not the kernel's, are
// rejected; a copy of a corpus kernel is a duplicate of its corpus task
// (another input seed does not make it another task); the prepared
// candidate becomes tasks like a corpus variant's, which verify.
func TestPrepareCandidate(t *testing.T) {
	needNVCC(t)
	t.Parallel()
	lanes := synthLanes(t)
	l := lane(t)
	v, err := validator(l)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := v.(refinement.Preparer)
	if !ok {
		t.Fatalf("the validator %T is no refinement.Preparer", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	parse := func(kernel, meta string) refinement.Candidate {
		t.Helper()
		c, why := parseOne(t, lanes, synthBlock(1, "elementwise", kernel, meta))
		if why != "" {
			t.Fatalf("rejected: %s", why)
		}
		return c
	}

	good := parse(exampleSynthKernel, exampleSynthMeta)
	prepared, err := p.Prepare(ctx, good)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	if err := v.Validate(ctx, good); err != nil {
		t.Errorf("validate: %v", err)
	}
	ptx := prepared.Files[FilePTX]
	if !strings.Contains(ptx, ".entry _Z11clamp_scaleiffPKfPf") || !strings.Contains(ptx, ".target sm_90") {
		t.Errorf("PTX:\n%.800s", ptx)
	}
	h, err := ParseHarness([]byte(prepared.Files[FileHarness]))
	if err != nil || h.Kernel != "clamp_scale" || h.Grid != [3]int64{256, 1, 1} || h.Block != [3]int64{256, 1, 1} || len(h.Params) != 5 {
		t.Errorf("harness %+v %v", h, err)
	}
	if prepared.Files[FileKernel] != good.Files[FileKernel] || prepared.Files[MetaFile] != good.Files[MetaFile] {
		t.Error("prepare changed the kernel or meta.json")
	}

	broken := parse(strings.Replace(exampleSynthKernel, "x[i] * 1.5f", "x[i] * scale", 1), exampleSynthMeta)
	if _, err := p.Prepare(ctx, broken); err == nil || !strings.Contains(err.Error(), "does not compile to PTX") ||
		!strings.Contains(err.Error(), `identifier "scale" is undefined`) || errors.Is(err, refinement.ErrValidatorBroken) {
		t.Errorf("a kernel that does not compile: %v", err)
	}
	// The parser cannot read a typedef'd signature; the harness build
	// finds that it is not the meta's.
	mismatch := parse("typedef double real;\n"+strings.Replace(exampleSynthKernel, "float* __restrict__ y", "real* __restrict__ y", 1), exampleSynthMeta)
	if _, err := p.Prepare(ctx, mismatch); err == nil || !strings.Contains(err.Error(), "meta.json's params do not match the kernel") ||
		!strings.Contains(err.Error(), "__global__ void clamp_scale(int n, float lo, float hi, const float* x, float* y)") {
		t.Errorf("a harness of another signature: %v", err)
	}
	bad := good
	bad.Files = map[string]string{FileKernel: "not a kernel", MetaFile: "{}"}
	if err := v.Validate(ctx, bad); err == nil {
		t.Error("a candidate that is no kernel validates")
	}

	// Screened against the corpus: the good one passes, a copy of
	// ew_saxpy's base variant (its own seed) is the corpus task again.
	set, err := source(kit.Tasks{Corpus: CorpusBuiltin, SamplesPerTask: 2})
	if err != nil {
		t.Fatal(err)
	}
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	var saxpy Item
	for _, it := range items {
		if it.ID == exampleItem {
			saxpy = it
		}
	}
	saxpyMeta := `{"kernel": "saxpy", "sizes": {"N": "1048576"}, "params": [
  {"name": "n", "type": "int", "value": "N"}, {"name": "a", "type": "float", "value": "2.5"},
  {"name": "x", "type": "const float*", "role": "in", "count": "N", "init": "uniform(-1,1)"},
  {"name": "y", "type": "float*", "role": "inout", "count": "N", "init": "uniform(-1,1)"}],
 "launch": {"grid": ["(N + BLOCK * ITEMS - 1) / (BLOCK * ITEMS)"], "block": ["BLOCK"]}}
`
	cands, errs := lanes.ParseSynthesized(LaneName, synthBlock(1, "elementwise", exampleSynthKernel, exampleSynthMeta)+
		synthBlock(2, "elementwise", saxpy.Kernel, saxpyMeta))
	if len(cands) != 2 {
		t.Fatalf("candidates %d: %v", len(cands), errs)
	}
	acc, rej, err := refinement.Screen(ctx, cands, refinement.ScreenOptions{Existing: set.Corpus, Validator: v, Lanes: lanes})
	if err != nil || len(acc) != 1 || len(rej) != 1 || acc[0].Index != 1 || !errors.Is(rej[0].Err, refinement.ErrDuplicate) ||
		!strings.Contains(rej[0].Err.Error(), "existing task corpus/ew_saxpy/base") {
		t.Fatalf("screen: accepted %+v, rejected %+v, %v", acc, rej, err)
	}

	// The accepted candidate's tasks.
	c := acc[0]
	c.Category = "reduction" // the targeted category is the engine's
	tasks, err := set.FromCandidate(3, c)
	if err != nil || len(tasks) != 2 {
		t.Fatalf("tasks: %d %v", len(tasks), err)
	}
	for i, task := range tasks {
		id := "synth_" + c.Hash[:10] + "/base"
		if task.Round != 3 || task.Lane != LaneName || task.Key != fmt.Sprintf("r3/synth/reduction/01-%s#%d", c.Hash[:10], i) ||
			!slices.Equal(task.Categories, []string{"reduction"}) {
			t.Errorf("task %+v", task)
		}
		want := map[string]string{"origin": "resynthesis", "item": "synth_" + c.Hash[:10], "variant": "base", "kernel": "clamp_scale",
			"corpus": CorpusSynthesised, "function": "clamp_scale", "source_hash": c.Hash, "synth_category": "reduction",
			"description": "test kernel 1"}
		if !maps.Equal(task.Meta, want) {
			t.Errorf("meta %v, want %v", task.Meta, want)
		}
		if !slices.Equal(slices.Sorted(maps.Keys(task.Files)), []string{FileHarness, FileKernel, FilePTX}) ||
			task.Files[FilePTX] != c.Files[FilePTX] || task.Files[FileHarness] != c.Files[FileHarness] {
			t.Errorf("files %v", slices.Sorted(maps.Keys(task.Files)))
		}
		for _, s := range []string{"Decompile this PTX into the CUDA kernel `clamp_scale`", "Signature: __global__ void clamp_scale(int n, float lo, float hi, const float* x, float* y)",
			"Launch: grid (256, 1, 1), block (256, 1, 1)", "- y: float*, output, 65536 elements", ".entry _Z11clamp_scaleiffPKfPf", "(task " + id + ")"} {
			if !strings.Contains(task.Prompt, s) {
				t.Errorf("prompt lacks %q:\n%s", s, task.Prompt)
			}
		}
		if lanes.TaskHash(task) != c.Hash {
			t.Error("the task's identity is not the candidate's: a later round would not drop it")
		}
	}
	// The task is judged as a corpus task is: its kernel passes (the GPU
	// stages pending here), a wrong signature does not compile.
	item := tools.Item{Lane: LaneName, Files: tasks[0].Files, Meta: tasks[0].Meta}
	vd, err := l.Verify(ctx, item, exampleSynthKernel)
	if err != nil || !vd.Pass {
		t.Errorf("the reference kernel: %v %+v", err, vd)
	}
	vd, err = l.Verify(ctx, item, strings.Replace(exampleSynthKernel, "const float*", "float*", 1))
	if err != nil || vd.Pass || vd.Class != tools.ClassCompileError {
		t.Errorf("a wrong signature: %v %s %s", err, vd.Class, vd.Diagnostic)
	}

	// Unprepared (no validator ran): no tasks.
	if _, err := set.FromCandidate(3, good); err == nil || !strings.Contains(err.Error(), "the lane's validator prepares them") {
		t.Errorf("an unprepared candidate: %v", err)
	}
}

// failing is a failed result of task: answer wrong at compare with diag.
func failing(task runs.Task, answer, diag string) []runs.Result {
	return []runs.Result{{Task: task, Attempt: runs.Attempt{Answer: answer},
		Verdict: runs.Verdict{Class: refinement.ClassWrongOutput, Stage: StageCompare, Diagnostic: diag}}}
}

// TestPrepareWithoutNVCC: a host without nvcc cannot validate: the error
// says the validator is broken (the round waits), not that the kernel is
// bad.
func TestPrepareWithoutNVCC(t *testing.T) {
	t.Parallel()
	l, err := New(Config{Sandbox: testRunner, Toolchains: toolchain.FromReport(toolchain.Report{}), Cache: testCache})
	if err != nil {
		t.Fatal(err)
	}
	v, err := validator(l)
	if err != nil {
		t.Fatal(err)
	}
	c, why := parseOne(t, synthLanes(t), synthBlock(1, "elementwise", exampleSynthKernel, exampleSynthMeta))
	if why != "" {
		t.Fatal(why)
	}
	if err := v.Validate(context.Background(), c); !errors.Is(err, refinement.ErrValidatorBroken) {
		t.Errorf("validate without nvcc: %v", err)
	}
	if _, err := validator(nil); err == nil {
		t.Error("a validator of another lane")
	}
}
