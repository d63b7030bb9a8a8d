package cudasynth

// The lane's refinement rules (refine.go) as package refinement uses them:
// taxonomy rows on real nvcc, ptxas, hipify, hipcc and CUDA runtime
// messages, the suspicion check, the construct features of CUDA programs,
// and the resynthesis format (prompts, parsing, task identity). These
// tests were refinement's own before refinement stopped knowing lanes.

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
)

// refinementLanesOnce builds the lane's refinement rules once.
var refinementLanesOnce = sync.OnceValues(func() (*refinement.Lanes, error) {
	rules, err := RefinementRules()
	if err != nil {
		return nil, err
	}
	return refinement.NewLanes(rules)
})

// refinementLanes returns refinement's view of this lane alone.
func refinementLanes(t *testing.T) *refinement.Lanes {
	t.Helper()
	l, err := refinementLanesOnce()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Diagnostics below are real nvcc 11.8 front-end, ptxas, hipify, hipcc and
// CUDA runtime messages in the shape the lane writes them.
func TestClassify(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	tests := []struct {
		name, lane, class, stage, diag string
		want                           string
		evidence                       string // substring of the evidence
	}{
		// cuda-synth: nvcc, ptxas, runtime.
		{"nvcc undefined", LaneName, refinement.ClassCompileError, "compile",
			"main.cu(12): error: identifier \"sharedMem\" is undefined\n\n1 error detected in the compilation of \"main.cu\".", "compile.undefined_identifier", "sharedMem"},
		{"nvcc type init", LaneName, refinement.ClassCompileError, "compile",
			"main.cu(30): error: a value of type \"float *\" cannot be used to initialize an entity of type \"int *\"", "compile.type", ""},
		{"nvcc incompatible arg", LaneName, refinement.ClassCompileError, "compile",
			"main.cu(20): error: argument of type \"int *\" is incompatible with parameter of type \"float *\"", "compile.type", ""},
		{"nvcc atomic overload", LaneName, refinement.ClassCompileError, "compile",
			"main.cu(41): error: no instance of overloaded function \"atomicAdd\" matches the argument list\n            argument types are: (double *, float)", "compile.overload", "atomicAdd"},
		{"nvcc host from device", LaneName, refinement.ClassCompileError, "compile",
			"main.cu(18): error: calling a __host__ function(\"rand\") from a __global__ function(\"fill\") is not allowed", "compile.host_device", ""},
		{"nvcc shared init", LaneName, refinement.ClassCompileError, "compile",
			"main.cu(7): error: initializer not allowed for __shared__ variable", "compile.memory_space", ""},
		{"nvcc args", LaneName, refinement.ClassCompileError, "compile",
			"main.cu(55): error: too few arguments in function call", "compile.arguments", ""},
		{"nvcc syntax", LaneName, refinement.ClassCompileError, "compile",
			"main.cu(9): error: expected a \";\"", "compile.syntax", ""},
		{"nvcc include", LaneName, refinement.ClassCompileError, "compile",
			"main.cu(3): catastrophic error: cannot open source file \"helper_cuda.h\"", "compile.include", ""},
		{"ptxas shared", LaneName, refinement.ClassCompileError, "compile",
			"ptxas error   : Entry function '_Z6kernelPf' uses too much shared data (0x18000 bytes, 0xc000 max)", "compile.ptxas", ""},
		{"gcc host", LaneName, refinement.ClassCompileError, "compile",
			"main.cu: In function 'int main()':\nmain.cu:40:5: error: 'cudaMallocHostt' was not declared in this scope", "compile.undefined_identifier", ""},
		{"cuda no kernel", LaneName, refinement.ClassCompileError, "ptx",
			"the program defines no kernel: the PTX has no .entry (write at least one __global__ function and launch it)", "compile.no_kernel", ""},
		{"cuda no main", LaneName, refinement.ClassCompileError, "host-asm", "the host assembly defines no main", "compile.no_main", ""},
		{"cuda sass", LaneName, refinement.ClassCompileError, "sass", "SASS for sm_90 lacks _Z6kernelPf", "compile.sass", ""},
		{"hipify", LaneName, string(ClassTranslateUnsupported), "hipify",
			"CUDA constructs without a HIP translation:\nline 12:5: cudaGraphInstantiate: no HIP equivalent in hipify's table", "hipify.unsupported", "CUDA constructs"},
		{"hipcc undeclared", LaneName, string(ClassHIPCompileError), "hip-compile-amd",
			"program.hip:14:9: error: use of undeclared identifier '__shfl_down_sync'", "hip.undefined_identifier", ""},
		{"rdna3 check", LaneName, string(ClassHIPCompileError), "rdna3", "the device assembly has no kernel (.amdhsa_kernel)", "hip.rdna3", ""},
		{"cuda vs hip numeric", LaneName, refinement.ClassWrongOutput, "run",
			"the CUDA and HIP builds print different results:\nline 2 (0.333333 vs 0.333334 beyond tolerance): CUDA \"mean 0.333333\"\n    HIP  \"mean 0.333334\"\n(CUDA printed 2 lines, HIP 2)",
			"wrong.numeric", "line 2"},
		{"cuda vs hip value", LaneName, refinement.ClassWrongOutput, "run",
			"the CUDA and HIP builds print different results:\nline 1 (523776 vs 523775 beyond tolerance): CUDA \"sum = 523776\"\n    HIP  \"sum = 523775\"\n(CUDA printed 1 lines, HIP 1)",
			"wrong.value", ""},
		{"cuda vs hip missing line", LaneName, refinement.ClassWrongOutput, "run",
			"the CUDA and HIP builds print different results:\nline 3 (missing line): CUDA \"done\"\n    HIP  \"\"\n(CUDA printed 3 lines, HIP 2)",
			"wrong.line_count", "(CUDA printed 3 lines, HIP 2)"},
		{"cuda vs hip text", LaneName, refinement.ClassWrongOutput, "run",
			"the CUDA and HIP builds print different results:\nline 1 (text differs): CUDA \"ok\"\n    HIP  \"fail\"\n(CUDA printed 1 lines, HIP 1)",
			"wrong.output", ""},
		{"runtime error beats exit status", LaneName, refinement.ClassCrash, "run",
			"the CUDA program exit status 1\nstderr: CUDA error at program.cu:88: an illegal memory access was encountered", "cuda.illegal_address", "illegal memory access"},
		{"sanitizer", LaneName, refinement.ClassCrash, "run",
			"the CUDA program exit status 1\nstderr: ========= Invalid __global__ write of size 4 bytes", "cuda.illegal_address", ""},
		{"launch resources", LaneName, refinement.ClassCrash, "run",
			"the HIP program (on NVIDIA) exit status 1\nstderr: kernel launch failed: too many resources requested for launch", "launch.resources", ""},
		{"plain non-zero exit", LaneName, refinement.ClassCrash, "run", "the CUDA program exit status 3\nstderr: check failed", "crash.exit_status", "exit status 3"},
		{"cuda segv", LaneName, refinement.ClassCrash, "run", "the CUDA program killed by signal SIGSEGV (segmentation fault)", "crash.segv", ""},
		{"cuda timeout", LaneName, refinement.ClassTimeout, "cuda-compile", "timed out after 2m0s (wall clock)", "timeout.build", ""},
		{"cuda numeric (DiffLines)", LaneName, refinement.ClassWrongOutput, "compare",
			"the output differs from the reference:\nline 2: expected \"mean 0.333333\"\n        got      \"mean 0.333334\"\n(expected 2 lines, got 2)", "wrong.numeric", ""},

		// Unknown lane: the generic table.
		{"unknown lane segv", "sass2rdna", refinement.ClassCrash, "run", "killed by signal SIGSEGV", "crash.segv", ""},
		{"unknown lane asm", "sass2rdna", refinement.ClassAssembleError, "assemble", "error: invalid instruction", "asm.other", ""},
	}
	tax := lanes.Taxonomy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := tax.Classify(tt.lane, runs.Verdict{Class: tt.class, Stage: tt.stage, Diagnostic: tt.diag}, "")
			if l.Name != tt.want {
				t.Fatalf("label %q (evidence %q), want %q", l.Name, l.Evidence, tt.want)
			}
			if l.Class != tt.class || l.Stage != tt.stage || l.Suspicion != "" || l.Key() != tt.want {
				t.Errorf("label %+v", l)
			}
			if !strings.Contains(l.Evidence, tt.evidence) {
				t.Errorf("evidence %q lacks %q", l.Evidence, tt.evidence)
			}
		})
	}
}

func TestSuspicion(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	tests := []struct {
		name, lane, answer string
		task               runs.Task
		pass               bool
		want               []string // substrings of the suspicion; nil: none
	}{
		{"cuda without kernel", LaneName, "#include <cstdio>\nint main() { printf(\"sum = 523776\\n\"); }\n", runs.Task{}, true,
			[]string{"no __global__ kernel", "launches no kernel"}},
		{"cuda honest", LaneName, "__global__ void k(int *a) { a[threadIdx.x] = 1; }\nint main() { int *d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); }\n",
			runs.Task{}, true, nil},
		{"cuda launch in a comment only", LaneName, "__global__ void k(int *a) {}\n// k<<<1,1>>>(d);\nint main() { return 0; }\n", runs.Task{}, true,
			[]string{"launches no kernel"}},
	}
	tax := lanes.Taxonomy
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.task.Lane = tt.lane
			v := runs.Verdict{Pass: tt.pass}
			if !tt.pass {
				v.Class = refinement.ClassLinkError
			}
			l := tax.ClassifyResult(runs.Result{Task: tt.task, Attempt: runs.Attempt{Answer: tt.answer}, Verdict: v})
			if tt.want == nil {
				if l.Suspicion != "" {
					t.Fatalf("suspicion %q, want none", l.Suspicion)
				}
				return
			}
			if l.Key() != refinement.LabelSuspectedCheating {
				t.Fatalf("key %q, want %s (label %+v)", l.Key(), refinement.LabelSuspectedCheating, l)
			}
			for _, w := range tt.want {
				if !strings.Contains(l.Suspicion, w) {
					t.Errorf("suspicion %q lacks %q", l.Suspicion, w)
				}
			}
			if tt.pass && l.Name != refinement.LabelPass {
				t.Errorf("name %q, want pass (the underlying label stays)", l.Name)
			}
		})
	}
}

func TestFeaturesCUDA(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	const reduce = `#include <cstdio>
#define N 1024
__constant__ float scale[4];
__device__ float sq(float x) { return x * x; }
__global__ void reduce(const float *in, float *out, int n) {
    __shared__ float buf[256];
    float local[4];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = i < n ? sq(in[i]) * scale[0] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 32; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    float v = buf[threadIdx.x];
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
    local[0] = v;
    if (threadIdx.x == 0) atomicAdd(out, local[0]);
}
int main() {
    float *in, *out;
    cudaMallocManaged(&in, N * sizeof(float));
    cudaMalloc(&out, sizeof(float));
    cudaStream_t st; cudaStreamCreate(&st);
    cudaEvent_t a; cudaEventCreate(&a); cudaEventRecord(a, st);
    reduce<<<N / 256, 256, 0, st>>>(in, out, N);
    printf("done\n");
}
`
	const plain = `__global__ void add(int n) { }
int main() { add<<<1, 1>>>(3); }`
	const sharedArrayOnly = `__global__ void k(float *o) { __shared__ float t[32]; t[threadIdx.x] = 1; o[0] = t[0]; }`
	const commented = `// __syncthreads(); atomicAdd(p, 1); __shared__
__global__ void k(int n) { /* __shfl_down_sync */ }`
	tests := []struct {
		name        string
		files       map[string]string
		has, hasNot []string
	}{
		{"reduce", map[string]string{"main.cu": reduce}, []string{"atomics", "syncthreads", "shared_memory", "local_array", "global_memory",
			"warp_intrinsics", "streams", "events", "constant_memory", "managed_memory", "control_flow", "device_function"}, []string{"recursion", "texture"}},
		{"no pointers no memory", map[string]string{"main.cu": plain}, nil, []string{"global_memory", "control_flow", "local_array", "atomics"}},
		{"shared array is not local", map[string]string{"k.cu": sharedArrayOnly}, []string{"shared_memory", "global_memory"}, []string{"local_array"}},
		{"comments stripped", map[string]string{"k.cu": commented}, nil, []string{"syncthreads", "atomics", "shared_memory", "warp_intrinsics"}},
		{"host loops are not kernel control flow", map[string]string{"k.cu": "__global__ void k(float *a) { a[0] = 1; }\nint main() { for (int i = 0; i < 3; i++) {} }"},
			[]string{"global_memory"}, []string{"control_flow"}},
		{"other files ignored", map[string]string{"notes.txt": "__syncthreads()", "k.cu": plain}, nil, []string{"syncthreads"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := lanes.Features.Features(LaneName, tt.files)
			for _, h := range tt.has {
				if !slices.Contains(got, h) {
					t.Errorf("features %v lack %q", got, h)
				}
			}
			for _, h := range tt.hasNot {
				if slices.Contains(got, h) {
					t.Errorf("features %v have %q", got, h)
				}
			}
		})
	}
}

func TestLabelsComputed(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	// cuda-synth: features of the answer, not of the reference program;
	// suspicion of a program without a kernel; the caller's domain.
	cr := runs.Result{
		Task: runs.Task{Lane: LaneName, Categories: []string{"simulation"}, Prompt: "Simulate cloth.",
			Files: map[string]string{ReferenceFile: refHistogram}},
		Attempt: runs.Attempt{Answer: "```cuda\n#include <cstdio>\nint main() { printf(\"42\\n\"); }\n```"},
		Verdict: runs.Verdict{Class: refinement.ClassCompileError, Stage: "ptx", Diagnostic: "the program defines no kernel: the PTX has no .entry"},
	}
	got := lanes.Labeler().Labels(cr, "simulation")
	if got.DiagnosticKind != "compile.no_kernel" || got.Suspicion == "" || got.Domain != "simulation" ||
		slices.Contains(got.Features, "atomics") || !slices.Equal(got.Categories, []string{"simulation"}) {
		t.Errorf("cuda labels %+v", got)
	}
	cr.Attempt.Answer = "```cuda\n" + refHistogram + "```"
	if f := lanes.Labeler().Labels(cr, "").Features; !slices.Contains(f, "atomics") || !slices.Contains(f, "shared_memory") {
		t.Errorf("cuda features of the answer: %v", f)
	}
}

func TestParseSynthesizedEdgeCases(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	tests := []struct {
		name, lane, reply string
		cands             int
		errs              []string
	}{
		{"unknown lane", "sass2rdna", "### TASK 1\n```text\nsomething long enough to be a statement of a task\n```\n", 0, []string{"no synthesis format"}},
		{"cuda ok", LaneName, "analysis\n### TASK 1\ncategory: atomics\ndescription: histogram\n```text\nWrite a CUDA program that builds a 256-bin histogram of 1<<20 bytes (byte i = (i*31+7)%256) with atomicAdd on shared-memory bins, then prints the counts of bins 0, 1 and 255.\n```\n```cuda reference.cu\n" + refHistogram + "```\n", 1, nil},
		{"cuda reference problems", LaneName, "### TASK 1\n```text\n" + longStatement + "\n```\n" +
			"### TASK 2\n```text\n" + longStatement + "\n```\n```cuda\nint main() { return 0; }\n```\n" +
			"### TASK 3\n```text\n" + longStatement + "\n```\n```cuda\n__global__ void k(int *p) { *p = 1; }\nint main() { return 0; }\n```\n" +
			"### TASK 4\n```text\n" + longStatement + "\n```\n```cuda\n__global__ void k(int *p) { *p = 1; }\nvoid run(int *p) { k<<<1, 1>>>(p); }\n```\n" +
			"### TASK 5\n```text\n" + longStatement + "\n```\n```cu\n#include <cstdlib>\n__global__ void k(int *p) { *p = 1; }\nint main() { int n = atoi(getenv(\"N\")); k<<<1, n>>>(0); }\n```\n", 0,
			[]string{"task 1: no ```cuda block", "task 2: the reference program defines no __global__", "task 3: the reference program launches no kernel",
				"task 4: the reference program does not define main", "task 5: the reference program calls getenv"}},
		{"cuda short and missing", LaneName, "### TASK 1\ncategory: atomics\n```text\nDo it.\n```\n### TASK 2\ncategory: atomics\n```cuda\n__global__ void k() {}\n```\n", 0,
			[]string{"at least 40", "no ```text block"}},
		{"repeated numbers renumbered", LaneName, "### TASK 1\n```text\nshort\n```\n### TASK 1\n```text\nshort\n```\n", 0, []string{"task 1:", "task 2:"}},
		{"bold headers", LaneName, "**TASK 1**\ncategory: streams\n```\nWrite a CUDA program that splits a 4M-element SAXPY over 4 streams and prints the sum of the result with 3 decimals.\n```\n```c++\n" + refHistogram + "```\n", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cands, errs := lanes.ParseSynthesized(tt.lane, tt.reply)
			if len(cands) != tt.cands || len(errs) != len(tt.errs) {
				t.Fatalf("%d candidates, errors %v; want %d and %v", len(cands), errs, tt.cands, tt.errs)
			}
			for i, w := range tt.errs {
				if !strings.Contains(errs[i].Error(), w) {
					t.Errorf("error %q lacks %q", errs[i], w)
				}
			}
			for _, c := range cands {
				if c.Prompt == "" || len(c.Files) != 1 || c.Files[ReferenceFile] != refHistogram || c.Category == "" || c.Hash != lanes.SourceHash(LaneName, nil, c.Prompt) {
					t.Errorf("cuda candidate %+v", c)
				}
			}
		})
	}
}

// refHistogram is a small reference program of a synthesised cuda-synth task.
const refHistogram = `#include <cstdio>

__global__ void hist(const unsigned char *in, int n, unsigned int *bins)
{
    __shared__ unsigned int local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[in[i]], 1u);
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) atomicAdd(&bins[i], local[i]);
}

int main()
{
    const int n = 1 << 20;
    unsigned char *h = new unsigned char[n];
    for (int i = 0; i < n; i++) h[i] = (unsigned char)((i * 31 + 7) % 256);
    unsigned char *d;
    unsigned int *bins, out[256];
    cudaMalloc(&d, n);
    cudaMalloc(&bins, sizeof out);
    cudaMemset(bins, 0, sizeof out);
    cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);
    hist<<<64, 256>>>(d, n, bins);
    cudaMemcpy(out, bins, sizeof out, cudaMemcpyDeviceToHost);
    printf("%u %u %u\n", out[0], out[1], out[255]);
    return 0;
}
`

const longStatement = "Write a CUDA program that sums 1<<20 integers (value i%7) with a shared-memory reduction and prints the sum."

func TestBuildSynthPrompt(t *testing.T) {
	t.Parallel()
	lanes := refinementLanes(t)
	// The prompt-only lane.
	p, err := lanes.BuildSynthPrompt(refinement.SynthRequest{Lane: LaneName, Category: "atomics",
		Examples: []refinement.Example{{Prompt: "Write a histogram kernel.", Answer: "__global__ void h() {}", Label: "cuda.race", Diagnostic: "race reported"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"atomic operations", "```text\nWrite a histogram kernel.\n```", "```cuda\n__global__ void h() {}\n```", "### TASK 1\ncategory: atomics", "```text\n<the task statement>",
		"```cuda reference.cu\n<the complete reference program>\n```", "nvcc -gencode arch=compute_86"} {
		if !strings.Contains(p.User, w) {
			t.Errorf("cuda user prompt lacks %q", w)
		}
	}
}
