package persona_test

import (
	"fmt"

	"github.com/kiln-dev/kiln/prompts/persona"
)

func ExampleLibrary_Sample() {
	lib, err := persona.LoadBuiltin()
	if err != nil {
		panic(err)
	}
	used := map[string]bool{} // keys issued by earlier rounds of the campaign
	tasks, err := lib.Sample(2, 1, persona.Options{
		Categories: []string{"graph_algorithms"},
		Exclude:    func(key string) bool { return used[key] },
	})
	if err != nil {
		panic(err)
	}
	for _, t := range tasks {
		fmt.Println(t.TemplateID, "|", t.Prompt)
	}
	// Output:
	// graph_algorithms/05 | Create a CUDA implementation for breadth-first traversal on a graph with 16384 nodes stored in adjacency matrix. Optimize for avoiding shared memory bank conflicts.
	// graph_algorithms/01 | Write a CUDA implementation for graph coloring of a graph with 1000 nodes. Focus on multi-GPU scaling.
}

func ExampleClassify() {
	fmt.Println(persona.Classify(`__global__ void relu_backward(float* gradient, const float* activations) {}`))
	// Output: machine learning
}
