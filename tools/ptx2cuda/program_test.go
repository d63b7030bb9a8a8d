package ptx2cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// kernelZoo holds one kernel of every kind the program parser tells
// apart, and decoys it must not take for kernels.
const kernelZoo = `#include <cstdio>
#define MACRO_KERNEL __global__ void fromMacro(int *p) { p[0] = 9; }
// __global__ void commented(int *p) { p[0] = 1; }
/* __global__ void blockCommented(int *p) {} */
static const char *decoy = "__global__ void inString(int *p) {}";
__constant__ float c_w[4];
__device__ int g_count = 0;
__device__ float helper(float x) { return x * c_w[0]; }
__global__ void proto(float *a, int n);
template <typename T> __global__ void tmpl(T *a) { a[0] = T(1); }
namespace ns { __global__ void scoped(int *a) { a[0] = 1; } }
extern "C" { __global__ void cblock(int *a) { a[0] = 2; } }
__global__ void __launch_bounds__(256) bounded(float *a, int n) { int i = threadIdx.x; if (i < n) a[i] = helper(a[i]); }
__global__ void unused(int *a) { a[0] = 3; }
__global__ void withAsm(int *a) { int r; asm volatile("mov.u32 %0, 1;" : "=r"(r)); a[0] = r; }
__global__ void twice(int *a) { a[0] = 4; }
__global__ void twice(float *a) { a[0] = 5; }
int main() {
    float *f; int *i;
    proto<<<1, 1>>>(f, 1); bounded<<<1, 1>>>(f, 1); withAsm<<<1, 1>>>(i); tmpl<<<1, 1>>>(i);
    ns::scoped<<<1, 1>>>(i); cblock<<<1, 1>>>(i); twice<<<1, 1>>>(i);
    printf("%s\n", decoy);
    return 0;
}
__global__ void proto(float *a, int n) { if (threadIdx.x < n) a[threadIdx.x] += 1.0f; }
`

// TestProgramKernels: the kernels a program defines, in order, and why a
// task can or cannot be made of each.
func TestProgramKernels(t *testing.T) {
	t.Parallel()
	names, why := ProgramKernels(kernelZoo)
	want := map[string]string{"tmpl": SkipTemplate, "scoped": SkipScope, "cblock": SkipScope, "bounded": "",
		"unused": SkipUnused, "withAsm": SkipInlineAsm, "twice": SkipOverloaded, "proto": ""}
	if got := strings.Join(names, " "); got != "tmpl scoped cblock bounded unused withAsm twice proto" {
		t.Fatalf("kernels %q", got)
	}
	for i, n := range names {
		var se *SkipError
		got := ""
		if errors.As(why[i], &se) {
			got = se.Reason
		} else if why[i] != nil {
			t.Errorf("%s: %T %v", n, why[i], why[i])
		}
		if got != want[n] {
			t.Errorf("%s: reason %q (%v), want %q", n, got, why[i], want[n])
		}
	}
	if names, _ := ProgramKernels("int main() { return 0; }\n"); len(names) != 0 {
		t.Errorf("kernels of a host-only program: %v", names)
	}

	p := parseProgram(kernelZoo)
	if len(p.masked) != len(kernelZoo) || strings.Count(p.masked, "\n") != strings.Count(kernelZoo, "\n") {
		t.Fatal("masking moved offsets")
	}
	k, err := p.kernel("proto")
	if err != nil {
		t.Fatal(err)
	}
	if def := kernelZoo[k.Start:k.End]; !strings.HasPrefix(def, "__global__ void proto(float *a, int n) {") || !strings.HasSuffix(def, "+= 1.0f; }") {
		t.Errorf("definition of proto: %q", def)
	}
	if got := strings.Join(strings.Fields(p.head(k)), " "); got != "__global__ void proto(float *a, int n)" {
		t.Errorf("head %q", got)
	}
	ctx := p.context(k)
	for _, s := range []string{"__device__ float helper(float x) { return x * c_w[0]; }", "#define MACRO_KERNEL",
		"__global__ void __launch_bounds__(256) bounded(float *a, int n);", "int main() {", `"__global__ void inString(int *p) {}"`} {
		if !strings.Contains(ctx, s) {
			t.Errorf("context lacks %q:\n%s", s, ctx)
		}
	}
	for _, s := range []string{"commented", "a[i] = helper(a[i])", "a[0] = 3", "+= 1.0f"} {
		if strings.Contains(ctx, s) {
			t.Errorf("context holds %q (a comment, another kernel's body or the kernel's own):\n%s", s, ctx)
		}
	}

	kb, err := p.kernel("bounded")
	if err != nil {
		t.Fatal(err)
	}
	unit := p.kernelUnit(kb)
	if !strings.Contains(unit, "a[i] = helper(a[i]); }") || strings.Contains(unit, "+= 1.0f") || strings.Contains(unit, "a[0] = 3;") ||
		!strings.HasSuffix(unit, "}\n__global__ void proto(float *a, int n);\n") {
		t.Errorf("kernel unit of bounded:\n%s", unit)
	}

	spliced := p.spliceAnswer(k, "#include <cmath>\n__global__ void proto(float *a, int n)\n{\n    a[0] = 1;\n}\n")
	for _, s := range []string{
		"namespace kiln_answer { __global__ void proto(float *a, int n); } using kiln_answer::proto;",
		"#include <cmath>\nnamespace kiln_original { __global__ void proto(float *a, int n); }\nnamespace kiln_answer {\n#line 1 \"answer.cu\"\n\n__global__ void proto(float *a, int n)\n{",
		"using kiln_answer::proto;\nstatic __attribute__((unused)) decltype(&kiln_original::proto) kiln_signature_check = &kiln_answer::proto;\n",
		// The definition was the last line: what follows it is that line's end.
		fmt.Sprintf("}\n}\n#line %[1]d \"program.cu\"\nusing kiln_answer::proto;\nstatic __attribute__((unused)) decltype(&kiln_original::proto) kiln_signature_check = &kiln_answer::proto;\n#line %[1]d \"program.cu\"\n\n", strings.Count(kernelZoo, "\n")),
	} {
		if !strings.Contains(spliced, s) {
			t.Errorf("spliced program lacks %q:\n%s", s, spliced)
		}
	}
	if strings.Contains(spliced, "+= 1.0f") {
		t.Error("the original kernel is still in the spliced program")
	}
	if b := p.blank(k); !strings.HasSuffix(b, "__global__ void proto(float *a, int n) { }\n") {
		t.Errorf("blank program ends %q", b[len(b)-60:])
	}
	if got := p.redefinedVariables(kb, "__constant__ float c_w[4];\n__device__ int other;\n__device__ float helper(float x);\n"+
		"__global__ void bounded(float *a, int n) {}\n"); strings.Join(got, ",") != "__constant__ c_w" {
		t.Errorf("redefined variables %v", got)
	}
	if got := p.changedMacros("#define MACRO_KERNEL  __global__ void fromMacro(int *p) { p[0] = 9; } // same\n#define OWN 1\n#undef OWN\n"); len(got) != 0 {
		t.Errorf("the same macro, or one of the answer's own, counted as changed: %v", got)
	}
	if got := p.changedMacros("#undef MACRO_KERNEL\n"); strings.Join(got, ",") != "MACRO_KERNEL" {
		t.Errorf("an #undef of the program's macro: %v", got)
	}
	if got := p.changedMacros("#define MACRO_KERNEL \\\n    0\n"); strings.Join(got, ",") != "MACRO_KERNEL" {
		t.Errorf("a program macro defined otherwise: %v", got)
	}
	if got := maskSource(`x = R"raw(a "quoted" } brace)raw"; y = '}';` + "\n"); strings.ContainsAny(got[4:len(got)-2], "}{abq") {
		t.Errorf("raw string and char literal not masked: %q", got)
	}
}

// TestProgramKernelsCorpus: over the 50 cuda-synth corpus programs, the
// parser finds every kernel a compiler finds (the .entry names of each
// program's PTX, by base name, template instantiations aside) and skips
// only the template kernels.
func TestProgramKernelsCorpus(t *testing.T) {
	t.Parallel()
	items, err := cudasynth.LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	usable, templates := 0, 0
	for _, it := range items {
		names, why := ProgramKernels(it.Program)
		if len(names) == 0 {
			t.Errorf("%s: no kernel found", it.ID)
		}
		for i, n := range names {
			var se *SkipError
			switch {
			case why[i] == nil:
				usable++
			case errors.As(why[i], &se) && se.Reason == SkipTemplate:
				templates++
			default:
				t.Errorf("%s: kernel %s skipped: %v", it.ID, n, why[i])
			}
		}
	}
	if usable < 80 || templates != 10 {
		t.Errorf("%d usable kernels, %d templates", usable, templates)
	}
}

// programFixture is a small program: a kernel with a prototype, launched
// through a host function before its definition, reading a __constant__
// and calling a __device__ helper, and another kernel that fills input.
const programFixture = `#include <cstdio>
#include <cuda_runtime.h>

__constant__ float c_scale[1];
__device__ float twice(float x) { return 2.0f * x; }

__global__ void scaleAdd(const float *x, float *y, int n);

static void launch(const float *x, float *y, int n) { scaleAdd<<<(n + 127) / 128, 128>>>(x, y, n); }

__global__ void fill(float *p, int n, float v)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = v * (float)(i % 7);
}

// y = 2x * scale + y
__global__ void scaleAdd(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = twice(x[i]) * c_scale[0] + y[i];
}

int main()
{
    const int n = 1000;
    float *x, *y, h[n], s = 0.5f;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMemcpyToSymbol(c_scale, &s, sizeof(s));
    fill<<<8, 128>>>(x, n, 1.0f);
    fill<<<8, 128>>>(y, n, 0.25f);
    launch(x, y, n);
    cudaMemcpy(h, y, sizeof(h), cudaMemcpyDeviceToHost);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += h[i];
    printf("sum %.3f y[5] %.3f\n", sum, h[5]);
    return 0;
}
`

// programItem is the fixture as a program item of one variant.
func programItem(t *testing.T) Item {
	t.Helper()
	def, err := programKernelSource(programFixture, "scaleAdd")
	if err != nil {
		t.Fatal(err)
	}
	it := Item{ID: "fixture_scale_add", Set: "test", Kernel: def, Program: programFixture,
		Meta: Meta{Category: "elementwise", Kernel: "scaleAdd", Harness: HarnessProgram, Variants: []Variant{{Name: "base"}}}}
	if err := it.check(); err != nil {
		t.Fatal(err)
	}
	return it
}

// TestProgramVerify: a program task's PTX is its kernel's alone; the
// kernel's own definition passes (compiled; run and compare pending on
// this host, with the three executables kept), as does a decompilation
// that names its own helper like the program's; other parameter types,
// a syntax error (reported at the answer's own line), a redefined
// __constant__, another kernel name and inline PTX fail with their
// classes.
func TestProgramVerify(t *testing.T) {
	t.Parallel()
	needNVCC(t)
	if testRegistry.GPU().Present {
		t.Skip("a GPU host: run and compare would run")
	}
	l := lane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	it := programItem(t)
	ptx, err := l.PreparePTX(ctx, it)
	if err != nil {
		t.Fatal(err)
	}
	if e := cudasynth.KernelsPTX(ptx["base"]); strings.Join(e, ",") != "_Z8scaleAddPKfPfi" {
		t.Fatalf("entries of the kernel's PTX: %v", e)
	}
	if !strings.Contains(ptx["base"], ".const .align 4 .b8 c_scale[4];") {
		t.Errorf("the PTX lacks the program's __constant__:\n%.1500s", ptx["base"])
	}
	it.PTX = ptx
	lib, err := promptLibrary()
	if err != nil {
		t.Fatal(err)
	}
	task, err := corpusTask{item: it, variant: "base"}.task(lib, 0, "r0/x#0", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Signature: __global__ void scaleAdd(const float *x, float *y, int n)", "__constant__ float c_scale[1];",
		"__global__ void fill(float *p, int n, float v);", "(task fixture_scale_add/base)", ".entry _Z8scaleAddPKfPfi"} {
		if !strings.Contains(task.Prompt, s) {
			t.Errorf("prompt lacks %q:\n%s", s, task.Prompt)
		}
	}
	for _, s := range []string{"y = 2x", "twice(x[i]) * c_scale[0]", "v * (float)(i % 7)"} {
		if strings.Contains(task.Prompt, s) {
			t.Errorf("prompt holds %q", s)
		}
	}
	item := tools.Item{Lane: LaneName, Files: task.Files, Meta: task.Meta}
	ref := it.Kernel
	// The fixture without the kernel's prototype (main launches it
	// directly): other parameter types fail at the signature check rather
	// than at the link.
	noProto := strings.NewReplacer("__global__ void scaleAdd(const float *x, float *y, int n);\n", "",
		"static void launch(const float *x, float *y, int n) { scaleAdd<<<(n + 127) / 128, 128>>>(x, y, n); }\n", "",
		"    launch(x, y, n);\n", "    scaleAdd<<<(n + 127) / 128, 128>>>(x, y, n);\n").Replace(programFixture)
	if noProto == programFixture || strings.Count(noProto, "scaleAdd") != 2 {
		t.Fatalf("fixture without prototype:\n%s", noProto)
	}
	noProtoItem := tools.Item{Lane: LaneName, Files: map[string]string{FileProgram: noProto, FileProgramSpec: task.Files[FileProgramSpec],
		FileKernel: ref}}
	// A helper of the answer's own under the program helper's name: the
	// answer's namespace keeps the two apart.
	ownHelper := "__device__ float twice(float v) { return v + v; }\n" + ref
	cases := []struct {
		name, answer string
		class        tools.FailureClass
		stage, diag  string
		item         *tools.Item
	}{
		{"reference", ref, tools.ClassNone, StageCompare, "", nil},
		{"reference (no prototype)", ref, tools.ClassNone, StageCompare, "", &noProtoItem},
		{"signature (no prototype)", strings.Replace(ref, "const float *x", "float *x", 1), tools.ClassCompileError, StageCompile,
			"cannot be used to initialize an entity of type", &noProtoItem},
		{"own helper", ownHelper, tools.ClassNone, StageCompare, "", nil},
		{"signature", strings.Replace(ref, "const float *x", "float *x", 1), tools.ClassCompileError, StageCompile, "parameter types must be exactly", nil},
		{"syntax", "#include <cstdio>\n__global__ void scaleAdd(const float *x, float *y, int n)\n{\n    int i = ;\n}\n",
			tools.ClassCompileError, StageCompile, "answer.cu(4)", nil},
		{"constant", "__constant__ float c_scale[1];\n" + ref, tools.ClassCompileError, StageCheck, "__constant__ c_scale", nil},
		{"name", strings.Replace(ref, "scaleAdd", "scaleAdd2", 1), tools.ClassCompileError, StageCheck, "no __global__ kernel named scaleAdd", nil},
		{"asm", strings.Replace(ref, "int i =", "asm volatile(\"mov.u32 %0, 1;\\n\\tadd.u32 %0, %0, 1;\\n\\tadd.u32 %0, %0, 1;\" : \"=r\"(n));\n    int i =", 1),
			ClassEmbeddedPTX, StageCheck, "inline asm", nil},
	}
	for _, c := range cases {
		in := item
		if c.item != nil {
			in = *c.item
		}
		v, err := l.Verify(ctx, in, c.answer)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if v.Class != c.class || v.Stage != c.stage || v.Pass != (c.class == tools.ClassNone) || !strings.Contains(v.Diagnostic, c.diag) {
			t.Errorf("%s: pass %v class %q at %s, want %q at %s with %q:\n%s", c.name, v.Pass, v.Class, v.Stage, c.class, c.stage, c.diag, v.Diagnostic)
			continue
		}
		if !v.Pass {
			continue
		}
		if p := tools.PendingStages(v); strings.Join(p, ",") != "run,compare" {
			t.Errorf("%s: pending %v", c.name, p)
		}
		for _, a := range []string{ArtifactAnswerBin, ArtifactRefBin, ArtifactBlankBin, ArtifactGPUProbe} {
			if !strings.HasPrefix(string(v.Artifacts[a]), "\x7fELF") {
				t.Errorf("%s: %s is not an executable", c.name, a)
			}
		}
		if ps, err := ParseProgramSpec(v.Artifacts[ArtifactProgramSpec]); err != nil || ps.Kernel != "scaleAdd" {
			t.Errorf("%s: program spec %+v %v", c.name, ps, err)
		}
		if !strings.Contains(string(v.Artifacts[ArtifactHarness]), "using kiln_answer::scaleAdd;") {
			t.Errorf("%s: the kept program is not the spliced one", c.name)
		}
	}
	// The compile_kernel tool builds the spliced program.
	out, err := l.Tools(item)[0].Call(ctx, []byte(`{"source": `+fmt.Sprintf("%q", ref)+`}`))
	if err != nil || !strings.HasPrefix(out, "ok") {
		t.Errorf("compile_kernel: %q %v", out, err)
	}
	// Complete refuses here: no GPU, and says so.
	v, err := l.Verify(ctx, item, ref)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Complete(ctx, item, v); !errors.Is(err, ErrNoGPU) {
		t.Errorf("Complete without a GPU: %v", err)
	}
}
