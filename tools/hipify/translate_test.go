package hipify

import (
	"errors"
	"os"
	"strings"
	"testing"
)

func mustTranslate(t *testing.T, m *Mapping, src string) Result {
	t.Helper()
	r, err := m.Translate(src)
	if err != nil {
		t.Fatalf("Translate: %v", err)
	}
	return r
}

func constructs(r Result) []string {
	var out []string
	for _, is := range r.Unsupported {
		out = append(out, is.Construct)
	}
	return out
}

func TestCommentsAndLiteralsUntouched(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src string
	}{
		{"line comment", "// cudaMalloc(&p, n); cublasCreate(&h); asm(\"trap;\");\n"},
		{"block comment", "/* cudaMemcpy cudaMemcpyHostToDevice\n   __shfl_sync texture<float> */\n"},
		{"spliced line comment", "// cudaMalloc \\\n cudaFree(p);\n"},
		{"string", `const char* s = "cudaMalloc failed: cublasCreate";` + "\n"},
		{"escaped quote in string", `const char* s = "say \"cudaFree\" now";` + "\n"},
		{"char literal", "char c = '\\''; char d = '\"'; // cudaFree\n"},
		{"raw string", `const char* s = R"x(cudaMalloc ")" asm( )x";` + "\n"},
		{"prefixed strings", `auto a = u8"cudaFree"; auto b = L"cudaFree"; auto c = u'c';` + "\n"},
		{"number with exponent and separator", "double x = 1e+10 + 0x1p-3 + 1'000'000;\n"},
		{"open quote in #error", "#error can't use cudaMalloc here\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustTranslate(t, Table(), tc.src)
			if r.HIP != tc.src || r.Replacements != 0 || !r.OK() {
				t.Errorf("changed or flagged:\n got %q (%d replacements, issues %v)\nwant %q", r.HIP, r.Replacements, r.Unsupported, tc.src)
			}
		})
	}
}

func TestIdentifierBoundaries(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, want string
	}{
		{"prefix", "mycudaMalloc(p);", "mycudaMalloc(p);"},
		{"underscore prefix", "my_cudaMalloc(p);", "my_cudaMalloc(p);"},
		{"suffix underscore", "int cudaMalloc_ = 1;", "int cudaMalloc_ = 1;"},
		{"lower-case cuda_ variable", "int cuda_enabled = 1;", "int cuda_enabled = 1;"},
		{"user cu variable", "float cube = 2, cursor = 3;", "float cube = 2, cursor = 3;"},
		{"whole word", "cudaMalloc(&p, n);", "hipMalloc(&p, n);"},
		{"global scope", "::cudaFree(p);", "::hipFree(p);"},
		{"inside macro body", "#define ALLOC(p, n) cudaMalloc(&p, n)", "#define ALLOC(p, n) hipMalloc(&p, n)"},
		{"member with an API name", "s.cudaMalloc = 0; q->cudaFree = 1;", "s.cudaMalloc = 0; q->cudaFree = 1;"},
		{"adjacent punctuation", "x=(cudaSuccess==e)?cudaGetErrorString(e):0;", "x=(hipSuccess==e)?hipGetErrorString(e):0;"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustTranslate(t, Table(), tc.src)
			got := strings.TrimPrefix(r.HIP, "#include <hip/hip_runtime.h>\n")
			if got != tc.want || !r.OK() {
				t.Errorf("got %q issues %v, want %q", r.HIP, r.Unsupported, tc.want)
			}
		})
	}
}

func TestUnsupportedReportedWithPositions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		src       string
		line, col int
		construct string
	}{
		{"inline PTX", "__device__ int f() {\n  int r; asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(r));\n  return r; }\n", 2, 10, "asm"},
		{"__asm__", "void f() { __asm__ __volatile__(\"\"); }\n", 1, 12, "__asm__"},
		{"cuBLAS call", "int main() {\n\tcublasCreate(&h);\n}\n", 2, 2, "cublasCreate"},
		{"cuBLAS header", "#include <cublas_v2.h>\n", 1, 10, "#include <cublas_v2.h>"},
		{"thrust header", "#include <thrust/device_vector.h>\n", 1, 10, "#include <thrust/device_vector.h>"},
		{"thrust scope", "int main() { thrust::device_vector<int> v; }\n", 1, 14, "thrust"},
		{"libcu++ scope", "cuda::std::atomic<int> a;\n", 1, 1, "cuda"},
		{"texture reference", "texture<float, 1, cudaReadModeElementType> tex;\n", 1, 1, "texture"},
		{"texture binding", "  cudaBindTexture(0, tex, d, n);\n", 1, 3, "cudaBindTexture"},
		{"unknown runtime call", "cudaFooBar(1);\n", 1, 1, "cudaFooBar"},
		{"CUDA graphs", "cudaGraph_t g; cudaGraphCreate(&g, 0);\n", 1, 1, "cudaGraph_t"},
		{"driver API unknown", "cuMemHostAlloc(&p, n, 0);\n", 1, 1, "cuMemHostAlloc"},
		{"driver enum", "int a = CU_DEVICE_ATTRIBUTE_WARP_SIZE;\n", 1, 9, "CU_DEVICE_ATTRIBUTE_WARP_SIZE"},
		{"nv builtin", "__nv_bfloat16 x;\n", 1, 1, "__nv_bfloat16"},
		{"syncwarp", "__device__ void f() { __syncwarp(); }\n", 1, 23, "__syncwarp"},
		{"activemask", "unsigned m = __activemask();\n", 1, 14, "__activemask"},
		{"warp reduce", "int s = __reduce_add_sync(0xffffffffu, v);\n", 1, 9, "__reduce_add_sync"},
		{"block-scoped atomic", "atomicAdd_block(p, 1);\n", 1, 1, "atomicAdd_block"},
		{"video intrinsic", "unsigned r = __vadd4(a, b);\n", 1, 14, "__vadd4"},
		{"arch value", "#if __CUDA_ARCH__ >= 700\n#endif\n", 1, 5, "__CUDA_ARCH__"},
		{"cuda version", "#if CUDA_VERSION >= 11000\n#endif\n", 1, 5, "CUDA_VERSION"},
		{"nvcc test", "#ifdef __NVCC__\n#endif\n", 1, 8, "__NVCC__"},
		{"math constant", "float x = CUDART_PI_F;\n", 1, 11, "CUDART_PI_F"},
		{"tile ballot", "namespace cg = cooperative_groups;\nunsigned b = tile.ballot(v > 0);\n", 2, 19, "ballot"},
		{"this_thread", "namespace cg = cooperative_groups;\nauto t = cg::this_thread();\n", 2, 14, "this_thread"},
		{"returned unknown name", "int f() { return cudaFooBar; }\n", 1, 18, "cudaFooBar"},
		{"unknown name after else", "if (a) x(); else cudaFooBar();\n", 1, 18, "cudaFooBar"},
		{"meta group rank", "int r = tile.meta_group_rank();\n", 1, 14, "meta_group_rank"},
		{"device prop field", "if (prop.unifiedAddressing) {}\n", 1, 10, "unifiedAddressing"},
		{"wmma", "nvcuda::wmma::fragment<int> f;\n", 1, 1, "nvcuda"},
		{"shuffle not called", "auto f = &__shfl_sync;\n", 1, 11, "__shfl_sync"},
		{"symbol copy without argument", "cudaMemcpyToSymbol();\n", 1, 1, "cudaMemcpyToSymbol"},
		{"make_cu helper", "auto e = make_cudaSurfaceObject();\n", 1, 10, "make_cudaSurfaceObject"},
		{"column after multibyte comment", "/* é */ cudaFooBar();\n", 1, 10, "cudaFooBar"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustTranslate(t, Table(), tc.src)
			if r.OK() {
				t.Fatalf("no issue reported; HIP:\n%s", r.HIP)
			}
			is := r.Unsupported[0]
			if is.Line != tc.line || is.Col != tc.col || is.Construct != tc.construct || is.Reason == "" {
				t.Errorf("got %+v, want %d:%d %q with a reason", is, tc.line, tc.col, tc.construct)
			}
		})
	}
}

func TestNotFlagged(t *testing.T) {
	t.Parallel()
	// Valid HIP as it is, or user code that merely resembles CUDA names.
	cases := []string{
		"__global__ void k(float* a) { a[threadIdx.x] += __expf(a[0]); __syncthreads(); }\n",
		"std::bitset<8> b; bool x = b.any(); bool y = b.all();\n",
		"float texture = 1.0f; float t2 = texture * 2;\n",
		"int any(int); int z = any(1);\n",
		"struct S { int cuda; } s; int v = s.cuda;\n",
		"#define CUDA_CHECK(x) do { if ((x) != cudaSuccess) return 1; } while (0)\nint f() { CUDA_CHECK(cudaDeviceSynchronize()); return 0; }\n",
		"#ifdef __CUDA_ARCH__\n#endif\n#if defined(__CUDA_ARCH__) && !defined __CUDA_ARCH__\n#endif\n",
		"#undef CUDA_FOO\n",
		"cudaError_t cudaStatus = cudaSuccess;\nif (cudaStatus != cudaSuccess) return cudaStatus;\n",
		"static const char *cudaLabel = \"x\"; void cudaHelper(cudaStream_t cudaStream, int* cudaPtr);\n",
		"__global__ void cudaKernel(float* a) {}\nint main() { cudaKernel<<<1, 1>>>(0); }\n",
	}
	for _, src := range cases {
		r := mustTranslate(t, Table(), src)
		if !r.OK() {
			t.Errorf("flagged %v in:\n%s", r.Unsupported, src)
		}
	}
}

func TestCallArgumentActions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, want string
	}{
		{"drop mask", "v += __shfl_down_sync(0xffffffff, v, o);", "v += __shfl_down(v, o);"},
		{"drop mask with width", "x = __shfl_sync(FULL, x, 0, 16);", "x = __shfl(x, 0, 16);"},
		{"drop mask nested call", "b = __ballot_sync(__activemask(), p);", "b = __ballot(p);"},
		{"drop mask with comment", "a = __any_sync(m /* all */, p);", "a = __any(p);"},
		{"nested shuffles", "y = __shfl_xor_sync(m, __shfl_up_sync(m, x, 1), 2);", "y = __shfl_xor(__shfl_up(x, 1), 2);"},
		{"vote", "if (__all_sync(0xffffffffu, v > 0)) {}", "if (__all(v > 0)) {}"},
		{"wrap symbol", "cudaMemcpyToSymbol(c, h, sizeof(h));", "hipMemcpyToSymbol(HIP_SYMBOL(c), h, sizeof(h));"},
		{"wrap second argument", "cudaMemcpyFromSymbol(&h, dev_counter, sizeof h);", "hipMemcpyFromSymbol(&h, HIP_SYMBOL(dev_counter), sizeof h);"},
		{"wrap expression", "cudaMemcpyToSymbol(tbl[0], h, 4, 0, cudaMemcpyHostToDevice);", "hipMemcpyToSymbol(HIP_SYMBOL(tbl[0]), h, 4, 0, hipMemcpyHostToDevice);"},
		{"wrap kernel pointer", "cudaFuncSetCacheConfig(kern<float>, cudaFuncCachePreferShared);", "hipFuncSetCacheConfig(reinterpret_cast<const void*>(kern<float>), hipFuncCachePreferShared);"},
		{"wrap in macro argument", "CHECK(cudaFuncGetAttributes(&a, k));", "CHECK(hipFuncGetAttributes(&a, reinterpret_cast<const void*>(k)));"},
		{"template comma", "cudaFuncGetAttributes(&a, kern<float, 16>);", "hipFuncGetAttributes(&a, reinterpret_cast<const void*>(kern<float, 16>));"},
		{"nested template", "cudaFuncSetAttribute(k<A<int, 2>, 3>, cudaFuncAttributeMaxDynamicSharedMemorySize, n);", "hipFuncSetAttribute(reinterpret_cast<const void*>(k<A<int, 2>, 3>), hipFuncAttributeMaxDynamicSharedMemorySize, n);"},
		{"comparison is not a template", "x = __shfl_sync(m, a < b, c > d);", "x = __shfl(a < b, c > d);"},
		{"launch kept", "k<<<grid, block, smem, stream>>>(a, n);", "k<<<grid, block, smem, stream>>>(a, n);"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustTranslate(t, Table(), tc.src)
			got := strings.TrimPrefix(r.HIP, "#include <hip/hip_runtime.h>\n")
			if got != tc.want || !r.OK() {
				t.Errorf("got %q issues %v\nwant %q", got, r.Unsupported, tc.want)
			}
		})
	}
}

func TestDropLastArgument(t *testing.T) {
	t.Parallel()
	m, err := LoadTable(strings.NewReader("intrinsic old_f new_f drop=3\nintrinsic only_f one_f drop=1\n"))
	if err != nil {
		t.Fatal(err)
	}
	for src, want := range map[string]string{
		"old_f(a, b, c);":         "new_f(a, b);",
		"old_f(a, (b, x), g(c));": "new_f(a, (b, x));",
		"only_f( a );":            "one_f(  );",
	} {
		r := mustTranslate(t, m, src)
		if strings.TrimPrefix(r.HIP, "#include <hip/hip_runtime.h>\n") != want {
			t.Errorf("%s: got %q want %q", src, r.HIP, want)
		}
	}
	r := mustTranslate(t, m, "old_f(a, b);")
	if r.OK() || strings.Contains(r.HIP, "new_f") {
		t.Errorf("missing argument not reported: %q %v", r.HIP, r.Unsupported)
	}
}

func TestIncludes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, src, want string
		replacements    int
	}{
		{"angle", "#include <cuda_runtime.h>\n", "#include <hip/hip_runtime.h>\n", 1},
		{"quoted", "#include \"cuda_runtime.h\"\n", "#include \"hip/hip_runtime.h\"\n", 1},
		{"spaced and commented", "  #  include /* x */ <cooperative_groups.h> // cg\n", "#include <hip/hip_runtime.h>\n  #  include /* x */ <hip/hip_cooperative_groups.h> // cg\n", 2},
		{"fp16 adds runtime", "#include <cuda_fp16.h>\n", "#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\n", 2},
		{"runtime after another HIP header", "#include <cooperative_groups.h>\n#include <cuda_runtime.h>\n",
			"#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n#include <hip/hip_runtime.h>\n", 3},
		{"runtime first", "#include <cuda_runtime.h>\n#include <cooperative_groups.h>\n",
			"#include <hip/hip_runtime.h>\n#include <hip/hip_cooperative_groups.h>\n", 2},
		{"unrelated header", "#include <stdio.h>\n#include \"kernels.cuh\"\n", "#include <stdio.h>\n#include \"kernels.cuh\"\n", 0},
		{"kernel without include", "__global__ void k() {}\n", "#include <hip/hip_runtime.h>\n__global__ void k() {}\n", 1},
		{"already HIP", "#include <hip/hip_runtime.h>\n__global__ void k() {}\n", "#include <hip/hip_runtime.h>\n__global__ void k() {}\n", 0},
		{"plain C untouched", "int main(void) { return 0; }\n", "int main(void) { return 0; }\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := mustTranslate(t, Table(), tc.src)
			if r.HIP != tc.want || r.Replacements != tc.replacements || !r.OK() {
				t.Errorf("got %q (%d, %v)\nwant %q (%d)", r.HIP, r.Replacements, r.Unsupported, tc.want, tc.replacements)
			}
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	t.Parallel()
	for src, line := range map[string]int{
		"int a;\n/* never closed":         2,
		"auto s = R\"x(never closed\n":    1,
		"int b;\n\nauto s = R\"(abc)x\";": 3,
	} {
		_, err := Translate(src)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != line {
			t.Errorf("%q: got %v, want a SyntaxError on line %d", src, err, line)
		}
	}
}

func TestIssuesInSourceOrderAndEveryUse(t *testing.T) {
	t.Parallel()
	src := "cublasCreate(&h);\nint x = 1; cublasDestroy(h);\ncublasCreate(&h);\n"
	r := mustTranslate(t, Table(), src)
	got := constructs(r)
	want := []string{"cublasCreate", "cublasDestroy", "cublasCreate"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %v want %v", got, want)
	}
	if r.Unsupported[1].Line != 2 || r.Unsupported[1].Col != 12 {
		t.Errorf("position %+v", r.Unsupported[1])
	}
	if r.HIP != src {
		t.Errorf("unsupported source must be left as it was, got %q", r.HIP)
	}
}

// FuzzTranslate checks the translator never panics, leaves the source alone
// when it reports no replacement, and reports positions inside the source.
// The seeds run with go test; go test -fuzz=FuzzTranslate explores further.
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{
		"cudaMalloc(&p, n);", "__shfl_sync(", "__shfl_sync(m", "cudaMemcpyToSymbol(a<b,",
		"#include <cuda_runtime.h", "#include", "R\"(x)\"", "'\\", "\"\\\n\"", "/* */ # define X cudaFree",
		"k<<<1,1>>>(x);", "a.b->c::d", "u8R\"d()d\"", "\\\n#include <cublas.h>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		r, err := Translate(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			return
		}
		if r.Replacements == 0 && r.HIP != src {
			t.Fatalf("no replacement but output changed: %q -> %q", src, r.HIP)
		}
		lines := strings.Count(src, "\n") + 1
		for _, is := range r.Unsupported {
			if is.Line < 1 || is.Line > lines || is.Col < 1 || is.Construct == "" {
				t.Fatalf("bad issue %+v for %q", is, src)
			}
		}
	})
}

func BenchmarkTranslate(b *testing.B) {
	src, err := os.ReadFile("testdata/cuda/04_warp_shuffle.cu")
	if err != nil {
		b.Fatal(err)
	}
	big := strings.Repeat(string(src), 50)
	b.SetBytes(int64(len(big)))
	for b.Loop() {
		if _, err := Translate(big); err != nil {
			b.Fatal(err)
		}
	}
}

// A file that declares libdevice functions itself still gets them flagged:
// the declaration does not make them exist on AMD.
func TestDeclaredLibdeviceIsUnsupported(t *testing.T) {
	t.Parallel()
	src := "extern \"C\" __device__ unsigned int __nv_brev(unsigned int x);\n" +
		"__global__ void k(unsigned *o) { o[0] = __nv_brev(o[0]); }\n"
	res, err := Translate(src)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK() {
		t.Fatalf("declared __nv_brev passed silently: %s", res.HIP)
	}
	found := false
	for _, is := range res.Unsupported {
		if is.Construct == "__nv_brev" {
			found = true
		}
	}
	if !found {
		t.Errorf("issues %+v do not name __nv_brev", res.Unsupported)
	}
}
