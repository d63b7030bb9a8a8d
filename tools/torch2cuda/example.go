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
	}, nil
}
