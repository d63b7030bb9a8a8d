package torch2cuda

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

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

// judge runs judge.py on one candidate in a sandbox with the GPU and
// returns its result and raw JSON. An error means the judge itself could
// not run (sandbox, python, a result missing), not that the answer failed.
func (l *Lane) judge(ctx context.Context, ref, cand string) (judgeResult, []byte, error) {
	py, err := l.python()
	if err != nil {
		return judgeResult{}, nil, err
	}
	if err := l.gpu.Acquire(ctx, 1); err != nil {
		return judgeResult{}, nil, err
	}
	defer l.gpu.Release(1)
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return judgeResult{}, nil, fmt.Errorf("torch2cuda judge: %w", err)
	}
	defer box.Close()
	for name, body := range map[string][]byte{"judge.py": judgeScript, "reference.py": []byte(ref), "candidate.py": []byte(cand)} {
		if err := box.WriteFile(name, body, 0o644); err != nil {
			return judgeResult{}, nil, fmt.Errorf("torch2cuda judge: %w", err)
		}
	}
	timeout := int(l.cfg.Timeout / time.Second)
	argv := []string{py, "-I", "judge.py", "judge", "--reference", "reference.py", "--candidate", "candidate.py",
		"--out", "result.json", "--build-dir", "build", "--trials", strconv.Itoa(l.cfg.Trials), "--seed", strconv.Itoa(l.cfg.Seed),
		"--tolerance", l.cfg.Tolerance, "--timeout", strconv.Itoa(timeout)}
	gpu := l.cfg.Device != "cpu"
	if !gpu {
		argv = append(argv, "--device", "cpu")
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, GPU: gpu,
		Env: []string{"HOME=.", "TORCH_EXTENSIONS_DIR=build", "XDG_CACHE_HOME=.cache", "PYTHONDONTWRITEBYTECODE=1"},
		Limits: sandboxes.Limits{Wall: l.cfg.Timeout + 2*time.Minute, CPU: 2 * l.cfg.Timeout, Memory: 64 << 30, Procs: 1024, FileSize: 1 << 30,
			OpenFiles: 4096, Output: 1 << 20, RSS: 64 << 30}})
	if err != nil {
		return judgeResult{}, nil, fmt.Errorf("torch2cuda judge: %w", err)
	}
	raw, rerr := box.ReadFile("result.json", maxJudgeJSON)
	if rerr != nil || len(raw) == 0 {
		why := fmt.Sprintf("exit %d", res.ExitCode)
		if res.Killed != "" {
			why = "killed: " + string(res.Killed)
		}
		return judgeResult{}, nil, fmt.Errorf("torch2cuda judge wrote no result (%s): %s", why,
			clip(strings.TrimSpace(string(res.Stderr)+"\n"+string(res.Stdout)), 1500))
	}
	r, err := parseJudge(raw)
	if err != nil {
		return judgeResult{}, nil, errors.Join(err, fmt.Errorf("stderr: %s", clip(string(res.Stderr), 500)))
	}
	return r, raw, nil
}
