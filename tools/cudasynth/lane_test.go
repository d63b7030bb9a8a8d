package cudasynth

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/sandboxes/toolchain"
	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/buildjob"
	"github.com/kiln-dev/kiln/tools/hipify"
)

// testPrograms are the lane's own programs (testdata/*.cu) with the kernel
// each defines (its mangled name, as PTX, SASS and RDNA3 must show it).
// Together they use shared memory, atomics, warp shuffles, constant
// memory, streams and events, and managed memory.
var testPrograms = []struct{ file, kernel string }{
	{"reduce_atomics.cu", "_Z14reduce_atomicsPKiiPyPj"},
	{"warp_constant.cu", "_Z14poly_warp_sumsPKfPfi"},
	{"streams_events.cu", "_Z5saxpyifPKfPf"},
	{"managed_memory.cu", "_Z9transposePKiPiii"},
}

func readTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// sharedLane is the lane most tests use: the shared compile cache, so a
// program compiled by one test is a cache hit for the next.
var sharedLane = sync.OnceValues(func() (*Lane, error) {
	return New(Config{Sandbox: testRunner, Toolchains: testRegistry, Cache: testCache,
		Classify: func(src string) string {
			if strings.Contains(src, "hist") {
				return "data structure"
			}
			return "general compute"
		}})
})

func lane(t *testing.T) *Lane {
	t.Helper()
	l, err := sharedLane()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func stageNames(v tools.Verdict) []string {
	var out []string
	for _, s := range v.Stages {
		out = append(out, s.Name)
	}
	return out
}

// fatbinDataRE matches the embedded device binary's data lines.
var fatbinDataRE = regexp.MustCompile(`(?m)^\.quad 0x[0-9a-f]{16},0x`)

// TestVerifyPrograms: every CPU stage of the lane's own programs passes
// and the record holds what each stage promises.
func TestVerifyPrograms(t *testing.T) {
	t.Parallel()
	needToolchains(t)
	l := lane(t)
	for _, tp := range testPrograms {
		t.Run(tp.file, func(t *testing.T) {
			t.Parallel()
			src := readTestdata(t, tp.file)
			v, err := l.Verify(context.Background(), tools.Item{Lane: LaneName}, src)
			if err != nil {
				t.Fatal(err)
			}
			if !v.Pass {
				t.Fatalf("fails: %s at %s: %s\nstages: %+v", v.Class, v.Stage, v.Diagnostic, v.Stages)
			}
			if !slices.Equal(stageNames(v), stageOrder) {
				t.Errorf("stages %v, want %v", stageNames(v), stageOrder)
			}
			for _, s := range v.Stages[:len(v.Stages)-1] {
				if !s.OK || s.Skipped {
					t.Errorf("stage %s: ok=%v skipped=%v (%s)", s.Name, s.OK, s.Skipped, s.Detail)
				}
			}
			run := v.Stages[len(v.Stages)-1]
			if !testRegistry.GPU().Present {
				if !run.Skipped || run.OK || !strings.Contains(run.Detail, "no NVIDIA GPU") {
					t.Errorf("run stage without a GPU: %+v; want skipped with the reason", run)
				}
				if p := Pending(v); !slices.Equal(p, []string{StageRun}) || !strings.Contains(v.Diagnostic, "pending: run") {
					t.Errorf("pending %v, diagnostic %q", p, v.Diagnostic)
				}
				checkKeptForCompletion(t, l, v)
			}
			checkRecord(t, v, src, tp.kernel)
		})
	}
}

// checkRecord checks the content of an aligned record.
func checkRecord(t *testing.T, v tools.Verdict, src, kernel string) {
	t.Helper()
	a := v.Artifacts
	if string(a[ArtifactCUDASource]) != src {
		t.Error("cuda_source is not the program")
	}
	hip := string(a[ArtifactHIPSource])
	if !strings.Contains(hip, "hip/hip_runtime.h") || strings.Contains(hip, "cudaMalloc") || !strings.Contains(hip, "hipM") {
		t.Errorf("hip_source does not look translated:\n%s", buildjob.Clip(hip, 600))
	}
	ptx := string(a[ArtifactPTX])
	if !strings.Contains(ptx, ".visible .entry "+kernel+"(") || !strings.Contains(ptx, ".target sm_86") {
		t.Errorf("ptx lacks .visible .entry %s / .target sm_86:\n%s", kernel, buildjob.Clip(ptx, 400))
	}
	for _, sm := range []string{"sm_86", "sm_90"} {
		sass := string(a[ArtifactSASS(sm)])
		if !strings.Contains(sass, "code for "+sm) || !strings.Contains(sass, "Function : "+kernel) {
			t.Errorf("%s lacks its arch header or Function : %s:\n%s", ArtifactSASS(sm), kernel, buildjob.Clip(sass, 400))
		}
		if strings.Contains(sass, "/*0000*/") || strings.Contains(sass, "/* 0x") {
			t.Errorf("%s is not normalised (address or encoding comments left)", ArtifactSASS(sm))
		}
		if !strings.Contains(sass, "EXIT") {
			t.Errorf("%s has no EXIT instruction", ArtifactSASS(sm))
		}
	}
	hostCUDA := string(a[ArtifactHostAsmCUDA])
	if !regexp.MustCompile(`(?m)^main:$`).MatchString(hostCUDA) || !strings.Contains(hostCUDA, "__device_stub__") {
		t.Errorf("host_asm_cuda lacks main or the kernel's host stub")
	}
	if fatbinDataRE.MatchString(hostCUDA) || strings.Contains(hostCUDA, "#APP") {
		t.Error("host_asm_cuda still holds the fatbin data or comments")
	}
	rdna := string(a[ArtifactRDNA3])
	if !strings.Contains(rdna, `.amdgcn_target "amdgcn-amd-amdhsa--gfx1100"`) || !strings.Contains(rdna, ".amdhsa_kernel "+kernel) {
		t.Errorf("rdna3 lacks the gfx1100 target or .amdhsa_kernel %s:\n%s", kernel, buildjob.Clip(rdna, 400))
	}
	if !strings.Contains(rdna, "s_endpgm") || strings.Contains(rdna, "; %bb") {
		t.Error("rdna3 has no s_endpgm or keeps comments")
	}
	hostHIP := string(a[ArtifactHostAsmHIP])
	if !regexp.MustCompile(`(?m)^main:$`).MatchString(hostHIP) || strings.Contains(hostHIP, "s_endpgm") {
		t.Error("host_asm_hip lacks main or holds device code")
	}
	if len(a[ArtifactDomain]) == 0 {
		t.Error("no domain label although Classify is set")
	}
	for _, m := range []string{"cuda_compile_ms", "sass_ms", "hip_compile_amd_ms", "hip_compile_nvidia_ms", "hipify_ms", "compiles"} {
		if _, ok := v.Measurements[m]; !ok {
			t.Errorf("measurement %s missing", m)
		}
	}
	if v.Measurements["compiles"] != 5 {
		t.Errorf("%v compiles, want 5 (cuda, sass, 2 hipcc, hip-nvidia)", v.Measurements["compiles"])
	}
}

// TestCompileError: a program nvcc rejects fails at cuda-compile with
// nvcc's own diagnostic, and nothing after it is recorded. The item comes
// from a file (the kiln verify path) and the answer is blank.
func TestCompileError(t *testing.T) {
	t.Parallel()
	needToolchains(t)
	path := filepath.Join(t.TempDir(), "bad.cu")
	src := "#include <cstdio>\n__global__ void k(float *p) { p[threadIdx.x] = undefined_thing; }\n" +
		"int main() { k<<<1, 1>>>(nullptr); return 0; }\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	item, err := ItemFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := lane(t).Verify(context.Background(), item, "")
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != tools.ClassCompileError || v.Stage != StageCUDACompile {
		t.Fatalf("verdict %v %s at %s; want compile_error at cuda-compile", v.Pass, v.Class, v.Stage)
	}
	if !strings.Contains(v.Diagnostic, `program.cu(2): error: identifier "undefined_thing" is undefined`) {
		t.Errorf("diagnostic is not nvcc's:\n%s", v.Diagnostic)
	}
	if len(v.Stages) != 1 {
		t.Errorf("stages after the failure recorded: %v", stageNames(v))
	}
}

// laxLane's translator lets inline PTX through (hipify rightly reports it
// as untranslatable): the later HIP checks must catch what a translator
// misses.
var laxLane = sync.OnceValues(func() (*Lane, error) {
	return New(Config{Sandbox: testRunner, Toolchains: testRegistry, Cache: testCache,
		Translate: func(src string) (hipify.Result, error) {
			r, err := hipify.Translate(src)
			for _, is := range r.Unsupported {
				if is.Construct != "asm" {
					return r, err
				}
			}
			r.Unsupported = nil
			return r, err
		}})
})

// TestHIPCompileError: inline PTX builds with nvcc but is no RDNA3
// assembly. hipcc -S prints it unchecked, so the rdna3 stage assembles the
// inline assembly and fails with hip_compile_error and llvm-mc's message,
// after every CUDA stage passed.
func TestHIPCompileError(t *testing.T) {
	t.Parallel()
	needToolchains(t)
	src := `#include <cstdio>
__global__ void lane_ids(unsigned *out) {
    unsigned id;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
    out[threadIdx.x] = id;
}
int main() {
    unsigned *d, h[32];
    cudaMalloc(&d, sizeof(h));
    lane_ids<<<1, 32>>>(d);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    printf("%u %u\n", h[0], h[31]);
    return 0;
}
`
	l, err := laxLane()
	if err != nil {
		t.Fatal(err)
	}
	v, err := l.Verify(context.Background(), tools.Item{}, src)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != ClassHIPCompileError || v.Stage != StageRDNA3 {
		t.Fatalf("verdict %v %s at %s (%s); want hip_compile_error at rdna3", v.Pass, v.Class, v.Stage, v.Diagnostic)
	}
	want := []string{StageCUDACompile, StagePTX, StageSASS, StageHostAsm, StageHipify, StageHIPCompileAMD, StageRDNA3}
	if !slices.Equal(stageNames(v), want) {
		t.Errorf("stages %v, want %v", stageNames(v), want)
	}
	if !strings.Contains(v.Diagnostic, "inline assembly") || !strings.Contains(v.Diagnostic, "invalid instruction") {
		t.Errorf("diagnostic does not carry llvm-mc's error:\n%s", v.Diagnostic)
	}
	if len(v.Artifacts[ArtifactHIPSource]) == 0 || len(v.Artifacts[ArtifactRDNA3]) == 0 {
		t.Error("the HIP source and RDNA3 text of a failed check are not kept")
	}
}

// TestHIPCompileErrorAMD: inline assembly with an operand constraint
// AMDGPU does not have ("=l", a 64-bit PTX register) builds with nvcc, but
// hipcc rejects it (with the lax translator, which lets it through): hip_compile_error at hip-compile-amd with clang's
// diagnostic.
func TestHIPCompileErrorAMD(t *testing.T) {
	t.Parallel()
	needToolchains(t)
	src := `#include <cstdio>
__global__ void stamp(unsigned long long *out) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    out[threadIdx.x] = t;
}
int main() {
    unsigned long long *d, h[2];
    cudaMalloc(&d, sizeof(h));
    stamp<<<1, 2>>>(d);
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    printf("%d\n", h[1] >= h[0]);
    return 0;
}
`
	l, err := laxLane()
	if err != nil {
		t.Fatal(err)
	}
	v, err := l.Verify(context.Background(), tools.Item{}, src)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != ClassHIPCompileError || v.Stage != StageHIPCompileAMD {
		t.Fatalf("verdict %v %s at %s (%s); want hip_compile_error at hip-compile-amd", v.Pass, v.Class, v.Stage, v.Diagnostic)
	}
	// Line 5: hipify added the hip_runtime.h include.
	if !strings.Contains(v.Diagnostic, "program.hip:5:") || !strings.Contains(v.Diagnostic, "invalid output constraint '=l'") {
		t.Errorf("diagnostic is not clang's:\n%s", v.Diagnostic)
	}
	if n := len(v.Stages); n != 6 {
		t.Errorf("stages %v; want the five before and hip-compile-amd", stageNames(v))
	}
}

// TestTranslateUnsupported: a program using bfloat16 compiles with nvcc
// but hipify has no HIP 5.2 mapping: translate_unsupported, never a pass.
func TestTranslateUnsupported(t *testing.T) {
	t.Parallel()
	needToolchains(t)
	src := `#include <cstdio>
#include <cuda_bf16.h>
__global__ void round_bf16(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __bfloat162float(__float2bfloat16(in[i]));
}
int main() {
    float h[64], *d_in, *d_out;
    for (int i = 0; i < 64; i++) h[i] = i * 1.001f;
    cudaMalloc(&d_in, sizeof(h));
    cudaMalloc(&d_out, sizeof(h));
    cudaMemcpy(d_in, h, sizeof(h), cudaMemcpyHostToDevice);
    round_bf16<<<1, 64>>>(d_in, d_out, 64);
    cudaMemcpy(h, d_out, sizeof(h), cudaMemcpyDeviceToHost);
    printf("%f\n", h[63]);
    return 0;
}
`
	v, err := lane(t).Verify(context.Background(), tools.Item{}, src)
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != ClassTranslateUnsupported || v.Stage != StageHipify {
		t.Fatalf("verdict %v %s at %s (%s); want translate_unsupported at hipify", v.Pass, v.Class, v.Stage, v.Diagnostic)
	}
	if !strings.Contains(v.Diagnostic, "line 2:") || !strings.Contains(v.Diagnostic, "cuda_bf16.h") {
		t.Errorf("diagnostic does not point at the include:\n%s", v.Diagnostic)
	}
	if v.Stages[0].Name != StageCUDACompile || !v.Stages[0].OK {
		t.Errorf("the CUDA build should have passed first: %+v", v.Stages[0])
	}
}

// TestTranslatorFake drives the hipify stage with fake translators: an
// error and an unsupported construct both fail it; the HIP compiles are
// then never started.
func TestTranslatorFake(t *testing.T) {
	t.Parallel()
	needToolchains(t)
	src := readTestdata(t, "reduce_atomics.cu") // the CUDA side is shared with TestVerifyPrograms
	tests := []struct {
		name      string
		translate func(string) (hipify.Result, error)
		want      string
	}{
		{"error", func(string) (hipify.Result, error) { return hipify.Result{}, errors.New("unterminated string at 3:9") },
			"could not read the program: unterminated string at 3:9"},
		{"unsupported", func(s string) (hipify.Result, error) {
			return hipify.Result{HIP: s, Unsupported: []hipify.Issue{{Line: 7, Col: 5, Construct: "cudaGraphLaunch", Reason: "graphs are not mapped"}}}, nil
		}, "line 7:5: cudaGraphLaunch: graphs are not mapped"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Cache: testCache, Translate: tc.translate})
			if err != nil {
				t.Fatal(err)
			}
			v, err := l.Verify(context.Background(), tools.Item{}, src)
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass || v.Class != ClassTranslateUnsupported || !strings.Contains(v.Diagnostic, tc.want) {
				t.Fatalf("verdict %v %s: %q; want translate_unsupported with %q", v.Pass, v.Class, v.Diagnostic, tc.want)
			}
			if n := v.Measurements["compiles"]; n != 2 {
				t.Errorf("%v compiles; want 2 (cuda, sass): no HIP build after a failed translation", n)
			}
		})
	}
}

// TestCacheHit: the same program again builds nothing, from memory and
// from disk (a new lane and cache over the same folder), and is far
// faster than the cold build. The program is TestGPUWrongOutput's, so this
// also puts it in the cache folder a GPU host replays.
func TestCacheHit(t *testing.T) {
	t.Parallel()
	needToolchains(t)
	mk := func() *Lane {
		c, err := toolchain.NewCache(toolchain.CacheConfig{Dir: testCacheDir})
		if err != nil {
			t.Fatal(err)
		}
		l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry, Cache: c})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	ctx := context.Background()
	l := mk()
	verify := func(l *Lane) (tools.Verdict, time.Duration) {
		start := time.Now()
		v, err := l.Verify(ctx, tools.Item{}, wrongOutputProgram)
		if err != nil {
			t.Fatal(err)
		}
		if testRegistry.GPU().Present {
			t.Skip("GPU host: the program's two builds disagree there (TestGPUWrongOutput)")
		}
		if !v.Pass || !slices.Equal(Pending(v), []string{StageRun}) {
			t.Fatalf("fails: %s at %s: %s", v.Class, v.Stage, v.Diagnostic)
		}
		return v, time.Since(start)
	}
	cold, coldT := verify(l)
	warm, warmT := verify(l)
	disk, diskT := verify(mk())
	t.Logf("cold %v, memory cache %v, disk cache %v", coldT, warmT, diskT)
	for name, v := range map[string]tools.Verdict{"memory": warm, "disk": disk} {
		if v.Measurements["compiles_cached"] != v.Measurements["compiles"] || v.Measurements["compiles"] != 5 {
			t.Errorf("%s: %v of %v compiles cached; want all 5", name, v.Measurements["compiles_cached"], v.Measurements["compiles"])
		}
		if !strings.Contains(v.Stages[0].Detail, "(cached)") {
			t.Errorf("%s: cuda-compile detail %q does not say cached", name, v.Stages[0].Detail)
		}
		for _, a := range []string{ArtifactRDNA3, ArtifactSASS("sm_90"), ArtifactHostAsmCUDA, ArtifactPTX} {
			if string(v.Artifacts[a]) != string(cold.Artifacts[a]) {
				t.Errorf("%s: cached %s differs from the cold one", name, a)
			}
		}
	}
	if cold.Measurements["compiles_cached"] != 0 {
		t.Logf("the cache folder already held this program (%v hits): no cold timing", cold.Measurements["compiles_cached"])
		return
	}
	if warmT*5 > coldT || diskT*5 > coldT {
		t.Errorf("cache hits not much faster: cold %v, memory %v, disk %v", coldT, warmT, diskT)
	}
}

func TestNoAnswer(t *testing.T) {
	t.Parallel()
	l, err := New(Config{Sandbox: testRunner, Toolchains: testRegistry})
	if err != nil {
		t.Fatal(err)
	}
	v, err := l.Verify(context.Background(), tools.Item{Lane: LaneName}, " \n")
	if err != nil {
		t.Fatal(err)
	}
	if v.Pass || v.Class != tools.ClassNoAnswer || v.Diagnostic == "" {
		t.Errorf("blank answer: %+v", v)
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]Config{
		"no sandbox":    {Toolchains: testRegistry},
		"no toolchains": {Sandbox: testRunner},
		"relative dir":  {Sandbox: testRunner, Toolchains: testRegistry, CacheDir: "cache"},
		"bad sm":        {Sandbox: testRunner, Toolchains: testRegistry, SMs: []string{"gfx1100"}},
		"negative tol":  {Sandbox: testRunner, Toolchains: testRegistry, Tolerance: Tolerance{Rel: -1}},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

// TestMissingToolchain: Verify is an internal error, not a verdict, when
// hipcc is absent.
func TestMissingToolchain(t *testing.T) {
	t.Parallel()
	rep := testRegistry.Report()
	var kept []toolchain.Tool
	for _, tool := range rep.Tools {
		if tool.Name != toolchain.HIPCC {
			kept = append(kept, tool)
		}
	}
	rep.Tools = kept
	l, err := New(Config{Sandbox: testRunner, Toolchains: toolchain.FromReport(rep)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Verify(context.Background(), tools.Item{}, "__global__ void k() {}\nint main() { return 0; }\n")
	if !errors.Is(err, toolchain.ErrUnavailable) {
		t.Errorf("Verify without hipcc: %v; want ErrUnavailable", err)
	}
}

func TestItemFromFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := ItemFromFile(filepath.Join(dir, "missing.cu")); err == nil {
		t.Error("missing file accepted")
	}
	empty := filepath.Join(dir, "empty.cu")
	if err := os.WriteFile(empty, []byte("\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ItemFromFile(empty); err == nil {
		t.Error("empty file accepted")
	}
}

// TestModelTools: compile_cuda reports nvcc's errors as text, and bad
// arguments are a text answer, not an error.
func TestModelTools(t *testing.T) {
	t.Parallel()
	needToolchains(t)
	ts := lane(t).Tools(tools.Item{})
	if len(ts) != 2 || ts[0].Name() != "compile_cuda" || ts[1].Name() != "check_program" {
		t.Fatalf("tools %v", ts)
	}
	out, err := ts[0].Call(context.Background(), []byte(`{"source": "__global__ void k() { int x = ; }\nint main() { return 0; }\n"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "FAIL (compile_error") || !strings.Contains(out, "expected an expression") {
		t.Errorf("compile_cuda on bad code: %q", out)
	}
	out, err = ts[1].Call(context.Background(), []byte(`{"src": 1}`))
	if err != nil || !strings.HasPrefix(out, "error:") {
		t.Errorf("bad arguments: %q, %v", out, err)
	}
}

// wrongOutputProgram prints something else when built as HIP, so its two
// builds disagree: TestGPUWrongOutput (gpu tag) expects wrong_output.
const wrongOutputProgram = `#include <cstdio>
__global__ void fill(int *p, int v) { p[threadIdx.x] = v + threadIdx.x; }
int main() {
    int *d, h[4];
    cudaMalloc(&d, sizeof(h));
#ifdef __HIP_PLATFORM_NVIDIA__
    fill<<<1, 4>>>(d, 100);
#else
    fill<<<1, 4>>>(d, 0);
#endif
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    printf("values %d %d %d %d\n", h[0], h[1], h[2], h[3]);
    cudaFree(d);
    return 0;
}
`

// checkKeptForCompletion: a pending record keeps the two executables (ELF
// files) and the GPU probe, and completing it on a host without a GPU is
// an error naming the cause, never a verdict.
func checkKeptForCompletion(t *testing.T, l *Lane, v tools.Verdict) {
	t.Helper()
	for _, name := range []string{ArtifactCUDABinary, ArtifactHIPBinary, ArtifactGPUProbe} {
		if b := v.Artifacts[name]; len(b) < 4 || string(b[:4]) != "\x7fELF" {
			t.Errorf("pending record: artifact %s is not an executable (%d bytes)", name, len(b))
		}
	}
	if _, err := l.Complete(context.Background(), tools.Item{Lane: LaneName}, v); !errors.Is(err, ErrNoGPU) {
		t.Errorf("Complete without a GPU: %v, want ErrNoGPU", err)
	}
}

// TestCompleteRefusesIncompleteRecords: nothing pending is returned as is;
// a record without its executables or with a failed stage is an error.
func TestCompleteRefusesIncompleteRecords(t *testing.T) {
	needToolchains(t)
	l := lane(t)
	done := tools.Verdict{Pass: true, Stage: StageRun, Stages: []tools.Stage{{Name: StageCUDACompile, OK: true}, {Name: StageRun, OK: true}}}
	if v, err := l.Complete(context.Background(), tools.Item{}, done); err != nil || v.Stage != StageRun || !v.Pass {
		t.Errorf("nothing pending: %+v, %v", v, err)
	}
	other := tools.Verdict{Pass: true, Stages: []tools.Stage{{Name: StageHIPCompileAMD, Skipped: true}}}
	if _, err := l.Complete(context.Background(), tools.Item{}, other); err == nil || !strings.Contains(err.Error(), "hip-compile-amd") {
		t.Errorf("pending hip-compile-amd: %v", err)
	}
	if !testRegistry.GPU().Present {
		return
	}
	pending := tools.Verdict{Pass: true, Stages: []tools.Stage{{Name: StageCUDACompile, OK: true}, {Name: StageRun, Skipped: true}},
		Artifacts: map[string][]byte{ArtifactHIPBinary: []byte("\x7fELF")}}
	if _, err := l.Complete(context.Background(), tools.Item{}, pending); err == nil || !strings.Contains(err.Error(), ArtifactCUDABinary) {
		t.Errorf("no cuda_binary: %v", err)
	}
}
