package torch2cuda

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/kiln-dev/kiln/tools"
	"github.com/kiln-dev/kiln/tools/kit"
)

// answersFS holds a correct answer per starter problem
// (answers/<level>/<name>.py), written for this project: the replay
// answers of demos and GPU checks, and the lane's worked example.
//
//go:embed answers
var answersFS embed.FS

// BuiltinAnswer returns the starter answer of problem id
// ("level1/045_broadcast_add").
func BuiltinAnswer(id string) (string, error) {
	b, err := fs.ReadFile(answersFS, path.Join("answers", id+".py"))
	if err != nil {
		return "", fmt.Errorf("torch2cuda: no builtin answer for %s: %w", id, err)
	}
	return string(b), nil
}

// example is the lane's worked example: the broadcast-add problem answered
// with its starter answer (right: the judge stage is pending on a host
// without a GPU), with a module that does not parse (wrong), and with a
// ModelNew that calls PyTorch's own addition (suspect).
func example() (kit.Example, error) {
	const id = "level1/045_broadcast_add"
	right, err := BuiltinAnswer(id)
	if err != nil {
		return kit.Example{}, err
	}
	wrong := strings.Replace(right, "class ModelNew(nn.Module):", "class ModelNew(nn.Module)", 1)
	if wrong == right {
		return kit.Example{}, fmt.Errorf("torch2cuda example: %s has no `class ModelNew(nn.Module):` line", id)
	}
	cheat := "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n\n" +
		"    def forward(self, x, y):\n        return torch.add(x, y)\n"
	fence := func(s string) string { return "```python\n" + strings.TrimSpace(s) + "\n```" }
	return kit.Example{
		Tasks:   kit.Tasks{Corpus: "builtin", Categories: []string{"elementwise"}, Seed: 1, SamplesPerTask: 1},
		TaskKey: "r0/" + id + "#0",
		Right:   fence(right), Wrong: fence(wrong), WrongClass: tools.ClassCompileError,
		Cheat: fence(cheat),
		Synth: "These problems mix broadcasting with several elementwise steps.\n\n### TASK 1\ncategory: elementwise\n" +
			"function: softsign_blend\ndescription: blends two tensors with softsign weights, rows of an odd width\n" +
			fence(exampleSynthProblem) + "\n",
		SynthCategory: "elementwise",
	}, nil
}

// exampleSynthProblem is the problem of the example's synthesiser reply
// (written for this project).
const exampleSynthProblem = `# family: elementwise
"""Blend of two tensors weighted by the softsign of a third, on rows of odd width."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b, w):
        s = w / (1 + w.abs())
        return a * s + b * (1 - s)


ROWS = 257
COLS = 4093


def get_inputs():
    return [torch.randn(ROWS, COLS), torch.randn(ROWS, COLS), torch.randn(ROWS, COLS)]


def get_init_inputs():
    return []
`
