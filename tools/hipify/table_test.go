package hipify

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuiltinTable(t *testing.T) {
	t.Parallel()
	m := Table()
	if m != Table() {
		t.Error("Table() should return the same parsed table")
	}
	counts := map[Kind]int{}
	for _, e := range m.Entries() {
		counts[e.Kind]++
	}
	for _, k := range []Kind{KindHeader, KindUnsupportedHeader, KindAPI, KindType, KindEnum, KindMacro,
		KindIntrinsic, KindDriver, KindLibrary, KindMember, KindDefined, KindUnsupported,
		KindUnsupportedMember, KindUnsupportedCG, KindUnsupportedScope, KindUnsupportedTemplate} {
		if counts[k] == 0 {
			t.Errorf("built-in table has no %s entry", k)
		}
	}
	if counts[KindAPI] < 100 || counts[KindEnum] < 100 {
		t.Errorf("table looks truncated: %v", counts)
	}
}

// TestMappingClasses translates one construct of each class of the table.
func TestMappingClasses(t *testing.T) {
	t.Parallel()
	const inc = "#include <hip/hip_runtime.h>\n"
	cases := []struct {
		class    Kind
		src      string
		want     string
		replaces int
	}{
		{KindHeader, "#include <cuda_runtime.h>\n", "#include <hip/hip_runtime.h>\n", 1},
		{KindHeader, "#include <cuda_runtime.h>\n#include <cuda.h>\n#include <curand_kernel.h>\n",
			"#include <hip/hip_runtime.h>\n#include <hip/hip_runtime.h>\n#include <hiprand/hiprand_kernel.h>\n", 3},
		{KindAPI, "cudaMalloc(&d, n); cudaMemcpy(d, h, n, cudaMemcpyHostToDevice); cudaFree(d);",
			inc + "hipMalloc(&d, n); hipMemcpy(d, h, n, hipMemcpyHostToDevice); hipFree(d);", 5},
		{KindAPI, "cudaStreamCreate(&s); cudaEventRecord(e, s); cudaMallocManaged(&p, n); cudaDeviceSynchronize();",
			inc + "hipStreamCreate(&s); hipEventRecord(e, s); hipMallocManaged(&p, n); hipDeviceSynchronize();", 5},
		{KindAPI, "cudaMallocHost(&p, n); cudaFreeHost(p);", inc + "hipHostMalloc(&p, n); hipHostFree(p);", 3},
		{KindType, "cudaError_t e; cudaStream_t s; cudaEvent_t v; cudaDeviceProp p; dim3 g;",
			inc + "hipError_t e; hipStream_t s; hipEvent_t v; hipDeviceProp_t p; dim3 g;", 5},
		{KindEnum, "if (e != cudaSuccess || k == cudaMemcpyDeviceToHost) {}",
			inc + "if (e != hipSuccess || k == hipMemcpyDeviceToHost) {}", 3},
		{KindEnum, "cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, 0);",
			inc + "hipDeviceGetAttribute(&n, hipDeviceAttributeMultiprocessorCount, 0);", 3},
		{KindMacro, "#ifdef __CUDACC__\n#endif\n", inc + "#ifdef __HIPCC__\n#endif\n", 2},
		{KindDefined, "#if defined(__CUDA_ARCH__)\n#endif\n", inc + "#if defined(__HIP_DEVICE_COMPILE__)\n#endif\n", 2},
		{KindIntrinsic, "v = __shfl_sync(0xffffffff, v, 0);", inc + "v = __shfl(v, 0);", 2},
		{KindDriver, "CUdeviceptr p; CUresult r = cuMemAlloc(&p, n);", inc + "hipDeviceptr_t p; hipError_t r = hipMalloc(&p, n);", 4},
		{KindLibrary, "curandState s; curand_init(1, 0, 0, &s); float f = curand_uniform(&s);",
			inc + "hiprandState s; hiprand_init(1, 0, 0, &s); float f = hiprand_uniform(&s);", 4},
		{KindLibrary, "cuFloatComplex z = cuCmulf(a, b);", inc + "hipFloatComplex z = hipCmulf(a, b);", 3},
		{KindMember, "size_t s = prop.sharedMemPerMultiprocessor; int sharedMemPerMultiprocessor = 0;",
			"size_t s = prop.maxSharedMemoryPerMultiProcessor; int sharedMemPerMultiprocessor = 0;", 1},
	}
	for _, tc := range cases {
		t.Run(string(tc.class), func(t *testing.T) {
			t.Parallel()
			r := mustTranslate(t, Table(), tc.src)
			if r.HIP != tc.want || r.Replacements != tc.replaces || !r.OK() {
				t.Errorf("got %q (%d replacements, issues %v)\nwant %q (%d)", r.HIP, r.Replacements, r.Unsupported, tc.want, tc.replaces)
			}
		})
	}
}

func TestLoadTableExtends(t *testing.T) {
	t.Parallel()
	ext := `# project-specific rules
keep cudaCheck
unsupported cudaMalloc  our policy: use the pool allocator
api myCudaHelper myHipHelper
unsupported-header legacy/*.cuh  legacy CUDA-only headers
header cudaext.h hipext.h
`
	m, err := LoadTable(strings.NewReader(ext))
	if err != nil {
		t.Fatal(err)
	}
	src := "#include <legacy/old.cuh>\n#include <cudaext.h>\ncudaCheck(cudaMalloc(&p, n)); myCudaHelper(); cudaFree(p);\n"
	r := mustTranslate(t, m, src)
	want := "#include <hip/hip_runtime.h>\n#include <legacy/old.cuh>\n#include <hipext.h>\ncudaCheck(cudaMalloc(&p, n)); myHipHelper(); hipFree(p);\n"
	if r.HIP != want {
		t.Errorf("got %q\nwant %q", r.HIP, want)
	}
	if got := strings.Join(constructs(r), ","); got != "#include <legacy/old.cuh>,cudaMalloc" {
		t.Errorf("issues %v", r.Unsupported)
	}
	// The built-in table is unchanged.
	if r := mustTranslate(t, Table(), "cudaCheck(p);"); r.OK() {
		t.Error("extension leaked into the built-in table")
	}
	if e, _ := Table().Lookup("cudaMalloc"); e.Kind != KindAPI {
		t.Errorf("built-in cudaMalloc became %v", e)
	}
}

func TestParseTableErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"bogus cudaX hipX":                    "unknown kind",
		"api cudaX":                           "missing or bad HIP",
		"api cuda-X hipX":                     "not an identifier",
		"api cudaX hipX drop=0":               "bad argument number",
		"api cudaX hipX wrap=1":               "wrap=N:FUNC",
		"api cudaX hipX frob=1":               "unknown action",
		"api cudaX hipX drop=1 drop=2":        "at most one action",
		"unsupported cudaX":                   "missing reason",
		"unsupported cuda[A-Z*  why":          "bad character class",
		"header a.h":                          "header wants exactly",
		"keep cudaX extra":                    "keep takes one name",
		"defined __X__ __Y__ drop=1":          "defined takes no actions",
		"api cudaX hipX\nenum cudaX hipY":     "already defined on line 1",
		"header a.h b.h\n\nheader a.h c.h":    "already defined on line 1",
		"unsupported-template tex<x> because": "not an identifier",
	}
	for text, want := range cases {
		_, err := LoadTable(strings.NewReader(text))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "table line") {
			t.Errorf("%q: got %v, want an error with %q and its line", text, err, want)
		}
	}
}

// TestTableTargetsInHIPHeaders checks every HIP name the table produces
// against the installed HIP 5.2 headers, so a typo cannot hide until a
// program happens to use it.
func TestTableTargetsInHIPHeaders(t *testing.T) {
	t.Parallel()
	roots := []string{"/usr/include/hip", "/usr/include/hiprand"}
	if _, err := os.Stat(roots[0]); err != nil {
		t.Skip("HIP headers not installed (/usr/include/hip): install hipcc and libamdhip64-dev")
	}
	_, err := os.Stat(roots[1])
	haveRAND := err == nil
	if !haveRAND {
		t.Log("hipRAND headers not installed (/usr/include/hiprand): hipRAND targets not checked; install libhiprand-dev and librocrand-dev")
	}
	isRAND := func(e Entry) bool {
		return strings.HasPrefix(strings.ToLower(e.HIP), "hiprand")
	}
	words := map[string]bool{}
	for _, root := range roots {
		if _, err := os.Stat(root); err != nil {
			continue
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for i := 0; i < len(b); {
				if !isIdentStart(b[i]) {
					i++
					continue
				}
				j := i
				for j < len(b) && isIdentChar(b[j]) {
					j++
				}
				words[string(b[i:j])] = true
				i = j
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, e := range Table().Entries() {
		if !haveRAND && isRAND(e) {
			continue
		}
		switch {
		case e.Kind == KindHeader:
			if _, err := os.Stat(filepath.Join("/usr/include", e.HIP)); err != nil {
				t.Errorf("table line %d: header %s -> %s: %v", e.Line, e.CUDA, e.HIP, err)
			}
		case e.Kind.renames() || e.Kind == KindDefined:
			if !words[e.HIP] {
				t.Errorf("table line %d: %s -> %s: %s is not in the HIP headers", e.Line, e.CUDA, e.HIP, e.HIP)
			}
			for _, a := range e.Actions {
				if a.Op == "wrap" && strings.HasPrefix(a.Func, "HIP_") && !words[a.Func] {
					t.Errorf("table line %d: wrap macro %s is not in the HIP headers", e.Line, a.Func)
				}
			}
		default:
			continue
		}
		n++
	}
	t.Logf("%d table targets found in the HIP headers", n)
}
