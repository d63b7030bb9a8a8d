package cudasynth

import (
	"fmt"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// example is the lane's worked example: the corpus task
// sim_01_cloth_mass_spring answered with its reference program (right:
// every CPU stage passes, the GPU run is pending without a GPU), with a
// program nvcc rejects (wrong), and with a program that prints its answer
// from the host without a kernel (suspect); and a synthesised task whose
// reference is a corpus program.
func example() (kit.Example, error) {
	items, err := LoadBuiltinCorpus()
	if err != nil {
		return kit.Example{}, err
	}
	var prog string
	for _, it := range items {
		if it.ID == "sim_01_cloth_mass_spring" {
			prog = it.Program
		}
	}
	if prog == "" {
		return kit.Example{}, fmt.Errorf("cuda-synth example: corpus item sim_01_cloth_mass_spring missing")
	}
	wrong := "#include <cstdio>\n\n__global__ void scale(float *x, int n)\n{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n" +
		"    if (i < n) x[i] *= velocity_scale;\n}\n\nint main()\n{\n    float *x;\n    cudaMalloc(&x, 256 * sizeof(float));\n" +
		"    scale<<<1, 256>>>(x, 256);\n    cudaDeviceSynchronize();\n    printf(\"done\\n\");\n    return 0;\n}\n"
	cheat := "#include <cstdio>\n\nint main()\n{\n    printf(\"mean height 0.412300\\n\");\n    return 0;\n}\n"
	synth := "Cloth tasks need care with neighbour indexing.\n\n### TASK 1\ncategory: simulation\ndescription: cloth step\n" +
		"```text\nWrite a CUDA program that advances a 64x64 mass-spring cloth by one explicit step with structural springs; " +
		"print the mean height of the cloth with 6 decimals.\n```\n```cuda reference.cu\n" + prog + "```\n"
	return kit.Example{
		Tasks:   kit.Tasks{Corpus: "builtin", Categories: []string{"simulation"}, Seed: 1, SamplesPerTask: 1},
		TaskKey: "r0/sim_01_cloth_mass_spring#0",
		Right:   "```cuda\n" + prog + "```", Wrong: "```cuda\n" + wrong + "```", WrongClass: tools.ClassCompileError,
		Cheat: "```cuda\n" + cheat + "```", Synth: synth, SynthCategory: "simulation",
	}, nil
}
