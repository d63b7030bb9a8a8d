package refinement_test

// Refinement with the lanes kiln ships (tools/c2x86 and tools/cudasynth)
// together, as the product puts them together: what needs more than one
// lane. Each lane's own rules are tested in its kit (refine_test.go).

import (
	"slices"
	"testing"

	"github.com/kiln-dev/kiln/refinement"
	"github.com/kiln-dev/kiln/runs"
	"github.com/kiln-dev/kiln/tools/c2x86"
	"github.com/kiln-dev/kiln/tools/cudasynth"
)

// productLanes are both lanes' rules in one *refinement.Lanes.
func productLanes(t *testing.T) *refinement.Lanes {
	t.Helper()
	var rules []refinement.LaneRules
	for _, f := range []func() (refinement.LaneRules, error){c2x86.RefinementRules, cudasynth.RefinementRules} {
		r, err := f()
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	lanes, err := refinement.NewLanes(rules...)
	if err != nil {
		t.Fatal(err)
	}
	return lanes
}

func TestProductLanes(t *testing.T) {
	t.Parallel()
	lanes := productLanes(t)
	want := []string{c2x86.LaneName, cudasynth.LaneName}
	if got := lanes.Names(); !slices.Equal(got, want) {
		t.Errorf("names %v, want %v", got, want)
	}
	if got := lanes.Taxonomy.Lanes(); !slices.Equal(got, want) {
		t.Errorf("taxonomy lanes %v, want %v", got, want)
	}
	if got := lanes.Book().Lanes(); !slices.Equal(got, want) {
		t.Errorf("prompt book lanes %v, want %v", got, want)
	}
}

func TestSourceHash(t *testing.T) {
	t.Parallel()
	lanes := productLanes(t)
	a := lanes.SourceHash(c2x86.LaneName, map[string]string{"function.c": "int f(void){return 1;}", "driver.c": "x"}, "")
	b := lanes.SourceHash(c2x86.LaneName, map[string]string{"function.c": "int f(void) {\n  return 1; // one\n}\n", "driver.c": "y"}, "")
	c := lanes.SourceHash(c2x86.LaneName, map[string]string{"function.c": "int f(void){return 2;}"}, "")
	d := lanes.SourceHash(cudasynth.LaneName, map[string]string{"function.c": "int f(void){return 1;}"}, "")
	e := lanes.SourceHash(cudasynth.LaneName, nil, "Write  a Kernel")
	f := lanes.SourceHash(cudasynth.LaneName, nil, "write a kernel\n")
	if a != b || a == c || a == d || e != f || len(a) != 64 {
		t.Fatalf("hashes %s %s %s %s %s %s", a, b, c, d, e, f)
	}
	// cuda-synth: the statement is the task; its reference program and a
	// corpus prompt's "(task id)" tag do not count.
	g := lanes.SourceHash(cudasynth.LaneName, map[string]string{cudasynth.ReferenceFile: refHistogram}, "Write a kernel")
	h := lanes.SourceHash(cudasynth.LaneName, nil, "Write a kernel\n\n(task basic_01_reduce)")
	i := lanes.SourceHash(cudasynth.LaneName, nil, "Write a kernel (task one)?")
	if g != e || h != e || i == e {
		t.Fatalf("cuda-synth hashes %s %s %s vs %s", g, h, i, e)
	}
	if lanes.TaskHash(runs.Task{Lane: c2x86.LaneName, Files: map[string]string{"function.c": "int f(void){return 1;}"}}) != a {
		t.Fatal("TaskHash differs from SourceHash")
	}
	if lanes.TaskHash(runs.Task{Lane: c2x86.LaneName, Files: map[string]string{"function.c": "int f(void){return 1;}"}, Prompt: "Translate f"}) != a {
		t.Fatal("a c2x86 task's rendered prompt changes its hash")
	}
}

func TestLabelsDocumented(t *testing.T) {
	t.Parallel()
	lanes := productLanes(t)
	tax := lanes.Taxonomy
	for _, lane := range []string{c2x86.LaneName, cudasynth.LaneName, "other"} {
		for name, doc := range tax.Labels(lane) {
			if doc == "" {
				t.Errorf("%s: label %q has no doc", lane, name)
			}
		}
	}
	if _, ok := tax.Labels(c2x86.LaneName)["asm.suffix"]; !ok {
		t.Error("c2x86 labels lack asm.suffix")
	}
	if _, ok := tax.Labels("other")["asm.suffix"]; ok {
		t.Error("generic labels include the c2x86 asm.suffix")
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
