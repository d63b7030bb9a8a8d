package torch2cuda

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/sandboxes/toolchain"
)

// judgeScript is the judge (judge/judge.py; see judge/README.md).
//
//go:embed judge/judge.py
var judgeScript []byte

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

// syntaxCheck parses the answer with python3's ast in the sandbox (no
// candidate code runs): "" when it parses, else the SyntaxError.
func (l *Lane) syntaxCheck(ctx context.Context, answer string) (string, error) {
	py, err := l.python()
	if err != nil {
		return "", err
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return "", fmt.Errorf("torch2cuda static: %w", err)
	}
	defer box.Close()
	if err := box.WriteFile("candidate.py", []byte(answer), 0o644); err != nil {
		return "", fmt.Errorf("torch2cuda static: %w", err)
	}
	const check = "import ast, sys\nsrc = open('candidate.py').read()\ntry:\n    ast.parse(src, 'candidate.py')\nexcept SyntaxError as e:\n" +
		"    print('%s:%s:%s: SyntaxError: %s' % (e.filename, e.lineno, e.offset, e.msg))\n    if e.text: print('    ' + e.text.rstrip())\n    sys.exit(1)\n"
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{py, "-I", "-S", "-c", check}, Limits: l.cfg.StaticLimits})
	if err != nil {
		return "", fmt.Errorf("torch2cuda static: %w", err)
	}
	switch {
	case res.ExitCode == 0 && res.Killed == "":
		return "", nil
	case res.ExitCode == 1 && res.Killed == "":
		return strings.TrimSpace(string(res.Stdout)), nil
	}
	return "", fmt.Errorf("torch2cuda static: python3 failed (exit %d, killed %q): %s", res.ExitCode, res.Killed, clip(string(res.Stderr), 500))
}
