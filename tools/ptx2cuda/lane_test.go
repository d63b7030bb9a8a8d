package ptx2cuda

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

func TestExpr(t *testing.T) {
	t.Parallel()
	e := env{layers: []map[string]string{{"BLOCK": "128"}, {"N": "1 << 20", "TILE": "(BLOCK/4)"}, {"BLOCK": "256", "R": "3 // radius"}}}
	cases := map[string]int64{
		"N":                           1 << 20,
		"(N + BLOCK - 1) / BLOCK":     8192,
		"TILE * 2 + -1":               63,
		"0x10u + 7 % 4 - 2 * 3":       13,
		"min(BLOCK, 100) + max(1, 2)": 102,
		"sizeof(float) * 3":           12,
		"sizeof(unsigned int)":        4,
		"-(-5)":                       5,
		"N >> 10 << 1":                2048,
	}
	for x, want := range cases {
		if got, err := e.evalInt(x); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", x, got, err, want)
		}
	}
	for _, bad := range []string{"", "N +", "(N", "M", "1 / 0", "sizeof(half)", "3.5", "N $ 2"} {
		if v, err := e.evalInt(bad); err == nil {
			t.Errorf("%q = %d, want an error", bad, v)
		}
	}
	defs := KernelDefines("#ifndef B\n#define B 256 // block\n#endif\n#define B 512\n#define F(x) x\n#define FLAG\n#define C (B*2) /* c */\n")
	if defs["B"] != "256" || defs["FLAG"] != "1" || defs["C"] != "(B*2)" {
		t.Errorf("defines %v", defs)
	}
	if _, ok := defs["F"]; ok {
		t.Errorf("function-like macro kept: %v", defs)
	}
}

func f32s(vs ...float32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

func i32s(vs ...int32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

func TestCompareOutputs(t *testing.T) {
	t.Parallel()
	h := HarnessSpec{Kernel: "k", Params: []HarnessParam{
		{Name: "x", Elem: "float", Pointer: true, Role: RoleIn, Count: 3},
		{Name: "y", Elem: "float", Pointer: true, Role: RoleOut, Count: 3},
		{Name: "c", Elem: "int", Pointer: true, Role: RoleInOut, Count: 2},
	}}
	ref := append(f32s(1, -2, 4), i32s(7, 9)...)
	nan := float32(math.NaN())
	cases := []struct {
		name       string
		ans        []byte
		nae        float64 // of y
		ok         bool
		intsDiffer bool
	}{
		{"same", ref, 0, true, false},
		{"small", append(f32s(1, -2, 4.002), i32s(7, 9)...), 0.002 / 4, true, false},
		{"big", append(f32s(1, -2.1, 4), i32s(7, 9)...), 0.1 / 4, false, false},
		{"nan", append(f32s(1, nan, 4), i32s(7, 9)...), math.Inf(1), false, false},
		{"neg zero", append(f32s(1, -2, 4), i32s(7, 9)...), 0, true, false},
		{"int", append(f32s(1, -2, 4), i32s(7, 10)...), 0, false, true},
	}
	for _, c := range cases {
		d, err := CompareOutputs(h, ref, c.ans)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(d) != 2 || math.Abs(d[0].NAE-c.nae) > 1e-6 && !(math.IsInf(c.nae, 1) && math.IsInf(d[0].NAE, 1)) {
			t.Errorf("%s: diffs %+v, want NAE %g", c.name, d, c.nae)
		}
		ok := d[0].OK(DefaultThreshold) && d[1].OK(DefaultThreshold)
		if ok != c.ok || (d[1].Mismatches > 0) != c.intsDiffer {
			t.Errorf("%s: ok %v (want %v), %+v", c.name, ok, c.ok, d)
		}
		r := compareResult(d, DefaultThreshold, 0)
		if r.ok != c.ok || (!r.ok && r.class != tools.ClassWrongOutput) {
			t.Errorf("%s: stage %+v", c.name, r)
		}
	}
	if _, err := CompareOutputs(h, ref, ref[:8]); err == nil {
		t.Error("a short output compared")
	}
	// Both NaN at the same place: equal.
	a := append(f32s(nan, 1, 1), i32s(0, 0)...)
	if d, _ := CompareOutputs(h, a, a); d[0].Mismatches != 0 {
		t.Errorf("NaN vs NaN: %+v", d[0])
	}
}

func TestCheckAnswer(t *testing.T) {
	t.Parallel()
	ok := "__global__ void __launch_bounds__(256) saxpy(int n, float a, const float* x, float* y) { }\n"
	cases := []struct {
		name, src string
		class     tools.FailureClass
	}{
		{"ok", ok, tools.ClassNone},
		{"extern C", "extern \"C\" __global__ void saxpy(int n) { }", tools.ClassNone},
		{"one asm instruction", "__device__ unsigned lane() { unsigned r; asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(r)); return r; }\n" + ok, tools.ClassNone},
		{"other name", "__global__ void saxpy2(int n) { }", tools.ClassCompileError},
		{"device only", "__device__ void saxpy(int n) { }", tools.ClassCompileError},
		{"asm block", "__global__ void saxpy(int n) { asm volatile(\"ld.global.f32 %0, [%1];\\n\\tadd.f32 %0, %0, %0;\\n\\tst.global.f32 [%1], %0;\" :: \"f\"(1.f), \"l\"(0)); }", ClassEmbeddedPTX},
		{"many asm", "__global__ void saxpy(int n) { asm(\"add.s32 %0, %0, 1;\" : \"+r\"(n)); asm(\"add.s32 %0, %0, 1;\" : \"+r\"(n)); asm(\"add.s32 %0, %0, 1;\" : \"+r\"(n)); }", ClassEmbeddedPTX},
		{"ptx string", "static const char *p = \".version 7.8\\n.target sm_90\\n.visible .entry saxpy()\";\n" + ok, ClassEmbeddedPTX},
		{"module load", ok + "void f() { CUmodule m; cuModuleLoadData(&m, p); }\n", ClassEmbeddedPTX},
		{"include ptx", "#include \"kernel.ptx\"\n" + ok, ClassEmbeddedPTX},
		{"include reference", "#include \"kernel.cu\"\n", ClassEmbeddedPTX},
	}
	for _, c := range cases {
		if got, why := CheckAnswer(c.src, "saxpy"); got != c.class {
			t.Errorf("%s: %q (%s), want %q", c.name, got, why, c.class)
		}
	}
}

func TestExtractKernel(t *testing.T) {
	t.Parallel()
	reply := "PTX:\n```ptx\n.entry x\n```\nDraft:\n```cuda\n__device__ int f();\n```\nFinal:\n```cuda\n__global__ void k() {}\n```\nNotes."
	if got, ok := ExtractKernel(reply); !ok || got != "__global__ void k() {}\n" {
		t.Errorf("extracted %q %v", got, ok)
	}
	if got, ok := ExtractKernel("<think>```cuda\n__global__ void a() {}\n```</think>no code"); ok {
		t.Errorf("extracted from thinking: %q", got)
	}
	if _, ok := ExtractKernel("```ptx\n.entry k\n```"); ok {
		t.Error("a PTX block extracted as the answer")
	}
}

// exampleTask is the worked example's task.
func exampleTask(t *testing.T) tools.Item {
	t.Helper()
	ex, err := example()
	if err != nil {
		t.Fatal(err)
	}
	ts, err := source(ex.Tasks)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range ts.Round0 {
		if task.Key == ex.TaskKey {
			return tools.Item{Lane: LaneName, Files: task.Files, Meta: task.Meta}
		}
	}
	t.Fatalf("no task %s", ex.TaskKey)
	return tools.Item{}
}

// TestVerify: the example task's answers on this host (no GPU): the right
// one compiles and leaves run and compare pending with what Complete
// needs; the wrong ones fail with their classes.
func TestVerify(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: gpu_test.go runs the GPU stages")
	}
	l := lane(t)
	item := exampleTask(t)
	ref := item.Files[FileKernel]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	v, err := l.Verify(ctx, item, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Pass || !equalStrings(tools.PendingStages(v), []string{StageRun, StageCompare}) {
		t.Fatalf("right answer: %v %s at %s: %s (pending %v)", v.Pass, v.Class, v.Stage, v.Diagnostic, tools.PendingStages(v))
	}
	for _, name := range []string{ArtifactAnswerBin, ArtifactRefBin, ArtifactGPUProbe} {
		if !strings.HasPrefix(string(v.Artifacts[name]), "\x7fELF") {
			t.Errorf("pending verdict: %s is not an executable", name)
		}
	}
	if _, err := ParseHarness(v.Artifacts[ArtifactSpec]); err != nil {
		t.Errorf("pending verdict's spec: %v", err)
	}
	if v.Measurements["compile_ms"] <= 0 || v.Measurements["pending_stages"] != 2 {
		t.Errorf("measurements %v", v.Measurements)
	}
	if _, err := l.Complete(ctx, item, v); err == nil || !strings.Contains(err.Error(), "no NVIDIA GPU") {
		t.Errorf("complete without a GPU: %v", err)
	}

	cases := []struct {
		name, answer string
		class        tools.FailureClass
		stage, diag  string
	}{
		{"blank", " \n", tools.ClassNoAnswer, StageExtract, "no CUDA kernel"},
		{"signature", strings.Replace(ref, "const float* __restrict__ x", "float* __restrict__ x", 1), tools.ClassCompileError, StageCompile, "parameter types must be exactly"},
		{"syntax", ref + "\nthis is not CUDA;\n", tools.ClassCompileError, StageCompile, "error"},
		{"name", strings.Replace(ref, "saxpy(", "saxpy_kernel(", 1), tools.ClassCompileError, StageCheck, "no __global__ kernel named saxpy"},
		{"main", ref + "int main() { return 0; }\n", tools.ClassCompileError, StageCompile, "main"},
		{"cheat", "#include \"kernel.ptx\"\n" + ref, ClassEmbeddedPTX, StageCheck, "includes kernel.ptx"},
	}
	for _, c := range cases {
		v, err := l.Verify(ctx, item, c.answer)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v.Pass || v.Class != c.class || v.Stage != c.stage || !strings.Contains(v.Diagnostic, c.diag) {
			t.Errorf("%s: %v %s at %s: %s", c.name, v.Pass, v.Class, v.Stage, v.Diagnostic)
		}
	}
	// A task whose reference does not build is a bad item.
	bad := tools.Item{Lane: LaneName, Files: map[string]string{FileKernel: ref + "\nnot CUDA;\n", FileHarness: item.Files[FileHarness]}}
	if _, err := l.Verify(ctx, bad, ref); err == nil || !strings.Contains(err.Error(), "bad item") {
		t.Errorf("broken reference: %v", err)
	}
	if _, err := l.Verify(ctx, tools.Item{Lane: LaneName}, ref); err == nil {
		t.Error("a task without files verified")
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestItemFromDir: kiln verify's item is the task the source makes.
func TestItemFromDir(t *testing.T) {
	t.Parallel()
	item, err := ItemFromDir("corpus/builtin/ew_saxpy", "unroll1")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := source(kit.Tasks{Corpus: CorpusBuiltin, Categories: []string{"elementwise"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range ts.Round0 {
		if task.Key == "r0/ew_saxpy/unroll1#0" && (task.Files[FileHarness] != item.Files[FileHarness] || task.Files[FileKernel] != item.Files[FileKernel]) {
			t.Errorf("item differs from the task")
		}
	}
	if _, err := ItemFromDir("corpus/builtin/ew_saxpy", "nope"); err == nil {
		t.Error("unknown variant accepted")
	}
}
