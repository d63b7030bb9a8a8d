package torch2cuda

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// judgeScript is the judge (judge/judge.py; see judge/README.md).
//
//go:embed judge/judge.py
var judgeScript []byte

// nvccParScript runs nvcc's host and device halves at once in the
// judge's builds (judge/nvcc_par.py): judge.py finds it beside itself.
//
//go:embed judge/nvcc_par.py
var nvccParScript []byte

// staticCheckScript reads a candidate's syntax tree (static_check.py).
//
//go:embed static_check.py
var staticCheckScript []byte

// maxJudgeJSON bounds the judge's result file.
const maxJudgeJSON = 4 << 20

// python returns the python3 that has torch.
func (l *Lane) python() (string, error) {
	t, ok := l.cfg.Toolchains.Get(toolchain.Torch)
	if !ok {
		return "", fmt.Errorf("torch2cuda: %w", l.cfg.Toolchains.Require(toolchain.Torch))
	}
	return t.Path, nil
}

// staticCheck reads the answer's syntax tree with static_check.py in the
// sandbox (python3's ast; no candidate code runs): its syntax error, or
// its build calls and where __global__ appears.
func (l *Lane) staticCheck(ctx context.Context, answer string) (staticFacts, error) {
	var f staticFacts
	py, err := l.python()
	if err != nil {
		return f, err
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return f, fmt.Errorf("torch2cuda static: %w", err)
	}
	defer box.Close()
	for name, body := range map[string][]byte{"candidate.py": []byte(answer), "static_check.py": staticCheckScript} {
		if err := box.WriteFile(name, body, 0o644); err != nil {
			return f, fmt.Errorf("torch2cuda static: %w", err)
		}
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{py, "-I", "-S", "static_check.py", "candidate.py"}, Limits: l.cfg.StaticLimits})
	if err != nil {
		return f, fmt.Errorf("torch2cuda static: %w", err)
	}
	if res.ExitCode != 0 || res.Killed != "" {
		return f, fmt.Errorf("torch2cuda static: python3 failed (exit %d, killed %q): %s", res.ExitCode, res.Killed, clip(string(res.Stderr), 500))
	}
	if err := json.Unmarshal(res.Stdout, &f); err != nil {
		return f, fmt.Errorf("torch2cuda static: static_check.py output: %w: %s", err, clip(string(res.Stdout), 300))
	}
	return f, nil
}
