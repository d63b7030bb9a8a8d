package cuda2hip

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/hipify"
)

func TestCUDALeaks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      []string // Leak.String() prefixes, in order
	}{
		{"clean HIP", "#include <hip/hip_runtime.h>\n__global__ void k(int *p) { p[0] = 1; }\nint main() { int *d; hipMalloc(&d, 4); k<<<1, 1>>>(d); return 0; }\n", nil},
		{"CUDA header", "#include <cstdio>\n#include <cuda_runtime.h>\n#include \"curand_kernel.h\"\n", []string{
			"line 2: #include <cuda_runtime.h>: a CUDA header (HIP: <hip/hip_runtime.h>)",
			"line 3: #include <curand_kernel.h>: a CUDA header (HIP: <hiprand/hiprand_kernel.h>)"}},
		{"unmapped CUDA header", "#include <thrust/device_vector.h>\n", []string{"line 1: #include <thrust/device_vector.h>: a CUDA header"}},
		{"CUDA API", "int main() {\n  float *d;\n  cudaMalloc(&d, 4);\n  cudaError_t e = cudaGetLastError();\n  return e == cudaSuccess;\n}\n", []string{
			"line 3: cudaMalloc: a CUDA API name (HIP: hipMalloc)",
			"line 4: cudaError_t: a CUDA API name (HIP: hipError_t)",
			"line 4: cudaGetLastError: a CUDA API name (HIP: hipGetLastError)",
			"line 5: cudaSuccess: a CUDA API name (HIP: hipSuccess)"}},
		{"driver API", "void f() { cuInit(0); }\n", []string{"line 1: cuInit: a CUDA API name (HIP: hipInit)"}},
		{"unknown cuda call", "void f() { cudaFrobnicate(1); }\n", []string{"line 1: cudaFrobnicate: a CUDA API name"}},
		{"own names", "#define CUDA_CHECK(x) (x)\n#define cudaCheck(x) (x)\nstatic int cudaHelper(int x) { return x; }\n" +
			"int main() { hipError_t cudaStatus = hipSuccess; CUDA_CHECK(cudaStatus); cudaCheck(1); return cudaHelper(0); }\n", nil},
		{"comments and strings", "// cudaMalloc(&p, n) in CUDA\n/* #include <cuda.h>\n cudaFree */\nint main() { printf(\"cudaMemcpy failed\\n\"); return 0; }\n", nil},
		{"members", "int f(S s, S *p) { return s.cudaMalloc + p->cudaMalloc; }\n", nil},
		{"macros", "#ifdef __CUDACC__\nint a;\n#endif\n#if defined(__CUDA_ARCH__)\nint b;\n#endif\n", []string{
			"line 1: __CUDACC__: a CUDA compiler macro (HIP: __HIPCC__)",
			"line 4: __CUDA_ARCH__: a CUDA compiler macro (HIP: __HIP_DEVICE_COMPILE__)"}},
		{"PTX", "__device__ unsigned lane() {\n  unsigned r;\n  asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(r));\n  return r;\n}\n", []string{"line 3: inline PTX assembly"}},
		{"AMD asm", "__device__ void f() { asm volatile(\"s_nop 0\"); }\n", nil},
		{"intrinsics are left to the compiler", "__device__ int f(int v) { return __shfl_down_sync(0xffffffff, v, 1); }\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			leaks := CUDALeaks(tc.src)
			var got []string
			for _, l := range leaks {
				got = append(got, l.String())
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("leaks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestCUDALeaksCorpus: every builtin program leaks (it is CUDA), and its
// rule-based translation does not (no false accusation of the baseline).
func TestCUDALeaksCorpus(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if len(CUDALeaks(it.Program)) == 0 {
			t.Errorf("%s: the CUDA program shows no CUDA dependency", it.ID)
		}
		tr, err := hipify.Translate(it.Program)
		if err != nil || !tr.OK() {
			t.Errorf("%s: hipify: %v %v", it.ID, err, tr.Unsupported)
			continue
		}
		if leaks := CUDALeaks(tr.HIP); len(leaks) > 0 {
			t.Errorf("%s: the rule-based translation leaks:\n%s", it.ID, LeakSummary(leaks, 5))
		}
		if why := suspectHIP(tr.HIP, runs.Task{}); why != "" {
			t.Errorf("%s: the rule-based translation is suspect: %s", it.ID, why)
		}
	}
}

// TestCUDALeaksBench: the bench set's hand-written HIP references do not
// leak (and are not suspect); its CUDA programs do.
func TestCUDALeaksBench(t *testing.T) {
	t.Parallel()
	fsys, root, err := Bench()
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := fs.ReadDir(fsys, root)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		ref, err := fs.ReadFile(fsys, path.Join(root, d.Name(), "reference.hip"))
		if err != nil {
			continue // a program without a reference translation
		}
		if leaks := CUDALeaks(string(ref)); len(leaks) > 0 {
			t.Errorf("%s: reference.hip leaks:\n%s", d.Name(), LeakSummary(leaks, 5))
		}
		if why := suspectHIP(string(ref), runs.Task{}); why != "" {
			t.Errorf("%s: reference.hip is suspect: %s", d.Name(), why)
		}
		prog, err := fs.ReadFile(fsys, path.Join(root, d.Name(), ProgramFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(CUDALeaks(string(prog))) == 0 {
			t.Errorf("%s: the CUDA program shows no CUDA dependency", d.Name())
		}
	}
}
