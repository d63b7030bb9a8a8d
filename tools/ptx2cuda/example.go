package ptx2cuda

import (
	"fmt"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// exampleItem is the builtin item of the worked example.
const exampleItem = "ew_saxpy"

// example is the lane's worked example: the builtin task ew_saxpy/base
// answered with its reference kernel (right: compiles into the harness;
// the GPU stages are pending without a GPU), with a kernel whose x is not
// const (wrong: the harness's function pointer of the original signature
// does not take it, compile_error), and with a kernel that carries the
// PTX over in inline asm (suspect: embedded_ptx); and a synthesiser's
// reply with a new elementwise kernel and its harness.
func example() (kit.Example, error) {
	items, err := LoadBuiltinCorpus()
	if err != nil {
		return kit.Example{}, err
	}
	var ref string
	for _, it := range items {
		if it.ID == exampleItem {
			ref = it.Kernel
		}
	}
	if ref == "" {
		return kit.Example{}, fmt.Errorf("ptx2cuda example: corpus item %s missing", exampleItem)
	}
	wrong := "__global__ void saxpy(int n, float a, float* x, float* y)\n{\n" +
		"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n)\n        y[i] = a * x[i] + y[i];\n}\n"
	cheat := "__global__ void saxpy(int n, float a, const float* x, float* y)\n{\n" +
		"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i >= n)\n        return;\n" +
		"    asm volatile(\"{\\n\\t.reg .f32 f<4>;\\n\\t\"\n" +
		"                 \"ld.global.f32 f1, [%1];\\n\\t\"\n" +
		"                 \"ld.global.f32 f2, [%2];\\n\\t\"\n" +
		"                 \"fma.rn.f32 f3, %0, f1, f2;\\n\\t\"\n" +
		"                 \"st.global.f32 [%2], f3;\\n\\t}\" :: \"f\"(a), \"l\"(x + i), \"l\"(y + i) : \"memory\");\n}\n"
	return kit.Example{
		Tasks:   kit.Tasks{Corpus: CorpusBuiltin, Categories: []string{"elementwise"}, Seed: 1, SamplesPerTask: 1},
		TaskKey: "r0/" + TaskID(exampleItem, "base") + "#0",
		Right:   "```cuda\n" + ref + "```", Wrong: "```cuda\n" + wrong + "```", WrongClass: tools.ClassCompileError,
		Cheat: "```cuda\n" + cheat + "```",
		Synth: exampleSynth, SynthCategory: "elementwise",
	}, nil
}

// exampleSynth is a synthesiser's reply: one new elementwise kernel with
// its harness.
const exampleSynth = "The failing kernels hide their element loop in unrolled, predicated PTX.\n\n" +
	"### TASK 1\ncategory: elementwise\ndescription: scaled clamp of 64K floats, one element per thread\n" +
	"```cuda kernel.cu\n" + exampleSynthKernel + "```\n" +
	"```json meta.json\n" + exampleSynthMeta + "```\n"

const exampleSynthKernel = `#ifndef BLOCK
#define BLOCK 256
#endif

__global__ void __launch_bounds__(BLOCK) clamp_scale(int n, float lo, float hi, const float* __restrict__ x, float* __restrict__ y)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n)
        y[i] = fminf(fmaxf(x[i] * 1.5f, lo), hi);
}
`

const exampleSynthMeta = `{
  "kernel": "clamp_scale",
  "sizes": {"N": "65536"},
  "params": [
    {"name": "n", "type": "int", "value": "N"},
    {"name": "lo", "type": "float", "value": "-0.5"},
    {"name": "hi", "type": "float", "value": "0.75"},
    {"name": "x", "type": "const float*", "role": "in", "count": "N"},
    {"name": "y", "type": "float*", "role": "out", "count": "N"}
  ],
  "launch": {"grid": ["(N + BLOCK - 1) / BLOCK"], "block": ["BLOCK"]}
}
`
