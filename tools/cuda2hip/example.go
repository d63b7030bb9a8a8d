package cuda2hip

import (
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/tools/hipify"
	"github.com/kiln-dev/kiln/tools/kit"
)

// exampleItem is the corpus item of the lane's worked example.
const exampleItem = "sim_01_cloth_mass_spring"

// example is the lane's worked example: the corpus task
// sim_01_cloth_mass_spring answered with the rule-based translation of
// its program (right: every CPU stage passes, the GPU run is pending
// without a GPU), with that translation misspelling a HIP API (wrong:
// hip_compile_error), and with it including cuda_runtime.h (a cheat: the
// HIP build on NVIDIA would accept CUDA); and a synthesised task whose
// program is a corpus program.
func example() (kit.Example, error) {
	items, err := LoadBuiltinCorpus()
	if err != nil {
		return kit.Example{}, err
	}
	var it *Item
	for i := range items {
		if items[i].ID == exampleItem {
			it = &items[i]
		}
	}
	if it == nil {
		return kit.Example{}, fmt.Errorf("cuda2hip example: corpus item %s missing", exampleItem)
	}
	tr, err := hipify.Translate(it.Program)
	if err != nil || !tr.OK() {
		return kit.Example{}, fmt.Errorf("cuda2hip example: hipify %s: %v %v", exampleItem, err, tr.Unsupported)
	}
	wrong := strings.Replace(tr.HIP, "hipMalloc(", "hipAllocate(", 1)
	if wrong == tr.HIP {
		return kit.Example{}, fmt.Errorf("cuda2hip example: no hipMalloc call in %s", exampleItem)
	}
	cheat := "#include <cuda_runtime.h>\n" + tr.HIP
	synth := "Cloth programs mix float4 arithmetic with neighbour indexing.\n\n### TASK 1\ncategory: " + it.Category +
		"\ndescription: cloth step\n```cuda program.cu\n" + it.Program + "```\n"
	return kit.Example{
		Tasks:   kit.Tasks{Corpus: "builtin", Categories: []string{it.Category}, Seed: 1, SamplesPerTask: 1},
		TaskKey: "r0/" + exampleItem + "#0",
		Right:   "```hip\n" + tr.HIP + "```", Wrong: "```hip\n" + wrong + "```", WrongClass: ClassHIPCompileError,
		Cheat: "```hip\n" + cheat + "```", Synth: synth, SynthCategory: it.Category,
	}, nil
}
